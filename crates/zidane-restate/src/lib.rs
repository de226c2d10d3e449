//! zidane agents as durable Restate services (replay mode).
//!
//! - [`ReplayRuntime`]: the durable runtime of a run inside a Restate
//!   handler. Every model call, tool call and loop decision is a `ctx.run`
//!   entry of the invocation's journal; a re-invoked handler answers
//!   finished steps from it without running them, and an `unsafe` call whose
//!   earlier attempt died while running it is reported interrupted instead
//!   of running twice.
//! - [`ZidaneAgent`]: the agent as a Virtual Object keyed by session id,
//!   with the session's turns and tool state in its K/V state;
//!   [`ZidaneInbox`] carries its control messages to the run in flight.
//! - [`ReplayTracker`]: fires `replay:done` when an invocation goes live.
//! - [`serve`]: an HTTP/2 endpoint Restate registers as a deployment;
//!   [`endpoint_with_identity_keys`] makes one that answers only a Restate
//!   server that signs its requests with the matching private key.

mod api;
mod checkpoints;
mod identity;
mod journal;
mod object;
mod schedule;
mod spawn;

pub use api::{
    AbortRequest, CancelToolRequest, Delivery, INBOX_NAME, InboxMessage, JournalCounts, MessageRequest,
    RUN_INVOCATION_KEY, RunRequest, RunResponse,
};
pub use checkpoints::{CHECKPOINT_COUNT_KEY, checkpoint_key};
pub use journal::{
    Control, ENTRY_NAME, JournalError, ReplayClock, ReplayRuntime, ReplayTracker, TOOL_STATE_KEY, TURN_COUNT_KEY,
    turn_key,
};
pub use object::{AgentFactory, ZidaneAgent, ZidaneInbox};
pub use schedule::{Due, ScheduleFiring, ScheduleInfo, ScheduleRequest, ZidaneSchedule};

use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo};
use restate_sdk::endpoint::{Endpoint, HandlerOptions, ServiceOptions};
use restate_sdk::hyper::HyperEndpoint;
use restate_sdk::service::IntoServiceDefinition;

/// How long Restate waits for a word from a running invocation before it
/// asks it to stop. A model stream or a tool call writes nothing to the
/// journal until it ends, so the server's default (one minute) would cut a
/// long one short; the `run` handler asks for this instead.
pub const RUN_INACTIVITY_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// The service options the endpoint registers `ZidaneAgent` with: the
/// `run` handler's inactivity timeout, and retries that start after 100 ms
/// and back off to 5 s (a restarted service process is found again soon).
pub fn service_options() -> ServiceOptions {
    ServiceOptions::new()
        .retry_policy_initial_interval(Duration::from_millis(100))
        .retry_policy_exponentiation_factor(2.0)
        .retry_policy_max_interval(Duration::from_secs(5))
        .handler(
            "run",
            HandlerOptions::new()
                .inactivity_timeout(RUN_INACTIVITY_TIMEOUT)
                .abort_timeout(Duration::from_secs(60)),
        )
}

/// The endpoint serving `object`, with the [`ZidaneInbox`] its control
/// handlers send through and the [`ZidaneSchedule`]s that fire its runs.
pub fn endpoint(object: ZidaneAgent) -> Endpoint {
    builder(object).build()
}

/// The endpoint's builder with every object bound.
fn builder(object: ZidaneAgent) -> restate_sdk::endpoint::Builder {
    let definition = object.into_service_definition().options(service_options());
    Endpoint::builder()
        .bind(definition)
        .bind(ZidaneInbox.into_service_definition())
        .bind(ZidaneSchedule.into_service_definition())
}

/// A request identity key that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("identity key `{key}` cannot be used: {reason}")]
pub struct IdentityKeyError {
    /// The key as given.
    pub key: String,
    /// Why (the SDK's words).
    pub reason: String,
}

/// The endpoint serving `object` that answers only requests signed by a
/// Restate server holding one of `keys`' private keys (Restate's request
/// identity: `publickeyv1_…` public keys; the server signs with
/// `worker.invoker.request-identity-private-key-pem-file`). Any other
/// request, discovery included, gets 401. With no keys, it verifies
/// nothing, as [`endpoint`].
pub fn endpoint_with_identity_keys(object: ZidaneAgent, keys: &[String]) -> Result<Endpoint, IdentityKeyError> {
    let mut builder = builder(object);
    if !keys.is_empty() {
        identity::install();
    }
    for key in keys {
        builder = builder.identity_key(key).map_err(|e| IdentityKeyError {
            key: key.clone(),
            reason: format!("{e:?}"),
        })?;
    }
    Ok(builder.build())
}

/// Serves `object` over HTTP/2 on `listener` until `shutdown` resolves
/// (connections in flight are dropped then; Restate runs their invocations
/// again).
pub async fn serve(object: ZidaneAgent, listener: tokio::net::TcpListener, shutdown: impl std::future::Future) {
    serve_endpoint(endpoint(object), listener, shutdown).await;
}

/// Serves `endpoint` (from [`endpoint`] or [`endpoint_with_identity_keys`])
/// as [`serve`] does.
pub async fn serve_endpoint(endpoint: Endpoint, listener: tokio::net::TcpListener, shutdown: impl std::future::Future) {
    let endpoint = HyperEndpoint::new(endpoint);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    // A step's frames go out in several small writes; with
                    // Nagle's algorithm on, one waits for the server's
                    // delayed acknowledgement (about 40 ms a step).
                    let _ = stream.set_nodelay(true);
                    let endpoint = endpoint.clone();
                    tokio::spawn(async move {
                        let connection = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                            .serve_connection(TokioIo::new(stream), endpoint);
                        if let Err(e) = connection.await {
                            tracing::debug!(target: "zidane", "a Restate connection ended: {e}");
                        }
                    });
                }
                Err(e) => {
                    // Out of descriptors, say: wait a little rather than spin.
                    tracing::warn!(target: "zidane", "accepting a Restate connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
            _ = &mut shutdown => break,
        }
    }
}
