//! The agent's part of goals: arming a run with its goal, checking it when
//! the model ends its answer, and keeping its progress in the session.

use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use zidane_core::durable::{Durability, Step, StepError, StepKey, StepKind, StepValue};
use zidane_core::events::SharedError;

use zidane_core::events::{AgentStats, RunBeforeEnd, RunBeforeEndInit, RunStatus};
use zidane_core::execution::{ExecOptions, ExecOutput};
use zidane_provider::AbortSignal;

use crate::agent::Agent;
use crate::decide::DecisionRequest;
use crate::goal::{
    DEFAULT_GOAL_MAX_TURNS, GOAL_KEY, Goal, GoalProgress, GoalStatus, GoalVerdict, command_reason, evaluator_question,
    follow_up, transcript_tail,
};

use super::run::RunPlan;

/// How much of the transcript's end the evaluator reads.
const TRANSCRIPT_TAIL: usize = 8_000;

impl Agent {
    /// The goal of the agent's session (or of its last run, without a
    /// session) and what it has spent; `None` when none was set.
    pub fn goal(&self) -> Option<GoalProgress> {
        if let Some(progress) = self.inner.goal.lock().clone() {
            return Some(progress);
        }
        let state = self.inner.session.state();
        let value = state.as_ref()?.metadata.get(GOAL_KEY)?.clone();
        drop(state);
        let progress: GoalProgress = serde_json::from_value(value).ok()?;
        *self.inner.goal.lock() = Some(progress.clone());
        Some(progress)
    }

    /// Takes `progress` as the goal's, in memory: a host that replays a
    /// run from its own journal (Restate's) hands over the last progress
    /// the earlier attempt recorded, which the replayed turns did not
    /// compute again.
    pub fn restore_goal(&self, progress: GoalProgress) {
        *self.inner.goal.lock() = Some(progress);
    }

    /// Whether run `run_id` works toward a goal still active.
    pub(crate) fn goal_active_in(&self, run_id: &str) -> bool {
        self.goal()
            .is_some_and(|p| p.status == GoalStatus::Active && p.run_id == run_id)
    }

    /// Stops checking the goal: a run on it ends when the model ends its
    /// answer. `false` when there is no active goal.
    pub async fn pause_goal(&self) -> bool {
        self.set_goal_status(GoalStatus::Active, GoalStatus::Paused).await
    }

    /// Checks a paused goal again from the next end of an answer (a run
    /// with the same goal continues what it spent). `false` when there is
    /// no paused goal.
    pub async fn resume_goal(&self) -> bool {
        self.set_goal_status(GoalStatus::Paused, GoalStatus::Active).await
    }

    /// Forgets the goal and what it spent. `false` when there was none.
    pub async fn clear_goal(&self) -> bool {
        if self.goal().is_none() {
            return false;
        }
        *self.inner.goal.lock() = None;
        if self.inner.session.state().is_some()
            && let Err(e) = self.set_session_meta(GOAL_KEY, serde_json::Value::Null).await
        {
            tracing::warn!(target: "zidane", "the cleared goal could not be recorded in the session: {e}");
        }
        true
    }

    async fn set_goal_status(&self, from: GoalStatus, to: GoalStatus) -> bool {
        let Some(mut progress) = self.goal().filter(|p| p.status == from) else {
            return false;
        };
        progress.status = to;
        self.keep_goal(progress).await;
        true
    }

    /// Keeps the goal's progress in memory and in the session's metadata
    /// (a step of the run when it is durable).
    async fn keep_goal(&self, progress: GoalProgress) {
        *self.inner.goal.lock() = Some(progress.clone());
        if self.inner.session.state().is_none() {
            return;
        }
        let value = serde_json::to_value(&progress).unwrap_or_default();
        if let Err(e) = self.set_session_meta(GOAL_KEY, value).await {
            tracing::warn!(target: "zidane", "the goal's progress could not be recorded in the session: {e}");
        }
    }

