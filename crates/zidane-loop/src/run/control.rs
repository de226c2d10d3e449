//! Control while a run is in flight: abort, steer and follow-up queues,
//! per-call cancellation, reset, and the injection of queued messages at
//! turn boundaries.

use std::collections::{BTreeMap, VecDeque};

use zidane_provider::{AbortController, ContentBlock, Role};

use zidane_core::events::SteerInject;
use zidane_core::events::SteerInjectInit;

use super::{RunLoop, is_empty_prompt};

/// A queued message.
#[derive(Debug, Clone)]
pub(crate) struct Queued {
    pub(crate) content: Vec<ContentBlock>,
    pub(crate) id: Option<String>,
}

/// What `steer` / `cancel_tool` reach while a run is in flight.
#[derive(Default)]
pub(crate) struct Control {
    pub(crate) abort: AbortController,
    pub(crate) steer: VecDeque<Queued>,
    pub(crate) follow_up: VecDeque<Queued>,
    pub(crate) calls: BTreeMap<String, (AbortController, Option<String>)>,
    /// Aborts the model stream of the current turn (a suspend stops it at
    /// once; tool calls keep running).
    pub(crate) stream: Option<AbortController>,
    /// `suspend` was called: the run stops at the next boundary, keeping
    /// unfinished work pending instead of answering it.
    pub(crate) suspending: bool,
    /// The run decided to end with nothing queued: a message now would be
    /// read by no turn, so none is taken.
    pub(crate) closed: bool,
}

impl RunLoop {
    /// Aborts the run in progress (no-op when idle). The run ends with its
    /// statistics so far and `agent:abort`.
    pub fn abort(&self, reason: Option<&str>) {
        if let Some(control) = &self.inner.lock().control {
            control.abort.abort(reason);
        }
    }

    /// Suspends the run in progress so a resume can continue it: the model
    /// stream stops at once (its request is sent again on resume), tool
    /// calls already running go on until they finish or the run is aborted
    /// (what a grace period ends with), and no call is answered as
    /// interrupted: pending work stays pending. `false` when idle.
    pub fn suspend(&self) -> bool {
        let mut state = self.inner.lock();
        let Some(control) = state.control.as_mut() else {
            return false;
        };
        control.suspending = true;
        if let Some(stream) = &control.stream {
            stream.abort(Some("suspended"));
        }
        true
    }

    /// Whether the run in progress is being suspended.
    pub(crate) fn suspending(&self) -> bool {
        self.inner.lock().control.as_ref().is_some_and(|c| c.suspending)
    }

    /// Queues a message injected as a user turn at the next turn boundary.
    /// Returns `false` (queuing nothing) when no run is in flight, the run is
    /// aborted or has decided to end, or the prompt is empty: `true` means a
    /// turn of this run reads it (unless the run is stopped first: an abort,
    /// the turn cap, a failure).
    #[must_use = "`false` means nothing was queued or cancelled"]
    pub fn steer(&self, prompt: Vec<ContentBlock>, id: Option<String>) -> bool {
        self.queue(prompt, id, false)
    }

    /// Queues a message delivered when the model would otherwise finish.
    /// Same contract as [`RunLoop::steer`].
    #[must_use = "`false` means nothing was queued or cancelled"]
    pub fn follow_up(&self, prompt: Vec<ContentBlock>, id: Option<String>) -> bool {
        self.queue(prompt, id, true)
    }

    pub(crate) fn queue(&self, content: Vec<ContentBlock>, id: Option<String>, follow_up: bool) -> bool {
        if is_empty_prompt(&content) {
            return false;
        }
        let mut state = self.inner.lock();
        let Some(control) = state.control.as_mut() else {
            return false;
        };
        if control.abort.signal().is_aborted() || control.closed {
            return false;
        }
        let queued = Queued { content, id };
        if follow_up {
            control.follow_up.push_back(queued);
        } else {
            control.steer.push_back(queued);
        }
        true
    }

    /// Cancels one in-flight tool call. `false` when no such call is running;
    /// the cancel is then parked and applied if the call registers before
    /// the next run starts.
    #[must_use = "`false` means nothing was queued or cancelled"]
    pub fn cancel_tool(&self, call_id: &str, reason: Option<&str>) -> bool {
        let reason = reason.map_or_else(|| self.inner.config.cancel_reason.clone(), str::to_owned);
        let mut state = self.inner.lock();
        if let Some(control) = state.control.as_mut()
            && let Some((call, cancelled)) = control.calls.get_mut(call_id)
        {
            if cancelled.is_some() {
                return false;
            }
            *cancelled = Some(reason.clone());
            call.abort(Some(&reason));
            return true;
        }
        state.parked_cancels.insert(call_id.to_owned(), reason);
        false
    }

    /// Clears the conversation. Refused while running.
    pub fn reset(&self) -> bool {
        if self.is_running() {
            return false;
        }
        let mut state = self.inner.lock();
        state.turns.clear();
        state.messages.clear();
        state.parked_cancels.clear();
        state.paired = 0;
        true
    }

    /// The run is about to end: with a message queued it goes on instead
    /// (`true`); otherwise no message is taken from now on, in the same
    /// step, so none can be accepted and then read by no turn.
    pub(crate) fn close_queues(&self) -> bool {
        let mut state = self.inner.lock();
        let Some(control) = state.control.as_mut() else {
            return false;
        };
        if !control.steer.is_empty() || !control.follow_up.is_empty() {
            return true;
        }
        control.closed = true;
        false
    }

    /// Injects the queued steers (or one follow-up); returns whether anything
    /// was injected.
    pub(crate) async fn inject_queued(&self, follow_up: bool) -> bool {
        let queued: Vec<Queued> = {
            let mut state = self.inner.lock();
            let Some(control) = state.control.as_mut() else {
                return false;
            };
            if follow_up {
                control.follow_up.pop_front().into_iter().collect()
            } else {
                control.steer.drain(..).collect()
            }
        };
        let any = !queued.is_empty();
        for q in queued {
            self.inject(q).await;
        }
        any
    }

    pub(crate) async fn inject(&self, queued: Queued) {
        let text = queued
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let mut ev = SteerInject::new(SteerInjectInit {
            content: queued.content.clone(),
            id: queued.id,
            text,
        });
        self.observe(&mut ev).await;
        let turn = self.push_turn(Role::User, queued.content, None);
        self.flush(&[turn]).await;
    }

    /// A message of the loop's own, delivered at the next turn boundary.
    pub(crate) fn queue_internal(&self, text: String) {
        if let Some(control) = self.inner.lock().control.as_mut() {
            control.steer.push_back(Queued {
                content: vec![ContentBlock::text(text)],
                id: None,
            });
        }
    }
}
