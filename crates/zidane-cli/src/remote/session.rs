//! A served session driven from here: the server's events turned back into
//! the conversation's [`Event`]s (so the terminal session renders them as
//! it renders a local one), its questions into [`Question`]s whose answers
//! go back, prompts and the program's own methods sent, and a lost
//! connection retried with back-off (said on the status line).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::sync::oneshot;
use zidane::agent::ToolCall;
use zidane::mcp::{ElicitationAnswer, ElicitationRequest};
use zidane_app::{
    Answer, Ask, ChildRef, Error, Event, Events, Form, Outcome, Question, ToolCallEvent, ToolResultEvent,
};

use super::{Client, Incoming, Target, error_text};

/// How a remote session is opened.
pub(crate) enum Opening {
    /// An existing session, by id.
    Attach(String),
    /// A new one in a folder, in a worktree of its own when named.
    New {
        cwd: std::path::PathBuf,
        worktree: Option<String>,
    },
}

/// A session of a server, as this terminal drives it.
pub(crate) struct RemoteSession {
    target: Target,
    name: String,
    client: Mutex<Arc<Client>>,
    /// Set once the server named it (at once when attaching).
    id: std::sync::OnceLock<String>,
    events: Events,
    /// The last `_zidane/status`.
    status: Mutex<Value>,
    /// What `_zidane/session` said (commands, MCP servers, …).
    about: Mutex<Value>,
    /// The prompt in flight, told its outcome by the run's end.
    waiting: Mutex<Option<oneshot::Sender<Outcome>>>,
    /// While a `session/load` replays the conversation: its updates are
    /// what is shown (after it, the program's own events are).
    replaying: AtomicBool,
    /// Whether the connection is up.
    connected: AtomicBool,
    /// Until the terminal session starts: a trust question is asked on the
    /// terminal as a line (a form after that).
    opening: AtomicBool,
    /// While it is not: the next attempt's time and number.
    retry: Mutex<(std::time::Instant, u32)>,
    /// The server's questions shown here, by its request id: the call's id
    /// and the task that sends the answer back.
    asking: Mutex<std::collections::HashMap<String, (String, tokio::task::JoinHandle<()>)>>,
}

impl RemoteSession {
    /// Opens (or attaches to) a session of the server at `target`, its
    /// events going to `events`.
    pub(crate) async fn open(
        target: Target,
        opening: Opening,
        name: &str,
        events: Events,
    ) -> Result<Arc<RemoteSession>, String> {
        let (client, incoming) = Client::connect(&target).await?;
        let client = Arc::new(client);
        initialize(&client, name).await?;
        let session = Arc::new(RemoteSession {
            target,
            name: name.to_owned(),
            client: Mutex::new(Arc::clone(&client)),
            id: std::sync::OnceLock::new(),
            events,
            status: Mutex::new(Value::Null),
            about: Mutex::new(Value::Null),
            waiting: Mutex::new(None),
            replaying: AtomicBool::new(true),
            connected: AtomicBool::new(true),
            opening: AtomicBool::new(true),
            retry: Mutex::new((std::time::Instant::now(), 0)),
            asking: Mutex::default(),
        });
        // Reading from the start: a new session's trust question comes
        // before its id.
        tokio::spawn(Arc::clone(&session).read(incoming));
        let id = match opening {
            Opening::Attach(id) => id,
            Opening::New { cwd, worktree } => {
                let mut params = json!({ "cwd": cwd, "mcpServers": [] });
                if let Some(tree) = worktree {
                    params["_meta"] = json!({ "zidane": { "worktree": tree } });
                }
                let opened = client
                    .request("session/new", params)
                    .await
                    .map_err(|e| error_text(&e))?;
                opened["sessionId"]
                    .as_str()
                    .ok_or("the server gave no session id")?
                    .to_owned()
            }
        };
        let _ = session.id.set(id);
        session.load(true).await?;
        session.opening.store(false, Ordering::SeqCst);
        session.refresh().await;
        tokio::spawn(Arc::clone(&session).poll());
        Ok(session)
    }

    /// Loads the session on the current connection (`replay`: its
    /// conversation shown again).
    async fn load(&self, replay: bool) -> Result<(), String> {
        self.replaying.store(replay, Ordering::SeqCst);
        let method = if replay { "session/load" } else { "session/resume" };
        let cwd = std::env::current_dir().unwrap_or_else(|_| "/".into());
        let params = json!({ "sessionId": self.id(), "cwd": cwd, "mcpServers": [] });
        let loaded = self.client().request(method, params).await;
        self.replaying.store(false, Ordering::SeqCst);
        loaded.map(|_| ()).map_err(|e| error_text(&e))
    }

    fn client(&self) -> Arc<Client> {
        Arc::clone(&self.client.lock())
    }

