//! Goals in a conversation: `--goal` and `/goal` give the next runs a
//! condition to keep working toward; `/goal` alone shows it, and `pause`,
//! `resume` and `clear` steer it.

use zidane::agent::{Goal, GoalProgress, GoalStatus};

use super::{Conversation, Submission};

/// What `/goal ARGUMENT` does.
#[derive(Debug, Clone)]
pub enum GoalAction {
    /// Tell the person this.
    Say(String),
    /// Run this prompt (the goal is set for it).
    Run(Submission),
}

/// `/goal`'s usage line.
pub const GOAL_USAGE: &str =
    "usage: /goal [--check \"COMMAND\"] [--max-checks N] CONDITION | /goal [pause|resume|clear]";

impl Conversation {
    /// The goal of the session and what it has spent.
    pub fn goal(&self) -> Option<GoalProgress> {
        self.inner.agent.goal()
    }

    /// Whether the next runs work toward a goal.
    pub fn goal_pending(&self) -> bool {
        self.inner.state.lock().goal.is_some()
    }

    /// Sets (or with `None`, forgets) the goal the next runs work toward.
    pub fn set_goal(&self, goal: Option<Goal>) {
        self.inner.state.lock().goal = goal;
    }

    /// `/goal ARGUMENT`: shows, pauses, resumes or clears the goal, or sets
    /// a new one and runs its condition as the prompt.
    pub async fn goal_command(&self, argument: &str) -> GoalAction {
        let agent = &self.inner.agent;
        match argument.trim() {
            "" => GoalAction::Say(
                self.goal()
                    .map_or_else(|| format!("No goal. {GOAL_USAGE}"), |progress| describe(&progress)),
            ),
            "pause" => GoalAction::Say(if agent.pause_goal().await {
                "The goal is paused: the run ends when the model ends its answer.".to_owned()
            } else {
                "No active goal to pause.".to_owned()
            }),
            "resume" => {
                let Some(progress) = self.goal().filter(|p| p.status == GoalStatus::Paused) else {
                    return GoalAction::Say("No paused goal to resume.".to_owned());
                };
                agent.resume_goal().await;
                self.set_goal(Some(progress.goal.clone()));
                if self.running() {
                    return GoalAction::Say("The goal is checked again at the end of the model's answer.".to_owned());
                }
                GoalAction::Run(Submission::text(format!(
                    "Continue working toward the goal: {}",
                    progress.goal.condition
                )))
            }
            "clear" => {
                self.set_goal(None);
                GoalAction::Say(if agent.clear_goal().await {
                    "The goal is cleared.".to_owned()
                } else {
                    "No goal to clear.".to_owned()
                })
            }
            text => match parse(text) {
                Ok(goal) => {
                    let prompt = goal.condition.clone();
                    self.set_goal(Some(goal));
                    GoalAction::Run(Submission::text(prompt))
                }
                Err(message) => GoalAction::Say(message),
            },
        }
    }

    /// After a run: a goal met or out of budget is not carried to the next
    /// runs.
    pub(super) fn settle_goal(&self) {
        let done = self
            .goal()
            .is_some_and(|p| matches!(p.status, GoalStatus::Met | GoalStatus::Unmet));
        if done {
            self.set_goal(None);
        }
    }
}

/// `[--check "COMMAND"] [--max-checks N] [--evaluate] CONDITION` as a goal.
fn parse(text: &str) -> Result<Goal, String> {
    let words = shell_words::split(text).map_err(|e| format!("{e}; {GOAL_USAGE}"))?;
    let mut check = None;
    let mut max_checks = None;
    let mut evaluate = false;
    let mut condition = Vec::new();
    let mut words = words.into_iter();
    while let Some(word) = words.next() {
        match word.as_str() {
            "--check" => {
                check = Some(
                    words
                        .next()
                        .ok_or_else(|| format!("--check needs a command; {GOAL_USAGE}"))?,
                )
            }
            "--max-checks" => {
                let n = words.next().and_then(|n| n.parse::<u32>().ok()).filter(|n| *n > 0);
                max_checks = Some(n.ok_or_else(|| format!("--max-checks needs a positive number; {GOAL_USAGE}"))?);
            }
            "--evaluate" => evaluate = true,
            _ => condition.push(word),
        }
    }
    if condition.is_empty() {
        return Err(format!("The goal needs a condition; {GOAL_USAGE}"));
    }
    Ok(goal_of(condition.join(" "), check, max_checks, evaluate))
}

/// A goal from its parts, as `--goal` and `/goal` give them: checked by the
/// command when there is one (and by the evaluator too with `evaluate`),
/// else by the evaluator.
pub fn goal_of(condition: String, check: Option<String>, max_checks: Option<u32>, evaluate: bool) -> Goal {
    let mut goal = Goal::new(condition);
    if let Some(command) = check {
        goal = goal.check_command(command);
        if evaluate {
            goal = goal.and_evaluator();
        }
    }
    if let Some(n) = max_checks {
        goal = goal.max_checks(n);
    }
    goal
}

/// The goal, its state, its checks and its last verdict, for `/goal`.
pub fn describe(progress: &GoalProgress) -> String {
    let mut out = progress.summary();
    let check = match (&progress.goal.check.command(), progress.goal.check.evaluates()) {
        (Some(command), true) => format!("`{command}`, then the evaluator"),
        (Some(command), false) => format!("`{command}`"),
        (None, _) => "the evaluator".to_owned(),
    };
    out.push_str(&format!("\nchecked by {check}"));
    if let Some(last) = progress.last() {
        let first = last.reason.lines().next().unwrap_or_default();
        out.push_str(&format!(
            "\nlast check: {} — {first}",
            if last.met { "met" } else { "not met" }
        ));
    }
    if let Some(stopped) = &progress.stopped {
        out.push_str(&format!("\n{stopped}"));
    }
    out
}