    /// Arms a run with its goal: the one given, or, for a resumed run, the
    /// active goal it was working toward. The same goal given again (by
    /// its condition) continues what it spent.
    pub(crate) async fn arm_goal(&self, plan: &mut RunPlan, goal: Option<Goal>, signal: &AbortSignal) {
        let run_id = plan.run_id().to_owned();
        let current = self.goal();
        let progress = match goal {
            Some(goal) => match current {
                Some(mut same)
                    if same.goal.condition == goal.condition
                        && matches!(same.status, GoalStatus::Active | GoalStatus::Paused) =>
                {
                    same.goal = goal;
                    same.status = GoalStatus::Active;
                    same.stopped = None;
                    same.run_id = run_id;
                    same
                }
                _ => GoalProgress::new(goal, run_id, self.inner.clock.now().as_millis()),
            },
            None if plan.is_resume() => match current {
                Some(progress) if progress.run_id == run_id && progress.status == GoalStatus::Active => progress,
                _ => return,
            },
            None => return,
        };
        plan.set_default_max_turns(DEFAULT_GOAL_MAX_TURNS);
        self.keep_goal(progress).await;
        let agent = self.clone();
        let signal = signal.clone();
        plan.add_hook(move |hooks| {
            hooks.on::<RunBeforeEnd, _>(move |ev, _cx| {
                let agent = agent.clone();
                let signal = signal.clone();
                Box::pin(async move {
                    agent.check_goal(ev, &signal).await;
                    Ok(())
                })
            })
        });
    }

    /// The model ended its answer: the goal's check runs (unless a
    /// finished one was recorded for this end), and an unmet goal keeps the
    /// run going with the check's reason.
    async fn check_goal(&self, ev: &mut RunBeforeEnd, signal: &AbortSignal) {
        let Some(mut progress) = self.goal().filter(|p| p.status == GoalStatus::Active) else {
            return;
        };
        let (run_id, turn) = (ev.run_id().to_owned(), ev.turn());
        let verdict = match progress.verdict_at(&run_id, turn) {
            // Checked before the process stopped: not run again.
            Some(verdict) => verdict.clone(),
            None => {
                if let Some(why) = progress.spent(self.inner.clock.now().as_millis()) {
                    stop_unmet(&mut progress, &why);
                    self.keep_goal(progress).await;
                    return;
                }
                let verdict = self.run_goal_check(&progress.goal, run_id.clone(), turn, signal).await;
                // A host replaying a journal hands over the progress its
                // earlier attempt recorded once the replay is done (which
                // may be while this check ran): go on from that.
                if let Some(current) = self.goal().filter(|p| p.goal.condition == progress.goal.condition) {
                    progress = current;
                }
                if progress.verdict_at(&run_id, turn).is_none() {
                    progress.verdicts.push(verdict.clone());
                }
                verdict
            }
        };
        if verdict.met {
            progress.status = GoalStatus::Met;
            self.keep_goal(progress).await;
            return;
        }
        if progress.checks_left() == 0 {
            let why = format!("its {} checks are spent", progress.goal.budget.max_checks);
            stop_unmet(&mut progress, &why);
            self.keep_goal(progress).await;
            return;
        }
        let message = follow_up(&progress, &verdict);
        self.keep_goal(progress).await;
        ev.follow_up(message);
    }

    /// A run on a goal stopped after the model's final answer, before the
    /// goal's check said whether it goes on: the check runs now (a verdict
    /// it recorded is used as it is), and an unmet goal goes on in a new
    /// run whose prompt is the check's reason.
    pub(crate) async fn end_goal_run(
        &self,
        run_id: &str,
        turn: u32,
        signal: &AbortSignal,
    ) -> Result<AgentStats, crate::AgentError> {
        let mut ev = RunBeforeEnd::new(RunBeforeEndInit {
            run_id: run_id.to_owned(),
            session_id: self.inner.session_id(),
            session: None,
            turn,
        });
        self.check_goal(&mut ev, signal).await;
        let Some(follow_up) = ev.follow_up_message().map(str::to_owned) else {
            let mut stats = AgentStats::default();
            stats.status = RunStatus::Completed;
            return Ok(stats);
        };
        let goal = self.goal().map(|p| p.goal);
        let mut options = crate::AgentRunOptions::prompt(follow_up);
        options.goal = goal;
        Box::pin(self.launch(options, None, signal.clone())).await
    }

    /// A run on a goal ended: one that stopped before a check said it was
    /// met (its turn or cost limit, an error) is unmet; an aborted or
    /// suspended one stays active, to continue.
    pub(crate) async fn settle_goal(&self, run_id: &str, stats: Option<&AgentStats>) {
        let Some(mut progress) = self
            .goal()
            .filter(|p| p.status == GoalStatus::Active && p.run_id == run_id)
        else {
            return;
        };
        let why = match stats.map(|s| s.status) {
            Some(RunStatus::Aborted | RunStatus::Suspended) => return,
            Some(RunStatus::MaxTurns) => "the run reached its turn limit".to_owned(),
            Some(RunStatus::Completed) => "the run ended before a check confirmed it".to_owned(),
            Some(RunStatus::Error) | None => "the run failed".to_owned(),
        };
        stop_unmet(&mut progress, &why);
        self.keep_goal(progress).await;
    }

