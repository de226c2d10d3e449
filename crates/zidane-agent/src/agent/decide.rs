//! Decisions: the agent's decision provider, asked by the agent and by
//! hook handlers (`ctx.decide`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::agent::Agent;
use crate::decide::{
    DEFAULT_DECISION_TIMEOUT, DecideHookContext, DecisionError, DecisionRequest, DecisionResult, Decisions,
};
use serde_json::json;
use zidane_core::events::{DecisionEnd, DecisionStart};
use zidane_core::events::{DecisionEndInit, DecisionStartInit};
use zidane_provider::{Message, Provider, StreamOptions, complete};

tokio::task_local! {
    /// Set while the `decision:*` handlers run: a decision asked from one
    /// is refused ([`DecisionError::Recursive`]).
    static IN_DECISION_HOOK: ();
}

impl Agent {
    /// Asks the decision provider a typed question. Never fails: a failure
    /// comes back as `ok: false` with a reason. `decision:start` and
    /// `decision:end` fire around it. [`Agent::try_decide`] gives the
    /// failure as a typed error instead (the spec's `{ throw: true }`).
    ///
    /// A decision is bounded by its timeout (`Decisions::Pinned::timeout`,
    /// else [`DEFAULT_DECISION_TIMEOUT`]) and stopped by
    /// [`Agent::abort`]; one asked from a `decision:*` handler is refused.
    pub async fn decide(&self, request: DecisionRequest) -> DecisionResult {
        self.try_decide(request).await.unwrap_or_else(|e| DecisionResult {
            reason: Some(e.to_string()),
            usage: e.usage().cloned(),
            ..Default::default()
        })
    }

    /// [`Agent::decide`], with a failure as a [`DecisionError`].
    pub async fn try_decide(&self, request: DecisionRequest) -> Result<DecisionResult, DecisionError> {
        if IN_DECISION_HOOK.try_with(|()| ()).is_ok() {
            return Err(DecisionError::Recursive);
        }
        let started = Instant::now();
        let (provider, model, timeout) = self.decision_provider();
        let model = provider
            .as_ref()
            .map(|p| model.unwrap_or_else(|| p.meta().default_model.clone()));
        let mut start = DecisionStart::new(DecisionStartInit {
            kind: request.kind().to_owned(),
            provider: provider.as_ref().map(|p| p.name().to_owned()),
            model: model.clone(),
            request: json!({ "kind": request.kind(), "prompt": request.prompt() }),
        });
        IN_DECISION_HOOK.scope((), self.observe(&mut start)).await;
        let (signal, _scope) = self.inner.control.decision();
        let outcome = match (provider, model) {
            (Some(provider), Some(model)) => {
                let options = StreamOptions::new(model, vec![Message::user(request.prompt())]);
                let call = complete(provider.as_ref(), &options, signal.clone());
                match tokio::time::timeout(timeout, call).await {
                    Err(_) => Err(DecisionError::TimedOut(timeout)),
                    Ok(Err(_)) if signal.is_aborted() => Err(DecisionError::Aborted),
                    Ok(Err(e)) => Err(DecisionError::Provider(e)),
                    Ok(Ok(message)) => match request.answer(&message.text()) {
                        Ok(answers) => Ok(DecisionResult {
                            ok: true,
                            answers: Some(answers),
                            reason: None,
                            usage: Some(message.usage),
                        }),
                        Err(reason) => Err(DecisionError::InvalidAnswer {
                            reason,
                            usage: message.usage,
                        }),
                    },
                }
            }
            _ => Err(DecisionError::Unavailable),
        };
        let mut end = DecisionEnd::new(DecisionEndInit {
            kind: request.kind().to_owned(),
            ok: outcome.is_ok(),
            reason: outcome.as_ref().err().map(ToString::to_string),
            answers: outcome.as_ref().ok().and_then(|r| r.answers.clone()),
            usage: match &outcome {
                Ok(r) => r.usage.clone(),
                Err(e) => e.usage().cloned(),
            },
            duration_ms: started.elapsed().as_millis() as u64,
        });
        IN_DECISION_HOOK.scope((), self.observe(&mut end)).await;
        outcome
    }

    /// The provider, model and time limit decisions use.
    fn decision_provider(&self) -> (Option<Arc<dyn Provider>>, Option<String>, Duration) {
        match &self.inner.decisions {
            Decisions::Disabled => (None, None, DEFAULT_DECISION_TIMEOUT),
            Decisions::Auto => (
                self.inner
                    .providers
                    .iter()
                    .find(|p| p.meta().capabilities.decisions)
                    .cloned(),
                None,
                DEFAULT_DECISION_TIMEOUT,
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
                timeout.unwrap_or(DEFAULT_DECISION_TIMEOUT),
            ),
        }
    }
}

/// What an agent hands its hook handlers: its own decisions.
pub(crate) struct HookDecider {
    pub(crate) agent: std::sync::Weak<crate::agent::Inner>,
}

impl DecideHookContext for zidane_hooks::HookCx<'_> {
    fn try_decide(
        &self,
        request: DecisionRequest,
    ) -> zidane_provider::BoxFuture<'static, Result<DecisionResult, DecisionError>> {
        let agent = self
            .context::<HookDecider>()
            .and_then(|d| d.agent.upgrade())
            .map(|inner| Agent { inner });
        Box::pin(async move {
            match agent {
                Some(agent) => agent.try_decide(request).await,
                None => Err(DecisionError::Unavailable),
            }
        })
    }
}
