//! Asking the person at the terminal before a command runs or a file is
//! written: what needs asking depends on `--approve`, the question shows
//! the command (or the change), and the answer is yes, no, always (the
//! session remembers it), or a rule saved to the project's or the user's
//! configuration (`[permissions] allow`).

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

use serde_json::Value;
use zidane::agent::{ApprovalDecision, ApprovalRequest, RememberedApproval, ToolCall, ToolCallApprover};
use zidane::providers::BoxFuture;

use crate::output::Printer;

/// The `always` an answer would remember for `call`: a command's first
/// word (two, for `cargo test`-like pairs), or the tool.
pub(crate) fn always_for(call: &ToolCall) -> (RememberedApproval, String, String) {
    if call.name == "shell"
        && let Some(command) = call.input.get("command").and_then(Value::as_str)
    {
        let words: Vec<&str> = command.split_whitespace().collect();
        let prefix = match words.as_slice() {
            [first, second, ..] if !second.starts_with('-') && !second.contains(['/', '.', '=']) => {
                format!("{first} {second}")
            }
            [first, ..] => (*first).to_owned(),
            [] => String::new(),
        };
        if !prefix.is_empty() {
            let shown = format!("commands starting with `{prefix}`");
            let rule = format!("shell({prefix}:*)");
            return (RememberedApproval::CommandPrefix(prefix), shown, rule);
        }
    }
    let rule = call.name.clone();
    (
        RememberedApproval::Tool(call.name.clone()),
        format!("`{}` for this session", call.name),
        rule,
    )
}

/// The call, as the person reads it before deciding.
pub(crate) fn describe(call: &ToolCall) -> String {
    let text = |key: &str| call.input.get(key).and_then(Value::as_str).unwrap_or_default();
    let lines = |s: &str, mark: &str| -> String {
        let all: Vec<&str> = s.lines().collect();
        let mut out: String = all.iter().take(20).map(|l| format!("  {mark} {l}\n")).collect();
        if all.len() > 20 {
            out.push_str(&format!("  {mark} … {} more lines\n", all.len() - 20));
        }
        out
    };
    match call.name.as_str() {
        "shell" => {
            let background = if call.input["run_in_background"].as_bool() == Some(true) {
                " in the background"
            } else {
                ""
            };
            format!("run{background}:\n  $ {}\n", text("command"))
        }
        "write_file" => format!(
            "write {} ({} bytes):\n{}",
            text("path"),
            text("content").len(),
            lines(text("content"), "+")
        ),
        "edit" => format!(
            "edit {}:\n{}{}",
            text("path"),
            lines(text("old_string"), "-"),
            lines(text("new_string"), "+")
        ),
        "multi_edit" => {
            let mut out = format!("edit {}:\n", text("path"));
            for edit in call.input["edits"].as_array().into_iter().flatten() {
                out.push_str(&lines(edit["old_string"].as_str().unwrap_or_default(), "-"));
                out.push_str(&lines(edit["new_string"].as_str().unwrap_or_default(), "+"));
            }
            out
        }
        name => format!("call `{name}` with {}\n", call.input),
    }
}

/// Asks on the terminal, one question at a time; with no terminal it
/// refuses, saying how to allow calls without asking.
pub(crate) struct Terminal {
    printer: Printer,
    /// Where `[p]roject` and `[u]ser` answers are saved.
    paths: crate::config::Paths,
    /// `Notification` hooks hear of each question.
    hooks: Arc<crate::command_hooks::CommandHooks>,
    asking: tokio::sync::Mutex<()>,
    interactive: bool,
    /// The interactive session's question line, once it runs.
    asks: crate::session::AskLine,
}

impl Terminal {
    pub(crate) fn new(
        printer: Printer,
        paths: crate::config::Paths,
        hooks: Arc<crate::command_hooks::CommandHooks>,
        asks: crate::session::AskLine,
    ) -> Arc<Self> {
        Arc::new(Terminal {
            printer,
            paths,
            hooks,
            asks,
            asking: tokio::sync::Mutex::new(()),
            interactive: std::io::stdin().is_terminal() && std::io::stderr().is_terminal(),
        })
    }
}

