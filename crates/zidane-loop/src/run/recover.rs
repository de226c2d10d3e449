//! What a failed model call does next: the recovery policy, apart from the
//! streaming that carries it out (`stream.rs`).
//!
//! In order, a failure is answered by: eliding older tool results (a
//! context overflow, up to `max_overflow_recoveries` passes), then
//! compacting the conversation (an overflow eliding could not save, once
//! a turn, when the loop has a compactor); stripping
//! replayed reasoning the provider rejects (once per call); a retry after
//! a delay (a retryable error, within the attempt cap of its class,
//! transport or provider, `max_total_delay`, and for a provider that sent
//! nothing, `max_silence`); the next model of the fallback chain; or
//! failing.

use std::time::Duration;

use zidane_provider::{ErrorKind, ProviderError};

use crate::behavior::Behavior;

/// A failed attempt: the error, and whether it discarded streamed text or
/// thinking (`stream:retry` and `model:fallback` report it).
pub(crate) struct FailedAttempt {
    pub(crate) error: ProviderError,
    pub(crate) discarded_text: bool,
    pub(crate) discarded_thinking: bool,
}

/// Where one model call's recoveries stand.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Attempts {
    /// Retries after provider errors on this target.
    pub(crate) provider: u32,
    /// Retries after transport errors on this target.
    pub(crate) transport: u32,
    /// Elision passes so far.
    pub(crate) overflow_passes: u32,
    /// An elision was tried for the failure at hand (it changed nothing).
    pub(crate) elided: bool,
    /// Rejected reasoning was stripped (once per call).
    pub(crate) repaired: bool,
    /// A context overflow that eliding cannot save may still be saved by
    /// compacting the conversation (once per turn, with a compactor).
    pub(crate) may_compact: bool,
    /// Time waited between attempts, against `max_total_delay`.
    pub(crate) waited: Duration,
    /// Time the provider sent nothing in attempts given up for it, against
    /// `max_silence`.
    pub(crate) silent: Duration,
}

impl Attempts {
    /// A retry is taken: its attempt number, its wait, and the silence of
    /// the attempt it follows.
    pub(crate) fn count(&mut self, transport: bool, attempt: u32, delay: Duration, silence: Option<Duration>) {
        if transport {
            self.transport = attempt;
        } else {
            self.provider = attempt;
        }
        self.waited += delay;
        self.silent += silence.unwrap_or_default();
    }
}

/// What a failed attempt leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// Elide older tool results (pass `pass`) and send again.
    ElideResults { pass: u32 },
    /// The request is too large and eliding cannot shrink it: compact the
    /// conversation, then build the request again.
    Compact,
    /// Strip the replayed reasoning and send again.
    StripReasoning,
    /// Wait `delay`, then send again (attempt `attempt` of `max`).
    Retry {
        transport: bool,
        attempt: u32,
        max: u32,
        delay: Duration,
    },
    /// Go on with the next model of the chain.
    Fallback,
    /// Give up: the call fails with this error.
    Fail,
}

/// The recovery for `error`, given where the call stands, the run's
/// behavior, a jitter in `[0, 1)` and how many fallback targets are left.
/// When an elision or a strip changes nothing, the caller marks it tried
/// (`elided`, `repaired`) and asks again.
pub(crate) fn recover(
    error: &ProviderError,
    attempts: &Attempts,
    behavior: &Behavior,
    jitter: f64,
    fallbacks: usize,
) -> Next {
    if error.kind() == ErrorKind::ContextExceeded
        && !attempts.elided
        && attempts.overflow_passes < behavior.max_overflow_recoveries
    {
        return Next::ElideResults {
            pass: attempts.overflow_passes + 1,
        };
    }
    if error.kind() == ErrorKind::ContextExceeded && attempts.may_compact {
        return Next::Compact;
    }
    if !attempts.repaired && rejects_reasoning(error) {
        return Next::StripReasoning;
    }
    let transport = error.kind() == ErrorKind::Transport;
    let (attempt, max) = if transport {
        (attempts.transport + 1, behavior.retry.transport_max_attempts)
    } else {
        (attempts.provider + 1, behavior.retry.max_attempts)
    };
    let delay = retry_delay(behavior, attempt, error.retry_after(), jitter);
    // A silent provider: retried only while another silence as long still
    // fits the request's budget.
    let silence_fits = error
        .silence()
        .is_none_or(|s| attempts.silent + s + s <= behavior.retry.max_silence);
    if error.is_retryable()
        && attempt < max
        && attempts.waited + delay <= behavior.retry.max_total_delay
        && silence_fits
    {
        return Next::Retry {
            transport,
            attempt,
            max,
            delay,
        };
    }
    if fallbacks > 0 {
        return Next::Fallback;
    }
    Next::Fail
}

/// The wait before attempt `attempt + 1`: the server's delay when it gave
/// one, else exponential backoff with jitter; capped at `max_delay`.
pub(crate) fn retry_delay(behavior: &Behavior, attempt: u32, retry_after: Option<Duration>, jitter: f64) -> Duration {
    let policy = &behavior.retry;
    if let Some(after) = retry_after {
        return after.min(policy.max_delay);
    }
    let exp = policy
        .base_delay
        .saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
    // Jitter keeps 75-100% of the exponential delay, spreading retries.
    exp.mul_f64(0.75 + 0.25 * jitter.clamp(0.0, 1.0)).min(policy.max_delay)
}

/// Whether the provider refused the request for its replayed reasoning
/// (Anthropic: `Invalid `signature` in `thinking` block`, a 400).
fn rejects_reasoning(error: &ProviderError) -> bool {
    let message = error.message().to_ascii_lowercase();
    error.kind() == ErrorKind::InvalidRequest && message.contains("signature") && message.contains("thinking")
}

#[cfg(test)]
mod tests;
