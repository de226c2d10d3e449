//! Sub-agents as their own invocations: the `spawn` tool of a run on
//! Restate starts the child as a `run` of the `ZidaneAgent` object keyed by
//! its own session (`<parent session>/spawn-<call id>@<run id>`), through
//! the ingress, with that session as the idempotency key, and waits for its
//! answer. The child is journaled in its own invocation, so a child
//! in flight when the service dies resumes there; the parent's `spawn` call
//! (a safe step) runs again on replay, sends the same request, and Restate
//! hands back the same invocation instead of starting another. What led to
//! the call (the model's value naming the call id) is journaled before the
//! child starts, so a replay asks for the same child.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::{Value, json};
use zidane_agent::{CHILD_SESSION_MARK, child_session_id};
use zidane_core::events::ChildRunStats;
use zidane_core::seams::{ChildLedger, DurableRuntime, SpawnError, SpawnRequest, SpawnResult, Spawner};
use zidane_provider::{AbortSignal, BoxFuture, ErrorKind, HttpClient, RequestBody, Timeouts};

use crate::api::{RunRequest, RunResponse};
use crate::journal::ReplayRuntime;

/// How long one wait for a child's answer lasts before it is asked again.
const ATTACH_WAIT: Duration = Duration::from_secs(10 * 60);

/// Starts children as `ZidaneAgent` invocations through the ingress.
pub(crate) struct InvocationSpawner {
    ingress: String,
    session: String,
    max_depth: u32,
    client: HttpClient,
    /// The parent's journal, synced before a child starts.
    journal: Arc<ReplayRuntime>,
}

impl InvocationSpawner {
    pub(crate) fn new(ingress: &str, session: &str, max_depth: u32, journal: Arc<ReplayRuntime>) -> Option<Self> {
        let client = HttpClient::new(Timeouts {
            connect: Duration::from_secs(10),
            idle: ATTACH_WAIT,
        })
        .ok()?;
        Some(InvocationSpawner {
            ingress: ingress.trim_end_matches('/').to_owned(),
            session: session.to_owned(),
            max_depth,
            client,
            journal,
        })
    }

    async fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, String)],
        body: Option<Value>,
    ) -> Result<Value, SpawnError> {
        let mut builder = http::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.ingress));
        if body.is_some() {
            builder = builder.header(http::header::CONTENT_TYPE, "application/json");
        }
        for (name, value) in headers {
            builder = builder.header(*name, value);
        }
        let payload = body.map(|b| Bytes::from(b.to_string())).unwrap_or_default();
        let request = builder
            .body(RequestBody::chunks([payload]))
            .map_err(|e| failed(format!("a request to the Restate ingress could not be made: {e}")))?;
        let bytes = self
            .client
            .send_for_body("restate-ingress", request, &AbortSignal::never())
            .await
            .map_err(|e| {
                // A long child: the wait for its answer ran out, and is asked again.
                if e.kind() == ErrorKind::Transport {
                    SpawnError::Failed {
                        error: Arc::new(Timeout(e.to_string())),
                        stats: None,
                    }
                } else {
                    failed(format!("the Restate ingress: {e}"))
                }
            })?;
        serde_json::from_slice(&bytes)
            .map_err(|e| failed(format!("the Restate ingress answered what is not JSON: {e}")))
    }
}

/// A wait for the child's answer that ran out (asked again).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Timeout(String);

fn failed(message: String) -> SpawnError {
    SpawnError::Failed {
        error: Arc::new(std::io::Error::other(message)),
        stats: None,
    }
}

fn is_timeout(error: &SpawnError) -> bool {
    matches!(error, SpawnError::Failed { error, .. } if error.downcast_ref::<Timeout>().is_some())
}

/// `s` as one path segment.
fn segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl Spawner for InvocationSpawner {
    fn spawn(
        &self,
        request: SpawnRequest,
        signal: AbortSignal,
        ledger: ChildLedger,
    ) -> BoxFuture<'_, Result<SpawnResult, SpawnError>> {
        Box::pin(async move {
            let depth = self.session.matches(CHILD_SESSION_MARK).count() as u32 + 1;
            if depth > self.max_depth {
                return Err(SpawnError::DepthLimit {
                    depth: depth - 1,
                    max: self.max_depth,
                });
            }
            // The spawning run is part of the child's identity: a call id
            // alone may come again in a later run (another invocation of
            // this session, on this replica or another).
            let child = child_session_id(&self.session, &request.call_id, &request.parent_run_id);
            let key = segment(&child);
            let started = Instant::now();
            let run = RunRequest {
                prompt: request.task.clone(),
                system: None,
                max_turns: None,
                goal: None,
            };
            // The child is keyed by the call's id and the run's: the
            // model's value that named the call is in the journal before
            // the child exists, and the run's id is the invocation's, so a
            // replay asks for this child, not for one of another answer.
            self.journal.sync(&request.parent_run_id).await.map_err(|e| {
                failed(format!(
                    "the journal could not be written before the child started: {e}"
                ))
            })?;
            // One child per spawning call, whatever attempt sends it.
            let sent = self
                .request(
                    "POST",
                    &format!("/ZidaneAgent/{key}/run/send"),
                    &[("idempotency-key", key.clone())],
                    Some(json!(run)),
                )
                .await?;
            let id = sent["invocationId"]
                .as_str()
                .ok_or_else(|| {
                    failed(format!(
                        "the Restate ingress did not name the child's invocation: {sent}"
                    ))
                })?
                .to_owned();
            let attach = format!("/restate/invocation/{id}/attach");
            let answer = loop {
                let waited = tokio::select! {
                    biased;
                    () = signal.aborted() => {
                        let reason = signal.reason().unwrap_or_else(|| "the sub-agent's run was aborted".to_owned());
                        let _ = self
                            .request("POST", &format!("/ZidaneAgent/{key}/abort"), &[], Some(json!({"reason": reason})))
                            .await;
                        return Err(SpawnError::Aborted { reason, stats: None });
                    }
                    waited = self.request("GET", &attach, &[], None) => waited,
                };
                match waited {
                    Err(e) if is_timeout(&e) => continue,
                    other => break other?,
                }
            };
            let response: RunResponse = serde_json::from_value(answer.clone())
                .map_err(|e| failed(format!("the child's answer is not a run's: {e}: {answer}")))?;
            let stats = ChildRunStats {
                child_id: child,
                agent_name: request.agent.clone(),
                depth,
                duration: started.elapsed(),
                stats: response.stats,
            };
            ledger.record(stats.clone());
            Ok(SpawnResult {
                answer: response.text,
                stats,
            })
        })
    }
}