impl ToolCallApprover for Terminal {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move {
            let message = format!("zidane needs your permission to use {}", request.call.name);
            let fields = serde_json::json!({ "message": message, "notification_type": "permission_prompt" });
            self.hooks.tell("Notification", "permission_prompt", fields).await;
            // A session (the terminal's, or an editor's over ACP) asks in its
            // own way.
            let (always, scope, rule) = always_for(request.call);
            if let Some(answer) = self.asks.ask(&request, &rule).await {
                return answer.decision(always);
            }
            if !self.interactive {
                // A permission rule that asks says so; otherwise the mode
                // asked, and `--approve yolo` (or an allow rule) lets it run.
                let how = match request.reason {
                    Some(rule) => format!("{rule}; an allow rule for it lets it run without asking"),
                    None => "the program runs with `--approve yolo` to allow it without asking, or an allow rule lets \
                             this call run"
                        .to_owned(),
                };
                return ApprovalDecision::Decline {
                    reason: Some(format!(
                        "this needs the user's approval and there is no terminal to ask on ({how})"
                    )),
                };
            }
            let _one_at_a_time = self.asking.lock().await;
            self.printer.pause();
            {
                let mut err = std::io::stderr().lock();
                let who = if request.call.depth > 0 {
                    "a sub-agent"
                } else {
                    "zidane"
                };
                let _ = write!(
                    err,
                    "\n⚠ {who} wants to {}{}  allow? [y]es / [n]o / [a]lways ({scope}) / always in this [p]roject \
                     / always for this [u]ser (`{rule}`): ",
                    describe(request.call),
                    request.reason.map(|r| format!("  ({r})\n")).unwrap_or_default(),
                );
                let _ = err.flush();
            }
            let answer = tokio::task::spawn_blocking(|| {
                let mut line = String::new();
                std::io::stdin().lock().read_line(&mut line).map(|_| line)
            });
            let answer = tokio::select! {
                answer = answer => answer.ok().and_then(Result::ok).unwrap_or_default(),
                () = request.signal.aborted() => String::new(),
            };
            match answer.trim().to_ascii_lowercase().as_str() {
                "y" | "yes" => ApprovalDecision::Approve,
                "a" | "always" => ApprovalDecision::ApproveAlways(always),
                answer @ ("p" | "project" | "u" | "user") => {
                    let project = answer.starts_with('p');
                    eprintln!("zidane: {}", save(&self.paths, &rule, project));
                    ApprovalDecision::ApproveAlways(always)
                }
                _ => ApprovalDecision::Decline {
                    reason: Some("the user declined this call".into()),
                },
            }
        })
    }
}

impl Terminal {
    /// Whether there is a person at a terminal to ask.
    pub(crate) fn interactive(&self) -> bool {
        self.interactive
    }

    /// An MCP server's form, asked field by field: an empty line keeps the
    /// default (or leaves the field out); `!` declines the whole form.
    pub(crate) fn elicitation(self: &Arc<Self>) -> zidane::mcp::ElicitationHandler {
        let terminal = Arc::clone(self);
        Arc::new(move |request: zidane::mcp::ElicitationRequest| {
            let terminal = Arc::clone(&terminal);
            Box::pin(async move {
                let _one_at_a_time = terminal.asking.lock().await;
                terminal.printer.pause();
                tokio::task::spawn_blocking(move || ask_form(&request))
                    .await
                    .unwrap_or(zidane::mcp::ElicitationAnswer::Decline)
            }) as BoxFuture<'static, zidane::mcp::ElicitationAnswer>
        })
    }
}

/// Saves `rule` to the project's or the user's `[permissions] allow`; a
/// project the person writes a rule for is one they trust. Says what it did.
pub(crate) fn save(paths: &crate::config::Paths, rule: &str, project: bool) -> String {
    let file = if project {
        Some(paths.project_config())
    } else {
        paths.user_config()
    };
    let Some(file) = file else {
        return format!("no user configuration folder to save `{rule}` in");
    };
    let saved = crate::config::trust::edit(&file, |doc| {
        let table = doc
            .entry("permissions")
            .or_insert_with(toml_edit::table)
            .as_table_like_mut()
            .ok_or_else(|| std::io::Error::other("`permissions` is not a table"))?;
        let allow = table
            .entry("allow")
            .or_insert(toml_edit::value(toml_edit::Array::new()))
            .as_array_mut()
            .ok_or_else(|| std::io::Error::other("`permissions.allow` is not a list"))?;
        if !allow.iter().any(|v| v.as_str() == Some(rule)) {
            allow.push(rule);
        }
        Ok(())
    });
    let trusted = match (project, paths.user_config()) {
        (true, Some(user)) => crate::config::trust::remember(&user, &paths.root, true),
        _ => Ok(()),
    };
    match saved.and(trusted) {
        Ok(()) => format!("saved `{rule}` to the allowed rules of {}", file.display()),
        Err(e) => format!("could not save `{rule}` to {}: {e}", file.display()),
    }
}

fn ask_form(request: &zidane::mcp::ElicitationRequest) -> zidane::mcp::ElicitationAnswer {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "\n? MCP server `{}` asks: {}  (Enter keeps a default, `!` declines)",
        request.server, request.message
    );
    let mut content = serde_json::Map::new();
    let empty = serde_json::Map::new();
    let properties = request.schema["properties"].as_object().unwrap_or(&empty);
    for (name, property) in properties {
        let kind = property["type"].as_str().unwrap_or("string");
        let default = property
            .get("default")
            .map(|d| format!(" [{}]", d.as_str().map_or_else(|| d.to_string(), str::to_owned)))
            .unwrap_or_default();
        let _ = write!(err, "  {name} ({kind}){default}: ");
        let _ = err.flush();
        let mut line = String::new();
        if std::io::stdin().lock().read_line(&mut line).is_err() {
            return zidane::mcp::ElicitationAnswer::Decline;
        }
        let line = line.trim();
        if line == "!" {
            return zidane::mcp::ElicitationAnswer::Decline;
        }
        if line.is_empty() {
            continue;
        }
        let value = match kind {
            "number" | "integer" | "boolean" => serde_json::from_str(line).unwrap_or_else(|_| Value::from(line)),
            _ => Value::from(line),
        };
        content.insert(name.clone(), value);
    }
    zidane::mcp::ElicitationAnswer::Accept(content)
}
