//! Execution: the call as a durable step, its cancellation, panics
//! contained, tool state committed.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use serde_json::Value;
use zidane_provider::ToolResultContent;

use crate::pairing::{INTERRUPT_MESSAGE_FOR_TOOL_USE, TOOL_USE_CANCELLED_MESSAGE};
use crate::run::{RunCx, RunLoop, tracing_warn};
use zidane_core::events::{
    MessageError, SharedError, ToolBefore, ToolCancelled, ToolOutcome, ToolResultMetadata, ToolStateCommitFailed,
};
use zidane_core::events::{ToolBeforeInit, ToolCancelledInit, ToolStateCommitFailedInit};
use zidane_core::seams::{Step, StepError, StepKey, StepKind, StepValue, ToolStep, ToolStepOutcome};
use zidane_core::tool::{ToolCallParts, ToolContext, ToolOutput, ToolState, apply_ops};

use super::{Call, CallCx, CallResult, Executed};

impl RunLoop {
    /// Stage 4: Execution: `tool:before` (which may rewrite the input), the call
    /// itself, and its failure or cancellation.
    pub(super) async fn execute_stage(
        &self,
        c: &CallCx<'_>,
        tool: &Arc<dyn zidane_core::tool::Tool>,
        input: Value,
        coercions: Vec<String>,
    ) -> CallResult {
        let (cx, call) = (c.run, c.call);
        let hooks = &self.inner.config.hooks;
        self.dispatched(c, ToolOutcome::Execute, None, &input).await;
        let input = if hooks.has::<ToolBefore>() {
            // What the call is about to replace, as the tool reads it (with
            // a context of its own: the call is not registered yet).
            let reader = self.call_context(
                cx,
                call,
                &input,
                c.turn_id,
                &cx.signal.child(),
                &ToolState::new(Arc::clone(&cx.tool_state)),
            );
            let prior_content = tool.prior_content(&input, &reader).await;
            let mut before = ToolBefore::new(call_init!(
                ToolBeforeInit {
                    coercions: coercions.clone(),
                    prior_content,
                    run_tool_counts: c.snapshot.clone(),
                    unknown: false,
                },
                c
            ));
            before.input = input;
            hooks.observe(&mut before).await;
            before.input
        } else {
            input
        };
        // The tool takes its input; what the events after it name is the
        // call's own input in the turn when nothing changed it (a call that
        // carries a whole file is not held twice more while it runs).
        let (for_tool, changed) = if input == *call.input {
            (input, None)
        } else {
            (input.clone(), Some(input))
        };
        let executed = self.execute(cx, call, tool, for_tool, c.turn_id).await;
        let input: &Value = changed.as_ref().unwrap_or(call.input);
        let output = match executed {
            Executed::Output(output) => output,
            Executed::Failed(error) => {
                let content = self
                    .tool_error(c, input, Arc::clone(&error))
                    .await
                    .unwrap_or_else(|| ToolResultContent::Text(format!("Tool error: {error}")));
                ToolOutput {
                    content,
                    is_error: true,
                    metadata: ToolResultMetadata::new(),
                }
            }
            Executed::Cancelled(reason) => {
                if hooks.has::<ToolCancelled>() {
                    let mut ev = ToolCancelled::new(call_init!(
                        ToolCancelledInit {
                            input: input.clone(),
                            reason,
                            run_tool_counts: c.snapshot.clone(),
                        },
                        c
                    ));
                    self.observe(&mut ev).await;
                }
                return c.result(TOOL_USE_CANCELLED_MESSAGE.to_owned(), true);
            }
            Executed::Interrupted => return c.result(INTERRUPT_MESSAGE_FOR_TOOL_USE.to_owned(), true),
        };
        self.finish_call(c, input, output, coercions, ToolOutcome::Execute)
            .await
    }

