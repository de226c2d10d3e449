//! A served session driven from here: the server's events turned back into
//! the conversation's [`Event`]s (so the terminal session renders them as
//! it renders a local one), its questions into [`Question`]s whose answers
//! go back, prompts and the program's own methods sent, and a lost
//! connection retried with back-off (said on the status line).
//!
//! Leaving (a detach, a closed terminal) answers nothing: a question shown
//! here and not answered stays with the server for the next client.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::sync::oneshot;
use zidane::mcp::{ElicitationAnswer, ElicitationRequest};
use zidane_app::{Error, Event, Events, Form, Outcome, Question};

use super::convert::{initialize, permission_result, question, tool_call, tool_result};
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
    /// Whether this client answers questions.
    answers: bool,
    client: Mutex<Arc<Client>>,
    /// Set once the server named it (at once when attaching).
    id: std::sync::OnceLock<String>,
    events: Events,
    /// The last `_zidane/status`.
    status: Mutex<Value>,
    /// What `_zidane/session` said (commands, MCP servers, …).
    about: Mutex<Value>,
    /// The run being watched (this client's prompt, or one it found
    /// going), told its outcome by the run's end.
    waiting: Mutex<Option<oneshot::Sender<Outcome>>>,
    /// While a load replays the conversation: its updates are what is
    /// shown (after it, the program's own events are).
    replaying: AtomicBool,
    /// Whether the session is loaded on a live connection.
    connected: AtomicBool,
    /// Until the terminal session starts: a trust question is asked on the
    /// terminal as a line (a form after that).
    opening: AtomicBool,
    /// While disconnected: the next attempt's time and number.
    retry: Mutex<(std::time::Instant, u32)>,
    /// The server's questions shown here, by its request id: the call's id
    /// and the task that sends the answer back.
    asking: Mutex<HashMap<String, (String, tokio::task::JoinHandle<()>)>>,
}