    /// The session's id.
    pub(crate) fn id(&self) -> &str {
        self.id.get().map_or("", String::as_str)
    }

    /// The server's URL.
    pub(crate) fn url(&self) -> &str {
        &self.target.url
    }

    /// Whether the connection is up.
    pub(crate) fn connected(&self) -> bool {
        self.connected.load(Ordering::SeqCst)
    }

    /// What the status line says while the connection is down.
    pub(crate) fn reconnecting(&self) -> String {
        let (at, attempt) = *self.retry.lock();
        let left = at.saturating_duration_since(std::time::Instant::now()).as_secs_f64();
        if left > 0.0 {
            format!("disconnected · retry {attempt} in {left:.0}s")
        } else {
            format!("disconnected · reconnecting (attempt {attempt})…")
        }
    }

    /// The last status figures.
    pub(crate) fn status(&self) -> Value {
        self.status.lock().clone()
    }

    /// What the server said about the session.
    pub(crate) fn about(&self) -> Value {
        self.about.lock().clone()
    }

    /// Asks the server again for the status and the session's facts.
    pub(crate) async fn refresh(&self) {
        let client = self.client();
        let id = json!({ "sessionId": self.id() });
        if let Ok(status) = client.request("_zidane/status", id.clone()).await {
            *self.status.lock() = status;
        }
        if let Ok(about) = client.request("_zidane/session", id).await {
            *self.about.lock() = about;
        }
    }

