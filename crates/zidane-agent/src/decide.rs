//! Decisions: a typed question (a probability, a choice, a score) answered by
//! the decision provider, never failing the caller.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use zidane_core::events::{DecisionEnd, DecisionStart};
use zidane_provider::{AbortSignal, Message, StreamOptions, TurnUsage, complete};

use crate::agent::Agent;
use zidane_core::events::{DecisionEndInit, DecisionStartInit};

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
        /// Longest wait.
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
    fn kind(&self) -> &'static str {
        match self {
            DecisionRequest::Predicate { .. } => "predicate",
            DecisionRequest::Choice { .. } => "choice",
            DecisionRequest::Score { .. } => "score",
        }
    }

    fn prompt(&self) -> String {
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
    fn answer(&self, text: &str) -> Result<Value, String> {
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

impl Agent {
    /// Asks the decision provider a typed question. Never fails: a failure
    /// comes back as `ok: false` with a reason. `decision:start` and
    /// `decision:end` fire around it.
    pub async fn decide(&self, request: DecisionRequest) -> DecisionResult {
        let started = Instant::now();
        let (provider, model, timeout) = match &self.inner.decisions {
            Decisions::Disabled => (None, None, None),
            Decisions::Auto => (
                self.inner
                    .providers
                    .iter()
                    .find(|p| p.meta().capabilities.decisions)
                    .cloned(),
                None,
                None,
            ),
            Decisions::Pinned {
                provider,
                model,
                timeout,
            } => (
                match provider {
                    Some(name) => self.inner.providers.iter().find(|p| p.name() == name).cloned(),
                    None => self.inner.providers.first().cloned(),
                },
                model.clone(),
                *timeout,
            ),
        };
        let model = provider
            .as_ref()
            .map(|p| model.unwrap_or_else(|| p.meta().default_model.clone()));
        let mut start = DecisionStart::new(DecisionStartInit {
            kind: request.kind().to_owned(),
            provider: provider.as_ref().map(|p| p.name().to_owned()),
            model: model.clone(),
            request: json!({ "kind": request.kind(), "prompt": request.prompt() }),
        });
        self.observe(&mut start).await;
        let result = match (provider, model) {
            (Some(provider), Some(model)) => {
                let options = StreamOptions::new(model, vec![Message::user(request.prompt())]);
                let call = complete(provider.as_ref(), &options, AbortSignal::never());
                let answered = match timeout {
                    Some(limit) => tokio::time::timeout(limit, call)
                        .await
                        .map_err(|_| "the decision timed out".to_owned()),
                    None => Ok(call.await),
                };
                match answered {
                    Err(reason) => DecisionResult {
                        reason: Some(reason),
                        ..Default::default()
                    },
                    Ok(Err(e)) => DecisionResult {
                        reason: Some(e.to_string()),
                        ..Default::default()
                    },
                    Ok(Ok(message)) => match request.answer(&message.text()) {
                        Ok(answers) => DecisionResult {
                            ok: true,
                            answers: Some(answers),
                            reason: None,
                            usage: Some(message.usage),
                        },
                        Err(reason) => DecisionResult {
                            reason: Some(reason),
                            usage: Some(message.usage),
                            ..Default::default()
                        },
                    },
                }
            }
            _ => DecisionResult {
                reason: Some("unavailable".into()),
                ..Default::default()
            },
        };
        let mut end = DecisionEnd::new(DecisionEndInit {
            kind: request.kind().to_owned(),
            ok: result.ok,
            reason: result.reason.clone(),
            answers: result.answers.clone(),
            usage: result.usage.clone(),
            duration_ms: started.elapsed().as_millis() as u64,
        });
        self.observe(&mut end).await;
        result
    }
}

/// What an agent hands its hook handlers: its own decisions.
pub(crate) struct HookDecider {
    pub(crate) agent: std::sync::Weak<crate::agent::Inner>,
}

/// `ctx.decide` for hook handlers: a handler on an agent's bus asks that
/// agent's decision provider, with `decision:start` / `decision:end` and
/// the agent's `decisions` settings, exactly as [`Agent::decide`].
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
    /// Asks the decision provider of the agent whose bus is emitting; a bus
    /// that belongs to no agent (or a dropped one) answers `ok: false`,
    /// `unavailable`.
    fn decide(&self, request: DecisionRequest) -> zidane_provider::BoxFuture<'static, DecisionResult>;
}

impl DecideHookContext for zidane_hooks::HookCx<'_> {
    fn decide(&self, request: DecisionRequest) -> zidane_provider::BoxFuture<'static, DecisionResult> {
        let agent = self
            .context::<HookDecider>()
            .and_then(|d| d.agent.upgrade())
            .map(|inner| Agent { inner });
        Box::pin(async move {
            match agent {
                Some(agent) => agent.decide(request).await,
                None => DecisionResult {
                    reason: Some("unavailable".into()),
                    ..Default::default()
                },
            }
        })
    }
}
