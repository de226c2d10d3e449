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
    /// The run's abort signal: a compaction in progress stops with the run.
    pub signal: &'a AbortSignal,
}

/// Checked before every provider request (between tool batches too); may
/// replace the conversation with a compacted one. Implemented by the agent.
pub trait Compactor: Send + Sync {
    /// Whether a check with these figures could compact at all; the loop
    /// builds a [`CompactCheck`] (a copy of the transcript) only when this
    /// says yes. Default: always.
    fn wants_check(&self, _last_input_tokens: Option<u64>) -> bool {
        true
    }

    /// The compacted conversation, or `None` to leave it as is.
    fn before_request<'a>(&'a self, check: CompactCheck<'a>) -> BoxFuture<'a, Option<Vec<SessionTurn>>>;
}
