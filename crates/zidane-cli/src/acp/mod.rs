//! `zidane acp`: the agent for editors, over the Agent Client Protocol
//! (version 1: JSON-RPC 2.0, one message per line on standard input and
//! output; diagnostics on standard error only).
//!
//! Each ACP session is an agent of the program's own (`crate::build`), on
//! the shared sessions file and durable runtime, with the configuration of
//! its folder. What the agent does reaches the client as `session/update`
//! notifications (`update.rs`); its approvals become
//! `session/request_permission` requests.

mod commands;
mod files;
mod update;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::oneshot;
use zidane::agent::{AgentRunOptions, SessionStore};
use zidane::durable::DurableResumeOptions;
use zidane::providers::{ContentBlock, FinishReason, ImageSource, Role};

use crate::session::feed::Feed;
use crate::session::{Answer, Question};
use crate::setup::{Approve, Args, Failure};
use crate::{Built, Context, config};

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

/// One ACP session: its agent and what serves it.
struct Session {
    id: String,
    context: Context,
    built: Built,
    /// The feed of the agent's bus, forwarded as updates.
    feed: UnboundedSender<Feed>,
    _feeding: zidane::hooks::HookScope,
    running: Mutex<bool>,
    mode: Mutex<&'static str>,
    /// `/model`: the model of the next turns.
    model: Mutex<Option<String>>,
    /// Background tasks: the command, whether it runs.
    tasks: Mutex<BTreeMap<String, (String, bool)>>,
    /// The client's terminal each `shell` call ran in.
    terminals: Arc<Mutex<HashMap<String, String>>>,
    _dispatched: zidane::hooks::HookHandle,
}

impl Session {
    /// A running turn suspended (resumable), the agent ended.
    async fn end(&self) {
        crate::suspend_now(&self.built.agent).await;
        self.built.agent.destroy().await;
    }
}

/// The server: the client's channel, the sessions.
struct Server {
    args: Args,
    given: config::Given,
    runtime: Arc<zidane::durable::CheckpointRuntime>,
    out: UnboundedSender<Value>,
    pending: Mutex<HashMap<i64, oneshot::Sender<Option<Value>>>>,
    next_id: AtomicI64,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// What the client said it can do (`initialize`).
    client: Mutex<Value>,
}

