//! A session's events, forwarded to the client: updates as
//! `session/update` notifications, questions as requests whose answers go
//! back to the conversation.

use std::sync::{Arc, Weak};

use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;
use zidane::mcp::ElicitationAnswer;
use zidane_app::{Answer, Ask, Event, Form, Question};

use super::{Server, Session, update};

/// The conversation's events as updates and questions, until it ends.
pub(super) async fn forward(server: Arc<Server>, session: Weak<Session>, mut events: UnboundedReceiver<Event>) {
    while let Some(event) = events.recv().await {
        let Some(session) = session.upgrade() else {
            return;
        };
        match event {
            Event::Flush(done) => {
                let _ = done.send(());
            }
            Event::Question(Question::Call(ask)) => {
                tokio::spawn(ask_permission(Arc::clone(&server), session.id.clone(), ask));
            }
            Event::Question(Question::Form(form)) => {
                tokio::spawn(ask_form(Arc::clone(&server), session.id.clone(), form));
            }
            Event::TaskStart { id, command, .. } => {
                session.tasks.lock().insert(id, (command, true));
            }
            Event::TaskEnd(end) => {
                if let Some(task) = session.tasks.lock().get_mut(&end.id) {
                    task.1 = false;
                }
            }
            event => {
                let ended = match &event {
                    Event::ToolResult(result) => session.terminals.lock().remove(&result.id),
                    _ => None,
                };
                for mut update in update::from_event(&event, session.conversation.setup().cwd()) {
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

/// A call to allow, as `session/request_permission`; a rejection "always"
/// holds for the rest of the session.
async fn ask_permission(server: Arc<Server>, id: String, ask: Ask) {
    let input = ask.call.input.clone();
    let params = json!({
        "sessionId": id,
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
    });
    let answer = server.request("session/request_permission", params).await;
    let outcome = answer.as_ref().map(|a| &a["outcome"]);
    let chosen = match outcome.and_then(|o| o["outcome"].as_str()) {
        Some("selected") => outcome.and_then(|o| o["optionId"].as_str()).unwrap_or_default(),
        _ => "cancelled",
    };
    ask.answer(match chosen {
        "allow_once" => Answer::Yes,
        "allow_always" => Answer::Always,
        "reject_always" => Answer::Never,
        "cancelled" => Answer::No(Some("the request was cancelled".into())),
        _ => Answer::No(None),
    });
}

/// An MCP server's form, as the client's form (`elicitation/create`) when
/// it takes forms (declined otherwise).
async fn ask_form(server: Arc<Server>, id: String, form: Form) {
    let takes_forms = !server.client.lock()["elicitation"]["form"].is_null();
    if !takes_forms {
        form.answer(ElicitationAnswer::Decline);
        return;
    }
    let request = &form.request;
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
    form.answer(answer);
}
