//! Decisions: the agent's decision provider, asked by the agent and by
//! hook handlers (`ctx.decide`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::agent::Agent;
use crate::decide::{
    DEFAULT_DECISION_TIMEOUT, DecideHookContext, DecisionError, DecisionRequest, DecisionResult, Decisions,
};
use serde_json::json;
use zidane_core::durable::{Durability, Step, StepError, StepKey, StepKind, StepValue};
use zidane_core::events::{DecisionEnd, DecisionStart};
use zidane_core::events::{DecisionEndInit, DecisionStartInit};
use zidane_core::events::{MessageError, SharedError};
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
                let ask = async {
                    let call = complete(provider.as_ref(), &options, signal.clone());
                    match tokio::time::timeout(timeout, call).await {
                        Err(_) => Err(DecisionError::TimedOut(timeout)),
                        Ok(Err(_)) if signal.is_aborted() => Err(DecisionError::Aborted),
                        Ok(Err(e)) => Err(DecisionError::Provider(e)),
                        Ok(Ok(message)) => Ok((message.text(), message.usage)),
                    }
                };
                match self.decision_step(&request, ask).await {
                    Ok((text, usage)) => match request.answer(&text) {
                        Ok(answers) => Ok(DecisionResult {
                            ok: true,
                            answers: Some(answers),
                            reason: None,
                            usage: Some(usage),
                        }),
                        Err(reason) => Err(DecisionError::InvalidAnswer { reason, usage }),
                    },
                    Err(e) => Err(e),
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

    /// Within a run, the answer as a durable step keyed by the run, the
    /// loop turn and the question (`decide:<kind>:<digest>:<n>`, `n`
    /// counting that same question in the turn): a resumed or replayed run
    /// takes the recorded answer instead of asking again (and perhaps
    /// hearing another). Keyed by the question, not by the order of asking:
    /// decisions asked concurrently (the gates of parallel calls) may come
    /// in another order on a replay, and must not swap answers. Outside a
    /// run it is asked as it is.
    async fn decision_step(
        &self,
        request: &DecisionRequest,
        ask: impl std::future::Future<Output = Result<(String, zidane_provider::TurnUsage), DecisionError>> + Send,
    ) -> Result<(String, zidane_provider::TurnUsage), DecisionError> {
        let Some((run_id, turn)) = self.run_loop().current_turn() else {
            return ask.await;
        };
        let kind = request.kind();
        let question = request.digest();
        let n = self.inner.decision_count.lock().ask(&run_id, turn, &question);
        let runtime = Arc::clone(&self.run_loop().config().runtime);
        let mut failure = None;
        let step = Step {
            key: StepKey {
                run_id: run_id.clone(),
                turn,
                kind: StepKind::Decision,
                name: format!("decide:{kind}:{question}:{n}"),
            },
            durability: Durability::Safe,
        };
        let recorded = {
            let failure = &mut failure;
            let work = async move {
                match ask.await {
                    Ok((text, usage)) => Ok(StepValue::Decision(json!({ "text": text, "usage": usage }))),
                    Err(e) => {
                        let shown = e.to_string();
                        *failure = Some(e);
                        Err(Arc::new(MessageError(shown)) as SharedError)
                    }
                }
            };
            runtime.step(step, Box::pin(work)).await
        };
        let value = match recorded {
            Ok(value) => value,
            Err(StepError::Record { value, .. }) => *value,
            Err(e) => {
                return Err(failure.unwrap_or_else(|| DecisionError::Recording(e.to_string())));
            }
        };
        // A decision may lead to an effect (a gate's verdict): on disk
        // before it does.
        if let Err(e) = runtime.sync(&run_id).await {
            tracing::warn!(target: "zidane", "a decision could not be recorded: {e}");
        }
        match value {
            StepValue::Decision(v) => Ok((
                v["text"].as_str().unwrap_or_default().to_owned(),
                serde_json::from_value(v["usage"].clone()).unwrap_or_default(),
            )),
            _ => Err(DecisionError::Recording(
                "the recorded decision is not an answer".into(),
            )),
        }
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
