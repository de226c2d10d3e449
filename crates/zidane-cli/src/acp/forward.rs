//! A session's events, forwarded to its clients: updates as
//! `session/update` notifications to each (and, to a client that asked
//! for them, the program's own events as `_zidane/event`); questions as
//! requests to each, the first answer winning. A question waits for a
//! client to attach when none is (a served session), up to a timeout.

use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;
use zidane::mcp::ElicitationAnswer;
use zidane_app::{Answer, Ask, Event, Form, Question};

use super::{Connection, Session, update};

/// A question no client has answered yet.
pub(super) struct Pending {
    /// The request each client is sent.
    method: &'static str,
    params: Value,
    /// Taken by the first answer.
    answer: Mutex<Option<Reply>>,
    /// Each client asked, with its request's id: the others are told
    /// (`$/cancel_request`) once one answers.
    asked: Mutex<Vec<(std::sync::Weak<Connection>, i64)>>,
    /// Told once it is answered (or expired).
    settled: tokio::sync::Notify,
}

/// Where a question's answer goes.
enum Reply {
    Call(Ask),
    Form(Form),
}

impl Pending {
    /// Answers with what `result` says (the first answer wins); `true` when
    /// this answer was the one taken.
    fn settle(&self, result: Option<&Value>) -> bool {
        let Some(reply) = self.answer.lock().take() else {
            return false;
        };
        match reply {
            Reply::Call(ask) => ask.answer(permission(result)),
            Reply::Form(form) => form.answer(form_answer(result)),
        }
        self.settled.notify_one();
        true
    }

    /// Answers with `answer` when no client did.
    fn expire(&self, why: &str) {
        match self.answer.lock().take() {
            Some(Reply::Call(ask)) => ask.answer(Answer::No(Some(why.to_owned()))),
            Some(Reply::Form(form)) => form.answer(ElicitationAnswer::Decline),
            None => {}
        }
        self.settled.notify_one();
    }

    /// Withdraws the question from every client asked but `except`
    /// (`$/cancel_request`, saying who answered).
    fn withdraw(&self, except: Option<&Arc<Connection>>, by: &str) {
        for (other, request) in self.asked.lock().drain(..) {
            let Some(other) = other.upgrade() else { continue };
            if except.is_some_and(|e| Arc::ptr_eq(e, &other)) {
                continue;
            }
            other.pending.lock().remove(&request);
            other.send(json!({
                "jsonrpc": "2.0", "method": "$/cancel_request",
                "params": { "requestId": request, "_meta": { "zidane": { "answeredBy": by } } },
            }));
        }
    }

    fn answered(&self) -> bool {
        self.answer.lock().is_none()
    }
}

/// The conversation's events as updates and questions, until it ends.
pub(super) async fn forward(session: Weak<Session>, mut events: UnboundedReceiver<Event>, timeout: Duration) {
    while let Some(event) = events.recv().await {
        let Some(session) = session.upgrade() else {
            return;
        };
        match event {
            Event::Flush(done) => {
                let _ = done.send(());
            }
            Event::Question(question) => ask(&session, question, timeout),
            event => show(&session, &event),
        }
    }
}

/// One event to every client: its updates, and itself to the clients that
/// asked for the program's events.
fn show(session: &Session, event: &Event) {
    match event {
        Event::TaskStart { id, command, .. } => {
            session.tasks.lock().insert(id.clone(), (command.clone(), true));
        }
        Event::TaskEnd(end) => {
            if let Some(task) = session.tasks.lock().get_mut(&end.id) {
                task.1 = false;
            }
        }
        Event::Injected { id: Some(id) } => session.queued.lock().retain(|(queued, _)| queued != id),
        Event::RunEnd(_) => session.queued.lock().clear(),
        Event::TurnEnd(_) | Event::CacheBreak { .. } | Event::CompactEnd { .. } => session.usage.lock().record(event),
        _ => {}
    }
    let ended = match event {
        Event::ToolResult(result) => session.terminals.lock().remove(&result.id),
        _ => None,
    };
    for mut update in update::from_event(event, &session.cwd()) {
        // A command run in the client's terminal keeps it shown.
        if let Some(terminal) = &ended
            && let Some(content) = update.get_mut("content").and_then(Value::as_array_mut)
        {
            content.insert(0, json!({ "type": "terminal", "terminalId": terminal }));
        }
        session.publish(&update, None, true);
    }
    if let Event::RunEnd(_) = event {
        *session.last_end.lock() = serde_json::to_value(event).ok();
        // A question of the run that ended is asked no more.
        for pending in std::mem::take(&mut *session.questions.lock()) {
            pending.expire("the run ended");
            pending.withdraw(None, "the run's end");
        }
    }
    if matches!(event, Event::TurnEnd(_) | Event::RunEnd(_)) {
        // What a turn showed is in the sessions file once it ends.
        session.turn_ended();
    }
    let clients = session.clients();
    let wanting: Vec<&Arc<Connection>> = clients
        .iter()
        .filter(|c| c.wants_events.load(std::sync::atomic::Ordering::SeqCst))
        .collect();
    if !wanting.is_empty()
        && let Ok(event) = serde_json::to_value(event)
    {
        for client in wanting {
            client.send(json!({
                "jsonrpc": "2.0", "method": "_zidane/event",
                "params": { "sessionId": session.id, "event": event },
            }));
        }
    }
}

