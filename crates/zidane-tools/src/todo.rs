//! `todowrite` / `todoread`: the agent's plan, kept in durable tool state so
//! it survives compaction and resumes.

use serde_json::{Value, json};
use zidane_core::{FnTool, ToolOutput};

use crate::fail;

fn render(todos: &[Value]) -> String {
    if todos.is_empty() {
        return "No todos yet.".to_owned();
    }
    todos
        .iter()
        .map(|t| {
            let mark = match t["status"].as_str() {
                Some("completed") => "[x]",
                Some("in_progress") => "[~]",
                _ => "[ ]",
            };
            format!("- {mark} {}", t["content"].as_str().unwrap_or_default())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub(crate) fn todowrite() -> FnTool {
    FnTool::new(
        "todowrite",
        "Replace the todo list (the plan of a task of several steps). Statuses: pending, in_progress, completed.",
        json!({
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": {"type": "string"},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}
                        },
                        "required": ["content", "status"]
                    }
                }
            },
            "required": ["todos"]
        }),
        |input, cx| async move {
            let todos = input["todos"]
                .as_array()
                .cloned()
                .ok_or_else(|| fail("`todos` is required"))?;
            cx.state().set("todos", Value::Array(todos.clone()));
            Ok(ToolOutput::text(render(&todos)))
        },
    )
    .safe()
    .parallel()
}

pub(crate) fn todoread() -> FnTool {
    FnTool::new(
        "todoread",
        "Show the todo list.",
        json!({"type": "object", "properties": {}}),
        |_input, cx| async move {
            let todos = cx
                .state()
                .get("todos")
                .and_then(|v| v.as_array().cloned())
                .unwrap_or_default();
            Ok(ToolOutput::text(render(&todos)))
        },
    )
    .safe()
    .parallel()
}
