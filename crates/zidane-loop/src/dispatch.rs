//! The tool pipeline: gate, validation, unknown tools, execution with
//! cancellation, error substitution, transforms; batches run in parallel
//! where the tools allow it, results in call order.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::{Arc, PoisonError};
use std::task::{Context, Poll};

use serde_json::Value;
use zidane_provider::{ContentBlock, Role, SessionTurn, ToolResultContent};

use crate::behavior::RepeatMode;
use crate::error::RunErrorKind;
use crate::pairing::{INTERRUPT_MESSAGE_FOR_TOOL_USE, TOOL_USE_CANCELLED_MESSAGE};
use crate::run::{RunCx, RunLoop, tracing_warn};
use crate::validate::InputValidator;
use zidane_core::durable::INTERRUPTED_CALL_MESSAGE;
use zidane_core::events::{
    BudgetExceeded, GateDecision, GuardAction, MessageError, RepeatGuardExceeded, SharedError, ToolAfter,
    ToolBatchResumed, ToolBefore, ToolBudgetExceeded, ToolCancelled, ToolCounts, ToolDispatched, ToolError, ToolGate,
    ToolOutcome, ToolResult, ToolResultMetadata, ToolResultsAfter, ToolStateCommitFailed, ToolTransform, ToolUnknown,
    ValidationCoerce, ValidationReject,
};
use zidane_core::events::{
    BudgetExceededInit, RepeatGuardExceededInit, ToolAfterInit, ToolBatchResumedInit, ToolBeforeInit,
    ToolBudgetExceededInit, ToolCancelledInit, ToolDispatchedInit, ToolErrorInit, ToolGateInit, ToolResultsAfterInit,
    ToolStateCommitFailedInit, ToolTransformInit, ToolUnknownInit, ValidationCoerceInit, ValidationRejectInit,
};
use zidane_core::join_all;
use zidane_core::seams::{
    ArtifactRecord, Durability, PolicyVerdict, Step, StepError, StepKey, StepKind, StepValue, ToolCallRequest,
    ToolStep, ToolStepOutcome, TurnMark,
};
use zidane_core::tool::{ToolCallParts, ToolContext, ToolOutput, ToolState, apply_ops};

