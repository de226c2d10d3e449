//! The compact prompt: on a context window under [`COMPACT_BELOW`] tokens
//! the program's system prompt and its built-in tools' descriptions shrink
//! (a small model's window is mostly the fixed prompt otherwise), and the
//! built-in tools' parameters lose their descriptions (and a few rarely
//! used ones are not shown). Tools of others
//! (MCP servers) are left as they are.

use serde_json::Value;
use zidane::providers::{SYSTEM_PROMPT_BOUNDARY, ToolSpec};

/// Windows under this many tokens get the compact prompt.
pub const COMPACT_BELOW: u32 = 16_000;

/// The system prompt's lead in compact form.
pub(crate) const COMPACT_SYSTEM: &str = "You are a coding agent in a folder on the user's machine. Read a file \
before editing it; prefer `edit` to rewriting files; run builds and tests with `shell`. Be brief: say what you \
changed.";

/// The built-in tools' descriptions in compact form.
const COMPACT_TOOLS: &[(&str, &str)] = &[
    (
        "shell",
        "Run a shell command in the working folder; returns its exit code and output. `run_in_background: true` for servers.",
    ),
    ("wait_task", "Read a background task's new output and status."),
    ("shell_kill", "Stop a background task."),
    (
        "read_file",
        "Read a text file with line numbers (`offset`, `limit` for part of it).",
    ),
    ("write_file", "Write a whole file. Read an existing file first."),
    (
        "edit",
        "Replace exact text in a file (`old_string` must match once unless `replace_all`). Read the file first.",
    ),
    ("multi_edit", "Several `edit` replacements in one file, all or none."),
    ("list_files", "List a folder."),
    ("glob", "Find files by pattern, e.g. `src/**/*.py`."),
    (
        "grep",
        "Search file contents with a regular expression; gives `path:line: text`.",
    ),
    ("todowrite", "Replace the todo list (pending, in_progress, completed)."),
    ("todoread", "Show the todo list."),
    (
        "spawn",
        "Hand a self-contained task to a sub-agent; returns its answer.",
    ),
    ("web_fetch", "Fetch a web page as text."),
    (
        "lsp",
        "Ask the language server: `definition`, `references`, `hover` (path, line, symbol), `document_symbols` (path), `workspace_symbols` (query).",
    ),
    ("skill", "Load a skill the system prompt lists."),
];

/// How the compact system prompt begins (what tells it from the full one).
pub const COMPACT_SYSTEM_LEAD: &str = "You are a coding agent in a folder";

/// Parameters of the built-in tools left out of the compact form: rarely
/// used, and still taken when given.
const LEFT_OUT: &[(&str, &[&str])] = &[
    ("shell", &["cwd", "raw"]),
    ("glob", &["hidden", "include_ignored"]),
    ("grep", &["hidden", "include_ignored"]),
];

/// Whether a window of `tokens` gets the compact prompt.
pub fn is_small(tokens: Option<u32>) -> bool {
    tokens.is_some_and(|t| t < COMPACT_BELOW)
}

/// `system` (the preset's) with its lead in compact form; what follows
/// the boundary (the folder, the system, the sandbox) is kept.
pub(crate) fn system(system: &str) -> String {
    match system.find(SYSTEM_PROMPT_BOUNDARY) {
        Some(at) => format!("{COMPACT_SYSTEM}{}", &system[at..]),
        None => COMPACT_SYSTEM.to_owned(),
    }
}

/// The built-in tools of a request in compact form.
pub(crate) fn tools(tools: &mut [ToolSpec]) {
    for spec in tools {
        let Some((_, short)) = COMPACT_TOOLS.iter().find(|(name, _)| *name == spec.name) else {
            continue;
        };
        (*short).clone_into(&mut spec.description);
        strip_descriptions(&mut spec.input_schema);
        let left_out = LEFT_OUT.iter().find(|(name, _)| *name == spec.name);
        if let (Some((_, names)), Some(Value::Object(properties))) = (left_out, spec.input_schema.get_mut("properties"))
        {
            for name in *names {
                properties.remove(*name);
            }
        }
    }
}

/// Removes the parameters' descriptions, at every depth.
fn strip_descriptions(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Object(properties)) = map.get_mut("properties") {
                for property in properties.values_mut() {
                    if let Value::Object(p) = property {
                        p.remove("description");
                    }
                    strip_descriptions(property);
                }
            }
            if let Some(items) = map.get_mut("items") {
                strip_descriptions(items);
            }
        }
        Value::Array(list) => list.iter_mut().for_each(strip_descriptions),
        _ => {}
    }
}

/// Puts each request's built-in tools in compact form (before the
/// deferral weighs them).
pub(crate) fn install(hooks: &zidane::hooks::HookBus) -> zidane::hooks::HookHandle {
    hooks.on_sync::<zidane::agent::events::TurnBefore, _>(|ev, _| {
        tools(&mut ev.options.tools);
        Ok(())
    })
}

#[cfg(test)]
mod tests;
