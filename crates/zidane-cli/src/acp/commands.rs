//! Slash commands over ACP: the built-in ones an editor is offered
//! (`zidane_app::slash`), answered as the agent's message, and the
//! folder's own commands, which the conversation expands into a prompt.

use serde_json::{Value, json};
use zidane_app::CompactOutcome;

use super::Session;

/// `available_commands_update`: the built-in commands and the folder's.
pub(super) fn advertised(session: &Session) -> Value {
    let builtins = zidane_app::slash::BUILTINS.iter().filter(|b| b.in_editors);
    let mut listed: Vec<Value> = builtins
        .clone()
        .map(|b| {
            let mut command = json!({ "name": b.name, "description": b.about });
            if let Some(hint) = b.hint {
                command["input"] = json!({ "hint": hint });
            }
            command
        })
        .collect();
    let conversation = session.conversation();
    let settings = &conversation.setup().settings;
    let folders = zidane_app::commands::folders(&settings.paths, settings.trusted);
    for c in zidane_app::commands::list(&folders).0 {
        if builtins.clone().any(|b| b.name == c.name) {
            continue;
        }
        let mut command = json!({ "name": c.name, "description": c.description.unwrap_or_default() });
        if let Some(hint) = c.argument_hint {
            command["input"] = json!({ "hint": hint });
        }
        listed.push(command);
    }
    json!({ "sessionUpdate": "available_commands_update", "availableCommands": listed })
}

/// A built-in command's answer; `None` when `text` is not one an editor is
/// offered.
pub(super) async fn run(session: &Session, text: &str) -> Option<String> {
    let (name, arg) = zidane_app::slash::parse(text)?;
    zidane_app::slash::builtin_named(name).filter(|b| b.in_editors)?;
    let conversation = &session.conversation();
    Some(match name {
        "compact" => match conversation.compact(Some(arg.to_owned())).await {
            Ok(CompactOutcome::Compacted { replaced }) => format!("{replaced} turns were replaced by a summary."),
            Ok(_) => "Nothing to compact yet.".to_owned(),
            Err(e) => format!("The compaction failed: {e}"),
        },
        "model" if arg.is_empty() => format!("The model is {}.", conversation.model()),
        "model" => {
            let switch = conversation.set_model(arg);
            format!(
                "The next turns use {} (was {}); the next request reads about {} tokens again instead of from the cache.",
                switch.to, switch.from, switch.reread
            )
        }
        "context" => {
            let report = conversation.context_report().await;
            if report.categories.is_empty() {
                "The context is empty.".to_owned()
            } else {
                let mut out = String::from("The context before the next request (estimated tokens):\n");
                for (name, tokens) in &report.categories {
                    out.push_str(&format!("- {name}: {tokens}\n"));
                }
                out.push_str(&format!("- in all: {}", report.used));
                out
            }
        }
        "cost" => {
            let cost = conversation.cost();
            let spent = cost
                .cost
                .map_or_else(|| "an unknown cost".to_owned(), |c| format!("${c:.4}"));
            format!("This session: {} tokens in, {} out, {spent}.", cost.input, cost.output)
        }
        "skills" => skills(session, arg).await,
        "tasks" => tasks(session, arg).await,
        "diff" => diff(conversation, arg).await,
        "memory" => memory(conversation, arg),
        "lsp" => lsp(session),
        _ => return None,
    })
}

async fn diff(conversation: &zidane_app::Conversation, arg: &str) -> String {
    let prompt = match arg {
        "" => None,
        n => match n.parse::<usize>() {
            Ok(n) => Some(n),
            Err(_) => return "usage: /diff [N] (N: a prompt's checkpoint number)".to_owned(),
        },
    };
    match conversation.changes(prompt).await {
        Ok(files) if files.is_empty() => "No changes yet.".to_owned(),
        Ok(files) => {
            let counts: Vec<String> = files
                .iter()
                .map(|f| format!("- {} (+{} -{})", f.path, f.added, f.removed))
                .collect();
            format!(
                "{}\n\n```diff\n{}```",
                counts.join("\n"),
                zidane_app::diff::unified(&files)
            )
        }
        Err(e) => e,
    }
}

