//! The gate stage: the policy, `tool:gate` handlers, the budget and
//! repeat guards.

use crate::behavior::RepeatMode;
use crate::run::{RunCx, RunLoop, tracing_warn};
use zidane_core::events::SharedError;
use zidane_core::events::{GateDecision, GuardAction, RepeatGuardExceeded, ToolBudgetExceeded, ToolGate, ToolOutcome};
use zidane_core::events::{RepeatGuardExceededInit, ToolBudgetExceededInit, ToolGateInit};
use zidane_core::seams::{Durability, PolicyVerdict, Step, StepKey, StepKind, StepValue, ToolCallRequest};
use zidane_core::tool::ToolOutput;

use super::{CallCx, CallResult, Gated};

impl RunLoop {
    /// Stage 1: The gate: host handlers first, then the built-in guards, which
    /// defer to any decision already taken. A blocked or substituted call
    /// ends here.
    pub(super) async fn gate_stage(&self, c: &CallCx<'_>) -> Gated {
        let (cx, call) = (c.run, c.call);
        let mut gate = ToolGate::new(call_init!(
            ToolGateInit {
                resumed: c.resumed,
                run_tool_counts: c.snapshot.clone(),
            },
            c
        ));
        // The gate owns the input for the rest of the pipeline (handlers may
        // rewrite it); this is the call's one copy of it.
        gate.input = call.input.clone();
        // The policy (interceptors, a person's approval) comes first; a
        // resumed call passed it in the process that died.
        if !c.resumed
            && let Some(refused) = self.policy_stage(c, &mut gate).await
        {
            return Gated::Done(refused);
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
        self.gate_decision(c, gate, reserved, steer_note).await
    }

    /// The policy's verdict on the call: `Some` result when it refuses the
    /// call; otherwise the gate's input is the one to run with.
    async fn policy_stage(&self, c: &CallCx<'_>, gate: &mut ToolGate) -> Option<CallResult> {
        let policy = self.inner.config.policy.as_ref()?;
        let request = ToolCallRequest {
            name: c.call.name.clone(),
            call_id: c.call.id.clone(),
            input: std::mem::take(&mut gate.input),
            run_id: c.run.run_id.clone(),
        };
        // The verdict is a durable step: a resumed or replayed run takes it
        // from the record, so a person is never asked twice.
        let step = Step {
            key: StepKey {
                run_id: c.run.run_id.clone(),
                turn: c.run.turn,
                kind: StepKind::Decision,
                name: format!("policy:{}", c.call.id),
            },
            durability: Durability::Safe,
        };
        let ask = async {
            let verdict = policy.check(&request, &c.run.signal).await;
            Ok::<_, SharedError>(StepValue::Decision(verdict.to_value()))
        };
        let runtime = &self.inner.config.runtime;
        let recorded = runtime.step(step, Box::pin(ask)).await;
        // A person's answer is written at once, not with the turn.
        if policy.asked(&c.call.id)
            && let Err(e) = runtime.sync(&c.run.run_id).await
        {
            tracing_warn(&format!("the approval of `{}` could not be recorded: {e}", c.call.id));
        }
        let verdict = match recorded {
            Ok(StepValue::Decision(value)) => PolicyVerdict::from_value(&value)
                .unwrap_or_else(|| PolicyVerdict::Deny("the recorded verdict cannot be read".into())),
            Ok(_) => PolicyVerdict::Deny("the recorded step is not a verdict".into()),
            Err(e) => PolicyVerdict::Deny(format!("the verdict could not be recorded: {e}")),
        };
        match verdict {
            PolicyVerdict::Allow => gate.input = request.input,
            PolicyVerdict::Rewrite(input) => gate.input = input,
            PolicyVerdict::Deny(reason) => {
                self.dispatched(c, ToolOutcome::GateBlock, Some(reason.clone()), &request.input)
                    .await;
                return Some(c.result(format!("Blocked: {reason}"), true));
            }
        }
        None
    }

    /// What the gate decided: blocked, answered by a substitute result, or
    /// run (the call counted against its budget once).
    async fn gate_decision(
        &self,
        c: &CallCx<'_>,
        mut gate: ToolGate,
        reserved: bool,
        steer_note: Option<String>,
    ) -> Gated {
        let (cx, name) = (c.run, &c.call.name);
        let input = std::mem::take(&mut gate.input);
        match gate.decision() {
            GateDecision::Block { reason, .. } => {
                if reserved {
                    self.uncount(cx, name);
                }
                self.dispatched(c, ToolOutcome::GateBlock, Some(reason.clone()), &input)
                    .await;
                let mut result = c.result(format!("Blocked: {reason}"), true);
                // What the gate's handlers put in `metadata` stays with the
                // refusal: the artifacts it declares are the session's.
                if self.inner.config.artifacts {
                    result.artifacts = super::finish::declared_artifacts(&gate.metadata);
                }
                Gated::Done(result)
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

    pub(super) fn count(&self, cx: &RunCx, name: &str) {
        *cx.run_counts.lock().entry(name.to_owned()).or_insert(0) += 1;
    }

    pub(super) fn uncount(&self, cx: &RunCx, name: &str) {
        if let Some(n) = cx.run_counts.lock().get_mut(name) {
            *n = n.saturating_sub(1);
        }
    }

    /// The per-tool budget. Checks and counts under one lock, so concurrent
    /// gates of a batch never overshoot it; returns whether it counted the
    /// call (the pipeline then does not count it again).
    pub(super) async fn budget_gate(&self, cx: &RunCx, gate: &mut ToolGate, turn_id: &str) -> bool {
        let Some(budget) = cx.behavior.tool_budgets.get(gate.name()) else {
            return false;
        };
        let count = {
            let mut counts = cx.run_counts.lock();
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
                cx.nudges.lock().push(budget.message.clone());
            }
        }
        false
    }

    /// The repeat guard; returns a steering note to append to the result.
    pub(super) async fn repeat_gate(&self, cx: &RunCx, gate: &mut ToolGate, turn_id: &str) -> Option<String> {
        let guard = cx.behavior.repeat_guard.as_ref()?;
        if !guard.tools.is_empty() && !guard.tools.iter().any(|t| t == gate.name()) {
            return None;
        }
        let signature = (gate.name().to_owned(), gate.input.to_string());
        let count = {
            let mut history = cx.repeat_history.lock();
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
}
