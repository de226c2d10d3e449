//! What the agent does, as ACP `session/update` payloads: text and thinking
//! chunks, tool calls with their kind, locations and content (edits as
//! diffs), and the plan `todowrite` keeps.

use std::path::Path;

use serde_json::{Value, json};
use zidane::providers::{ContentBlock, Role, SessionTurn};

use zidane_app::Event;

/// The ACP kind of a tool.
pub(crate) fn kind(name: &str) -> &'static str {
    match name {
        "read_file" | "list_files" | "todoread" => "read",
        "write_file" | "edit" | "multi_edit" => "edit",
        "shell" | "shell_kill" | "wait_task" => "execute",
        "glob" | "grep" | "tool_search" => "search",
        "web_fetch" => "fetch",
        "todowrite" => "think",
        _ => "other",
    }
}

fn text<'a>(input: &'a Value, key: &str) -> &'a str {
    input.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// A title a person reads in the editor.
pub(crate) fn title(name: &str, input: &Value) -> String {
    match name {
        "shell" => format!("Run `{}`", text(input, "command").lines().next().unwrap_or_default()),
        "read_file" => format!("Read {}", text(input, "path")),
        "list_files" => format!("List {}", text(input, "path")),
        "write_file" => format!("Write {}", text(input, "path")),
        "edit" | "multi_edit" => format!("Edit {}", text(input, "path")),
        "glob" => format!("Find files `{}`", text(input, "pattern")),
        "grep" => format!("Search `{}`", text(input, "pattern")),
        "web_fetch" => format!("Fetch {}", text(input, "url")),
        "todowrite" => "Update the plan".to_owned(),
        "spawn" => format!("Sub-agent: {}", crate::brief::brief(name, input)),
        _ => name.to_owned(),
    }
}

/// The files a call touches, as absolute paths.
fn locations(input: &Value, cwd: &Path) -> Vec<Value> {
    let path = text(input, "path");
    if path.is_empty() {
        return Vec::new();
    }
    let full = cwd.join(path);
    vec![json!({ "path": full.to_string_lossy() })]
}

/// A call's content once it ran: edits as diffs, the rest as text.
fn call_content(name: &str, input: &Value, output: &str, cwd: &Path) -> Vec<Value> {
    let path = cwd.join(text(input, "path")).to_string_lossy().into_owned();
    match name {
        "edit" => vec![json!({
            "type": "diff", "path": path,
            "oldText": text(input, "old_string"), "newText": text(input, "new_string"),
        })],
        "multi_edit" => input["edits"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| {
                json!({
                    "type": "diff", "path": path,
                    "oldText": text(e, "old_string"), "newText": text(e, "new_string"),
                })
            })
            .collect(),
        "write_file" => vec![json!({
            "type": "diff", "path": path, "oldText": Value::Null, "newText": text(input, "content"),
        })],
        _ => vec![text_content(output)],
    }
}

fn text_content(text: &str) -> Value {
    json!({ "type": "content", "content": { "type": "text", "text": text } })
}

/// `todowrite`'s list as a plan.
fn plan(input: &Value) -> Option<Value> {
    let todos = input["todos"].as_array()?;
    let entries: Vec<Value> = todos
        .iter()
        .map(|t| {
            let status = t["status"]
                .as_str()
                .filter(|s| matches!(*s, "pending" | "in_progress" | "completed"))
                .unwrap_or("pending");
            let priority = t["priority"]
                .as_str()
                .filter(|p| matches!(*p, "high" | "medium" | "low"))
                .unwrap_or("medium");
            json!({ "content": text(t, "content"), "priority": priority, "status": status })
        })
        .collect();
    Some(json!({ "sessionUpdate": "plan", "entries": entries }))
}