impl RemoteSession {
    /// Opens (or attaches to) a session of the server at `target`, its
    /// events going to `events`; `answers`: whether this client answers
    /// the session's questions.
    pub(crate) async fn open(
        target: Target,
        opening: Opening,
        name: &str,
        events: Events,
        answers: bool,
    ) -> Result<Arc<RemoteSession>, String> {
        let (client, incoming) = Client::connect(&target).await?;
        let client = Arc::new(client);
        initialize(&client, name, answers).await?;
        let session = Arc::new(RemoteSession {
            target,
            name: name.to_owned(),
            answers,
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
        tokio::spawn(read(Arc::downgrade(&session), incoming));
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
        session.load(Some(0)).await?;
        session.opening.store(false, Ordering::SeqCst);
        session.refresh().await;
        tokio::spawn(poll(Arc::downgrade(&session)));
        Ok(session)
    }

    /// Loads the session on the current connection, its conversation shown
    /// from message `since` on (`None`: not shown).
    async fn load(&self, since: Option<usize>) -> Result<(), String> {
        self.replaying.store(since.is_some(), Ordering::SeqCst);
        let cwd = std::env::current_dir().unwrap_or_else(|_| "/".into());
        let mut params = json!({ "sessionId": self.id(), "cwd": cwd, "mcpServers": [] });
        let method = match since {
            Some(0) => "session/load",
            Some(from) => {
                params["_meta"] = json!({ "zidane": { "since": from } });
                "session/resume"
            }
            None => "session/resume",
        };
        let client = self.client();
        let loaded = client.request(method, params).await;
        // The replay's updates are all in before its end is acted on.
        client.barrier().await;
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

    /// Whether the session is loaded on a live connection.
    pub(crate) fn connected(&self) -> bool {
        self.connected.load(Ordering::SeqCst) && !self.client().closed()
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

    /// Calls one of the program's methods on the session.
    pub(crate) async fn call(&self, method: &str, mut params: Value) -> Result<Value, String> {
        if !self.connected() {
            return Err(format!("not connected to {} (reconnecting)", self.target.url));
        }
        params["sessionId"] = json!(self.id());
        self.client().request(method, params).await.map_err(|e| error_text(&e))
    }

    /// Sends a prompt; its outcome once the run ends.
    pub(crate) async fn submit(&self, text: &str) -> Result<Outcome, Error> {
        if !self.connected() {
            return Err(Error::run(format!(
                "not connected to {}; the prompt was not sent (it is kept in the history)",
                self.target.url
            )));
        }
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

    /// Waits for the end of the run going on at the server (one this
    /// client found going, or an interrupted one the server continues).
    pub(crate) async fn follow(&self) -> Outcome {
        let (tell, told) = oneshot::channel();
        *self.waiting.lock() = Some(tell);
        told.await.unwrap_or(Outcome::NothingToContinue)
    }

    /// Continues the session's interrupted run: watched to its end when the
    /// server runs it.
    pub(crate) async fn resume_interrupted(&self) -> Outcome {
        if self.status.lock()["running"] != true {
            return Outcome::NothingToContinue;
        }
        self.follow().await
    }

    /// Interrupts the run.
    pub(crate) fn cancel(&self) {
        self.client()
            .notify("session/cancel", json!({ "sessionId": self.id() }));
    }

    /// Leaves the session (it goes on at the server); questions shown here
    /// stay with the server, unanswered.
    pub(crate) fn detach(&self) {
        for (_, (_, answering)) in self.asking.lock().drain() {
            answering.abort();
        }
        self.client().notify("session/close", json!({ "sessionId": self.id() }));
    }

    /// The connection went: the questions shown here are no longer asked
    /// here (the server asks them again on the next connection).
    fn lost(&self, why: &str) {
        self.connected.store(false, Ordering::SeqCst);
        for (_, (call_id, answering)) in self.asking.lock().drain() {
            answering.abort();
            self.events.send(Event::Answered { call_id, by: None });
        }
        self.events
            .notice(format!("the connection to {} closed ({why})", self.target.url));
    }

    /// Connects again, with back-off, until it works, the session is
    /// dropped, or the server refuses this client for good; the session is
    /// loaded on a task of its own (the server may ask this client
    /// something before it answers, and the reader must be running).
    async fn reconnect(self: &Arc<Self>) -> Option<UnboundedReceiver<Incoming>> {
        let mut wait = Duration::from_millis(250);
        let mut attempt = 0;
        self.events
            .notice(format!("reconnecting to {} with back-off…", self.target.url));
        loop {
            attempt += 1;
            *self.retry.lock() = (std::time::Instant::now() + wait, attempt);
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_secs(10));
            let (client, incoming) = match Client::connect(&self.target.refreshed()).await {
                Ok(connected) => connected,
                Err(e) if e.contains("401") => {
                    self.events.notice(format!(
                        "the server at {} refused the token; not reconnecting",
                        self.target.url
                    ));
                    return None;
                }
                Err(_) => continue,
            };
            let client = Arc::new(client);
            if initialize(&client, &self.name, self.answers).await.is_err() {
                continue;
            }
            *self.client.lock() = client;
            tokio::spawn(Arc::clone(self).resumed());
            return Some(incoming);
        }
    }

    /// The session loaded again after a reconnection: what happened
    /// meanwhile shown (the messages after those seen, then the turn going
    /// on), and the run that ended meanwhile told.
    async fn resumed(self: Arc<Self>) {
        let seen = self.status.lock()["messages"].as_u64().map(|n| n as usize);
        match self.load(Some(seen.unwrap_or(0))).await {
            Ok(()) => {}
            Err(e) if e.contains("no session") => {
                self.events
                    .notice(format!("the session is gone from {} ({e})", self.target.url));
                return;
            }
            // The connection went again: the reader reconnects.
            Err(_) => return,
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
    }

    fn take(self: &Arc<Self>, message: Incoming) -> bool {
        match message {
            Incoming::Notification { method, params } if method == "$/cancel_request" => self.withdrawn(&params),
            Incoming::Notification { method, params } => self.notified(&method, &params),
            Incoming::Request { id, method, params } => self.asked(id, &method, params),
            Incoming::Barrier(done) => {
                let _ = done.send(());
            }
            Incoming::Closed(why) => {
                self.lost(&why);
                return false;
            }
        }
        true
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

    /// A run's end: told to whoever watches it, and shown.
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

    /// A question of the server's, asked here; the answer goes back (none
    /// when it is dropped unanswered: the question stays with the server).
    fn asked(&self, id: Value, method: &str, params: Value) {
        let client = self.client();
        self.asking.lock().retain(|_, (_, answering)| !answering.is_finished());
        let key = id.to_string();
        match method {
            "session/request_permission" => {
                let (ask, answer) = question(&params);
                let call_id = ask.call.call_id.clone();
                self.events.send(Event::Question(Question::Call(ask)));
                let answering = tokio::spawn(async move {
                    if let Ok(answer) = answer.await {
                        client.respond(id, permission_result(&answer));
                    }
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
                let answering = tokio::spawn(async move {
                    let Ok(answer) = answer.await else {
                        return;
                    };
                    let result = match answer {
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

/// What the server sends, until the session is dropped; a lost connection
/// is made again.
async fn read(session: Weak<RemoteSession>, mut incoming: UnboundedReceiver<Incoming>) {
    loop {
        while let Some(message) = incoming.recv().await {
            let Some(session) = session.upgrade() else {
                return;
            };
            if !session.take(message) {
                break;
            }
        }
        let Some(this) = session.upgrade() else {
            return;
        };
        match this.reconnect().await {
            Some(next) => incoming = next,
            None => return,
        }
    }
}

/// Refreshes the status once a second while connected, until the session
/// is dropped.
async fn poll(session: Weak<RemoteSession>) {
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let Some(session) = session.upgrade() else {
            return;
        };
        if session.connected() {
            let status = session
                .client()
                .request("_zidane/status", json!({ "sessionId": session.id() }))
                .await;
            if let Ok(status) = status {
                *session.status.lock() = status;
            }
        }
    }
}