/// One model-issued call.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) input: Value,
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
    call: &'a Call,
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
        let calls: Vec<Call> = assistant
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolUse { id, name, input } => Some(Call {
                    id: id.clone(),
                    name: name.clone(),
                    input: input.clone(),
                }),
                _ => None,
            })
            .collect();
        let resuming = self.resumed_batch(cx, &calls, turn_id).await;
        // Every gate of the batch sees the counts as they were before it.
        let snapshot = cx.run_counts.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let tools = &cx.tools;
        let mut results = Vec::with_capacity(calls.len());
        let mut i = 0;
        while i < calls.len() {
            let parallel = |c: &Call| tools.get(&c.name).is_some_and(|t| t.parallel_safe());
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
    async fn resumed_batch(&self, cx: &RunCx, calls: &[Call], turn_id: &str) -> Option<Resuming> {
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
        let (done, pending): (Vec<&Call>, Vec<&Call>) = calls
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
        call: &Call,
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
            self.dispatched(&c, ToolOutcome::InvalidInput, Some(reason.clone()), &call.input)
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
        let mut ev = ToolDispatched::new(ToolDispatchedInit {
            name: c.call.name.clone(),
            call_id: c.call.id.clone(),
            input: input.clone(),
            run_id: c.run.run_id.clone(),
            turn_id: c.turn_id.to_owned(),
            outcome,
            reason,
            run_tool_counts: c.snapshot.clone(),
        });
        self.observe(&mut ev).await;
    }

    /// Stage 1: The gate: host handlers first, then the built-in guards, which
    /// defer to any decision already taken. A blocked or substituted call
    /// ends here.
    async fn gate_stage(&self, c: &CallCx<'_>) -> Gated {
        let (cx, call, name) = (c.run, c.call, &c.call.name);
        let mut gate = ToolGate::new(ToolGateInit {
            name: name.clone(),
            call_id: call.id.clone(),
            run_id: cx.run_id.clone(),
            turn_id: c.turn_id.to_owned(),
            resumed: c.resumed,
            run_tool_counts: c.snapshot.clone(),
        });
        // The gate owns the input for the rest of the pipeline (handlers may
        // rewrite it); this is the call's one copy of it.
        gate.input = call.input.clone();
        // The policy (interceptors, a person's approval) comes first; a
        // resumed call passed it in the process that died.
        if let Some(policy) = &self.inner.config.policy
            && !c.resumed
        {
            let request = ToolCallRequest {
                name: name.clone(),
                call_id: call.id.clone(),
                input: std::mem::take(&mut gate.input),
                run_id: cx.run_id.clone(),
            };
            match policy.check(&request, &cx.signal).await {
                PolicyVerdict::Allow => gate.input = request.input,
                PolicyVerdict::Rewrite(input) => gate.input = input,
                PolicyVerdict::Deny(reason) => {
                    self.dispatched(c, ToolOutcome::GateBlock, Some(reason.clone()), &request.input)
                        .await;
                    return Gated::Done(c.result(format!("Blocked: {reason}"), true));
                }
            }
        }
        // A resumed call's handlers see what they kept for it.
        if c.resumed {
            let key = StepKey {
                run_id: cx.run_id.clone(),
                turn: cx.turn,
                kind: StepKind::ToolCall,
                name: call.id.clone(),
            };
            if let Some(StepValue::Tool(done)) = self.inner.config.runtime.record(&key) {
                gate.resume_state = done.resume_state;
            }
        }
        if self.inner.config.hooks.has::<ToolGate>()
            && let Err(e) = self.inner.config.hooks.emit(&mut gate).await
        {
            tracing_warn(&format!("tool:gate handler failed; refusing the call: {e}"));
            gate.block = true;
            gate.reason = format!("a tool:gate handler failed: {e}");
        }
        // A resumed call passed the gate in the process that died; its record
        // answers it, whatever a handler decides now.
        if c.resumed {
            gate.block = false;
            gate.result = None;
        }
        if !gate.resume_state.is_empty() {
            cx.resume_states
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(call.id.clone(), std::mem::take(&mut gate.resume_state));
        }
        let mut steer_note = None;
        let mut reserved = false;
        if !gate.block && gate.result.is_none() && !c.resumed {
            reserved = self.budget_gate(cx, &mut gate, c.turn_id).await;
        }
        if !gate.block && gate.result.is_none() && !c.resumed {
            steer_note = self.repeat_gate(cx, &mut gate, c.turn_id).await;
        }
        let input = std::mem::take(&mut gate.input);
        match gate.decision() {
            GateDecision::Block { reason, .. } => {
                if reserved {
                    self.uncount(cx, name);
                }
                self.dispatched(c, ToolOutcome::GateBlock, Some(reason.clone()), &input)
                    .await;
                Gated::Done(c.result(format!("Blocked: {reason}"), true))
            }
            GateDecision::Substitute(content) => {
                if !reserved {
                    self.count(cx, name);
                }
                self.dispatched(c, ToolOutcome::GateSubstitute, None, &input).await;
                let output = ToolOutput {
                    content,
                    is_error: false,
                    metadata: std::mem::take(&mut gate.metadata),
                };
                Gated::Done(
                    self.finish_call(c, &input, output, Vec::new(), ToolOutcome::GateSubstitute)
                        .await,
                )
            }
            GateDecision::Execute => {
                if !reserved {
                    self.count(cx, name);
                }
                Gated::Execute { input, steer_note }
            }
        }
    }

    /// Stage 2: A tool nobody offers: `tool:unknown` may substitute a result.
    async fn unknown_stage(&self, c: &CallCx<'_>, input: Value) -> CallResult {
        let (cx, call, name) = (c.run, c.call, &c.call.name);
        let hooks = &self.inner.config.hooks;
        let mut unknown = ToolUnknown::new(ToolUnknownInit {
            name: name.clone(),
            call_id: call.id.clone(),
            input: input.clone(),
            run_id: cx.run_id.clone(),
            turn_id: c.turn_id.to_owned(),
        });
        self.observe(&mut unknown).await;
        self.dispatched(c, ToolOutcome::Unknown, None, &input).await;
        if hooks.has::<ToolBefore>() {
            let mut before = ToolBefore::new(ToolBeforeInit {
                name: name.clone(),
                call_id: call.id.clone(),
                run_id: cx.run_id.clone(),
                turn_id: c.turn_id.to_owned(),
                coercions: Vec::new(),
                prior_content: None,
                run_tool_counts: c.snapshot.clone(),
                unknown: true,
            });
            before.input = input.clone();
            self.observe(&mut before).await;
        }
        let available: Vec<&str> = cx.tools.names().collect();
        let text = format!(
            "Tool error: unknown tool `{name}`. Available tools: {}",
            available.join(", ")
        );
        if !unknown.suppress_error {
            let error: SharedError = Arc::new(MessageError(format!("unknown tool `{name}`")));
            if let Some(substitute) = self.tool_error(c, &input, error).await {
                return CallResult {
                    content: substitute,
                    ..c.result(String::new(), true)
                };
            }
        }
        match unknown.result.take() {
            Some(content) => CallResult {
                content,
                ..c.result(String::new(), false)
            },
            None => c.result(text, true),
        }
    }

    /// Emits `tool:error` (when observed) and returns the result a handler
    /// substituted, if any.
    async fn tool_error(&self, c: &CallCx<'_>, input: &Value, error: SharedError) -> Option<ToolResultContent> {
        if !self.inner.config.hooks.has::<ToolError>() {
            return None;
        }
        let mut ev = ToolError::new(ToolErrorInit {
            name: c.call.name.clone(),
            call_id: c.call.id.clone(),
            input: input.clone(),
            run_id: c.run.run_id.clone(),
            turn_id: c.turn_id.to_owned(),
            error,
        });
        self.observe(&mut ev).await;
        ev.result.take()
    }

    /// Stage 3: Validation against the tool's schema, with coercion of near-misses.
    async fn validate_stage(
        &self,
        c: &CallCx<'_>,
        tool: &Arc<dyn zidane_core::tool::Tool>,
        input: Value,
    ) -> Result<(Value, Vec<String>), CallResult> {
        let (cx, call, name) = (c.run, c.call, &c.call.name);
        let hooks = &self.inner.config.hooks;
        let validator = self.validator(name, tool.input_schema());
        match validator.validate(input) {
            Ok(valid) => {
                if !valid.coercions.is_empty() && hooks.has::<ValidationCoerce>() {
                    let mut ev = ValidationCoerce::new(ValidationCoerceInit {
                        name: name.clone(),
                        call_id: call.id.clone(),
                        input: valid.input.clone(),
                        run_id: cx.run_id.clone(),
                        turn_id: c.turn_id.to_owned(),
                        coercions: valid.coercions.clone(),
                        schema: tool.input_schema().clone(),
                    });
                    self.observe(&mut ev).await;
                }
                Ok((valid.input, valid.coercions))
            }
            Err(reason) => {
                if hooks.has::<ValidationReject>() {
                    let mut ev = ValidationReject::new(ValidationRejectInit {
                        name: name.clone(),
                        call_id: call.id.clone(),
                        input: call.input.clone(),
                        run_id: cx.run_id.clone(),
                        turn_id: c.turn_id.to_owned(),
                        reason: reason.clone(),
                        schema: tool.input_schema().clone(),
                    });
                    self.observe(&mut ev).await;
                }
                self.dispatched(c, ToolOutcome::InvalidInput, Some(reason.clone()), &call.input)
                    .await;
                Err(c.result(format!("Validation error: {reason}"), true))
            }
        }
    }

    /// Stage 4: Execution: `tool:before` (which may rewrite the input), the call
    /// itself, and its failure or cancellation.
    async fn execute_stage(
        &self,
        c: &CallCx<'_>,
        tool: &Arc<dyn zidane_core::tool::Tool>,
        input: Value,
        coercions: Vec<String>,
    ) -> CallResult {
        let (cx, call, name) = (c.run, c.call, &c.call.name);
        let hooks = &self.inner.config.hooks;
        self.dispatched(c, ToolOutcome::Execute, None, &input).await;
        let input = if hooks.has::<ToolBefore>() {
            let mut before = ToolBefore::new(ToolBeforeInit {
                name: name.clone(),
                call_id: call.id.clone(),
                run_id: cx.run_id.clone(),
                turn_id: c.turn_id.to_owned(),
                coercions: coercions.clone(),
                prior_content: None,
                run_tool_counts: c.snapshot.clone(),
                unknown: false,
            });
            before.input = input;
            if let Err(e) = hooks.emit(&mut before).await {
                tracing_warn(&format!("tool:before handler failed: {e}"));
            }
            before.input
        } else {
            input
        };
        let executed = self.execute(cx, call, tool, input.clone(), c.turn_id).await;
        let output = match executed {
            Executed::Output(output) => output,
            Executed::Failed(error) => {
                let content = self
                    .tool_error(c, &input, Arc::clone(&error))
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
                    let mut ev = ToolCancelled::new(ToolCancelledInit {
                        name: name.clone(),
                        call_id: call.id.clone(),
                        input: input.clone(),
                        run_id: cx.run_id.clone(),
                        turn_id: c.turn_id.to_owned(),
                        reason,
                        run_tool_counts: c.snapshot.clone(),
                    });
                    self.observe(&mut ev).await;
                }
                return c.result(TOOL_USE_CANCELLED_MESSAGE.to_owned(), true);
            }
            Executed::Interrupted => return c.result(INTERRUPT_MESSAGE_FOR_TOOL_USE.to_owned(), true),
        };
        self.finish_call(c, &input, output, coercions, ToolOutcome::Execute)
            .await
    }

    /// Stage 5: The result: `tool:transform` (which may rewrite it), then
    /// `tool:after`.
    async fn finish_call(
        &self,
        c: &CallCx<'_>,
        input: &Value,
        output: ToolOutput,
        coercions: Vec<String>,
        outcome: ToolOutcome,
    ) -> CallResult {
        let (cx, call) = (c.run, c.call);
        let hooks = &self.inner.config.hooks;
        let bytes = output.content.text_len();
        let mut metadata = output.metadata;
        let content = if hooks.has::<ToolTransform>() {
            let mut transform = ToolTransform::new(ToolTransformInit {
                name: call.name.clone(),
                call_id: call.id.clone(),
                input: input.clone(),
                run_id: cx.run_id.clone(),
                turn_id: c.turn_id.to_owned(),
                coercions: coercions.clone(),
                is_error: output.is_error,
                output_bytes: bytes,
            });
            transform.result = output.content;
            transform.metadata = std::mem::take(&mut metadata);
            if let Err(e) = hooks.emit(&mut transform).await {
                tracing_warn(&format!(
                    "tool:transform handler failed; the result is sent untransformed: {e}"
                ));
            }
            metadata = std::mem::take(&mut transform.metadata);
            transform.result
        } else {
            output.content
        };
        let content = cap_result(content, cx.behavior.max_result_bytes);
        if hooks.has::<ToolAfter>() {
            let mut after = ToolAfter::new(ToolAfterInit {
                name: call.name.clone(),
                call_id: call.id.clone(),
                input: input.clone(),
                run_id: cx.run_id.clone(),
                turn_id: c.turn_id.to_owned(),
                coercions,
                is_error: output.is_error,
                outcome: Some(outcome),
                output_bytes: bytes,
                result: content.clone(),
                run_tool_counts: c.snapshot.clone(),
            });
            self.observe(&mut after).await;
        }
        let budget_bytes = content.text_len();
        let artifacts = if self.inner.config.artifacts {
            declared_artifacts(&metadata)
        } else {
            Vec::new()
        };
        CallResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content,
            is_error: output.is_error,
            budget_bytes,
            artifacts,
        }
    }

    fn validator(&self, name: &str, schema: &Value) -> Arc<InputValidator> {
        let mut cache = self.inner.validators.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(
            cache
                .entry(name.to_owned())
                .or_insert_with(|| Arc::new(InputValidator::new(schema))),
        )
    }

    fn count(&self, cx: &RunCx, name: &str) {
        *cx.run_counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(name.to_owned())
            .or_insert(0) += 1;
    }

    fn uncount(&self, cx: &RunCx, name: &str) {
        if let Some(n) = cx
            .run_counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_mut(name)
        {
            *n = n.saturating_sub(1);
        }
    }

    /// The per-tool budget. Checks and counts under one lock, so concurrent
    /// gates of a batch never overshoot it; returns whether it counted the
    /// call (the pipeline then does not count it again).
    async fn budget_gate(&self, cx: &RunCx, gate: &mut ToolGate, turn_id: &str) -> bool {
        let Some(budget) = cx.behavior.tool_budgets.get(gate.name()) else {
            return false;
        };
        let count = {
            let mut counts = cx.run_counts.lock().unwrap_or_else(PoisonError::into_inner);
            let count = counts.get(gate.name()).copied().unwrap_or(0);
            if count < budget.max {
                *counts.entry(gate.name().to_owned()).or_insert(0) += 1;
                return true;
            }
            count
        };
        let mut ev = ToolBudgetExceeded::new(ToolBudgetExceededInit {
            count,
            max: budget.max,
            mode: budget.mode,
            tool: gate.name().to_owned(),
            turn_id: turn_id.to_owned(),
        });
        self.observe(&mut ev).await;
        match budget.mode {
            zidane_core::events::BudgetMode::Block => {
                gate.block = true;
                gate.reason = budget.message.clone();
            }
            zidane_core::events::BudgetMode::Steer => {
                cx.nudges
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(budget.message.clone());
            }
        }
        false
    }

    /// The repeat guard; returns a steering note to append to the result.
    async fn repeat_gate(&self, cx: &RunCx, gate: &mut ToolGate, turn_id: &str) -> Option<String> {
        let guard = cx.behavior.repeat_guard.as_ref()?;
        if !guard.tools.is_empty() && !guard.tools.iter().any(|t| t == gate.name()) {
            return None;
        }
        let signature = (gate.name().to_owned(), gate.input.to_string());
        let count = {
            let mut history = cx.repeat_history.lock().unwrap_or_else(PoisonError::into_inner);
            history.push(signature.clone());
            match guard.mode {
                RepeatMode::Chain => history.iter().rev().take_while(|s| **s == signature).count(),
                RepeatMode::Window { window } => history
                    .iter()
                    .rev()
                    .take(window as usize)
                    .filter(|s| **s == signature)
                    .count(),
            }
        } as u32;
        if count < guard.threshold {
            return None;
        }
        let mut ev = RepeatGuardExceeded::new(RepeatGuardExceededInit {
            action: guard.action,
            count,
            threshold: guard.threshold,
            tool: gate.name().to_owned(),
            turn_id: turn_id.to_owned(),
        });
        self.observe(&mut ev).await;
        let message = format!(
            "You have called `{}` with the same input {count} times. Stop repeating it and try a different approach.",
            gate.name()
        );
        match guard.action {
            GuardAction::Steer => Some(message),
            GuardAction::Block => {
                gate.block = true;
                gate.reason = message;
                None
            }
            GuardAction::Abort => {
                gate.block = true;
                gate.reason = message;
                if let Some(control) = &self.inner.lock().control {
                    control.abort.abort(Some("repeat-guard"));
                }
                None
            }
        }
    }

    async fn execute(
        &self,
        cx: &RunCx,
        call: &Call,
        tool: &Arc<dyn zidane_core::tool::Tool>,
        input: Value,
        turn_id: &str,
    ) -> Executed {
        let config = &self.inner.config;
        let controller = cx.signal.child();
        {
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
        }
        let state = ToolState::new(Arc::clone(&cx.tool_state));
        let tool_cx = ToolContext::from(ToolCallParts {
            call_id: call.id.clone(),
            name: call.name.clone(),
            input: input.clone(),
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
        });
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
        let timeout = cx.behavior.tool_timeout;
        let in_step = config.tool_state_in_steps;
        let staged = state.clone();
        let resume_state = cx
            .resume_states
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&call.id)
            .unwrap_or_default();
        let work = async move {
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
            let state = if in_step { staged.take_staged() } else { Vec::new() };
            Ok(StepValue::Tool(ToolStep {
                outcome,
                state,
                resume_state,
            }))
        };
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
            return Executed::Failed(Arc::new(MessageError(format!(
                "the durable runtime answered a tool call with a {} step",
                step_kind(&value)
            ))));
        };
        if !replayed {
            if in_step {
                if landed {
                    apply_ops(
                        &mut cx.tool_state.lock().unwrap_or_else(PoisonError::into_inner),
                        &done.state,
                    );
                } else if !done.state.is_empty() {
                    let error: SharedError =
                        Arc::new(MessageError("the step record with these writes was not stored".into()));
                    self.state_not_committed(cx, call, done.state.clone(), error).await;
                }
            } else {
                let ops = state.take_staged();
                if !ops.is_empty() {
                    self.commit_state(cx, call, ops).await;
                }
            }
        }
        match done.outcome {
            ToolStepOutcome::Output(output) => Executed::Output(output),
            ToolStepOutcome::Failed(message) => Executed::Failed(Arc::new(MessageError(message))),
        }
    }

    async fn commit_state(&self, cx: &RunCx, call: &Call, ops: Vec<zidane_core::events::ToolStateOp>) {
        match self.inner.config.tool_state.commit(&ops).await {
            Ok(()) => apply_ops(&mut cx.tool_state.lock().unwrap_or_else(PoisonError::into_inner), &ops),
            Err(error) => self.state_not_committed(cx, call, ops, Arc::from(error)).await,
        }
    }

    /// `tool-state:commit-failed`, and the log line when no handler owns
    /// the reporting.
    #[allow(clippy::print_stderr)] // unhandled, the contract is stderr, subscriber or not
    async fn state_not_committed(
        &self,
        cx: &RunCx,
        call: &Call,
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

    /// Pushes the tool-results turn, then enforces the output budget and
    /// queues the nudges the guards asked for.
    pub(crate) async fn push_results(
        &self,
        cx: &RunCx,
        assistant: SessionTurn,
        results: Vec<CallResult>,
        turn_id: &str,
    ) -> Result<(), RunErrorKind> {
        let content: Vec<ContentBlock> = results
            .iter()
            .map(|r| ContentBlock::ToolResult {
                tool_use_id: r.call_id.clone(),
                content: r.content.clone(),
                is_error: r.is_error,
            })
            .collect();
        let message = self.push_turn(Role::User, content, None);
        let listed: Vec<ToolResult> = results
            .iter()
            .map(|r| ToolResult {
                call_id: r.call_id.clone(),
                name: r.name.clone(),
                content: r.content.clone(),
                is_error: r.is_error,
            })
            .collect();
        let mut ev = ToolResultsAfter::new(ToolResultsAfterInit {
            message: message.clone(),
            results: listed,
            turn: cx.turn,
            turn_id: turn_id.to_owned(),
        });
        self.observe(&mut ev).await;
        self.flush(&[assistant, message]).await;
        // What the results declared, once the turns that hold them are kept.
        let records: Vec<ArtifactRecord> = results
            .iter()
            .flat_map(|r| {
                r.artifacts.iter().map(|artifact| ArtifactRecord {
                    artifact: artifact.clone(),
                    call_id: r.call_id.clone(),
                    name: r.name.clone(),
                    turn_id: turn_id.to_owned(),
                })
            })
            .collect();
        if !records.is_empty()
            && let Some(sink) = &self.inner.config.sink
        {
            let mark = TurnMark {
                run_id: &cx.run_id,
                turn: cx.turn,
            };
            sink.artifacts(&records, mark).await;
        }

        let bytes: usize = results.iter().map(|r| r.budget_bytes).sum();
        if let Some(budget) = cx.behavior.tool_output_budget
            && bytes as u64 > budget
        {
            let mut ev = BudgetExceeded::new(BudgetExceededInit {
                budget,
                bytes: bytes as u64,
                turn: cx.turn,
                turn_id: turn_id.to_owned(),
            });
            self.observe(&mut ev).await;
            self.queue_internal(format!(
                "The tool output of the last turn was {bytes} bytes, over the {budget}-byte budget. Summarize what you learned so far before calling more tools, and request less output at a time."
            ));
        }
        let nudges = std::mem::take(&mut *cx.nudges.lock().unwrap_or_else(PoisonError::into_inner));
        for nudge in nudges {
            self.queue_internal(nudge);
        }
        Ok(())
    }
}