/// Serves ACP until the client closes standard input.
pub(crate) async fn serve(args: Args, given: config::Given) -> Result<(), Failure> {
    let runtime = crate::setup::open_runtime(&args)?;
    let (out, outgoing) = unbounded_channel::<Value>();
    let (stop, stopping) = oneshot::channel();
    let writer = tokio::spawn(write_out(outgoing, stopping));
    let server = Arc::new(Server {
        args,
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
    fn send(&self, message: Value) {
        let _ = self.out.send(message);
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
        if key_missing() && self.args.base_url.is_none() {
            return Err(RpcError(
                -32000,
                "no provider key: set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENROUTER_API_KEY where the agent starts"
                    .into(),
            ));
        }
        Ok(json!({}))
    }

    fn session(&self, params: &Value) -> Result<Arc<Session>, RpcError> {
        let id = str_param(params, "sessionId")?;
        self.sessions
            .lock()
            .get(&id)
            .cloned()
            .ok_or_else(|| RpcError::not_found(format!("no session `{id}` (open it with session/new or session/load)")))
    }

    /// `session/new` (`load` none), `session/load` (the stored
    /// conversation replayed) and `session/resume` (not replayed).
    async fn open(self: &Arc<Self>, params: Value, load: Option<(String, bool)>) -> Reply {
        let replay = load.as_ref().is_some_and(|(_, replay)| *replay);
        let load = load.map(|(id, _)| id);
        let cwd = PathBuf::from(str_param(&params, "cwd")?);
        if !cwd.is_absolute() || !cwd.is_dir() {
            return Err(RpcError::params(format!(
                "cwd `{}` is not an absolute path to a folder",
                cwd.display()
            )));
        }
        let servers = params.get("mcpServers").cloned().unwrap_or(Value::Array(Vec::new()));
        let servers = servers
            .as_array()
            .ok_or_else(|| RpcError::params("mcpServers must be a list"))?
            .clone();
        if let Some(id) = &load {
            let stored = self.runtime.sqlite().load(id).await;
            if !matches!(stored, Ok(Some(_))) {
                return Err(RpcError::not_found(format!("no session `{id}` in the sessions file")));
            }
            if self.sessions.lock().contains_key(id) {
                return Err(RpcError::params(format!("session `{id}` is already open")));
            }
        }
        let id = load.clone().unwrap_or_else(zidane::agent::new_session_id);
        let session = self.start(&id, cwd, &servers).await?;
        self.sessions.lock().insert(id.clone(), Arc::clone(&session));
        if load.is_some() {
            let turns = match self.runtime.sqlite().load(&id).await {
                Ok(Some(stored)) => stored.turns,
                _ => Vec::new(),
            };
            if replay {
                for update in update::replay(&turns, &session.context.cwd) {
                    self.notify(&id, update);
                }
            }
            let interrupted = self
                .runtime
                .sqlite()
                .list()
                .await
                .is_ok_and(|list| list.iter().any(|s| s.id == id && s.interrupted));
            if interrupted {
                // The run a crash cut off goes on first, as a turn the
                // client watches.
                *session.running.lock() = true;
                let resumed = session.built.agent.resume(DurableResumeOptions::default()).await;
                *session.running.lock() = false;
                flush(&session).await;
                if let Err(e) = resumed {
                    eprintln!("zidane acp: the interrupted run of {id} did not continue: {e}");
                }
            }
        }
        self.notify(&id, commands::advertised(&session));
        let modes = modes(*session.mode.lock());
        Ok(match load {
            Some(_) => json!({ "modes": modes }),
            None => json!({ "sessionId": id, "modes": modes }),
        })
    }

    /// The agent of session `id` in `cwd`, with the client's MCP servers
    /// beside the configured ones.
    async fn start(self: &Arc<Self>, id: &str, cwd: PathBuf, servers: &[Value]) -> Result<Arc<Session>, RpcError> {
        let mut args = self.args.clone();
        args.cwd = Some(cwd.clone());
        args.session = Some(id.to_owned());
        let mut loaded = config::load(&mut args, &self.given, &cwd, false).map_err(|e| RpcError::params(e.message))?;
        for server in servers {
            let (name, entry) = mcp_entry(server)?;
            loaded.mcp.retain(|(n, _, _)| *n != name);
            loaded.mcp.push((name, entry, "the ACP client".to_owned()));
        }
        let mut context = Context::new(args, loaded, cwd.clone(), Arc::clone(&self.runtime), false)
            .await
            .map_err(|e| RpcError::params(e.message))?;
        let client = self.client.lock().clone();
        let (read, write, terminal) = (
            client["fs"]["readTextFile"] == true,
            client["fs"]["writeTextFile"] == true,
            client["terminal"] == true,
        );
        let calls: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
        let terminals: Arc<Mutex<HashMap<String, String>>> = Arc::default();
        if read || write || terminal {
            let server = Arc::downgrade(self);
            let session = id.to_owned();
            let (calls, terminals) = (Arc::clone(&calls), Arc::clone(&terminals));
            context.wrap_execution = Some(Arc::new(move |inner| {
                Arc::new(files::ClientFiles {
                    inner,
                    cwd: cwd.clone(),
                    server: server.clone(),
                    session: session.clone(),
                    read,
                    write,
                    terminal,
                    calls: Arc::clone(&calls),
                    terminals: Arc::clone(&terminals),
                }) as Arc<dyn zidane::tools::ExecutionContext>
            }));
        }
        let (questions, questions_rx) = unbounded_channel();
        context.asks.connect(questions);
        let built = crate::build(&context, id, false)
            .await
            .map_err(|e| RpcError::internal(e.message))?;
        // Each `shell` call's id, known before it runs (a terminal is
        // embedded in it).
        let noting = Arc::clone(&calls);
        let dispatched = built
            .agent
            .hooks()
            .on_sync::<zidane::agent::events::ToolDispatched, _>(move |ev, _| {
                if terminal && ev.name() == "shell" && ev.input()["run_in_background"] != true {
                    let command = ev.input()["command"].as_str().unwrap_or_default().to_owned();
                    noting.lock().push((command, ev.call_id().to_owned()));
                }
                Ok(())
            });
        let (feed, feed_rx) = unbounded_channel();
        let feeding = crate::session::feed::install(built.agent.hooks(), &feed);
        let mode = match context.args.approve {
            Approve::Ask => "ask",
            Approve::AutoEdit => "auto-edit",
            Approve::Yolo => "yolo",
        };
        let session = Arc::new(Session {
            id: id.to_owned(),
            context,
            built,
            feed,
            _feeding: feeding,
            running: Mutex::new(false),
            mode: Mutex::new(mode),
            model: Mutex::new(None),
            tasks: Mutex::new(BTreeMap::new()),
            terminals,
            _dispatched: dispatched,
        });
        tokio::spawn(forward(Arc::clone(self), Arc::downgrade(&session), feed_rx));
        tokio::spawn(ask_client(Arc::clone(self), id.to_owned(), questions_rx));
        Ok(session)
    }

    async fn prompt(self: &Arc<Self>, params: Value) -> Reply {
        let session = self.session(&params)?;
        let blocks = params
            .get("prompt")
            .and_then(Value::as_array)
            .ok_or_else(|| RpcError::params("prompt must be a list of content blocks"))?;
        let (mut text, parts) = prompt_content(blocks)?;
        {
            let mut running = session.running.lock();
            if *running {
                return Err(RpcError::params(format!(
                    "a prompt is already running in session `{}`; send session/cancel first",
                    session.id
                )));
            }
            *running = true;
        }
        if let Some(answer) = commands::run(&session, text.trim()).await {
            self.notify(
                &session.id,
                json!({ "sessionUpdate": "agent_message_chunk", "content": { "type": "text", "text": answer } }),
            );
            *session.running.lock() = false;
            return Ok(json!({ "stopReason": "end_turn" }));
        }
        // The folder's own commands, `/name arguments`.
        if let Some((name, rest)) = crate::commands::invocation(&text) {
            let folders = crate::commands::folders(&session.context.loaded.paths, session.context.loaded.trusted);
            match crate::commands::find(&folders, name) {
                Ok(command) => text = command.expand(rest),
                Err(e) => {
                    *session.running.lock() = false;
                    return Err(RpcError::params(e.message));
                }
            }
        }
        let mut options = AgentRunOptions::prompt(text);
        options.parts = parts;
        if let Some(model) = session.model.lock().clone() {
            options.model = vec![model.as_str().into()];
        }
        options.thinking = session.context.args.thinking.into();
        if *session.mode.lock() == "plan" {
            options.hooks = crate::plan::hooks();
            options.system_notes.push(crate::plan::NOTE.into());
        }
        let outcome = session.built.agent.run(options).await;
        crate::session::remember_folder(&session.built.agent, &session.context.cwd).await;
        *session.running.lock() = false;
        flush(&session).await;
        match outcome {
            Ok(out) => {
                let reason = if out.suspended || out.status == zidane::agent::RunStatus::Aborted {
                    "cancelled"
                } else if out.status == zidane::agent::RunStatus::MaxTurns {
                    "max_turn_requests"
                } else {
                    let last = session
                        .built
                        .agent
                        .turns()
                        .into_iter()
                        .rev()
                        .find(|t| t.role == Role::Assistant)
                        .and_then(|t| t.usage)
                        .and_then(|u| u.finish_reason);
                    match last {
                        Some(FinishReason::Length) => "max_tokens",
                        Some(FinishReason::Refusal) => "refusal",
                        _ => "end_turn",
                    }
                };
                Ok(json!({ "stopReason": reason }))
            }
            Err(e) => Err(RpcError::internal(crate::output::describe_failure(
                &e,
                &session.context.args,
            ))),
        }
    }

    /// `session/list`: the stored sessions (of `cwd`, when given), the most
    /// recent first; a session is listed once a prompt recorded its folder.
    async fn list(&self, params: &Value) -> Reply {
        let cwd = params.get("cwd").and_then(Value::as_str);
        let store = self.runtime.sqlite();
        let mut listed = store
            .list()
            .await
            .map_err(|e| RpcError::internal(format!("cannot read the sessions: {e}")))?;
        listed.retain(|s| !s.id.contains(zidane::agent::CHILD_SESSION_MARK));
        listed.sort_by_key(|s| std::cmp::Reverse(s.updated_at));
        let mut sessions = Vec::new();
        for info in listed {
            let Ok(Some(stored)) = store.load(&info.id).await else {
                continue;
            };
            let Some(folder) = stored.metadata.get(crate::session::FOLDER_KEY).and_then(Value::as_str) else {
                continue;
            };
            if cwd.is_some_and(|c| c != folder) {
                continue;
            }
            sessions.push(json!({
                "sessionId": info.id,
                "cwd": folder,
                "title": info.title,
                "updatedAt": rfc3339(info.updated_at.as_millis()),
            }));
        }
        Ok(json!({ "sessions": sessions }))
    }

    /// `session/close`: a running turn is suspended (resumable), the agent
    /// ends.
    async fn close(&self, params: &Value) -> Reply {
        let session = self.session(params)?;
        self.sessions.lock().remove(&session.id);
        session.end().await;
        Ok(json!({}))
    }

    /// `session/delete`: the session (closed first when open), its turns,
    /// checkpoints and background output.
    async fn delete(&self, params: &Value) -> Reply {
        let id = str_param(params, "sessionId")?;
        if self.sessions.lock().contains_key(&id) {
            self.close(params).await?;
        }
        let store = self.runtime.sqlite();
        match store.delete_session(&id).await {
            Ok(true) => {
                crate::checkpoints::remove_task_output(store, &id);
                Ok(json!({}))
            }
            Ok(false) => Err(RpcError::not_found(format!("no session `{id}`"))),
            Err(e) => Err(RpcError::internal(format!("cannot delete session `{id}`: {e}"))),
        }
    }

    fn cancel(&self, id: &str) {
        let Some(session) = self.sessions.lock().get(id).cloned() else {
            return;
        };
        tokio::spawn(async move {
            crate::suspend_now(&session.built.agent).await;
        });
    }

    fn set_mode(&self, params: &Value) -> Reply {
        let session = self.session(params)?;
        let mode = match str_param(params, "modeId")?.as_str() {
            "ask" => "ask",
            "auto-edit" => "auto-edit",
            "yolo" => "yolo",
            "plan" => "plan",
            other => {
                return Err(RpcError::params(format!(
                    "no mode `{other}` (ask, auto-edit, yolo, plan)"
                )));
            }
        };
        *session.mode.lock() = mode;
        let approve = match mode {
            "auto-edit" => Approve::AutoEdit,
            "yolo" => Approve::Yolo,
            _ => Approve::Ask,
        };
        *session.context.approve_mode.lock() = approve;
        session
            .built
            .planning
            .store(mode == "plan", std::sync::atomic::Ordering::SeqCst);
        self.notify(
            &session.id,
            json!({ "sessionUpdate": "current_mode_update", "currentModeId": mode }),
        );
        Ok(json!({}))
    }
}

/// Waits until the updates of what the agent did so far are sent.
async fn flush(session: &Session) {
    let (done, reached) = oneshot::channel();
    if session.feed.send(Feed::Barrier(done)).is_ok() {
        let _ = reached.await;
    }
}

/// The agent's feed as `session/update` notifications.
async fn forward(server: Arc<Server>, session: std::sync::Weak<Session>, mut feed: UnboundedReceiver<Feed>) {
    while let Some(message) = feed.recv().await {
        let Some(session) = session.upgrade() else {
            return;
        };
        match message {
            Feed::Barrier(done) => {
                let _ = done.send(());
            }
            Feed::TaskStart { id, command, .. } => {
                session.tasks.lock().insert(id, (command, true));
            }
            Feed::TaskEnd { id, .. } => {
                if let Some(task) = session.tasks.lock().get_mut(&id) {
                    task.1 = false;
                }
            }
            message => {
                let ended = match &message {
                    Feed::ToolEnd { id, .. } => session.terminals.lock().remove(id),
                    _ => None,
                };
                for mut update in update::from_feed(message, &session.context.cwd) {
                    // A command run in the client's terminal keeps it shown.
                    if let Some(terminal) = &ended
                        && let Some(content) = update.get_mut("content").and_then(Value::as_array_mut)
                    {
                        content.insert(0, json!({ "type": "terminal", "terminalId": terminal }));
                    }
                    server.notify(&session.id, update);
                }
            }
        }
    }
}

/// The agent's questions, asked of the client: approvals as
/// `session/request_permission` (a rejection "always" is kept for the
/// session); an MCP server's form as `elicitation/create` when the client
/// takes forms (declined otherwise).
async fn ask_client(server: Arc<Server>, id: String, mut questions: UnboundedReceiver<Question>) {
    let rejected: Arc<Mutex<HashSet<String>>> = Arc::default();
    while let Some(question) = questions.recv().await {
        let (ask, reply, rule) = match question {
            Question::Form(form) => {
                tokio::spawn(ask_form(Arc::clone(&server), id.clone(), form));
                continue;
            }
            Question::Call(ask) => {
                let (call, rule, reply) = ask.into_parts();
                (call, reply, rule)
            }
        };
        if rejected.lock().contains(&rule) {
            let _ = reply.send(Answer::No(Some("the user rejects these calls for this session".into())));
            continue;
        }
        let server = Arc::clone(&server);
        let rejected = Arc::clone(&rejected);
        let id = id.clone();
        tokio::spawn(async move {
            let input = ask.input.clone();
            let params = json!({
                "sessionId": id,
                "toolCall": {
                    "toolCallId": ask.call_id,
                    "title": update::title(&ask.name, &input),
                    "kind": update::kind(&ask.name),
                    "status": "pending",
                    "rawInput": input,
                },
                "options": [
                    { "optionId": "allow_once", "name": "Allow", "kind": "allow_once" },
                    { "optionId": "allow_always", "name": format!("Always allow ({rule})"), "kind": "allow_always" },
                    { "optionId": "reject_once", "name": "Reject", "kind": "reject_once" },
                    { "optionId": "reject_always", "name": "Always reject", "kind": "reject_always" },
                ],
            });
            let answer = server.request("session/request_permission", params).await;
            let outcome = answer.as_ref().map(|a| &a["outcome"]);
            let chosen = match outcome.and_then(|o| o["outcome"].as_str()) {
                Some("selected") => outcome.and_then(|o| o["optionId"].as_str()).unwrap_or_default(),
                _ => "cancelled",
            };
            let answer = match chosen {
                "allow_once" => Answer::Yes,
                "allow_always" => Answer::Always,
                "reject_always" => {
                    rejected.lock().insert(rule);
                    Answer::No(None)
                }
                "cancelled" => Answer::No(Some("the request was cancelled".into())),
                _ => Answer::No(None),
            };
            let _ = reply.send(answer);
        });
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

/// An MCP server's form, as the client's form (`elicitation/create`).
async fn ask_form(server: Arc<Server>, id: String, form: crate::session::Form) {
    use zidane::mcp::ElicitationAnswer;
    let (request, reply) = form.into_parts();
    let takes_forms = !server.client.lock()["elicitation"]["form"].is_null();
    if !takes_forms {
        let _ = reply.send(ElicitationAnswer::Decline);
        return;
    }
    let params = json!({
        "sessionId": id,
        "mode": "form",
        "message": format!("MCP server `{}`: {}", request.server, request.message),
        "requestedSchema": request.schema,
    });
    let answer = match server.request("elicitation/create", params).await {
        Some(result) => match result["action"].as_str() {
            Some("accept") => ElicitationAnswer::Accept(result["content"].as_object().cloned().unwrap_or_default()),
            Some("cancel") => ElicitationAnswer::Cancel,
            _ => ElicitationAnswer::Decline,
        },
        None => ElicitationAnswer::Decline,
    };
    let _ = reply.send(answer);
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

/// An ACP MCP server as an entry of the `mcpServers` shape.
fn mcp_entry(server: &Value) -> Result<(String, Value), RpcError> {
    let name = str_param(server, "name")?;
    let pairs = |key: &str| -> serde_json::Map<String, Value> {
        server[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| Some((p["name"].as_str()?.to_owned(), Value::from(p["value"].as_str()?))))
            .collect()
    };
    let entry = if let Some(command) = server["command"].as_str() {
        json!({ "command": command, "args": server["args"].clone(), "env": pairs("env") })
    } else if let Some(url) = server["url"].as_str() {
        let mut entry = json!({ "url": url, "headers": pairs("headers") });
        if server["type"] == "sse" {
            entry["type"] = json!("sse");
        }
        entry
    } else {
        return Err(RpcError::params(format!(
            "MCP server `{name}` has neither a command nor a url"
        )));
    };
    Ok((name, entry))
}

/// The prompt's text and attachments: text as is, resource links as
/// `@path` mentions, embedded resources as their text, images as images.
fn prompt_content(blocks: &[Value]) -> Result<(String, Vec<ContentBlock>), RpcError> {
    let mut text = String::new();
    let mut parts = Vec::new();
    for block in blocks {
        match block["type"].as_str() {
            Some("text") => text.push_str(block["text"].as_str().unwrap_or_default()),
            Some("resource_link") => {
                let uri = block["uri"].as_str().unwrap_or_default();
                text.push_str(&format!("\n[{}]({uri})", block["name"].as_str().unwrap_or(uri)));
            }
            Some("resource") => {
                let resource = &block["resource"];
                let uri = resource["uri"].as_str().unwrap_or_default();
                if let Some(body) = resource["text"].as_str() {
                    text.push_str(&format!("\n\n<file path=\"{uri}\">\n{body}\n</file>"));
                }
            }
            Some("image") => parts.push(ContentBlock::Image {
                source: ImageSource::Base64 {
                    media_type: block["mimeType"].as_str().unwrap_or("image/png").to_owned(),
                    data: block["data"].as_str().unwrap_or_default().to_owned(),
                },
            }),
            Some(other) => return Err(RpcError::params(format!("content of type `{other}` is not supported"))),
            None => return Err(RpcError::params("a content block without a type")),
        }
    }
    if text.trim().is_empty() && parts.is_empty() {
        return Err(RpcError::params("the prompt is empty"));
    }
    Ok((text, parts))
}

/// The modes, the current one first named.
fn modes(current: &str) -> Value {
    json!({
        "currentModeId": current,
        "availableModes": [
            { "id": "ask", "name": "Ask", "description": "Commands, file changes, MCP tools and fetches ask first" },
            { "id": "auto-edit", "name": "Auto-edit", "description": "File changes run; commands, MCP tools and fetches ask" },
            { "id": "yolo", "name": "Yolo", "description": "Everything runs without asking (deny rules still hold)" },
            { "id": "plan", "name": "Plan", "description": "Read-only tools; the agent proposes a plan" },
        ],
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn times_in_rfc3339() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(super::rfc3339(1_798_156_800_123), "2026-12-25T00:00:00.123Z");
        assert_eq!(super::rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }
}
