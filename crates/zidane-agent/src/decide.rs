//! Decisions: a typed question (a probability, a choice, a score) answered by
//! the decision provider, never failing the caller.

use std::time::Duration;

use serde_json::{Value, json};
use zidane_provider::TurnUsage;

/// Where decisions go.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Decisions {
    /// The first provider that can make decisions (its capabilities say
    /// `decisions`), with its default model.
    #[default]
    Auto,
    /// Decisions are off: every call answers `unavailable`.
    Disabled,
    /// A named provider and/or model, with a timeout.
    Pinned {
        /// Provider name (default: the primary).
        provider: Option<String>,
        /// Model id (default: the provider's).
        model: Option<String>,
        /// Longest wait (default: [`DEFAULT_DECISION_TIMEOUT`]).
        timeout: Option<Duration>,
    },
}

/// A question.
#[derive(Debug, Clone, PartialEq)]
pub enum DecisionRequest {
    /// How likely is the statement true (0 to 1)?
    Predicate {
        /// The statement.
        question: String,
    },
    /// Which option fits best?
    Choice {
        /// The question.
        question: String,
        /// The options.
        options: Vec<String>,
    },
    /// A score within a range.
    Score {
        /// The question.
        question: String,
        /// Lowest score.
        min: f64,
        /// Highest score.
        max: f64,
    },
}

impl DecisionRequest {
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            DecisionRequest::Predicate { .. } => "predicate",
            DecisionRequest::Choice { .. } => "choice",
            DecisionRequest::Score { .. } => "score",
        }
    }

    /// What names the question in a step key: the first 16 hex digits of
    /// the SHA-256 of its prompt (which holds the kind, the question and
    /// its options or range), the same in every process.
    pub(crate) fn digest(&self) -> String {
        let digest = ring::digest::digest(&ring::digest::SHA256, self.prompt().as_bytes());
        digest.as_ref()[..8].iter().map(|b| format!("{b:02x}")).collect()
    }

    pub(crate) fn prompt(&self) -> String {
        match self {
            DecisionRequest::Predicate { question } => format!(
                "Estimate the probability that this statement is true:\n\n{question}\n\nReply with only JSON: {{\"probability\": <number from 0 to 1>}}"
            ),
            DecisionRequest::Choice { question, options } => format!(
                "{question}\n\nChoose exactly one of these options: {}\n\nReply with only JSON: {{\"choice\": \"<one option, verbatim>\"}}",
                serde_json::to_string(options).unwrap_or_default()
            ),
            DecisionRequest::Score { question, min, max } => format!(
                "{question}\n\nGive a score from {min} to {max}.\n\nReply with only JSON: {{\"score\": <number>}}"
            ),
        }
    }

    /// Checks and normalizes the model's answer.
    pub(crate) fn answer(&self, text: &str) -> Result<Value, String> {
        let trimmed = text
            .trim()
            .trim_start_matches("```json")
            .trim_start_matches("```")
            .trim_end_matches("```")
            .trim();
        let value: Value = serde_json::from_str(trimmed).map_err(|_| format!("the answer is not JSON: {trimmed}"))?;
        match self {
            DecisionRequest::Predicate { .. } => match value.get("probability").and_then(Value::as_f64) {
                Some(p) if (0.0..=1.0).contains(&p) => Ok(json!({ "probability": p })),
                _ => Err("no probability between 0 and 1 in the answer".into()),
            },
            DecisionRequest::Choice { options, .. } => match value.get("choice").and_then(Value::as_str) {
                Some(c) if options.iter().any(|o| o == c) => Ok(json!({ "choice": c })),
                _ => Err("the answer is not one of the options".into()),
            },
            DecisionRequest::Score { min, max, .. } => match value.get("score").and_then(Value::as_f64) {
                Some(s) if s >= *min && s <= *max => Ok(json!({ "score": s })),
                _ => Err(format!("no score between {min} and {max} in the answer")),
            },
        }
    }
}

/// The decisions asked in the current loop turn of a run: how many times
/// each question was asked.
#[derive(Debug, Default)]
pub(crate) struct AskedInTurn {
    run_id: String,
    turn: u32,
    asked: std::collections::HashMap<String, u32>,
}

