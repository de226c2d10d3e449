//! A tool call in one short line (the command, the path, the pattern), as
//! the session, the editor's tool-call titles and a review's progress show it.

use serde_json::Value;

/// The value of `key` in a call's input, as text.
pub(crate) fn text<'a>(input: &'a Value, key: &str) -> &'a str {
    input.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The call's short form: the command, the path, the pattern.
pub(crate) fn brief(name: &str, input: &Value) -> String {
    let shown = match name {
        "shell" => format!("$ {}", text(input, "command")),
        "read_file" | "write_file" | "edit" | "multi_edit" | "list_files" => text(input, "path").to_owned(),
        "glob" | "grep" => text(input, "pattern").to_owned(),
        "spawn" => input
            .get("description")
            .or_else(|| input.get("task"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        "web_fetch" => text(input, "url").to_owned(),
        _ if input.is_null() => String::new(),
        _ => input.to_string(),
    };
    let line = shown.lines().next().unwrap_or_default();
    if line.chars().count() > 100 {
        format!("{}…", line.chars().take(100).collect::<String>())
    } else {
        line.to_owned()
    }
}
