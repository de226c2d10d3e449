//! The Agent Client Protocol (version 1: JSON-RPC 2.0), for editors and
//! other clients: `zidane acp` speaks it on standard input and output (one
//! message per line; diagnostics on standard error only), and
//! `zidane serve` over WebSocket (one message per text frame).
//!
//! A [`Hub`] holds the sessions, each a conversation of the program's
//! core in its folder (`hub.rs`); a [`Connection`] is one client, which
//! opens sessions in the hub and drives them (`session.rs`). A session's
//! events reach every client attached to it as `session/update`
//! notifications (`update.rs`), its questions as
//! `session/request_permission` and `elicitation/create` requests, the
//! first answer winning (`forward.rs`). Over standard input and output the
//! hub lives as long as its one client; under `zidane serve` it outlives
//! them, and a run goes on when its client goes.

mod commands;
mod extensions;
mod files;
mod forward;
mod hub;
mod outbox;
mod scheduled;
mod session;
mod state;
#[cfg(test)]
mod tests;
mod update;
mod usage;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

use tokio::sync::oneshot;
use zidane_app::{Flags, Given};

pub(crate) use self::hub::Hub;
pub(crate) use self::outbox::{Outbox, OutboxReceiver};
use self::state::Session;
use crate::out::Failure;

/// The protocol version served.
const PROTOCOL_VERSION: u64 = 1;

/// A JSON-RPC error: the code and the message.
struct RpcError(i64, String);

impl RpcError {
    fn params(message: impl Into<String>) -> RpcError {
        RpcError(-32602, message.into())
    }

    fn not_found(message: impl Into<String>) -> RpcError {
        RpcError(-32002, message.into())
    }

    fn internal(message: impl Into<String>) -> RpcError {
        RpcError(-32603, message.into())
    }
}

type Reply = Result<Value, RpcError>;

fn error_reply(id: Value, RpcError(code, message): RpcError) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

/// One client: its channel, what it can do, the sessions it sees.
pub(crate) struct Connection {
    hub: Arc<Hub>,
    out: Outbox,
    pending: Mutex<HashMap<i64, oneshot::Sender<Option<Value>>>>,
    next_id: AtomicI64,
    /// What the client said it can do (`initialize`).
    client: Mutex<Value>,
    /// The name it gave (shown on the prompts it sends).
    name: Mutex<String>,
    /// Whether it asked for the program's own events (`_zidane/event`).
    wants_events: AtomicBool,
    /// The sessions it is attached to.
    sessions: Mutex<BTreeSet<String>>,
    /// Sessions it is being shown (a replay on attach), with what they
    /// showed meanwhile, sent once the replay is.
    held: Mutex<HashMap<String, Vec<Value>>>,
    /// Whether it answers questions (a script that cannot says so, and is
    /// not asked).
    answers: AtomicBool,
}

impl Connection {
    /// A client of `hub` whose messages go to `out`.
    pub(crate) fn new(hub: Arc<Hub>, out: Outbox) -> Arc<Connection> {
        Arc::new(Connection {
            hub,
            out,
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicI64::new(1),
            client: Mutex::new(Value::Null),
            name: Mutex::new("a client".to_owned()),
            wants_events: AtomicBool::new(false),
            sessions: Mutex::new(BTreeSet::new()),
            held: Mutex::new(HashMap::new()),
            answers: AtomicBool::new(true),
        })
    }

    /// Shows `update` of `session`, or holds it back while the client is
    /// being shown the session.
    fn deliver(&self, session: &str, update: Value) {
        {
            let mut held = self.held.lock();
            if let Some(later) = held.get_mut(session) {
                later.push(update);
                return;
            }
        }
        self.notify(session, update);
    }

    /// Holds `session`'s updates back (see [`Connection::deliver`]).
    fn hold(&self, session: &str) {
        self.held.lock().entry(session.to_owned()).or_default();
    }

    /// Sends what was held back for `session`, and shows the rest as it
    /// comes.
    async fn release(&self, session: &str) {
        loop {
            let later = {
                let mut held = self.held.lock();
                let Some(later) = held.get_mut(session) else {
                    return;
                };
                if later.is_empty() {
                    held.remove(session);
                    return;
                }
                std::mem::take(later)
            };
            for update in later {
                if !self.notify_waiting(session, update).await {
                    return;
                }
            }
        }
    }

    /// Like `notify`, waiting for room in the queue (a replay the client
    /// reads); `false` when the connection closed.
    async fn notify_waiting(&self, session: &str, update: Value) -> bool {
        let message = json!({
            "jsonrpc": "2.0", "method": "session/update",
            "params": { "sessionId": session, "update": update },
        });
        self.out.send_waiting(&message).await
    }

    fn send(&self, message: Value) {
        self.out.send(&message);
    }

    fn notify(&self, session: &str, update: Value) {
        self.send(json!({
            "jsonrpc": "2.0", "method": "session/update",
            "params": { "sessionId": session, "update": update },
        }));
    }