impl AskedInTurn {
    /// Counts one more asking of `question` in `run_id`'s loop turn `turn`
    /// (a new turn starts the count again); how many came before it.
    pub(crate) fn ask(&mut self, run_id: &str, turn: u32, question: &str) -> u32 {
        if self.run_id != run_id || self.turn != turn {
            self.run_id = run_id.to_owned();
            self.turn = turn;
            self.asked.clear();
        }
        let n = self.asked.entry(question.to_owned()).or_insert(0);
        *n += 1;
        *n - 1
    }
}

/// A decision's outcome: `ok` with `answers`, or not with a `reason`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DecisionResult {
    /// Whether the question was answered.
    pub ok: bool,
    /// The answer (`{"probability": p}`, `{"choice": c}`, `{"score": s}`).
    pub answers: Option<Value>,
    /// Why it failed.
    pub reason: Option<String>,
    /// Usage of the decision call (not part of any run's totals).
    pub usage: Option<TurnUsage>,
}

/// `ctx.decide` for hook handlers: a handler on an agent's bus asks that
/// agent's decision provider, with `decision:start` / `decision:end` and
/// the agent's `decisions` settings, exactly as [`Agent::decide`](crate::Agent::decide).
///
/// ```no_run
/// # use zidane_agent::{DecideHookContext, DecisionRequest};
/// # use zidane_core::events::ToolGate;
/// # fn install(agent: &zidane_agent::Agent) {
/// agent.hooks().on::<ToolGate, _>(|gate, cx| Box::pin(async move {
///     let verdict = cx
///         .decide(DecisionRequest::Predicate { question: format!("`{}` destroys data", gate.input) })
///         .await;
///     let likely = verdict.answers.as_ref().and_then(|a| a["probability"].as_f64());
///     if likely.is_some_and(|p| p > 0.8) {
///         gate.block = true;
///         gate.reason = "it looks destructive".into();
///     }
///     Ok(())
/// }));
/// # }
/// ```
pub trait DecideHookContext {
    /// Asks the decision provider of the agent whose bus is emitting, the
    /// failure as a [`DecisionError`]: [`DecisionError::Unavailable`] on a
    /// bus that belongs to no agent (or a dropped one),
    /// [`DecisionError::Recursive`] from a `decision:*` handler.
    fn try_decide(
        &self,
        request: DecisionRequest,
    ) -> zidane_provider::BoxFuture<'static, Result<DecisionResult, DecisionError>>;

    /// [`try_decide`](DecideHookContext::try_decide), a failure coming back
    /// as `ok: false` with its reason.
    fn decide(&self, request: DecisionRequest) -> zidane_provider::BoxFuture<'static, DecisionResult> {
        let asked = self.try_decide(request);
        Box::pin(async move {
            asked.await.unwrap_or_else(|e| DecisionResult {
                reason: Some(e.to_string()),
                usage: e.usage().cloned(),
                ..Default::default()
            })
        })
    }
}

/// How long a decision may take when its settings name no limit.
pub const DEFAULT_DECISION_TIMEOUT: Duration = Duration::from_secs(60);

/// Why a decision has no answer ([`Agent::try_decide`](crate::Agent::try_decide)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DecisionError {
    /// No decision provider: decisions are disabled, or no provider can
    /// answer them.
    #[error("unavailable")]
    Unavailable,
    /// The provider did not answer within the decision's time limit.
    #[error("the decision timed out after {}s", .0.as_secs_f64())]
    TimedOut(Duration),
    /// The agent was aborted while the decision was pending.
    #[error("the decision was aborted")]
    Aborted,
    /// A `decision:*` handler asked for a decision: refused, so a decision
    /// cannot set off another.
    #[error("a decision cannot be asked from a `decision:*` handler")]
    Recursive,
    /// The provider failed.
    #[error(transparent)]
    Provider(#[from] zidane_provider::ProviderError),
    /// The answer did not fit the question.
    #[error("{reason}")]
    InvalidAnswer {
        /// What was wrong with it.
        reason: String,
        /// What the call cost.
        usage: TurnUsage,
    },
    /// The durable runtime could not record or read back the answer.
    #[error("the decision could not be recorded: {0}")]
    Recording(String),
}

impl DecisionError {
    /// What the provider call cost, when it answered.
    pub fn usage(&self) -> Option<&TurnUsage> {
        match self {
            DecisionError::InvalidAnswer { usage, .. } => Some(usage),
            _ => None,
        }
    }
}
