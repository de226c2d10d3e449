//! What the person at the terminal sees: streamed text, a line per tool call,
//! retries and fallbacks, a final tally; or the same as JSON lines.

use parking_lot::Mutex;
use std::io::Write;
use std::sync::Arc;

use serde_json::{Value, json};
use zidane::agent::RunErrorKind;
use zidane::agent::events::{
    BackgroundExit, BackgroundStall, BackgroundStart, ChildStreamEnd, ChildToolAfter, ChildToolCancelled,
    ChildToolDispatched, McpBootstrapEnd, McpBootstrapOutcome, ModelFallback, ProviderDiagnostic, SpawnError,
    SpawnQueued, StreamRetry, StreamStart, StreamText, TaskStatus, ToolAfter, ToolCancelled, ToolDispatched,
    ToolOutcome, TurnAfter,
};
use zidane::agent::{AgentError, AgentStats};
use zidane::hooks::{HookBus, HookScope};
use zidane::providers::{ErrorKind, ToolResultContent};

use crate::setup::Args;

#[derive(Default)]
struct State {
    waiting: bool,
    mid_line: bool,
    /// Background tasks running now.
    tasks: usize,
    /// The size of the request being sent, in tokens (estimated).
    prompt_tokens: u64,
}

#[derive(Clone)]
pub(crate) struct Printer {
    json: bool,
    spinner: bool,
    state: Arc<Mutex<State>>,
}

fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

fn json_line(value: Value) {
    out(&format!("{value}\n"));
}

/// A short form of a tool's input for one line.
fn brief(name: &str, input: &Value) -> String {
    let key = match name {
        "shell" => "command",
        "read_file" | "write_file" | "edit" | "multi_edit" | "list_files" => "path",
        "glob" | "grep" => "pattern",
        "spawn" if input.get("description").is_some() => "description",
        "spawn" => "task",
        _ => "",
    };
    let text = input
        .get(key)
        .and_then(Value::as_str)
        .map_or_else(|| input.to_string(), str::to_owned);
    let line = text.lines().next().unwrap_or_default();
    if line.chars().count() > 80 {
        format!("{}…", line.chars().take(80).collect::<String>())
    } else {
        line.to_owned()
    }
}

/// The one line a tool result gets: ok or error, its first line (a
/// command's exit code with what it printed first), its size.
fn result_line(text: &str, is_error: bool) -> String {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let mut first = lines.next().unwrap_or_default().to_owned();
    if first.starts_with("exit code:")
        && let Some(next) = lines.next()
    {
        first = format!("{first} · {next}");
    }
    let first: String = first.chars().take(100).collect();
    let mark = if is_error { "error" } else { "ok" };
    format!("⎿ {mark}: {first} ({} bytes)", text.len())
}

/// How a sub-agent's lines start: indented by its depth, with a short form
/// of its id (children run side by side).
fn child_prefix(child_id: &str, depth: u32) -> String {
    let short: String = child_id
        .chars()
        .rev()
        .take(4)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("{}↳ [{short}] ", "  ".repeat(depth as usize))
}

/// A `prompt-progress` diagnostic's tokens read and total.
pub(crate) fn prompt_progress(ev: &ProviderDiagnostic) -> Option<(u64, u64)> {
    if ev.kind() != "prompt-progress" {
        return None;
    }
    Some((ev.data()["processed"].as_u64()?, ev.data()["total"].as_u64()?))
}

fn result_text(content: &ToolResultContent) -> String {
    match content {
        ToolResultContent::Text(t) => t.clone(),
        ToolResultContent::Parts(parts) => serde_json::to_string(parts).unwrap_or_default(),
    }
}

