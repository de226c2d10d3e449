//! Goals: a condition a run keeps working toward until a check says it is
//! met or the goal's budget is spent.
//!
//! A goal rides on `run:beforeEnd`: when the model ends its answer, the
//! check runs (a command, the decision provider, or both); when it says
//! "not met", its reason is the run's next message. Each verdict is kept
//! in the session's metadata under [`GOAL_KEY`] before the end decision is
//! recorded, so a run resumed after a crash neither runs a finished check
//! again nor forgets the budget spent.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The session metadata key of the goal's progress.
pub const GOAL_KEY: &str = "goal";

/// Checks a goal may take when the host gives no budget.
pub const DEFAULT_GOAL_MAX_CHECKS: u32 = 10;
/// Wall time a goal may take, from its first run, when the host gives no
/// budget.
pub const DEFAULT_GOAL_MAX_DURATION: Duration = Duration::from_secs(60 * 60);
/// How long a check command may run.
pub const DEFAULT_GOAL_CHECK_TIMEOUT: Duration = Duration::from_secs(10 * 60);
/// Model turns a goal's run may take when the run sets no `max_turns`.
pub const DEFAULT_GOAL_MAX_TURNS: u32 = 100;

/// What a model reads of a failing check command's output, at most: its
/// last lines, where test runners and compilers put what failed.
const CHECK_OUTPUT_TAIL: usize = 4_000;

/// A condition, how to check it, and a budget.
///
/// ```
/// use zidane_agent::{AgentRunOptions, Goal};
/// let mut run = AgentRunOptions::prompt("Make the tests pass.");
/// run.goal = Some(Goal::new("the tests pass").check_command("cargo test").max_checks(5));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Goal {
    /// The condition, in words (the evaluator and the model read it).
    pub condition: String,
    /// How it is checked.
    pub check: GoalCheck,
    /// How much the goal may spend (the defaults when not given).
    #[serde(default)]
    pub budget: GoalBudget,
}

impl Goal {
    /// A goal checked by the decision provider, with the default budget.
    pub fn new(condition: impl Into<String>) -> Self {
        Goal {
            condition: condition.into(),
            check: GoalCheck::Evaluator,
            budget: GoalBudget::default(),
        }
    }

    /// Checked by a shell command instead (met when it exits 0); with
    /// [`Goal::and_evaluator`], by both.
    pub fn check_command(mut self, command: impl Into<String>) -> Self {
        self.check = GoalCheck::Command {
            command: command.into(),
        };
        self
    }

    /// The command checks first; when it passes, the evaluator judges too.
    pub fn and_evaluator(mut self) -> Self {
        if let GoalCheck::Command { command } = self.check {
            self.check = GoalCheck::Both { command };
        }
        self
    }

    /// At most `checks` checks.
    pub fn max_checks(mut self, checks: u32) -> Self {
        self.budget.max_checks = checks;
        self
    }

    /// At most `duration` of wall time from the goal's first run.
    pub fn max_duration(mut self, duration: Duration) -> Self {
        self.budget.max_duration = duration;
        self
    }
}

/// How a goal is checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum GoalCheck {
    /// A shell command in the agent's execution context (its folder and
    /// sandbox): met when it exits 0; otherwise the end of its output is
    /// the reason the model reads.
    Command {
        /// The command line.
        command: String,
    },
    /// The decision provider judges the condition against the run's last
    /// answer and the transcript's end.
    Evaluator,
    /// The command, then, when it passes, the evaluator.
    Both {
        /// The command line.
        command: String,
    },
}

impl GoalCheck {
    /// The command, when one checks.
    pub fn command(&self) -> Option<&str> {
        match self {
            GoalCheck::Command { command } | GoalCheck::Both { command } => Some(command),
            GoalCheck::Evaluator => None,
        }
    }

    /// Whether the decision provider judges.
    pub fn evaluates(&self) -> bool {
        matches!(self, GoalCheck::Evaluator | GoalCheck::Both { .. })
    }
}

/// What a goal may spend. Turns and cost are the run's own limits
/// (`BehaviorOverride::max_turns` and `max_cost_usd`; a goal's run without
/// a turn limit gets [`DEFAULT_GOAL_MAX_TURNS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GoalBudget {
    /// Checks at most; the goal stops unmet after the last one fails.
    pub max_checks: u32,
    /// Wall time from the goal's first run.
    #[serde(with = "millis")]
    pub max_duration: Duration,
    /// How long one check command may run.
    #[serde(with = "millis")]
    pub check_timeout: Duration,
}

impl Default for GoalBudget {
    fn default() -> Self {
        GoalBudget {
            max_checks: DEFAULT_GOAL_MAX_CHECKS,
            max_duration: DEFAULT_GOAL_MAX_DURATION,
            check_timeout: DEFAULT_GOAL_CHECK_TIMEOUT,
        }
    }
}

/// Where a goal stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum GoalStatus {
    /// Checked whenever the model ends its answer.
    Active,
    /// Not checked; a run ends when the model ends its answer.
    Paused,
    /// A check said it is met.
    Met,
    /// The budget was spent first (the last verdict says what is unmet).
    Unmet,
}

/// One check's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoalVerdict {
    /// The run it was checked in.
    pub run_id: String,
    /// The run's loop turn when the model ended its answer.
    pub turn: u32,
    /// Whether the condition holds.
    pub met: bool,
    /// Why not (the failing command's output, or the evaluator's answer),
    /// or what confirmed it.
    pub reason: String,
    /// How long the check took.
    pub duration_ms: u64,
    /// Tokens the evaluator spent (input and output).
    #[serde(default)]
    pub tokens: u64,
}