/// A question: asked of every client now, and of those that attach
/// before it is answered; declined after `timeout` without an answer.
fn ask(session: &Arc<Session>, question: Question, timeout: Duration) {
    let pending = Arc::new(match question {
        Question::Call(ask) => Pending {
            method: "session/request_permission",
            params: permission_params(&session.id, &ask),
            answer: Mutex::new(Some(Reply::Call(ask))),
            asked: Mutex::new(Vec::new()),
            settled: tokio::sync::Notify::new(),
        },
        Question::Form(form) => {
            let request = &form.request;
            Pending {
                method: "elicitation/create",
                params: json!({
                    "sessionId": session.id,
                    "mode": "form",
                    "message": format!("MCP server `{}`: {}", request.server, request.message),
                    "requestedSchema": request.schema,
                }),
                answer: Mutex::new(Some(Reply::Form(form))),
                asked: Mutex::new(Vec::new()),
                settled: tokio::sync::Notify::new(),
            }
        }
    });
    let clients = session.clients();
    if clients.is_empty() && !session.served {
        pending.expire("the client is gone");
        return;
    }
    session.questions.lock().push(Arc::clone(&pending));
    for client in clients {
        offer(client, session.id.clone(), Arc::clone(&pending));
    }
    let (waiting, session) = (Arc::clone(&pending), Arc::downgrade(session));
    tokio::spawn(async move {
        tokio::select! {
            () = waiting.settled.notified() => return,
            () = tokio::time::sleep(timeout) => {}
        }
        waiting.expire(&format!("no client answered within {}s", timeout.as_secs()));
        waiting.withdraw(None, "the timeout");
        if let Some(session) = session.upgrade() {
            session.questions.lock().retain(|p| !p.answered());
        }
    });
}

/// Asks `client` a pending question; its answer settles it unless another
/// client's came first. A client that goes away without answering leaves
/// the question to the others.
pub(super) fn offer(client: Arc<Connection>, session_id: String, pending: Arc<Pending>) {
    if pending.answered() || !client.answers.load(std::sync::atomic::Ordering::SeqCst) {
        return;
    }
    if pending.method == "elicitation/create" && client.client.lock()["elicitation"]["form"].is_null() {
        return;
    }
    let id = {
        let mut asked = pending.asked.lock();
        // Asked once per client, however often it attaches.
        if asked
            .iter()
            .any(|(c, _)| std::ptr::eq(c.as_ptr(), Arc::as_ptr(&client)))
        {
            return;
        }
        let (id, answer) = client.ask(pending.method, pending.params.clone());
        asked.push((Arc::downgrade(&client), id));
        (id, answer)
    };
    let (request, answer) = id;
    tokio::spawn(async move {
        let result = answer.await.ok().flatten();
        if result.is_none() && client.out.is_closed() {
            return;
        }
        if result.is_none() && client.hub.served() {
            // An error from one client (one that cannot answer) leaves the
            // question to the others.
            pending
                .asked
                .lock()
                .retain(|(c, asked)| !(std::ptr::eq(c.as_ptr(), Arc::as_ptr(&client)) && *asked == request));
            return;
        }
        if !pending.settle(result.as_ref()) {
            return;
        }
        if let Some(session) = client.hub.get(&session_id) {
            session.questions.lock().retain(|p| !p.answered());
        }
        // The others see it answered: their request is withdrawn.
        let by = client.name.lock().clone();
        pending.withdraw(Some(&client), &by);
    });
}

fn permission_params(session: &str, ask: &Ask) -> Value {
    let input = ask.call.input.clone();
    json!({
        "sessionId": session,
        "toolCall": {
            "toolCallId": ask.call.call_id,
            "title": update::title(&ask.call.name, &input),
            "kind": update::kind(&ask.call.name),
            "status": "pending",
            "rawInput": input,
        },
        "options": [
            { "optionId": "allow_once", "name": "Allow", "kind": "allow_once" },
            { "optionId": "allow_always", "name": format!("Always allow ({})", ask.rule), "kind": "allow_always" },
            { "optionId": "reject_once", "name": "Reject", "kind": "reject_once" },
            { "optionId": "reject_always", "name": "Always reject", "kind": "reject_always" },
        ],
        "_meta": { "zidane": { "name": ask.call.name, "reason": ask.reason, "rule": ask.rule, "scope": ask.scope, "depth": ask.call.depth } },
    })
}

/// A `session/request_permission` result as an answer; a rejection
/// "always" holds for the rest of the session.
fn permission(result: Option<&Value>) -> Answer {
    // The program's own clients say exactly what the person answered.
    if let Some(answer) = result.and_then(|r| serde_json::from_value(r["_meta"]["zidane"]["answer"].clone()).ok()) {
        return answer;
    }
    let outcome = result.map(|a| &a["outcome"]);
    let chosen = match outcome.and_then(|o| o["outcome"].as_str()) {
        Some("selected") => outcome.and_then(|o| o["optionId"].as_str()).unwrap_or_default(),
        _ => "cancelled",
    };
    match chosen {
        "allow_once" => Answer::Yes,
        "allow_always" => Answer::Always,
        "reject_always" => Answer::Never,
        "cancelled" => Answer::No(Some("the request was cancelled".into())),
        _ => Answer::No(
            result
                .and_then(|r| r["_meta"]["zidane"]["reason"].as_str())
                .map(str::to_owned),
        ),
    }
}

/// An `elicitation/create` result as a form's answer.
fn form_answer(result: Option<&Value>) -> ElicitationAnswer {
    match result {
        Some(result) => match result["action"].as_str() {
            Some("accept") => ElicitationAnswer::Accept(result["content"].as_object().cloned().unwrap_or_default()),
            Some("cancel") => ElicitationAnswer::Cancel,
            _ => ElicitationAnswer::Decline,
        },
        None => ElicitationAnswer::Decline,
    }
}
