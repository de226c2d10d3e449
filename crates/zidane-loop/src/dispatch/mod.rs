//! The tool pipeline: gate, validation, unknown tools, execution with
//! cancellation, error substitution, transforms; batches run in parallel
//! where the tools allow it, results in call order.

use serde_json::Value;
use zidane_provider::{ContentBlock, SessionTurn, ToolResultContent};

use crate::pairing::INTERRUPT_MESSAGE_FOR_TOOL_USE;
use crate::run::{RunCx, RunLoop};
use zidane_core::durable::INTERRUPTED_CALL_MESSAGE;
use zidane_core::events::{SharedError, ToolBatchResumed, ToolCounts, ToolDispatched, ToolOutcome};
use zidane_core::events::{ToolBatchResumedInit, ToolDispatchedInit};
use zidane_core::join_all;
use zidane_core::seams::{Durability, StepKey, StepKind};
use zidane_core::tool::ToolOutput;

/// A tool event's `…Init` with the call's tool name, call id, run and turn
/// id, then its own fields.
macro_rules! call_init {
    ($init:ident { $($body:tt)* }, $c:expr) => {
        $init {
            name: $c.call.name.clone(),
            call_id: $c.call.id.clone(),
            run_id: $c.run.run_id.clone(),
            turn_id: $c.turn_id.to_owned(),
            $($body)*
        }
    };
}

mod execute;
mod finish;
mod gate;
mod validate;

use finish::append_text;

/// One model-issued call.
#[derive(Debug, Clone)]
pub(crate) struct Call<'a> {
    pub(crate) id: String,
    pub(crate) name: String,
    /// The input as the model sent it, in the turn (borrowed: a call that
    /// carries a whole file is not copied for the dispatch).
    pub(crate) input: &'a Value,
}

/// What a call produced for the model.
#[derive(Debug, Clone)]
pub(crate) struct CallResult {
    pub(crate) call_id: String,
    pub(crate) name: String,
    pub(crate) content: ToolResultContent,
    pub(crate) is_error: bool,
    /// Bytes that count against the output budget (executed and substituted
    /// results, after transforms).
    pub(crate) budget_bytes: usize,
    /// Artifacts the result declared.
    pub(crate) artifacts: Vec<zidane_core::events::SessionArtifact>,
}

/// One call on its way through the pipeline: what every stage shares.
struct CallCx<'a> {
    run: &'a RunCx,
    call: &'a Call<'a>,
    /// The run's tool counts as the batch started (every gate sees these).
    snapshot: &'a ToolCounts,
    turn_id: &'a str,
    /// The call finished in a process that died: its record answers it and
    /// its gate runs only to restore what handlers keep per call.
    resumed: bool,
}

impl CallCx<'_> {
    /// A text result for this call.
    fn result(&self, content: String, is_error: bool) -> CallResult {
        CallResult {
            call_id: self.call.id.clone(),
            name: self.call.name.clone(),
            content: ToolResultContent::Text(content),
            is_error,
            budget_bytes: 0,
            artifacts: Vec::new(),
        }
    }
}

/// What the gate decided.
enum Gated {
    /// The call ends here (blocked, or a substitute result).
    Done(CallResult),
    /// The call goes on with this input; a repeat-guard note may ride on its
    /// result.
    Execute { input: Value, steer_note: Option<String> },
}

/// What a resumed batch holds: calls answered from their records, and
/// calls the dead process left unfinished.
struct Resuming {
    done: Vec<String>,
    pending: Vec<String>,
}

enum Executed {
    Output(ToolOutput),
    Failed(SharedError),
    Cancelled(String),
    Interrupted,
}

