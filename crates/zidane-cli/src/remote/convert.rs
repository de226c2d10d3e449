//! What crosses between a server's messages and the conversation's
//! events: `initialize`, permission requests as questions and answers as
//! results, and replayed updates as the events they show.

use serde_json::{Value, json};
use tokio::sync::oneshot;
use zidane::agent::ToolCall;
use zidane_app::{Answer, Ask, ChildRef, ToolCallEvent, ToolResultEvent};

use super::{Client, error_text};

/// `initialize`, asking for the program's own events; `answers`: whether
/// this client answers questions (a script without a terminal does not,
/// and is not asked).
pub(super) async fn initialize(client: &Client, name: &str, answers: bool) -> Result<(), String> {
    let capabilities = if answers {
        json!({ "elicitation": { "form": {} } })
    } else {
        json!({})
    };
    let params = json!({
        "protocolVersion": 1,
        "clientCapabilities": capabilities,
        "clientInfo": { "name": name },
        "_meta": { "zidane": { "events": true, "name": name, "answers": answers } },
    });
    client
        .request("initialize", params)
        .await
        .map(|_| ())
        .map_err(|e| error_text(&e))
}

/// A permission request as a question here.
pub(super) fn question(params: &Value) -> (Ask, oneshot::Receiver<Answer>) {
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
pub(super) fn permission_result(answer: &Answer) -> Value {
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
pub(super) fn tool_call(update: &Value) -> ToolCallEvent {
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
pub(super) fn tool_result(update: &Value) -> ToolResultEvent {
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
        diagnostics: serde_json::from_value(meta["diagnostics"].clone()).ok(),
    }
}