    pub(super) async fn execute(
        &self,
        cx: &RunCx,
        call: &Call<'_>,
        tool: &Arc<dyn zidane_core::tool::Tool>,
        input: Value,
        turn_id: &str,
    ) -> Executed {
        let config = &self.inner.config;
        let controller = self.register_call(cx, call);
        let state = ToolState::new(Arc::clone(&cx.tool_state));
        let tool_cx = self.call_context(cx, call, &input, turn_id, &controller, &state);
        let signal = controller.signal();
        let step = Step {
            key: StepKey {
                run_id: cx.run_id.clone(),
                turn: cx.turn,
                kind: StepKind::ToolCall,
                name: call.id.clone(),
            },
            durability: tool.durability(),
        };
        let replayed = config.runtime.recorded(&step.key);
        let body = CatchUnwind {
            inner: tool.execute(input, tool_cx),
        };
        let in_step = config.tool_state_in_steps;
        let resume_state = cx.resume_states.lock().remove(&call.id).unwrap_or_default();
        let work = step_work(
            body,
            cx.behavior.tool_timeout,
            in_step.then(|| state.clone()),
            resume_state,
        );
        let recorded = tokio::select! {
            biased;
            () = signal.aborted() => None,
            r = config.runtime.step(step, Box::pin(work)) => Some(r),
        };
        let cancelled = {
            let mut state = self.inner.lock();
            state
                .control
                .as_mut()
                .and_then(|c| c.calls.remove(&call.id))
                .and_then(|(_, reason)| reason)
        };
        let Some(recorded) = recorded else {
            return match cancelled {
                Some(reason) => Executed::Cancelled(reason),
                None => Executed::Interrupted,
            };
        };
        let (value, landed) = match recorded {
            Ok(value) => (value, true),
            Err(StepError::Record { error, value }) => {
                tracing_warn(&format!(
                    "the step of `{}` ({}) was not recorded: {error}",
                    call.name, call.id
                ));
                (*value, false)
            }
            Err(StepError::StaleEpoch(stale)) => {
                self.inner.lock().stale = Some(stale);
                return Executed::Interrupted;
            }
            Err(StepError::Work(error)) => return Executed::Failed(error),
        };
        let StepValue::Tool(done) = value else {
            return Executed::Failed(Arc::new(zidane_core::durable::StepMismatch {
                asked: "tool call",
                answered: value.kind_name(),
            }));
        };
        if replayed {
            // The body that filled the read-state map did not run.
            zidane_core::read_state::apply_read_writes(&config.read_state, &done.state);
        } else {
            self.settle_state(cx, call, &done, landed, &state).await;
        }
        match done.outcome {
            ToolStepOutcome::Output(output) => Executed::Output(output),
            ToolStepOutcome::Failed(message) => Executed::Failed(Arc::new(MessageError(message))),
        }
    }

    /// What the tool's body sees of its call.
    fn call_context(
        &self,
        cx: &RunCx,
        call: &Call<'_>,
        input: &Value,
        turn_id: &str,
        controller: &zidane_provider::AbortController,
        state: &ToolState,
    ) -> ToolContext {
        let config = &self.inner.config;
        ToolContext::from(ToolCallParts {
            call_id: call.id.clone(),
            name: call.name.clone(),
            // Only `tool:progress` reads it: no copy when nobody listens.
            input: if config.hooks.has::<zidane_core::events::ToolProgressEvent>() {
                input.clone()
            } else {
                Value::Null
            },
            run_id: cx.run_id.clone(),
            turn_id: turn_id.to_owned(),
            signal: controller.signal(),
            hooks: config.hooks.clone(),
            state: state.clone(),
            read_state: Arc::clone(&config.read_state),
            workspace: cx.workspace.clone(),
            spawning: if cx.spawning.is_enabled() {
                cx.spawning.with_budget(remaining_budget(cx))
            } else {
                cx.spawning.clone()
            },
        })
    }

    /// The call's abort controller, registered for `cancel_tool` (a cancel
    /// that arrived before the call did is applied now).
    fn register_call(&self, cx: &RunCx, call: &Call<'_>) -> zidane_provider::AbortController {
        let controller = cx.signal.child();
        let mut state = self.inner.lock();
        let parked = state.parked_cancels.remove(&call.id);
        if let Some(control) = state.control.as_mut() {
            control
                .calls
                .insert(call.id.clone(), (controller.clone(), parked.clone()));
        }
        if let Some(reason) = parked {
            controller.abort(Some(&reason));
        }
        controller
    }