impl RunLoop {
    pub(crate) async fn dispatch_turn(&self, cx: &RunCx, assistant: &SessionTurn, turn_id: &str) -> Vec<CallResult> {
        let calls: Vec<Call<'_>> = assistant
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolUse { id, name, input } => Some(Call {
                    id: id.clone(),
                    name: name.clone(),
                    input,
                }),
                _ => None,
            })
            .collect();
        let resuming = self.resumed_batch(cx, &calls, turn_id).await;
        // Every gate of the batch sees the counts as they were before it.
        let snapshot = cx.run_counts.lock().clone();
        let tools = &cx.tools;
        let mut results = Vec::with_capacity(calls.len());
        let mut i = 0;
        while i < calls.len() {
            let parallel = |c: &Call<'_>| tools.get(&c.name).is_some_and(|t| t.parallel_safe());
            let mut end = i + 1;
            if parallel(&calls[i]) {
                while end < calls.len() && parallel(&calls[end]) {
                    end += 1;
                }
            }
            let group: Vec<_> = calls[i..end]
                .iter()
                .map(|call| self.dispatch_one(cx, call, &snapshot, turn_id, resuming.as_ref()))
                .collect();
            results.extend(join_all(group).await);
            i = end;
        }
        results
    }

    /// The batch of a resumed run's first turn, when its model call was
    /// answered from a record: `tool-batch:resumed` fires before any call
    /// runs again. Returns the calls without a record (to run again when
    /// safe, else to report interrupted) and whether each was recorded.
    async fn resumed_batch(&self, cx: &RunCx, calls: &[Call<'_>], turn_id: &str) -> Option<Resuming> {
        if cx.resumed_turn != Some(cx.turn) {
            return None;
        }
        let runtime = &self.inner.config.runtime;
        let key = |kind, name: &str| StepKey {
            run_id: cx.run_id.clone(),
            turn: cx.turn,
            kind,
            name: name.to_owned(),
        };
        if !runtime.recorded(&key(StepKind::ModelCall, "model")) {
            return None;
        }
        let (done, pending): (Vec<&Call<'_>>, Vec<&Call<'_>>) = calls
            .iter()
            .partition(|c| runtime.recorded(&key(StepKind::ToolCall, &c.id)));
        let resuming = Resuming {
            done: done.iter().map(|c| c.id.clone()).collect(),
            pending: pending.iter().map(|c| c.id.clone()).collect(),
        };
        let mut ev = ToolBatchResumed::new(ToolBatchResumedInit {
            done: done.iter().map(|c| c.id.clone()).collect(),
            resuming: pending.iter().map(|c| c.id.clone()).collect(),
            run_id: cx.run_id.clone(),
            turn: cx.turn,
            turn_id: turn_id.to_owned(),
        });
        self.observe(&mut ev).await;
        Some(resuming)
    }

    /// One call through the pipeline: gate, unknown tool, validation,
    /// execution, then the result's transform and `tool:after`.
    async fn dispatch_one(
        &self,
        cx: &RunCx,
        call: &Call<'_>,
        snapshot: &ToolCounts,
        turn_id: &str,
        resuming: Option<&Resuming>,
    ) -> CallResult {
        let c = CallCx {
            run: cx,
            call,
            snapshot,
            turn_id,
            resumed: resuming.is_some_and(|r| r.done.contains(&call.id)),
        };
        if cx.signal.is_aborted() {
            return c.result(INTERRUPT_MESSAGE_FOR_TOOL_USE.to_owned(), true);
        }
        // A call the dead process may have been running: one that is safe
        // to repeat runs again, any other is reported, never run twice.
        if resuming.is_some_and(|r| r.pending.contains(&call.id))
            && cx
                .tools
                .get(&call.name)
                .is_none_or(|t| t.durability() == Durability::Unsafe)
        {
            return c.result(INTERRUPTED_CALL_MESSAGE.to_owned(), true);
        }
        if let Some(reason) = cx.malformed.get(&call.id) {
            self.dispatched(&c, ToolOutcome::InvalidInput, Some(reason.clone()), call.input)
                .await;
            return c.result(reason.clone(), true);
        }
        let (input, steer_note) = match self.gate_stage(&c).await {
            Gated::Done(result) => return result,
            Gated::Execute { input, steer_note } => (input, steer_note),
        };
        let Some(tool) = cx.tools.get(&call.name).cloned() else {
            return self.unknown_stage(&c, input).await;
        };
        let (input, coercions) = match self.validate_stage(&c, &tool, input).await {
            Ok(valid) => valid,
            Err(result) => return result,
        };
        let mut finished = self.execute_stage(&c, &tool, input, coercions).await;
        if let Some(note) = steer_note {
            append_text(&mut finished.content, &note);
        }
        finished
    }

    /// Emits `tool:dispatched` when someone listens.
    async fn dispatched(&self, c: &CallCx<'_>, outcome: ToolOutcome, reason: Option<String>, input: &Value) {
        if !self.inner.config.hooks.has::<ToolDispatched>() {
            return;
        }
        let mut ev = ToolDispatched::new(call_init!(
            ToolDispatchedInit {
                input: input.clone(),
                outcome,
                reason,
                run_tool_counts: c.snapshot.clone(),
            },
            c
        ));
        self.observe(&mut ev).await;
    }
}
