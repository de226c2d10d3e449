//! The conversation's events, as lines in the scrollback and state for
//! the area under it.

use zidane_app::{Event, Question};

use super::screen::{Hue, Paint};
use super::{FormState, Live, Session, Task, view};

impl Session {
    /// Takes one event: lines to print go to `commit`.
    pub(super) fn on_update(&mut self, event: Event, commit: &mut Vec<String>) {
        match event {
            Event::RequestStart { prompt_tokens } => {
                // A run this terminal did not start (another client's, or
                // one the server continued): watched like its own, so Esc
                // stops it and typing steers it.
                if self.run.is_none() && self.link.remote().is_some() {
                    self.follow_remote_run();
                }
                self.waiting = true;
                self.live = Live::Reading {
                    done: None,
                    total: prompt_tokens,
                };
            }
            Event::PromptProgress { done, total } => {
                self.live = Live::Reading {
                    done: Some(done),
                    total,
                };
            }
            // Progress reports come from the stream's first event on; the
            // model writes once there is something written.
            Event::Writing { tokens } if tokens > 0 => {
                self.waiting = false;
                self.live = Live::Writing(tokens);
            }
            Event::Text(delta) => {
                self.waiting = false;
                self.live = Live::Working;
                self.flush_thinking(commit);
                commit.extend(self.md.push(&delta));
            }
            Event::Thinking(delta) => self.thinking_delta(&delta, commit),
            Event::TurnEnd(figures) => {
                self.settle(commit);
                self.totals.input += figures.input + figures.cache_read;
                self.totals.output += figures.output;
                if let Some(cost) = figures.cost {
                    self.totals.cost += cost;
                    self.totals.priced = true;
                }
                self.context_used = Some(figures.input + figures.cache_read + figures.output);
                if let (Some(model), Some(_)) = (figures.model, &self.fallback) {
                    self.fallback = Some(model);
                }
            }
            Event::Question(Question::Call(ask)) => {
                self.notify(
                    "permission_prompt",
                    &format!("zidane needs your permission to use {}", ask.call.name),
                );
                self.asks.push_back(ask);
            }
            Event::Question(Question::Form(form)) => {
                self.notify(
                    "elicitation_dialog",
                    &format!("MCP server `{}` asks: {}", form.request.server, form.request.message),
                );
                self.forms.push_back(FormState::new(form));
            }
            Event::Answered { call_id, by } => {
                if call_id.is_empty() {
                    self.forms.retain(|f| !f.form.is_withdrawn());
                } else {
                    self.asks.retain(|ask| ask.call.call_id != call_id);
                }
                let line = match by {
                    Some(by) => format!("(answered by {by} on another client)"),
                    None => "(no longer asked here; the server asks again when the connection is back)".to_owned(),
                };
                commit.push(self.paint.dim(&line));
            }

            Event::Flush(done) => {
                let _ = done.send(());
            }
            Event::Mcp { name, state } => {
                self.mcp.insert(name, state.describe());
            }
            event => self.on_tool_or_note(event, commit),
        }
    }

    fn thinking_delta(&mut self, delta: &str, commit: &mut Vec<String>) {
        self.waiting = false;
        self.live = Live::Working;
        self.thinking.push_str(delta);
        if self.show_thinking {
            // Shown as it comes, line by line.
            while let Some(end) = self.thinking.find('\n') {
                let line: String = self.thinking.drain(..=end).collect();
                commit.push(self.paint.dim(&format!("✻ {}", line.trim_end())));
            }
        }
    }