    /// Commits what a call that ran here staged: with the step record (the
    /// runtime stored it, or it failed to: reported), or on its own.
    async fn settle_state(&self, cx: &RunCx, call: &Call<'_>, done: &ToolStep, landed: bool, state: &ToolState) {
        if !self.inner.config.tool_state_in_steps {
            let ops = state.take_staged();
            if !ops.is_empty() {
                self.commit_state(cx, call, ops).await;
            }
        } else if landed {
            apply_ops(&mut cx.tool_state.lock(), &done.state);
        } else if !done.state.is_empty() {
            let error: SharedError = Arc::new(MessageError("the step record with these writes was not stored".into()));
            self.state_not_committed(cx, call, done.state.clone(), error).await;
        }
    }

    pub(super) async fn commit_state(&self, cx: &RunCx, call: &Call<'_>, ops: Vec<zidane_core::events::ToolStateOp>) {
        match self.inner.config.tool_state.commit(&ops).await {
            Ok(()) => apply_ops(&mut cx.tool_state.lock(), &ops),
            Err(error) => self.state_not_committed(cx, call, ops, Arc::from(error)).await,
        }
    }

    /// `tool-state:commit-failed`, and the log line when no handler owns
    /// the reporting.
    #[allow(clippy::print_stderr)] // unhandled, the contract is stderr, subscriber or not
    pub(super) async fn state_not_committed(
        &self,
        cx: &RunCx,
        call: &Call<'_>,
        ops: Vec<zidane_core::events::ToolStateOp>,
        error: SharedError,
    ) {
        let mut ev = ToolStateCommitFailed::new(ToolStateCommitFailedInit {
            call_id: call.id.clone(),
            error: Arc::clone(&error),
            ops,
            run_id: cx.run_id.clone(),
            tool_name: call.name.clone(),
        });
        self.observe(&mut ev).await;
        if !ev.handled {
            tracing::error!(target: "zidane", "tool state of `{}` ({}) was not committed: {error}", call.name, call.id);
            eprintln!(
                "zidane: tool state of `{}` ({}) was not committed: {error}",
                call.name, call.id
            );
        }
    }
}

/// Polls a tool's future, turning a panic into an error result.
pub(super) struct CatchUnwind<'a> {
    inner: zidane_provider::BoxFuture<'a, Result<ToolOutput, zidane_core::tool::ToolFailure>>,
}

impl Future for CatchUnwind<'_> {
    type Output = Result<Result<ToolOutput, zidane_core::tool::ToolFailure>, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = &mut self.inner;
        match catch_unwind(AssertUnwindSafe(|| inner.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(r)) => Poll::Ready(Ok(r)),
            Err(payload) => {
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".to_owned());
                Poll::Ready(Err(format!("the tool panicked: {message}")))
            }
        }
    }
}

/// What the run may still spend under its caps (a child's caps are at most
/// this).
pub(super) fn remaining_budget(cx: &RunCx) -> zidane_core::seams::SpawnBudget {
    let s = &cx.stats;
    let used = s.totals.input + s.totals.output + s.totals.cache_read + s.totals.cache_creation;
    zidane_core::seams::SpawnBudget {
        max_cost_usd: cx
            .behavior
            .max_cost_usd
            .map(|max| (max - s.totals.cost.unwrap_or(0.0)).max(0.0)),
        max_total_tokens: cx.behavior.max_total_tokens.map(|max| max.saturating_sub(used)),
    }
}

/// The step's work: the tool's body under its time limit, its outcome,
/// and (when `staged`: the runtime commits state with the record) the
/// state writes it staged.
async fn step_work(
    body: CatchUnwind<'_>,
    timeout: Option<std::time::Duration>,
    staged: Option<ToolState>,
    resume_state: serde_json::Map<String, Value>,
) -> Result<StepValue, SharedError> {
    let outcome = match timeout {
        Some(limit) => match tokio::time::timeout(limit, body).await {
            Ok(r) => r,
            Err(_) => Err(format!("timed out after {}s", limit.as_secs_f64())),
        },
        None => body.await,
    };
    let outcome = match outcome {
        Ok(Ok(output)) => ToolStepOutcome::Output(output),
        Ok(Err(failure)) => ToolStepOutcome::Failed(failure.to_string()),
        Err(message) => ToolStepOutcome::Failed(message),
    };
    let state = staged.map(|s| s.take_staged()).unwrap_or_default();
    Ok(StepValue::Tool(ToolStep {
        outcome,
        state,
        resume_state,
    }))
}