/// A goal with what it has spent: kept in the session's metadata under
/// [`GOAL_KEY`], and given by [`Agent::goal`](crate::Agent::goal).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoalProgress {
    /// The goal.
    pub goal: Goal,
    /// Where it stands.
    pub status: GoalStatus,
    /// The run working toward it now (or last).
    pub run_id: String,
    /// When its first run started (epoch ms).
    pub started_at: u64,
    /// Every check's verdict, oldest first.
    pub verdicts: Vec<GoalVerdict>,
    /// Why it stopped unmet, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

impl GoalProgress {
    /// A goal not checked yet.
    pub fn new(goal: Goal, run_id: impl Into<String>, started_at: u64) -> Self {
        GoalProgress {
            goal,
            status: GoalStatus::Active,
            run_id: run_id.into(),
            started_at,
            verdicts: Vec::new(),
            stopped: None,
        }
    }

    /// Checks taken so far.
    pub fn checks(&self) -> u32 {
        self.verdicts.len() as u32
    }

    /// The last verdict.
    pub fn last(&self) -> Option<&GoalVerdict> {
        self.verdicts.last()
    }

    /// Checks left in the budget.
    pub fn checks_left(&self) -> u32 {
        self.goal.budget.max_checks.saturating_sub(self.checks())
    }

    /// The verdict of the check at `turn` of `run_id`, when it finished.
    pub(crate) fn verdict_at(&self, run_id: &str, turn: u32) -> Option<&GoalVerdict> {
        self.verdicts.iter().find(|v| v.run_id == run_id && v.turn == turn)
    }

    /// Why the budget forbids another check at `now` (epoch ms), if it does.
    pub(crate) fn spent(&self, now: u64) -> Option<String> {
        let budget = &self.goal.budget;
        if self.checks() >= budget.max_checks {
            return Some(format!("its {} checks are spent", budget.max_checks));
        }
        let elapsed = Duration::from_millis(now.saturating_sub(self.started_at));
        if elapsed >= budget.max_duration {
            return Some(format!("its time ({}) is spent", humanize(budget.max_duration)));
        }
        None
    }

    /// One line: the goal, its state and the budget left.
    pub fn summary(&self) -> String {
        let state = match self.status {
            GoalStatus::Active => "active",
            GoalStatus::Paused => "paused",
            GoalStatus::Met => "met",
            GoalStatus::Unmet => "not met",
        };
        format!(
            "goal {state}: {} ({} of {} checks)",
            self.goal.condition,
            self.checks(),
            self.goal.budget.max_checks
        )
    }
}

/// What the model reads when a check finds the goal unmet.
pub(crate) fn follow_up(progress: &GoalProgress, verdict: &GoalVerdict) -> String {
    format!(
        "The goal is not met yet.\nGoal: {}\nCheck {} of {} says: {}\nKeep working until the goal is met; end your \
         answer when you believe it is.",
        progress.goal.condition,
        progress.checks(),
        progress.goal.budget.max_checks,
        verdict.reason.trim_end()
    )
}

/// The reason a failing command gives: its exit and the end of its output.
pub(crate) fn command_reason(command: &str, output: &zidane_core::execution::ExecOutput) -> String {
    let status = if output.timed_out {
        "timed out".to_owned()
    } else {
        match output.exit_code {
            Some(code) => format!("exited with {code}"),
            None => "was stopped by a signal".to_owned(),
        }
    };
    let mut text = output.stdout.clone();
    if !output.stderr.is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&output.stderr);
    }
    format!("`{command}` {status}:\n{}", tail(&text, CHECK_OUTPUT_TAIL))
}

/// The last `max` bytes of `text`, from a line start where one is near.
fn tail(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    match text[start..].find('\n') {
        Some(nl) if nl < max / 4 => &text[start + nl + 1..],
        _ => &text[start..],
    }
}

/// The evaluator's question: the condition, the model's last answer and
/// the transcript's end.
pub(crate) fn evaluator_question(condition: &str, transcript: &str) -> String {
    format!(
        "An agent is working toward this goal:\n{condition}\n\nThe end of its transcript:\n{transcript}\n\nIs the goal \
         met now, judging only by what the transcript shows?"
    )
}

/// The end of a transcript, as the evaluator reads it: each turn's role
/// and text, newest last, at most `max` bytes.
pub(crate) fn transcript_tail(turns: &[zidane_provider::SessionTurn], max: usize) -> String {
    let mut text = String::new();
    for turn in turns {
        let said = turn.content.text();
        if said.trim().is_empty() {
            continue;
        }
        let role = if turn.role == zidane_provider::Role::User {
            "user"
        } else {
            "assistant"
        };
        text.push_str(&format!("[{role}] {}\n", said.trim()));
    }
    tail(&text, max).to_owned()
}

fn humanize(duration: Duration) -> String {
    let secs = duration.as_secs();
    if secs >= 3600 && secs.is_multiple_of(3600) {
        format!("{} h", secs / 3600)
    } else if secs >= 60 && secs.is_multiple_of(60) {
        format!("{} min", secs / 60)
    } else {
        format!("{secs} s")
    }
}

mod millis {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub(super) fn serialize<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(duration.as_millis() as u64)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_millis(u64::deserialize(deserializer)?))
    }
}