/// A result's text cut to `max` bytes (the head kept, with a note of what
/// was cut); images and documents pass.
fn cap_result(content: ToolResultContent, max: Option<usize>) -> ToolResultContent {
    let Some(max) = max else { return content };
    let total = content.text_len();
    if total <= max {
        return content;
    }
    let note = format!("\n[... the result was {total} bytes; cut at {max}: ask for less at a time]");
    let cut = |text: &mut String, keep: usize| {
        let mut end = keep.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    };
    match content {
        ToolResultContent::Text(mut text) => {
            cut(&mut text, max);
            text.push_str(&note);
            ToolResultContent::Text(text)
        }
        ToolResultContent::Parts(mut parts) => {
            let mut left = max;
            let mut noted = false;
            for part in &mut parts {
                if let ContentBlock::Text { text } = part {
                    if noted {
                        text.clear();
                    } else if text.len() > left {
                        cut(text, left);
                        text.push_str(&note);
                        noted = true;
                    } else {
                        left -= text.len();
                    }
                }
            }
            ToolResultContent::Parts(parts)
        }
    }
}

fn append_text(content: &mut ToolResultContent, note: &str) {
    match content {
        ToolResultContent::Text(text) => {
            text.push_str("\n\n");
            text.push_str(note);
        }
        ToolResultContent::Parts(parts) => parts.push(ContentBlock::text(note)),
    }
}