/// `/memory [project|user] FACT` (the project's file when no place is
/// named).
fn memory(conversation: &zidane_app::Conversation, arg: &str) -> String {
    use zidane_app::memory::{self, Scope};
    let (first, rest) = arg.split_once(char::is_whitespace).unwrap_or((arg, ""));
    let (scope, fact) = match Scope::from_name(first) {
        Some(scope) => (scope, rest.trim()),
        None => (Scope::Project, arg),
    };
    if fact.is_empty() {
        return "usage: /memory [project|user] FACT".to_owned();
    }
    let Some(path) = memory::file(&conversation.setup().settings.paths, scope) else {
        return "No user folder is known (set ZIDANE_HOME or HOME).".to_owned();
    };
    match memory::remember(&path, fact) {
        Ok(()) => format!(
            "Remembered in {} (the agent reads it from the next start on).",
            path.display()
        ),
        Err(e) => format!("Cannot write {}: {e}", path.display()),
    }
}

/// `/lsp`: the language servers and what they reported.
fn lsp(session: &Session) -> String {
    let (servers, counts) = session.conversation().language_servers();
    let lines = zidane_app::language_server_lines(&servers);
    if lines.is_empty() {
        return format!("No language server: {}.", zidane_app::NO_LANGUAGE_SERVER);
    }
    let mut out: Vec<String> = lines
        .into_iter()
        .map(|(name, state, languages)| format!("- {name}: {state} {languages}"))
        .collect();
    out.push(zidane_app::diagnostics_tally(counts));
    out.join("\n")
}

async fn skills(session: &Session, name: &str) -> String {
    let conversation = &session.conversation();
    if !name.is_empty() {
        return match conversation.toggle_skill(name).await {
            Ok(true) => format!("Skill `{name}` activated."),
            Ok(false) => format!("Skill `{name}` deactivated."),
            Err(e) => format!("Skill `{name}`: {e}"),
        };
    }
    let all = conversation.skills().await;
    if all.is_empty() {
        return "No skills (put them in .zidane/skills/<name>/SKILL.md).".to_owned();
    }
    all.iter()
        .map(|s| {
            let mark = if s.active { "active" } else { "available" };
            format!("- {} ({mark}): {}", s.name, s.description)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

async fn tasks(session: &Session, arg: &str) -> String {
    if let Some(id) = arg.strip_prefix("kill").map(str::trim).filter(|id| !id.is_empty()) {
        return if session.conversation().kill_task(id).await {
            format!("Stopping task {id}.")
        } else {
            format!("No running task {id}.")
        };
    }
    let tasks = session.tasks.lock();
    if tasks.is_empty() {
        return "No background tasks.".to_owned();
    }
    tasks
        .iter()
        .map(|(id, (command, running))| format!("- {id} ({}): {command}", if *running { "running" } else { "ended" }))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A review's findings as completed tool calls, each with its location
/// (the file and first line) and its text.
pub(super) fn finding_updates(report: &zidane_app::review::Report, cwd: &std::path::Path) -> Vec<Value> {
    report
        .findings
        .iter()
        .map(|f| {
            let text = format!(
                "{} ({}, {}:{}-{}, confidence {:.2})\n\n{}",
                f.title,
                f.category.name(),
                f.path,
                f.start_line,
                f.end_line,
                f.confidence,
                f.body
            );
            json!({
                "sessionUpdate": "tool_call",
                "toolCallId": format!("review-{}", f.fingerprint),
                "title": format!("{}: {}", f.priority.name(), f.title),
                "kind": "think",
                "status": "completed",
                "locations": [{ "path": cwd.join(&f.path).to_string_lossy(), "line": f.start_line }],
                "content": [{ "type": "content", "content": { "type": "text", "text": text } }],
                "rawOutput": f,
            })
        })
        .collect()
}
