//! The compaction check the loop makes before every provider request.

use zidane_provider::{AbortSignal, BoxFuture, SessionTurn};

/// What a compactor sees before a provider request.
#[derive(Debug)]
pub struct CompactCheck<'a> {
    /// The run.
    pub run_id: &'a str,
    /// The loop turn about to be requested.
    pub turn: u32,
    /// The conversation.
    pub turns: &'a [SessionTurn],
    /// Input tokens of the last request (input + cache read + cache write),
    /// when one was made.
    pub last_input_tokens: Option<u64>,
    /// What the request about to be made is expected to hold: the last
    /// request's input, the answer to it, and what the conversation gained
    /// since (results, a new prompt), estimated. A long answer fills the
    /// window as surely as a long prompt.
    pub expected_input_tokens: Option<u64>,
    /// The run's abort signal: a compaction in progress stops with the run.
    pub signal: &'a AbortSignal,
}

/// Checked before every provider request (between tool batches too); may
/// replace the conversation with a compacted one. Implemented by the agent.
pub trait Compactor: Send + Sync {
    /// Whether a check could compact at all, given the tokens the next
    /// request is expected to hold (see
    /// [`CompactCheck::expected_input_tokens`]); the loop builds a
    /// [`CompactCheck`] (a copy of the transcript) only when this says yes.
    /// Default: always.
    fn wants_check(&self, _expected_input_tokens: Option<u64>) -> bool {
        true
    }

    /// The compacted conversation, or `None` to leave it as is.
    fn before_request<'a>(&'a self, check: CompactCheck<'a>) -> BoxFuture<'a, Option<Vec<SessionTurn>>>;

    /// The provider refused the request as larger than its context window,
    /// and eliding older tool results did not save it: the conversation
    /// compacted as far as it goes (the newest turn kept, everything before
    /// it summarized, a lone long answer included), for the request to go
    /// again once. `None` (the default): the run fails with the error.
    fn on_overflow<'a>(&'a self, _check: CompactCheck<'a>) -> BoxFuture<'a, Option<Vec<SessionTurn>>> {
        Box::pin(async { None })
    }
}