    /// Runs the goal's check.
    async fn run_goal_check(&self, goal: &Goal, run_id: String, turn: u32, signal: &AbortSignal) -> GoalVerdict {
        let started = Instant::now();
        let mut verdict = GoalVerdict {
            run_id,
            turn,
            met: true,
            reason: String::new(),
            duration_ms: 0,
            tokens: 0,
        };
        if let Some(command) = goal.check.command() {
            let (met, reason) = self
                .command_check_step(command, goal, &verdict.run_id, turn, signal)
                .await;
            verdict.met = met;
            verdict.reason = reason;
        }
        if verdict.met && goal.check.evaluates() {
            let transcript = transcript_tail(&self.turns(), TRANSCRIPT_TAIL);
            let decision = self
                .decide(DecisionRequest::Predicate {
                    question: evaluator_question(&goal.condition, &transcript),
                })
                .await;
            verdict.tokens = decision.usage.as_ref().map_or(0, |u| u.input + u.output);
            let probability = decision
                .answers
                .as_ref()
                .and_then(|a| a.get("probability"))
                .and_then(serde_json::Value::as_f64);
            let (met, reason) = match (decision.ok, probability) {
                (true, Some(p)) if p >= 0.5 => (true, format!("the evaluator judged it met (probability {p:.2})")),
                (true, Some(p)) => (
                    false,
                    format!("the evaluator judged it not met yet (probability {p:.2}); look again at what it asks"),
                ),
                _ => (
                    false,
                    format!(
                        "the evaluator could not answer: {}",
                        decision.reason.as_deref().unwrap_or("no answer")
                    ),
                ),
            };
            verdict.met = met;
            verdict.reason = if verdict.reason.is_empty() {
                reason
            } else {
                format!("{}; {reason}", verdict.reason)
            };
        }
        verdict.duration_ms = started.elapsed().as_millis() as u64;
        verdict
    }

    /// The check command's verdict as a durable step of the run, keyed by
    /// the run and the loop turn: a resumed or replayed run (on any
    /// runtime, Restate's journal included) takes the recorded verdict
    /// instead of running the command again; a check cut off before it
    /// finished runs again, once.
    async fn command_check_step(
        &self,
        command: &str,
        goal: &Goal,
        run_id: &str,
        turn: u32,
        signal: &AbortSignal,
    ) -> (bool, String) {
        let check = async {
            match self.run_check_command(command, goal, signal).await {
                Ok(output) if output.exit_code == Some(0) && !output.timed_out => {
                    (true, format!("`{command}` exited with 0"))
                }
                Ok(output) => (false, command_reason(command, &output)),
                Err(e) => (false, format!("`{command}` could not run: {e}")),
            }
        };
        let runtime = Arc::clone(&self.run_loop().config().runtime);
        let step = Step {
            key: StepKey {
                run_id: run_id.to_owned(),
                turn,
                kind: StepKind::Decision,
                name: "goal-check".to_owned(),
            },
            durability: Durability::Safe,
        };
        let work = async move {
            let (met, reason) = check.await;
            Ok::<_, SharedError>(StepValue::Decision(json!({ "met": met, "reason": reason })))
        };
        let value = match runtime.step(step, Box::pin(work)).await {
            Ok(value) => value,
            Err(StepError::Record { value, .. }) => *value,
            Err(e) => return (false, format!("the check's verdict could not be recorded: {e}")),
        };
        if let Err(e) = runtime.sync(run_id).await {
            tracing::warn!(target: "zidane", "a goal check could not be recorded: {e}");
        }
        match value {
            StepValue::Decision(v) => (
                v["met"].as_bool().unwrap_or(false),
                v["reason"].as_str().unwrap_or_default().to_owned(),
            ),
            _ => (false, "the recorded check is not a verdict".to_owned()),
        }
    }

    async fn run_check_command(
        &self,
        command: &str,
        goal: &Goal,
        signal: &AbortSignal,
    ) -> Result<ExecOutput, crate::AgentError> {
        let handle = self.ensure_execution().await?;
        let options = ExecOptions {
            timeout: Some(goal.budget.check_timeout),
            signal: signal.clone(),
            ..Default::default()
        };
        self.inner
            .exec
            .context()
            .exec(&handle, command, options)
            .await
            .map_err(crate::AgentError::Execution)
    }
}

fn stop_unmet(progress: &mut GoalProgress, why: &str) {
    progress.status = GoalStatus::Unmet;
    let last = progress
        .last()
        .filter(|v| !v.met)
        .map(|v| format!(" The last check said: {}", v.reason.trim_end()))
        .unwrap_or_default();
    progress.stopped = Some(format!(
        "The goal \"{}\" is not met: {why}.{last}",
        progress.goal.condition
    ));
}