/// The updates one event makes (none for what an editor does not show).
pub(crate) fn from_event(event: &Event, cwd: &Path) -> Vec<Value> {
    match event {
        Event::Text(delta) => vec![json!({
            "sessionUpdate": "agent_message_chunk", "content": { "type": "text", "text": delta },
        })],
        Event::Thinking(delta) => vec![json!({
            "sessionUpdate": "agent_thought_chunk", "content": { "type": "text", "text": delta },
        })],
        Event::ToolCall(call) => {
            let (id, name, input) = (&call.id, &call.name, &call.input);
            let mut out = vec![json!({
                "sessionUpdate": "tool_call",
                "toolCallId": id,
                "title": title(name, input),
                "kind": kind(name),
                "status": "pending",
                "locations": locations(input, cwd),
                "rawInput": input,
            })];
            // A sub-agent's call says which `spawn` call it runs under.
            if let Some(child) = &call.child {
                out[0]["_meta"] = json!({ "zidane": { "parentToolCallId": child.id, "depth": child.depth } });
            }
            out.push(match call.refusal() {
                Some(why) => json!({
                    "sessionUpdate": "tool_call_update", "toolCallId": id, "status": "failed",
                    "content": [text_content(&why)],
                }),
                None => json!({ "sessionUpdate": "tool_call_update", "toolCallId": id, "status": "in_progress" }),
            });
            if name == "todowrite"
                && let Some(plan) = plan(input)
            {
                out.push(plan);
            }
            out
        }
        Event::ToolResult(result) => {
            let text = result.text();
            let mut content = if result.is_error {
                vec![text_content(&text)]
            } else {
                call_content(&result.name, &result.input, &text, cwd)
            };
            let mut update = json!({
                "sessionUpdate": "tool_call_update",
                "toolCallId": result.id,
                "status": if result.is_error { "failed" } else { "completed" },
            });
            // The language server's findings as content of their own (a
            // diff shows the edit, not the text the model read after it).
            if let Some(report) = result.diagnostics.as_ref().filter(|r| !r.is_empty()) {
                let mut lines = vec![format!("{} ({})", report.summary(), report.server)];
                lines.extend(report.findings.iter().map(zidane::lsp::Finding::line_text));
                if !content.iter().any(|c| {
                    c["content"]["text"]
                        .as_str()
                        .is_some_and(|t| t.contains("<diagnostics"))
                }) {
                    content.push(text_content(&lines.join("\n")));
                }
                update["_meta"] = json!({ "zidane": { "diagnostics": report } });
            }
            update["content"] = json!(content);
            vec![update]
        }
        Event::ToolCancelled { id, reason, .. } => vec![json!({
            "sessionUpdate": "tool_call_update", "toolCallId": id, "status": "failed",
            "content": [text_content(&format!("cut off: {reason}"))],
        })],
        _ => Vec::new(),
    }
}

/// A stored conversation, as the updates that show it again
/// (`session/load`).
pub(crate) fn replay(turns: &[SessionTurn], cwd: &Path) -> Vec<Value> {
    let mut out = Vec::new();
    let mut calls: std::collections::HashMap<String, (String, Value)> = std::collections::HashMap::new();
    for turn in turns {
        for block in turn.content.iter() {
            match (turn.role, block) {
                (Role::User, ContentBlock::Text { text }) => out.push(json!({
                    "sessionUpdate": "user_message_chunk", "content": { "type": "text", "text": text },
                })),
                (Role::Assistant, ContentBlock::Text { text }) => out.push(json!({
                    "sessionUpdate": "agent_message_chunk", "content": { "type": "text", "text": text },
                })),
                (Role::Assistant, ContentBlock::Thinking { thinking, .. }) => out.push(json!({
                    "sessionUpdate": "agent_thought_chunk", "content": { "type": "text", "text": thinking },
                })),
                (Role::Assistant, ContentBlock::ToolUse { id, name, input, .. }) => {
                    calls.insert(id.clone(), (name.clone(), input.clone()));
                    out.push(json!({
                        "sessionUpdate": "tool_call",
                        "toolCallId": id,
                        "title": title(name, input),
                        "kind": kind(name),
                        "status": "in_progress",
                        "locations": locations(input, cwd),
                        "rawInput": input,
                    }));
                }
                (
                    _,
                    ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                        ..
                    },
                ) => {
                    let text = match content {
                        zidane::providers::ToolResultContent::Text(t) => t.clone(),
                        zidane::providers::ToolResultContent::Parts(_) => String::new(),
                    };
                    let failed = *is_error;
                    let shown = match calls.get(tool_use_id) {
                        Some((name, input)) if !failed => call_content(name, input, &text, cwd),
                        _ => vec![text_content(&text)],
                    };
                    out.push(json!({
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": tool_use_id,
                        "status": if failed { "failed" } else { "completed" },
                        "content": shown,
                    }));
                }
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
