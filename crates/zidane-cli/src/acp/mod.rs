//! `zidane acp`: the agent for editors, over the Agent Client Protocol
//! (version 1: JSON-RPC 2.0, one message per line on standard input and
//! output; diagnostics on standard error only).
//!
//! Each ACP session is a conversation of the program's core, on the shared
//! sessions file and durable runtime, with the configuration of its folder
//! (`session.rs`). Its events reach the client as `session/update`
//! notifications (`update.rs`), its questions as
//! `session/request_permission` and `elicitation/create` requests
//! (`forward.rs`).

mod commands;
mod files;
mod forward;
mod session;
mod update;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::oneshot;
use zidane_app::{Conversation, Events, Flags, Given};

use crate::out::Failure;

/// One ACP session: its conversation and what serves it.
struct Session {
    pub(super) id: String,
    pub(super) conversation: Conversation,
    pub(super) events: Events,
    /// Whether a prompt is being answered.
    pub(super) busy: Mutex<bool>,
    pub(super) mode: Mutex<&'static str>,
    /// Background tasks: the command, whether it runs.
    pub(super) tasks: Mutex<BTreeMap<String, (String, bool)>>,
    /// The client's terminal each `shell` call ran in.
    pub(super) terminals: Arc<Mutex<HashMap<String, String>>>,
}

impl Session {
    /// A running turn suspended (resumable), the conversation ended.
    async fn end(&self) {
        self.conversation.end().await;
    }

    fn cwd(&self) -> &std::path::Path {
        self.conversation.setup().cwd()
    }
}

/// The protocol version served.
const PROTOCOL_VERSION: u64 = 1;

/// A JSON-RPC error: the code and the message.
pub(super) struct RpcError(i64, String);

impl RpcError {
    pub(super) fn params(message: impl Into<String>) -> RpcError {
        RpcError(-32602, message.into())
    }

    pub(super) fn not_found(message: impl Into<String>) -> RpcError {
        RpcError(-32002, message.into())
    }

    pub(super) fn internal(message: impl Into<String>) -> RpcError {
        RpcError(-32603, message.into())
    }
}

type Reply = Result<Value, RpcError>;

/// The server: the client's channel, the sessions.
struct Server {
    flags: Flags,
    given: Given,
    runtime: Arc<zidane::durable::CheckpointRuntime>,
    out: UnboundedSender<Value>,
    pending: Mutex<HashMap<i64, oneshot::Sender<Option<Value>>>>,
    next_id: AtomicI64,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// What the client said it can do (`initialize`).
    client: Mutex<Value>,
}

