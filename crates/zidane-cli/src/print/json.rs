//! `--json`: each event as a line of JSON on standard output.

use serde_json::{Value, json};
use zidane_app::{ChildRef, Event, McpState};

use super::{out, result_text};

/// Writes `value` as one line.
pub(super) fn line(value: Value) {
    out(&format!("{value}\n"));
}

/// The line of `event`, if it has one.
pub(super) fn show(event: &Event) {
    let value = match event {
        Event::Text(delta) => json!({"type": "text", "delta": delta}),
        Event::PromptProgress { done, total } => json!({"type": "prompt_progress", "processed": done, "total": total}),
        Event::Skill { name, via } => json!({"type": "skill", "name": name, "via": via}),
        Event::ToolCall(call) => match &call.child {
            Some(ChildRef { id, depth }) => {
                json!({"type": "child_tool_call", "child": id, "depth": depth, "id": call.id, "name": call.name, "input": call.input, "outcome": call.outcome})
            }
            None => {
                json!({"type": "tool_call", "id": call.id, "name": call.name, "input": call.input, "outcome": call.outcome})
            }
        },
        Event::ToolResult(result) => {
            let text = result_text(&result.content);
            match &result.child {
                Some(ChildRef { id, depth }) => {
                    json!({"type": "child_tool_result", "child": id, "depth": depth, "id": result.id, "name": result.name, "is_error": result.is_error, "output": text})
                }
                None => {
                    let mut line = json!({"type": "tool_result", "id": result.id, "name": result.name, "is_error": result.is_error, "output": text});
                    if let Some(report) = &result.diagnostics {
                        line["diagnostics"] = json!(report);
                    }
                    line
                }
            }
        }
        Event::ToolCancelled { id, reason, child } => match child {
            Some(child) => json!({"type": "child_tool_cancelled", "child": child.id, "id": id, "reason": reason}),
            None => json!({"type": "tool_cancelled", "id": id, "reason": reason}),
        },
        Event::ChildText { child, text } => {
            json!({"type": "child_text", "child": child.id, "depth": child.depth, "text": text})
        }
        Event::SpawnQueued {
            child_id,
            running,
            limit,
        } => json!({"type": "spawn_queued", "child": child_id, "running": running, "limit": limit}),
        Event::SpawnError { child_id, error } => json!({"type": "spawn_error", "child": child_id, "error": error}),
        Event::TaskStart {
            id,
            command,
            pid,
            output,
        } => {
            json!({"type": "task_start", "id": id, "command": command, "pid": pid, "output": output})
        }
        Event::TaskEnd(end) => {
            json!({"type": "task_exit", "id": end.id, "status": end.status, "exit_code": end.exit_code, "signal": end.signal, "duration_ms": end.duration_ms})
        }
        Event::TaskStall { id, stalled_ms, .. } => json!({"type": "task_stall", "id": id, "stalled_ms": stalled_ms}),
        Event::Retry(retry) => {
            json!({"type": "retry", "attempt": retry.attempt, "delay_ms": retry.delay_ms, "error": retry.error, "discarded_text": retry.discarded_text})
        }
        Event::Mcp {
            name,
            state: McpState::Unavailable(why),
        } => json!({"type": "mcp_error", "server": name, "error": why}),
        Event::ProviderNote { kind, message } => {
            json!({"type": "provider_diagnostic", "kind": kind, "message": message})
        }
        Event::Fallback { from, to } => json!({"type": "fallback", "from": from, "to": to}),
        Event::Checkpoint(note) => {
            let Some(cp) = &note.checkpoint else {
                return;
            };
            let mut value = serde_json::to_value(cp).unwrap_or_default();
            if let Some(map) = value.as_object_mut() {
                map.insert("type".into(), json!("checkpoint"));
                map.insert("session".into(), json!(note.session));
                map.insert("notes".into(), json!(note.notes));
            }
            value
        }
        // Notes for the person stay off the JSON stream.
        Event::Notice(text) => {
            eprintln!("zidane: {text}");
            return;
        }
        _ => return,
    };
    line(value);
}