    /// Asks the client; its `result` (`None` for an error, or when the
    /// client is gone).
    async fn request(&self, method: &str, params: Value) -> Option<Value> {
        self.ask(method, params).1.await.ok().flatten()
    }

    /// Sends a request: its id, and where its `result` arrives.
    fn ask(&self, method: &str, params: Value) -> (i64, oneshot::Receiver<Option<Value>>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().insert(id, tx);
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        (id, rx)
    }

    /// One message from the client, as text: parsed, then taken.
    pub(crate) fn take_text(self: &Arc<Self>, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        match serde_json::from_str::<Value>(text) {
            Ok(message) => Arc::clone(self).take(message),
            Err(e) => self.send(error_reply(Value::Null, RpcError(-32700, format!("not JSON: {e}")))),
        }
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
                    let reply = self.handle(&id, &method, params).await;
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

    /// Answers request `request`.
    async fn handle(self: &Arc<Self>, request: &Value, method: &str, params: Value) -> Reply {
        match method {
            "initialize" => Ok(self.initialize(&params)),
            "authenticate" => self.authenticate(),
            "session/new" => self.open(request, params, None).await,
            "session/load" => {
                let id = str_param(&params, "sessionId")?;
                self.open(request, params, Some((id, true))).await
            }
            "session/resume" => {
                let id = str_param(&params, "sessionId")?;
                self.open(request, params, Some((id, false))).await
            }
            "session/list" => self.list(&params).await,
            "session/close" => self.close(&params).await,
            "session/delete" => self.delete(&params).await,
            "session/prompt" => self.prompt(params).await,
            "session/set_mode" => self.set_mode(&params),
            "_zidane/steer" => self.steer(&params),
            "_zidane/status" => self.status(&params).await,
            other if other.starts_with("_zidane/") => self.extension(other, &params).await,
            other => Err(RpcError(-32601, format!("no method `{other}`"))),
        }
    }

    fn initialize(&self, params: &Value) -> Value {
        *self.client.lock() = params.get("clientCapabilities").cloned().unwrap_or(Value::Null);
        let named = params["clientInfo"]["name"]
            .as_str()
            .or_else(|| params["_meta"]["zidane"]["name"].as_str());
        if let Some(name) = named.filter(|n| !n.trim().is_empty()) {
            *self.name.lock() = name.to_owned();
        }
        if params["_meta"]["zidane"]["events"] == true {
            self.wants_events.store(true, Ordering::SeqCst);
        }
        if params["_meta"]["zidane"]["answers"] == false {
            self.answers.store(false, Ordering::SeqCst);
        }
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
            "_meta": { "zidane": { "served": self.hub.served(), "events": true } },
        })
    }

    fn authenticate(&self) -> Reply {
        if key_missing() && self.hub.flags().base_url.is_none() {
            return Err(RpcError(
                -32000,
                "no provider key: set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENROUTER_API_KEY where the agent starts"
                    .into(),
            ));
        }
        Ok(json!({}))
    }

    /// The client is gone: its pending requests are dropped, and it leaves
    /// its sessions (which, over standard input and output, end with it).
    pub(crate) async fn gone(self: &Arc<Self>) {
        self.out.close();
        self.pending.lock().clear();
        let sessions: Vec<String> = std::mem::take(&mut *self.sessions.lock()).into_iter().collect();
        self.hub.left(self, &sessions).await;
    }
}

/// Serves ACP on standard input and output until the client closes its
/// input.
pub(crate) async fn serve(flags: Flags, given: Given) -> Result<(), Failure> {
    let runtime = zidane_app::open_runtime(flags.store.as_deref())?;
    let hub = Hub::new(flags, given, runtime, false);
    let (out, outgoing) = Outbox::unbounded();
    let (stop, stopping) = oneshot::channel();
    let writer = tokio::spawn(write_out(outgoing, stopping));
    let connection = Connection::new(hub, out);
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    loop {
        match lines.next_line().await {
            Ok(Some(line)) => connection.take_text(&line),
            Ok(None) => break,
            Err(e) => {
                eprintln!("zidane acp: cannot read standard input: {e}");
                break;
            }
        }
    }
    // The client is gone: running turns are suspended (durable, resumable
    // with `session/load`), the conversations end, and so does the process.
    connection.gone().await;
    let _ = stop.send(());
    let _ = writer.await;
    Ok(())
}

/// Writes each message on a line of standard output, until `stop` (then
/// what is queued still goes out).
async fn write_out(mut outgoing: OutboxReceiver, mut stop: oneshot::Receiver<()>) {
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
        let Some(mut line) = message else {
            return;
        };
        line.push('\n');
        if stdout.write_all(line.as_bytes()).await.is_err() || stdout.flush().await.is_err() {
            return;
        }
    }
}

/// Milliseconds since the epoch as an RFC 3339 time (UTC).
fn rfc3339(ms: u64) -> String {
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

fn str_param(params: &Value, key: &str) -> Result<String, RpcError> {
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