impl Printer {
    pub(crate) fn new(json: bool, spinner: bool) -> Self {
        Printer {
            json,
            spinner,
            state: Arc::default(),
        }
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, State> {
        self.state.lock()
    }

    /// Makes room for a question: the spinner goes, a streamed line ends.
    pub(crate) fn pause(&self) {
        self.clear_waiting();
        self.break_line();
    }

    /// Ends a line of streamed text before a status line.
    fn break_line(&self) {
        let mut state = self.lock();
        if state.mid_line {
            out("\n");
            state.mid_line = false;
        }
    }

    fn clear_waiting(&self) {
        let mut state = self.lock();
        if state.waiting {
            eprint!("\r\x1b[K");
            state.waiting = false;
        }
    }

    pub(crate) fn install(&self, hooks: &HookBus) -> HookScope {
        let scope = hooks.scope();
        let p = self.clone();
        scope.on_sync::<zidane::agent::events::TurnBefore, _>(move |ev, _| {
            // What the model reads before it writes (a local model on a CPU
            // can take minutes over it); shown only with the spinner.
            if !p.spinner {
                return Ok(());
            }
            p.lock().prompt_tokens = crate::window::request_bytes(&ev.options).div_ceil(4) as u64;
            Ok(())
        });
        let p = self.clone();
        scope.on_sync::<StreamStart, _>(move |_, _| {
            if p.spinner {
                let mut state = p.lock();
                let reading = format!("… the model is reading the prompt (~{} tokens)", state.prompt_tokens);
                match state.tasks {
                    0 => eprint!("{reading}"),
                    1 => eprint!("{reading} · 1 background task running"),
                    n => eprint!("{reading} · {n} background tasks running"),
                }
                state.waiting = true;
            }
            Ok(())
        });
        let p = self.clone();
        scope.on_sync::<zidane::agent::events::StreamProgress, _>(move |ev, _| {
            // Nothing shown yet (a long tool argument streams): say it moves.
            if p.spinner && ev.tokens() > 0 && p.lock().waiting {
                eprint!("\r\x1b[K… the model is writing (~{} tokens)", ev.tokens());
            }
            Ok(())
        });
        let p = self.clone();
        scope.on_sync::<zidane::agent::events::SkillsActivate, _>(move |ev, _| {
            if p.json {
                json_line(json!({"type": "skill", "name": ev.skill().name, "via": ev.via()}));
            } else {
                p.break_line();
                out(&format!("✦ skill `{}` is active\n", ev.skill().name));
            }
            Ok(())
        });
        let p = self.clone();
        scope.on_sync::<StreamText, _>(move |ev, _| {
            p.clear_waiting();
            if p.json {
                json_line(json!({"type": "text", "delta": ev.delta()}));
            } else {
                out(ev.delta());
                p.lock().mid_line = !ev.delta().ends_with('\n');
            }
            Ok(())
        });
        let p = self.clone();
        scope.on_sync::<TurnAfter, _>(move |_, _| {
            p.clear_waiting();
            p.break_line();
            Ok(())
        });
        let p = self.clone();
        scope.on_sync::<ToolDispatched, _>(move |ev, _| {
            if p.json {
                json_line(json!({"type": "tool_call", "id": ev.call_id(), "name": ev.name(), "input": ev.input(), "outcome": ev.outcome()}));
                return Ok(());
            }
            p.break_line();
            out(&format!("● {}({})\n", ev.name(), brief(ev.name(), ev.input())));
            let refusal = match ev.outcome() {
                ToolOutcome::GateBlock => Some(format!("blocked: {}", ev.reason().unwrap_or_default())),
                ToolOutcome::Unknown => Some("unknown tool".to_owned()),
                ToolOutcome::InvalidInput => Some(match ev.reason() {
                    Some(why) => format!("invalid input: {}", why.chars().take(160).collect::<String>()),
                    None => "invalid input".to_owned(),
                }),
                ToolOutcome::Execute | ToolOutcome::GateSubstitute => None,
            };
            if let Some(refusal) = refusal {
                out(&format!("  ⎿ {refusal}\n"));
            }
            Ok(())
        });
        let p = self.clone();
        scope.on_sync::<ToolAfter, _>(move |ev, _| {
            let text = result_text(ev.result());
            if p.json {
                json_line(json!({"type": "tool_result", "id": ev.call_id(), "name": ev.name(), "is_error": ev.is_error(), "output": text}));
                return Ok(());
            }
            p.break_line();
            out(&format!("  {}\n", result_line(&text, ev.is_error())));
            Ok(())
        });
        self.install_children(&scope);
        self.install_background(&scope);
        let p = self.clone();
        scope.on_sync::<ToolCancelled, _>(move |ev, _| {
            if p.json {
                json_line(json!({"type": "tool_cancelled", "id": ev.call_id(), "reason": ev.reason()}));
            } else {
                out(&format!("  ⎿ cancelled: {}\n", ev.reason()));
            }
            Ok(())
        });
        let p = self.clone();
        scope.on_sync::<StreamRetry, _>(move |ev, _| {
            if p.json {
                json_line(json!({"type": "retry", "attempt": ev.attempt(), "delay_ms": ev.delay_ms(), "error": ev.err().to_string(), "discarded_text": ev.discarded_text()}));
            } else {
                p.clear_waiting();
                p.break_line();
                if ev.discarded_text() {
                    // What streamed before the failure is not part of the
                    // answer: the next attempt starts it again.
                    eprintln!("✗ the text above was discarded; the answer starts again");
                }
                eprintln!(
                    "↻ {} — retrying in {:.1}s (attempt {} of {})",
                    ev.err(),
                    ev.delay_ms() as f64 / 1000.0,
                    ev.next_attempt(),
                    ev.max_attempts()
                );
            }
            Ok(())
        });
        let p = self.clone();
        scope.on_sync::<McpBootstrapEnd, _>(move |ev, _| {
            if let McpBootstrapOutcome::Failed { error, .. } = ev.outcome() {
                let why = error.as_ref().map_or_else(|| "skipped".to_owned(), ToString::to_string);
                if p.json {
                    json_line(json!({"type": "mcp_error", "server": ev.name(), "error": why}));
                } else {
                    eprintln!("⚠ MCP server `{}` is unavailable: {why}", ev.name());
                }
            }
            Ok(())
        });
        let p = self.clone();
        scope.on_sync::<zidane::agent::events::McpAuthRequired, _>(move |ev, _| {
            if !p.json {
                eprintln!(
                    "ⓘ MCP server `{}` needs a login: zidane --mcp <config.json> mcp login {}",
                    ev.name(),
                    ev.name()
                );
            }
            Ok(())
        });
        let p = self.clone();
        scope.on_sync::<ProviderDiagnostic, _>(move |ev, _| {
            if let Some((done, total)) = prompt_progress(ev) {
                if p.json {
                    json_line(json!({"type": "prompt_progress", "processed": done, "total": total}));
                } else if p.spinner && p.lock().waiting {
                    eprint!("\r\x1b[K… the model is reading the prompt ({done} of {total} tokens)");
                }
                return Ok(());
            }
            if p.json {
                json_line(json!({"type": "provider_diagnostic", "kind": ev.kind(), "message": ev.message()}));
            } else {
                eprintln!("ⓘ provider ({}): {}", ev.kind(), ev.message());
            }
            Ok(())
        });
        let p = self.clone();
        scope.on_sync::<ModelFallback, _>(move |ev, _| {
            if p.json {
                json_line(json!({"type": "fallback", "from": ev.from(), "to": ev.to()}));
            } else {
                eprintln!(
                    "↪ {}/{} failed; continuing on {}/{}",
                    ev.from().provider,
                    ev.from().model,
                    ev.to().provider,
                    ev.to().model
                );
            }
            Ok(())
        });
        scope
    }

    /// A sub-agent's work, under the spawn call that started it: its tool
    /// calls and results, and its text when a turn of it ends.
    fn install_children(&self, scope: &HookScope) {
        let p = self.clone();
        scope.on_sync::<ChildToolDispatched, _>(move |ev, _| {
            if p.json {
                json_line(json!({"type": "child_tool_call", "child": ev.child_id(), "depth": ev.depth(), "id": ev.call_id(), "name": ev.name(), "input": ev.input(), "outcome": ev.outcome()}));
                return Ok(());
            }
            p.break_line();
            let prefix = child_prefix(ev.child_id(), ev.depth());
            out(&format!("{prefix}● {}({})\n", ev.name(), brief(ev.name(), ev.input())));
            if ev.outcome() == ToolOutcome::GateBlock {
                out(&format!("{prefix}  ⎿ blocked: {}\n", ev.reason().unwrap_or_default()));
            }
            Ok(())
        });
        let p = self.clone();
        scope.on_sync::<ChildToolAfter, _>(move |ev, _| {
            let text = result_text(ev.result());
            if p.json {
                json_line(json!({"type": "child_tool_result", "child": ev.child_id(), "depth": ev.depth(), "id": ev.call_id(), "name": ev.name(), "is_error": ev.is_error(), "output": text}));
                return Ok(());
            }
            p.break_line();
            let prefix = child_prefix(ev.child_id(), ev.depth());
            out(&format!("{prefix}  {}\n", result_line(&text, ev.is_error())));
            Ok(())
        });
        let p = self.clone();
        scope.on_sync::<ChildToolCancelled, _>(move |ev, _| {
            if p.json {
                json_line(json!({"type": "child_tool_cancelled", "child": ev.child_id(), "id": ev.call_id(), "reason": ev.reason()}));
            } else {
                p.break_line();
                out(&format!("{}  ⎿ cancelled: {}\n", child_prefix(ev.child_id(), ev.depth()), ev.reason()));
            }
            Ok(())
        });
        let p = self.clone();
        scope.on_sync::<ChildStreamEnd, _>(move |ev, _| {
            let text = ev.text().trim();
            if text.is_empty() {
                return Ok(());
            }
            if p.json {
                json_line(json!({"type": "child_text", "child": ev.child_id(), "depth": ev.depth(), "text": text}));
                return Ok(());
            }
            p.clear_waiting();
            p.break_line();
            let prefix = child_prefix(ev.child_id(), ev.depth());
            let lines: Vec<&str> = text.lines().collect();
            for line in lines.iter().take(8) {
                out(&format!("{prefix}│ {line}\n"));
            }
            if lines.len() > 8 {
                out(&format!("{prefix}│ … {} more lines\n", lines.len() - 8));
            }
            Ok(())
        });
        let p = self.clone();
        scope.on_sync::<SpawnQueued, _>(move |ev, _| {
            if p.json {
                json_line(json!({"type": "spawn_queued", "child": ev.child_id(), "running": ev.running(), "limit": ev.limit()}));
            } else {
                p.break_line();
                out(&format!(
                    "{}waiting for a free slot ({} of {} sub-agents running)\n",
                    child_prefix(ev.child_id(), 1),
                    ev.running(),
                    ev.limit()
                ));
            }
            Ok(())
        });
        let p = self.clone();
        scope.on_sync::<SpawnError, _>(move |ev, _| {
            if p.json {
                json_line(
                    json!({"type": "spawn_error", "child": ev.spawn().child_id, "error": ev.error().to_string()}),
                );
            }
            Ok(())
        });
    }

    /// Background tasks as they start, stall and end.
    fn install_background(&self, scope: &HookScope) {
        let p = self.clone();
        scope.on_sync::<BackgroundStart, _>(move |ev, _| {
            p.lock().tasks += 1;
            if p.json {
                json_line(json!({"type": "task_start", "id": ev.task_id(), "command": ev.command(), "pid": ev.pid(), "output": ev.output_path()}));
            } else {
                p.break_line();
                out(&format!("⚙ task {} started (pid {}): {}\n", ev.task_id(), ev.pid(), ev.command()));
            }
            Ok(())
        });
        let p = self.clone();
        scope.on_sync::<BackgroundExit, _>(move |ev, _| {
            {
                let mut state = p.lock();
                state.tasks = state.tasks.saturating_sub(1);
            }
            if p.json {
                json_line(json!({"type": "task_exit", "id": ev.task_id(), "status": ev.status(), "exit_code": ev.exit_code(), "signal": ev.signal(), "duration_ms": ev.duration_ms()}));
                return Ok(());
            }
            p.clear_waiting();
            p.break_line();
            out(&format!("{}\n", task_exit(ev)));
            Ok(())
        });
        let p = self.clone();
        scope.on_sync::<BackgroundStall, _>(move |ev, _| {
            if p.json {
                json_line(json!({"type": "task_stall", "id": ev.task_id(), "stalled_ms": ev.stalled_for_ms()}));
            } else {
                p.clear_waiting();
                p.break_line();
                out(&format!("{}\n", task_stall(ev)));
            }
            Ok(())
        });
    }

    pub(crate) fn finish(&self, stats: &AgentStats, session: &str) {
        self.clear_waiting();
        self.break_line();
        if self.json {
            json_line(json!({"type": "done", "session": session, "stats": stats}));
            return;
        }
        let cost = stats
            .totals
            .cost
            .map_or_else(|| "cost unknown".to_owned(), |c| format!("${c:.4}"));
        let children = match stats.children.len() {
            0 => String::new(),
            1 => " · 1 sub-agent".to_owned(),
            n => format!(" · {n} sub-agents"),
        };
        eprintln!(
            "─ {} turn{}{children} · {} in / {} out tokens (cache read {}, write {}) · {cost}{}",
            stats.turns,
            if stats.turns == 1 { "" } else { "s" },
            stats.totals.input,
            stats.totals.output,
            stats.totals.cache_read,
            stats.totals.cache_creation,
            match stats.status {
                zidane::agent::events::RunStatus::Aborted => " · interrupted",
                zidane::agent::events::RunStatus::MaxTurns => " · stopped at the turn limit",
                _ => "",
            }
        );
        eprintln!("session {session} (continue with `zidane --resume \"…\"`)");
    }

    pub(crate) fn failed(&self, message: &str, session: &str) {
        self.clear_waiting();
        self.break_line();
        if self.json {
            json_line(json!({"type": "error", "session": session, "message": message}));
        }
    }
}

/// The line of a background task's end.
pub(crate) fn task_exit(ev: &BackgroundExit) -> String {
    let how = match (ev.status(), ev.signal()) {
        (TaskStatus::Killed, _) => "was stopped".to_owned(),
        (_, Some(signal)) => format!("was ended by {signal}"),
        (_, None) => format!("exited with code {}", ev.exit_code()),
    };
    format!(
        "⚙ task {} {how} after {:.1}s: {}",
        ev.task_id(),
        ev.duration_ms() as f64 / 1000.0,
        ev.command()
    )
}

/// The line of a background task gone quiet.
pub(crate) fn task_stall(ev: &BackgroundStall) -> String {
    format!(
        "⚙ task {} has printed nothing for {}s: {}",
        ev.task_id(),
        ev.stalled_for_ms() / 1000,
        ev.command()
    )
}

/// A message a person can act on.
pub(crate) fn describe_failure(error: &AgentError, args: &Args) -> String {
    let AgentError::Run(run) = error else {
        return error.to_string();
    };
    let where_ = args
        .base_url
        .as_deref()
        .map_or_else(|| "the provider".to_owned(), crate::setup::shown_url);
    match &run.kind {
        RunErrorKind::Provider(e) => match e.kind() {
            ErrorKind::Auth => format!(
                "the API key was rejected ({}): {}",
                e.status().map_or("auth".to_owned(), |s| format!("HTTP {s}")),
                e.message()
            ),
            ErrorKind::InvalidRequest
                if e.status() == Some(404) || e.message().to_ascii_lowercase().contains("model") =>
            {
                format!(
                    "the model is unknown or unavailable{}: {}",
                    args.model.as_ref().map(|m| format!(" (`{m}`)")).unwrap_or_default(),
                    e.message()
                )
            }
            ErrorKind::Unreachable => {
                let cause = std::error::Error::source(e)
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default();
                format!("cannot reach {where_}: {}{cause}", e.message())
            }
            // The server was reached; the exchange broke off (or went
            // silent) and the retries ran out.
            ErrorKind::Transport => {
                let cause = std::error::Error::source(e)
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default();
                format!("{where_} stopped answering: {}{cause}", e.message())
            }
            ErrorKind::RateLimited | ErrorKind::Overloaded | ErrorKind::Quota => {
                format!("{} and the retries ran out: {}", e.kind_name(), e.message())
            }
            _ => e.to_string(),
        },
        kind @ RunErrorKind::BudgetExceeded { .. } => {
            format!("stopped: {}", kind.to_string().trim_start_matches("budget exceeded: "))
        }
        other => other.to_string(),
    }
}

trait KindName {
    fn kind_name(&self) -> &'static str;
}

impl KindName for zidane::providers::ProviderError {
    fn kind_name(&self) -> &'static str {
        match self.kind() {
            ErrorKind::RateLimited => "the provider is rate-limiting requests",
            ErrorKind::Overloaded => "the provider is overloaded",
            ErrorKind::Quota => "the account's quota is spent",
            _ => "the provider failed",
        }
    }
}
