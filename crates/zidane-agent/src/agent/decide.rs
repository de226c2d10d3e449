//! Decisions: the agent's decision provider, asked by the agent and by
//! hook handlers (`ctx.decide`).

use crate::agent::Agent;
use crate::decide::{DecideHookContext, DecisionRequest, DecisionResult, Decisions};
use serde_json::json;
use std::time::Instant;
use zidane_core::events::{DecisionEnd, DecisionStart};
use zidane_core::events::{DecisionEndInit, DecisionStartInit};
use zidane_provider::{AbortSignal, Message, StreamOptions, complete};

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