    fn on_tool_or_note(&mut self, event: Event, commit: &mut Vec<String>) {
        let p = self.paint;
        match event {
            Event::ToolCall(call) => {
                self.settle(commit);
                let depth = call.child.as_ref().map_or(0, |c| c.depth);
                if call.name == "spawn" {
                    self.spawns
                        .insert(call.id.clone(), view::brief(&call.name, &call.input));
                }
                commit.push(view::call(&p, depth, &call.name, &call.input));
                if let Some(refusal) = call.refusal() {
                    let lead = format!("{}  ⎿ ", "  ".repeat(depth as usize));
                    commit.push(format!("{lead}{}", p.hue(Hue::Red, &refusal)));
                }
            }
            Event::ToolResult(result) => {
                self.settle(commit);
                let depth = result.child.as_ref().map_or(0, |c| c.depth);
                let text = result.text();
                commit.extend(view::outcome(
                    &p,
                    depth,
                    &result.name,
                    &result.input,
                    &text,
                    result.is_error,
                ));
                commit.extend(diagnostics_line(&p, depth, result.diagnostics.as_ref()));
            }
            Event::ToolCancelled { reason, .. } => {
                self.settle(commit);
                commit.push(format!("  ⎿ {}", p.hue(Hue::Yellow, &format!("cut off: {reason}"))));
            }
            Event::ChildText { child, text } => {
                let prefix = format!("{}│ ", "  ".repeat(child.depth as usize));
                let lines: Vec<&str> = text.lines().collect();
                for line in lines.iter().take(8) {
                    commit.push(p.dim(&format!("{prefix}{line}")));
                }
                if lines.len() > 8 {
                    commit.push(p.dim(&format!("{prefix}… {} more lines", lines.len() - 8)));
                }
            }
            Event::TaskStart {
                id, command, output, ..
            } => {
                self.settle(commit);
                self.commit_note(commit, &format!("⚙ task {id} started: {command}"));
                self.tasks.insert(
                    id,
                    Task {
                        command,
                        output,
                        running: true,
                    },
                );
            }
            Event::TaskEnd(end) => {
                self.settle(commit);
                if let Some(task) = self.tasks.get_mut(&end.id) {
                    task.running = false;
                }
                self.commit_note(commit, &end.line());
            }
            Event::Injected { id } => {
                if let Some(i) = self.queued.iter().position(|q| Some(&q.id) == id.as_ref()) {
                    let q = self.queued.remove(i);
                    self.settle(commit);
                    let kind = if q.follow_up { "follow-up" } else { "steer" };
                    commit.push(format!("{} {}", p.hue(Hue::Cyan, &format!("› ({kind})")), q.text));
                }
            }
            Event::Fallback { from, to } => {
                self.settle(commit);
                self.commit_note(
                    commit,
                    &format!(
                        "↪ {}/{} failed; continuing on {}/{}",
                        from.provider, from.model, to.provider, to.model
                    ),
                );
                self.fallback = Some(to.model);
            }
            Event::Checkpoint(note) => {
                for line in &note.notes {
                    self.commit_note(commit, line);
                }
            }
            event => {
                if let Some(line) = note(&event) {
                    self.settle(commit);
                    self.commit_note(commit, &line);
                }
            }
        }
    }
}

/// The dim line an event is shown as, if it is one.
fn note(event: &Event) -> Option<String> {
    Some(match event {
        Event::TaskStall {
            id,
            command,
            stalled_ms,
        } => {
            format!("⚙ task {id} has printed nothing for {}s: {command}", stalled_ms / 1000)
        }
        Event::Skill { name, .. } => format!("✦ skill `{name}` is active"),
        Event::ProviderNote { kind, message } => format!("ⓘ provider ({kind}): {message}"),
        Event::Retry(retry) => {
            let discarded = if retry.discarded_text {
                " (the text above is discarded; the answer starts again)"
            } else {
                ""
            };
            format!("{}{discarded}", retry.line())
        }
        Event::CacheBreak {
            turn,
            changed,
            rebilled_tokens,
        } => {
            let what = if changed.is_empty() {
                "the prefix expired or was evicted".to_owned()
            } else {
                format!("{} changed", changed.join(", "))
            };
            format!("cache:break turn {turn}: {what}; {rebilled_tokens} tokens read again")
        }
        Event::CompactStart => "⇣ compacting the older turns…".to_owned(),
        Event::CompactEnd {
            replaced,
            effective_tokens,
            error,
        } => match error {
            Some(e) => format!("⇣ compaction failed: {e}"),
            None => format!(
                "⇣ compacted: {replaced} turns summarized{}",
                effective_tokens
                    .map(|t| format!(", ~{t} tokens now"))
                    .unwrap_or_default()
            ),
        },
        Event::Notice(line) => line.clone(),
        _ => return None,
    })
}

/// The one line under an edit that says what the language server found.
fn diagnostics_line(p: &Paint, depth: u32, report: Option<&zidane::lsp::EditReport>) -> Option<String> {
    let report = report.filter(|r| !r.is_empty())?;
    let lead = format!("{}  ⎿ ", "  ".repeat(depth as usize));
    let hue = match (report.errors, report.warnings) {
        (0, 0) => Hue::Green,
        (0, _) => Hue::Yellow,
        _ => Hue::Red,
    };
    Some(format!("{lead}{}", p.hue(hue, &report.summary())))
}