/// Serves ACP until the client closes standard input.
pub(crate) async fn serve(flags: Flags, given: Given) -> Result<(), Failure> {
    let runtime = zidane_app::open_runtime(flags.store.as_deref())?;
    let (out, outgoing) = unbounded_channel::<Value>();
    let (stop, stopping) = oneshot::channel();
    let writer = tokio::spawn(write_out(outgoing, stopping));
    let server = Arc::new(Server {
        flags,
        given,
        runtime,
        out,
        pending: Mutex::new(HashMap::new()),
        next_id: AtomicI64::new(1),
        sessions: Mutex::new(HashMap::new()),
        client: Mutex::new(Value::Null),
    });
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    loop {
        let line = match lines.next_line().await {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(e) => {
                eprintln!("zidane acp: cannot read standard input: {e}");
                break;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let message: Value = match serde_json::from_str(&line) {
            Ok(message) => message,
            Err(e) => {
                server.send(error_reply(Value::Null, RpcError(-32700, format!("not JSON: {e}"))));
                continue;
            }
        };
        Arc::clone(&server).take(message);
    }
    // The client is gone: running turns are suspended (durable, resumable
    // with `session/load`), the agents end, and so does the process.
    let sessions: Vec<Arc<Session>> = server.sessions.lock().values().cloned().collect();
    for session in sessions {
        session.end().await;
    }
    let _ = stop.send(());
    let _ = writer.await;
    Ok(())
}

/// Writes each message on a line of standard output, until `stop` (then
/// what is queued still goes out).
async fn write_out(mut outgoing: UnboundedReceiver<Value>, mut stop: oneshot::Receiver<()>) {
    let mut stdout = tokio::io::stdout();
    let mut stopped = false;
    loop {
        let message = tokio::select! {
            message = outgoing.recv() => message,
            _ = &mut stop, if !stopped => {
                stopped = true;
                outgoing.close();
                continue;
            }
        };
        let Some(message) = message else {
            return;
        };
        let mut line = message.to_string();
        line.push('\n');
        if stdout.write_all(line.as_bytes()).await.is_err() || stdout.flush().await.is_err() {
            return;
        }
    }
}

fn error_reply(id: Value, RpcError(code, message): RpcError) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

impl Server {
    pub(super) fn send(&self, message: Value) {
        let _ = self.out.send(message);
    }

    pub(super) fn notify(&self, session: &str, update: Value) {
        self.send(json!({
            "jsonrpc": "2.0", "method": "session/update",
            "params": { "sessionId": session, "update": update },
        }));
    }

    /// Asks the client; its `result` (`None` for an error, or when the
    /// client is gone).
    pub(super) async fn request(&self, method: &str, params: Value) -> Option<Value> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().insert(id, tx);
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        rx.await.ok().flatten()
    }

    /// One message from the client: a request (answered on its own task),
    /// a notification, or the answer to a request of ours.
    fn take(self: Arc<Self>, message: Value) {
        let id = message.get("id").cloned();
        let method = message.get("method").and_then(Value::as_str).map(str::to_owned);
        match (id, method) {
            (Some(id), Some(method)) => {
                tokio::spawn(async move {
                    let params = message.get("params").cloned().unwrap_or(Value::Null);
                    let reply = self.handle(&method, params).await;
                    self.send(match reply {
                        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
                        Err(e) => error_reply(id, e),
                    });
                });
            }
            (None, Some(method)) => {
                if method == "session/cancel"
                    && let Some(session) = message["params"]["sessionId"].as_str()
                {
                    self.cancel(session);
                }
            }
            (Some(id), None) => {
                let waiting = id.as_i64().and_then(|id| self.pending.lock().remove(&id));
                if let Some(waiting) = waiting {
                    let _ = waiting.send(message.get("result").cloned());
                }
            }
            (None, None) => self.send(error_reply(
                Value::Null,
                RpcError(-32600, "neither a request, a notification nor a response".into()),
            )),
        }
    }

    async fn handle(self: &Arc<Self>, method: &str, params: Value) -> Reply {
        match method {
            "initialize" => {
                *self.client.lock() = params.get("clientCapabilities").cloned().unwrap_or(Value::Null);
                Ok(self.initialize())
            }
            "authenticate" => self.authenticate(),
            "session/new" => self.open(params, None).await,
            "session/load" => {
                let id = str_param(&params, "sessionId")?;
                self.open(params, Some((id, true))).await
            }
            "session/resume" => {
                let id = str_param(&params, "sessionId")?;
                self.open(params, Some((id, false))).await
            }
            "session/list" => self.list(&params).await,
            "session/close" => self.close(&params).await,
            "session/delete" => self.delete(&params).await,
            "session/prompt" => self.prompt(params).await,
            "session/set_mode" => self.set_mode(&params),
            other => Err(RpcError(-32601, format!("no method `{other}`"))),
        }
    }

    fn initialize(&self) -> Value {
        let mut auth = Vec::new();
        if key_missing() {
            auth.push(json!({
                "id": "environment",
                "name": "Provider key in the environment",
                "description": "Start the editor (or the agent server) with ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENROUTER_API_KEY set, or a base URL of a local server in the configuration.",
            }));
        }
        json!({
            "protocolVersion": PROTOCOL_VERSION,
            "agentCapabilities": {
                "loadSession": true,
                "promptCapabilities": { "image": true, "audio": false, "embeddedContext": true },
                "mcpCapabilities": { "http": true, "sse": true },
                "sessionCapabilities": { "list": {}, "resume": {}, "close": {}, "delete": {} },
            },
            "authMethods": auth,
            "agentInfo": { "name": "zidane", "title": "zidane", "version": env!("CARGO_PKG_VERSION") },
        })
    }

    fn authenticate(&self) -> Reply {
        if key_missing() && self.flags.base_url.is_none() {
            return Err(RpcError(
                -32000,
                "no provider key: set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENROUTER_API_KEY where the agent starts"
                    .into(),
            ));
        }
        Ok(json!({}))
    }
}

/// Milliseconds since the epoch as an RFC 3339 time (UTC).
pub(super) fn rfc3339(ms: u64) -> String {
    let secs = ms / 1000;
    let days = (secs / 86_400) as i64;
    let rest = secs % 86_400;
    // Days to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        ms % 1000
    )
}

pub(super) fn str_param(params: &Value, key: &str) -> Result<String, RpcError> {
    params
        .get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| RpcError::params(format!("`{key}` must be a string")))
}

/// Whether no provider key is in the environment.
fn key_missing() -> bool {
    [
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "OPENAI_API_KEY",
        "OPENROUTER_API_KEY",
    ]
    .iter()
    .all(|k| std::env::var(k).map_or(true, |v| v.trim().is_empty()))
}

#[cfg(test)]
mod tests;
