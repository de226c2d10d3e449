//! The built-in slash commands, in one table every front end reads: the
//! terminal session's `/help` and completion, and the commands an editor
//! is offered over ACP. The folder's own commands (`.zidane/commands/`)
//! come after them; a built-in name wins.

/// A built-in command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Builtin {
    /// Its name, without the `/`.
    pub name: &'static str,
    /// What it does.
    pub about: &'static str,
    /// What its argument is, when it takes one.
    pub hint: Option<&'static str>,
    /// Whether an editor offers it too (the others need the terminal).
    pub in_editors: bool,
}

const fn builtin(name: &'static str, about: &'static str, hint: Option<&'static str>, in_editors: bool) -> Builtin {
    Builtin {
        name,
        about,
        hint,
        in_editors,
    }
}

/// Every built-in command, in the order `/help` lists them.
pub const BUILTINS: &[Builtin] = &[
    builtin("help", "this list", None, false),
    builtin(
        "init",
        "explore the repository (read-only) and write or update AGENTS.md, after showing the change",
        None,
        false,
    ),
    builtin("new", "a new session in this folder (same process)", None, false),
    builtin("resume", "pick a session of this folder to continue", None, false),
    builtin(
        "compact",
        "summarize the older turns now, keeping `focus` in view",
        Some("focus"),
        true,
    ),
    builtin(
        "model",
        "the model for the next turns (shows what the switch re-reads)",
        Some("name"),
        true,
    ),
    builtin(
        "thinking",
        "the thinking level for the next turns",
        Some("off|minimal|low|medium|high"),
        false,
    ),
    builtin(
        "context",
        "what fills the context window, by category and piece",
        None,
        true,
    ),
    builtin(
        "cost",
        "tokens and cost: this session, the last run by model, cache reads and writes",
        None,
        true,
    ),
    builtin(
        "skills",
        "list the skills; a name activates it (or deactivates an active one)",
        Some("name"),
        true,
    ),
    builtin(
        "tasks",
        "background tasks: list, show the end of one's output, kill one",
        Some("kill ID"),
        true,
    ),
    builtin(
        "review",
        "review a change (read-only): findings by priority, with their places",
        Some("--uncommitted|--base BRANCH|--commit SHA|A..B [--focus TEXT]"),
        true,
    ),
    builtin(
        "mcp",
        "MCP servers, their state and tools; `/mcp login NAME` logs in",
        None,
        false,
    ),
    builtin(
        "goal",
        "keep working until a condition holds ([--check CMD] CONDITION); alone shows it; pause, resume, clear",
        Some("CONDITION|pause|resume|clear"),
        true,
    ),
    builtin(
        "loop",
        "send PROMPT now and every EVERY (30s, 5m, 2h) while the session is open; alone lists; stop ends",
        Some("EVERY PROMPT|stop"),
        false,
    ),
    builtin("lsp", "language servers and their state", None, true),
    builtin(
        "plan",
        "plan mode on or off (read-only tools, then a plan to carry out); with TEXT: plan it",
        Some("TEXT"),
        false,
    ),
    builtin("approve", "what runs without asking", Some("ask|auto-edit|yolo"), false),
    builtin("sandbox", "how commands are confined", None, false),
    builtin(
        "diff",
        "what the session changed so far (N: one prompt's changes), per file with +/- counts",
        Some("N"),
        true,
    ),
    builtin(
        "memory",
        "remember a fact in this project's AGENTS.md or your own (`# FACT` too); alone: where they are",
        Some("[project|user] FACT"),
        true,
    ),
    builtin("undo", "take back the files the last prompt changed", None, false),
    builtin(
        "rewind",
        "go back to checkpoint N (files and conversation)",
        Some("N"),
        false,
    ),
    builtin(
        "later",
        "queue a follow-up for when the model would otherwise finish",
        Some("TEXT"),
        false,
    ),
    builtin("quit", "end the session (it stays resumable)", None, false),
];

/// `/name rest` as a name and the rest, when `text` starts with a slash
/// (`//` escapes one).
pub fn parse(text: &str) -> Option<(&str, &str)> {
    let rest = text.trim_start().strip_prefix('/')?;
    if rest.starts_with('/') {
        return None;
    }
    let (name, arg) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    Some((name, arg.trim()))
}

/// The built-in command `name`.
pub fn builtin_named(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}