pub(crate) fn step_kind(value: &StepValue) -> &'static str {
    match value {
        StepValue::Model(_) => "model",
        StepValue::Tool(_) => "tool",
        StepValue::Decision(_) => "decision",
        StepValue::Checkpoint(_) => "checkpoint",
    }
}

/// Polls a tool's future, turning a panic into an error result.
struct CatchUnwind<'a> {
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

/// The artifacts a result declares in its reserved `metadata.artifacts`
/// (an array of `{id, kind, title, data}`); entries that are not artifacts
/// are left out.
fn declared_artifacts(metadata: &zidane_core::events::ToolResultMetadata) -> Vec<zidane_core::events::SessionArtifact> {
    metadata
        .get("artifacts")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|a| serde_json::from_value(a.clone()).ok())
                .collect()
        })
        .unwrap_or_default()
}

/// What the run may still spend under its caps (a child's caps are at most
/// this).
fn remaining_budget(cx: &RunCx) -> zidane_core::seams::SpawnBudget {
    let s = &cx.stats;
    let used = s.total_in + s.total_out + s.total_cache_read + s.total_cache_creation;
    zidane_core::seams::SpawnBudget {
        max_cost_usd: cx
            .behavior
            .max_cost_usd
            .map(|max| (max - s.cost.unwrap_or(0.0)).max(0.0)),
        max_total_tokens: cx.behavior.max_total_tokens.map(|max| max.saturating_sub(used)),
    }
}