    /// Refreshes the status once a second while connected.
    async fn poll(self: Arc<Self>) {
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            if Arc::strong_count(&self) == 1 {
                return;
            }
            if self.connected() {
                let status = self
                    .client()
                    .request("_zidane/status", json!({ "sessionId": self.id() }))
                    .await;
                if let Ok(status) = status {
                    *self.status.lock() = status;
                }
            }
        }
    }

    /// Calls one of the program's methods on the session.
    pub(crate) async fn call(&self, method: &str, mut params: Value) -> Result<Value, String> {
        params["sessionId"] = json!(self.id());
        self.client().request(method, params).await.map_err(|e| error_text(&e))
    }

    /// Sends a prompt; its outcome once the run ends.
    pub(crate) async fn submit(&self, text: &str) -> Result<Outcome, Error> {
        let (tell, told) = oneshot::channel();
        *self.waiting.lock() = Some(tell);
        let params = json!({ "sessionId": self.id(), "prompt": [{ "type": "text", "text": text }] });
        let answer = self.client().request("session/prompt", params).await;
        match answer {
            Ok(result) if result["_meta"]["zidane"]["steered"].is_boolean() => {
                self.waiting.lock().take();
                self.events
                    .notice("a run is going on: the prompt was sent to it as a steer");
                Ok(Outcome::NothingToContinue)
            }
            Ok(result) => {
                // The run's end came before this answer; the answer
                // carries its figures.
                self.waiting.lock().take();
                Ok(
                    match serde_json::from_value(result["_meta"]["zidane"]["output"].clone()) {
                        Ok(out) => Outcome::Ran(out),
                        Err(_) => Outcome::NothingToContinue,
                    },
                )
            }
            Err(error) if self.connected() => {
                self.waiting.lock().take();
                Err(Error::run(error_text(&error)))
            }
            // The connection went: the run goes on at the server; its end
            // arrives once this client is back.
            Err(_) => told.await.map_err(|_| Error::run("the session ended")),
        }
    }

    /// Continues the session's interrupted run (as a prompt with nothing
    /// new to say would).
    pub(crate) async fn resume_interrupted(&self) -> Outcome {
        let running = self.status.lock()["running"] == true;
        if !running {
            return Outcome::NothingToContinue;
        }
        let (tell, told) = oneshot::channel();
        *self.waiting.lock() = Some(tell);
        told.await.unwrap_or(Outcome::NothingToContinue)
    }

    /// Interrupts the run.
    pub(crate) fn cancel(&self) {
        self.client()
            .notify("session/cancel", json!({ "sessionId": self.id() }));
    }

    /// Leaves the session (it goes on at the server).
    pub(crate) fn detach(&self) {
        self.client().notify("session/close", json!({ "sessionId": self.id() }));
    }

    /// What the server sends, until the session is dropped.
    async fn read(self: Arc<Self>, mut incoming: UnboundedReceiver<Incoming>) {
        loop {
            while let Some(message) = incoming.recv().await {
                match message {
                    Incoming::Notification { method, params } if method == "$/cancel_request" => {
                        self.withdrawn(&params)
                    }
                    Incoming::Notification { method, params } => self.notified(&method, &params),
                    Incoming::Request { id, method, params } => self.asked(id, &method, params),
                    Incoming::Closed(why) => {
                        self.connected.store(false, Ordering::SeqCst);
                        self.events
                            .notice(format!("the connection to {} closed ({why})", self.target.url));
                        break;
                    }
                }
            }
            if Arc::strong_count(&self) == 1 {
                return;
            }
            match self.reconnect().await {
                Some(next) => incoming = next,
                None => return,
            }
        }
    }

    /// Connects again, with back-off, until it works or the session is
    /// dropped; the run that ended meanwhile is told.
    async fn reconnect(&self) -> Option<UnboundedReceiver<Incoming>> {
        let mut wait = Duration::from_millis(250);
        let mut attempt = 0;
        self.events
            .notice(format!("reconnecting to {} with back-off…", self.target.url));
        loop {
            attempt += 1;
            *self.retry.lock() = (std::time::Instant::now() + wait, attempt);
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_secs(10));
            let Ok((client, incoming)) = Client::connect(&self.target.refreshed()).await else {
                continue;
            };
            let client = Arc::new(client);
            if initialize(&client, &self.name).await.is_err() {
                continue;
            }
            *self.client.lock() = client;
            if self.load(false).await.is_err() {
                continue;
            }
            self.connected.store(true, Ordering::SeqCst);
            self.events.notice(format!("reconnected to {}", self.target.url));
            self.refresh().await;
            let status = self.status();
            if status["running"] != true
                && let Some(end) = status
                    .get("lastEnd")
                    .and_then(|e| serde_json::from_value::<Event>(e.clone()).ok())
            {
                self.ended(end);
            }
            return Some(incoming);
        }
    }

    fn notified(&self, method: &str, params: &Value) {
        if params["sessionId"].as_str() != Some(self.id()) {
            return;
        }
        match method {
            "_zidane/event" if !self.replaying.load(Ordering::SeqCst) => {
                if let Ok(event) = serde_json::from_value::<Event>(params["event"].clone()) {
                    self.ended_or_sent(event);
                }
            }
            "session/update" => self.updated(&params["update"]),
            _ => {}
        }
    }

    /// `$/cancel_request`: a question shown here was answered by another
    /// client (or expired) and is no longer asked.
    fn withdrawn(&self, params: &Value) {
        let Some((call_id, answering)) = self.asking.lock().remove(&params["requestId"].to_string()) else {
            return;
        };
        answering.abort();
        let by = params["_meta"]["zidane"]["answeredBy"].as_str().map(str::to_owned);
        self.events.send(Event::Answered { call_id, by });
    }

    fn ended_or_sent(&self, event: Event) {
        if let Event::RunEnd(_) = &event {
            self.ended(event);
        } else {
            self.events.send(event);
        }
    }

    /// A run's end: told to the prompt waiting for it, and shown.
    fn ended(&self, event: Event) {
        if let Event::RunEnd(end) = &event
            && let Some(tell) = self.waiting.lock().take()
        {
            let _ = tell.send(end.outcome.clone());
        }
        self.events.send(event);
    }

    /// A `session/update`: what a replay shows; after it, only another
    /// client's prompt (the program's own events show the rest).
    fn updated(&self, update: &Value) {
        let kind = update["sessionUpdate"].as_str().unwrap_or_default();
        let text = update["content"]["text"].as_str().unwrap_or_default().to_owned();
        if !self.replaying.load(Ordering::SeqCst) {
            if kind == "user_message_chunk"
                && let Some(client) = update["_meta"]["zidane"]["client"].as_str()
            {
                self.events.notice(format!("› ({client}) {text}"));
            }
            return;
        }
        match kind {
            "user_message_chunk" => self.events.notice(format!("› {text}")),
            "agent_message_chunk" => self.events.send(Event::Text(text)),
            "agent_thought_chunk" => self.events.send(Event::Thinking(text)),
            "tool_call" => self.events.send(Event::ToolCall(tool_call(update))),
            "tool_call_update" if matches!(update["status"].as_str(), Some("completed" | "failed")) => {
                self.events.send(Event::ToolResult(tool_result(update)));
            }
            _ => {}
        }
    }

    /// A question of the server's, asked here; the answer goes back.
    fn asked(&self, id: Value, method: &str, params: Value) {
        let client = self.client();
        self.asking.lock().retain(|_, (_, answering)| !answering.is_finished());
        match method {
            "session/request_permission" => {
                let (ask, answer) = question(&params);
                let call_id = ask.call.call_id.clone();
                self.events.send(Event::Question(Question::Call(ask)));
                let key = id.to_string();
                let answering = tokio::spawn(async move {
                    let answer = answer
                        .await
                        .unwrap_or(Answer::No(Some("the terminal went away".into())));
                    client.respond(id, permission_result(&answer));
                });
                self.asking.lock().insert(key, (call_id, answering));
            }
            "elicitation/create"
                if self.opening.load(Ordering::SeqCst) && params["_meta"]["zidane"]["trust"].is_string() =>
            {
                // Before the screen is taken: asked as the terminal asks.
                let message = params["message"].as_str().unwrap_or_default().to_owned();
                tokio::spawn(async move {
                    let answer = tokio::task::spawn_blocking(move || crate::print::ask::trust_text(&message))
                        .await
                        .ok()
                        .flatten();
                    let result = match answer {
                        Some(trust) => json!({ "action": "accept", "content": { "trust": trust } }),
                        None => json!({ "action": "decline" }),
                    };
                    client.respond(id, result);
                });
            }
            "elicitation/create" => {
                let request = ElicitationRequest {
                    server: String::new(),
                    message: params["message"].as_str().unwrap_or_default().to_owned(),
                    schema: params["requestedSchema"].clone(),
                };
                let (form, answer) = Form::relayed(request);
                self.events.send(Event::Question(Question::Form(form)));
                let key = id.to_string();
                let answering = tokio::spawn(async move {
                    let result = match answer.await.unwrap_or(ElicitationAnswer::Cancel) {
                        ElicitationAnswer::Accept(content) => json!({ "action": "accept", "content": content }),
                        ElicitationAnswer::Decline => json!({ "action": "decline" }),
                        ElicitationAnswer::Cancel => json!({ "action": "cancel" }),
                    };
                    client.respond(id, result);
                });
                self.asking.lock().insert(key, (String::new(), answering));
            }
            _ => client.respond(id, Value::Null),
        }
    }
}

