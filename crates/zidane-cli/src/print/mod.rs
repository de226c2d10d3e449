//! The one-shot printer (`zidane -p`, and any run without a terminal on
//! both ends): the conversation's events as text (the answer streams on
//! standard output, a line per tool call and its outcome, retries and
//! notes on standard error, a final tally) or as JSON lines (`--json`).
//! Questions are asked on the terminal line by line ([`ask`]).

pub(crate) mod ask;
mod json;
mod run;

use std::io::Write;
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::Value;
use zidane::agent::AgentStats;
use zidane::providers::ToolResultContent;
use zidane_app::{ChildRef, Event, ToolCallEvent, ToolResultEvent};

pub(crate) use self::run::{one_shot, remote_one_shot};

#[derive(Default)]
struct State {
    waiting: bool,
    mid_line: bool,
    /// Background tasks running now.
    tasks: usize,
}

/// Renders one conversation's events.
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

/// A result as the printer shows it: its text, or its parts as JSON.
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

    /// Shows one event (questions are not events it shows: the caller asks
    /// them).
    pub(crate) fn show(&self, event: &Event) {
        if self.json {
            json::show(event);
            return;
        }
        match event {
            Event::RequestStart { prompt_tokens } => self.request_start(*prompt_tokens),
            Event::Writing { tokens } => {
                // Nothing shown yet (a long tool argument streams): say it moves.
                if self.spinner && *tokens > 0 && self.lock().waiting {
                    eprint!("\r\x1b[K… the model is writing (~{tokens} tokens)");
                }
            }
            Event::PromptProgress { done, total } => {
                if self.spinner && self.lock().waiting {
                    eprint!("\r\x1b[K… the model is reading the prompt ({done} of {total} tokens)");
                }
            }
            Event::Text(delta) => {
                self.clear_waiting();
                out(delta);
                self.lock().mid_line = !delta.ends_with('\n');
            }
            Event::TurnEnd(_) => self.pause(),
            Event::Skill { name, .. } => {
                self.break_line();
                out(&format!("✦ skill `{name}` is active\n"));
            }
            Event::ToolCall(call) => self.tool_call(call),
            Event::ToolResult(result) => self.tool_result(result),
            Event::ToolCancelled { reason, child, .. } => match child {
                Some(ChildRef { id, depth }) => {
                    self.break_line();
                    out(&format!("{}  ⎿ cancelled: {reason}\n", child_prefix(id, *depth)));
                }
                None => out(&format!("  ⎿ cancelled: {reason}\n")),
            },
            Event::ChildText { child, text } => self.child_text(child, text),
            Event::SpawnQueued {
                child_id,
                running,
                limit,
            } => {
                self.break_line();
                out(&format!(
                    "{}waiting for a free slot ({running} of {limit} sub-agents running)\n",
                    child_prefix(child_id, 1)
                ));
            }
            other => self.note(other),
        }
    }

    /// The events shown as lines on standard error, and the background
    /// tasks.
    fn note(&self, event: &Event) {
        match event {
            Event::TaskStart { id, command, pid, .. } => {
                self.lock().tasks += 1;
                self.break_line();
                out(&format!("⚙ task {id} started (pid {pid}): {command}\n"));
            }
            Event::TaskEnd(end) => {
                {
                    let mut state = self.lock();
                    state.tasks = state.tasks.saturating_sub(1);
                }
                self.pause();
                out(&format!("{}\n", end.line()));
            }
            Event::TaskStall {
                id,
                command,
                stalled_ms,
            } => {
                self.pause();
                out(&format!(
                    "⚙ task {id} has printed nothing for {}s: {command}\n",
                    stalled_ms / 1000
                ));
            }
            Event::Retry(retry) => {
                self.pause();
                if retry.discarded_text {
                    // What streamed before the failure is not part of the
                    // answer: the next attempt starts it again.
                    eprintln!("✗ the text above was discarded; the answer starts again");
                }
                eprintln!("{}", retry.line());
            }
            Event::Mcp {
                name,
                state: zidane_app::McpState::Unavailable(why),
            } => eprintln!("⚠ MCP server `{name}` is unavailable: {why}"),
            Event::McpLoginNeeded { name } => {
                eprintln!("ⓘ MCP server `{name}` needs a login: zidane --mcp <config.json> mcp login {name}");
            }
            Event::ProviderNote { kind, message } => eprintln!("ⓘ provider ({kind}): {message}"),
            Event::Fallback { from, to } => eprintln!(
                "↪ {}/{} failed; continuing on {}/{}",
                from.provider, from.model, to.provider, to.model
            ),
            Event::Notice(line) => {
                self.pause();
                eprintln!("zidane: {line}");
            }
            Event::Checkpoint(note) => {
                for line in &note.notes {
                    eprintln!("zidane: {line}");
                }
                if let Some(line) = note.line() {
                    eprintln!("{line}");
                }
            }
            _ => {}
        }
    }

    fn request_start(&self, prompt_tokens: u64) {
        // What the model reads before it writes (a local model on a CPU
        // can take minutes over it); shown only with the spinner.
        if !self.spinner {
            return;
        }
        let mut state = self.lock();
        let reading = format!("… the model is reading the prompt (~{prompt_tokens} tokens)");
        match state.tasks {
            0 => eprint!("{reading}"),
            1 => eprint!("{reading} · 1 background task running"),
            n => eprint!("{reading} · {n} background tasks running"),
        }
        state.waiting = true;
    }

    fn tool_call(&self, call: &ToolCallEvent) {
        self.break_line();
        match &call.child {
            Some(child) => {
                let prefix = child_prefix(&child.id, child.depth);
                out(&format!(
                    "{prefix}● {}({})\n",
                    call.name,
                    brief(&call.name, &call.input)
                ));
                if call.outcome == zidane::agent::events::ToolOutcome::GateBlock {
                    out(&format!(
                        "{prefix}  ⎿ blocked: {}\n",
                        call.reason.as_deref().unwrap_or_default()
                    ));
                }
            }
            None => {
                out(&format!("● {}({})\n", call.name, brief(&call.name, &call.input)));
                if let Some(refusal) = call.refusal() {
                    out(&format!("  ⎿ {refusal}\n"));
                }
            }
        }
    }

    fn tool_result(&self, result: &ToolResultEvent) {
        self.break_line();
        let line = result_line(&result_text(&result.content), result.is_error);
        match &result.child {
            Some(child) => out(&format!("{}  {line}\n", child_prefix(&child.id, child.depth))),
            None => out(&format!("  {line}\n")),
        }
        if let Some(report) = result.diagnostics.as_ref().filter(|r| !r.is_empty()) {
            out(&format!("  ⎿ {}\n", report.summary()));
        }
    }

    fn child_text(&self, child: &ChildRef, text: &str) {
        self.pause();
        let prefix = child_prefix(&child.id, child.depth);
        let lines: Vec<&str> = text.lines().collect();
        for line in lines.iter().take(8) {
            out(&format!("{prefix}│ {line}\n"));
        }
        if lines.len() > 8 {
            out(&format!("{prefix}│ … {} more lines\n", lines.len() - 8));
        }
    }

    /// The tally after a run.
    pub(crate) fn finish(
        &self,
        stats: &AgentStats,
        session: &str,
        diagnostics: Option<zidane::agent::RunSummaryDiagnostics>,
    ) {
        self.pause();
        let diagnostics = diagnostics.filter(|d| !d.is_empty());
        if self.json {
            let mut line = serde_json::json!({"type": "done", "session": session, "stats": stats});
            if let Some(d) = diagnostics {
                line["diagnostics"] = serde_json::json!(d);
            }
            json::line(line);
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
        if let Some(d) = diagnostics {
            eprintln!("{}", diagnostics_line(&d));
        }
        eprintln!("session {session} (continue with `zidane --resume \"…\"`)");
    }

    /// A failed run's line.
    pub(crate) fn failed(&self, message: &str, session: &str) {
        self.pause();
        if self.json {
            json::line(serde_json::json!({"type": "error", "session": session, "message": message}));
        }
    }
}

/// The run's language-server diagnostics in a line: `─ diagnostics: 3
/// reported (2 errors) in 2 results, 2 fixed`.
pub(crate) fn diagnostics_line(d: &zidane::agent::RunSummaryDiagnostics) -> String {
    format!(
        "─ diagnostics: {} reported ({} error{}) in {} result{}, {} fixed",
        d.reported,
        d.errors,
        if d.errors == 1 { "" } else { "s" },
        d.results,
        if d.results == 1 { "" } else { "s" },
        d.fixed
    )
}