/// `initialize`, asking for the program's own events.
pub(super) async fn initialize(client: &Client, name: &str) -> Result<(), String> {
    let params = json!({
        "protocolVersion": 1,
        "clientCapabilities": { "elicitation": { "form": {} } },
        "clientInfo": { "name": name },
        "_meta": { "zidane": { "events": true, "name": name } },
    });
    client
        .request("initialize", params)
        .await
        .map(|_| ())
        .map_err(|e| error_text(&e))
}

/// A permission request as a question here.
fn question(params: &Value) -> (Ask, oneshot::Receiver<Answer>) {
    let meta = &params["_meta"]["zidane"];
    let tool = &params["toolCall"];
    let call = ToolCall {
        name: meta["name"]
            .as_str()
            .or(tool["title"].as_str())
            .unwrap_or_default()
            .to_owned(),
        call_id: tool["toolCallId"].as_str().unwrap_or_default().to_owned(),
        input: tool["rawInput"].clone(),
        run_id: String::new(),
        session_id: params["sessionId"].as_str().map(str::to_owned),
        parent_run_id: None,
        depth: meta["depth"].as_u64().unwrap_or(0) as u32,
    };
    let text = |key: &str| meta[key].as_str().map(str::to_owned);
    Ask::relayed(
        call,
        text("reason"),
        text("rule").unwrap_or_default(),
        text("scope").unwrap_or_default(),
    )
}

/// An answer as the request's result (the option ACP names, and the
/// answer itself for the program's server).
fn permission_result(answer: &Answer) -> Value {
    let option = match answer {
        Answer::Yes => "allow_once",
        Answer::Always | Answer::Save { .. } => "allow_always",
        Answer::Never => "reject_always",
        Answer::No(_) => "reject_once",
    };
    json!({
        "outcome": { "outcome": "selected", "optionId": option },
        "_meta": { "zidane": { "answer": answer } },
    })
}

/// A replayed `tool_call` update as the call it shows.
fn tool_call(update: &Value) -> ToolCallEvent {
    let meta = &update["_meta"]["zidane"];
    ToolCallEvent {
        id: update["toolCallId"].as_str().unwrap_or_default().to_owned(),
        name: meta["name"]
            .as_str()
            .or(update["title"].as_str())
            .unwrap_or_default()
            .to_owned(),
        input: update["rawInput"].clone(),
        outcome: zidane::agent::events::ToolOutcome::Execute,
        reason: None,
        child: None::<ChildRef>,
    }
}

/// A replayed `tool_call_update` as the result it shows.
fn tool_result(update: &Value) -> ToolResultEvent {
    let meta = &update["_meta"]["zidane"];
    let text: Vec<&str> = update["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["content"]["text"].as_str())
        .collect();
    ToolResultEvent {
        id: update["toolCallId"].as_str().unwrap_or_default().to_owned(),
        name: meta["name"].as_str().unwrap_or_default().to_owned(),
        input: meta["input"].clone(),
        content: zidane::providers::ToolResultContent::Text(text.join("\n")),
        is_error: update["status"] == "failed",
        child: None,
    }
}
