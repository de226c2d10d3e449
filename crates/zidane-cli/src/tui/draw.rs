//! The area under the scrollback: the live line, what waits, the
//! question or the list being answered, the input and the status line.

use serde_json::Value;
use zidane::agent::ToolCall;

use super::screen::{self, Hue};
use super::{Live, Picker, Session, view};

impl Session {
    /// Draws the area under the scrollback, after printing `commit` above it.
    pub(super) fn draw(&mut self, commit: Vec<String>) {
        let cols = usize::from(self.screen.cols);
        let mut area: Vec<String> = Vec::new();
        let p = self.paint;
        if !self.thinking.is_empty() && !self.show_thinking {
            let words = self.thinking.split_whitespace().count();
            area.push(p.dim(&format!("✻ thinking… ({words} words; Ctrl-T shows thinking in full)")));
        }
        let partial = self.md.partial();
        if !partial.is_empty() {
            let rows = screen::wrap(partial, cols.saturating_sub(1));
            let skip = rows.len().saturating_sub(3);
            area.extend(rows.into_iter().skip(skip));
        }
        if self.md.holding() > 0 {
            area.push(p.dim(&format!("(a table, {} rows so far)", self.md.holding())));
        }
        if self.run.is_some() && self.asks.is_empty() && self.forms.is_empty() {
            let secs = self.run_started.elapsed().as_secs();
            let what = match (self.interrupting, self.waiting, self.live) {
                (true, _, _) => "interrupting".to_owned(),
                (
                    false,
                    true,
                    Live::Reading {
                        done: Some(done),
                        total,
                    },
                ) => {
                    format!("the model is reading the prompt ({done} of {total} tokens)")
                }
                (false, true, Live::Reading { done: None, total }) => {
                    format!("the model is reading the prompt (~{total} tokens)")
                }
                (false, true, _) => "waiting for the model".to_owned(),
                (false, false, Live::Writing(tokens)) => format!("the model is writing (~{tokens} tokens)"),
                (false, false, _) => "working".to_owned(),
            };
            area.push(p.hue(Hue::Magenta, &format!("… {what} ({secs}s) · Esc to interrupt")));
        }
        for q in &self.queued {
            let kind = if q.follow_up { "follow-up" } else { "steer" };
            let first = q.text.lines().next().unwrap_or_default();
            area.push(p.dim(&format!("⏳ queued {kind}: {first}")));
        }
        for text in &self.later {
            area.push(p.dim(&format!("⏳ next: {}", text.lines().next().unwrap_or_default())));
        }
        self.draw_form(&mut area);
        self.draw_ask(&mut area);
        self.draw_picker(&mut area);
        self.draw_offer(&mut area);
        if !self.editor.offered.is_empty() {
            area.push(p.dim(&self.editor.offered.join("  ")));
        }
        area.push(p.dim(&"─".repeat(cols.saturating_sub(1))));
        let before = area.len();
        let (rows, cursor) = match self.editor.searching() {
            Some((query, hit)) => {
                let row = format!("(search) `{query}`: {}", hit.unwrap_or(""));
                let col = row.chars().count().min(cols.saturating_sub(1));
                (vec![row], (0, col))
            }
            None => {
                let prompt = if self.reason.is_some() { "why not? " } else { "› " };
                match &self.reason {
                    Some(reason) => {
                        let row = format!("{prompt}{reason}");
                        let col = screen::width(&row);
                        (vec![row], (0, col))
                    }
                    None => self.editor.rows(prompt, cols.saturating_sub(1)),
                }
            }
        };
        // A long input shows the ten rows around the cursor.
        let skip = cursor.0.saturating_sub(9);
        area.extend(rows.into_iter().skip(skip).take(10));
        let cursor_row = before + cursor.0 - skip;
        area.push(p.dim(&self.status()));
        if let Some(line) = self.status_command.as_ref().and_then(|c| c.shown.as_ref()) {
            area.push(line.clone());
        }
        let _ = self.screen.frame(&commit, &area, (cursor_row as u16, cursor.1 as u16));
    }

    /// What is offered with a yes or no.
    fn draw_offer(&self, area: &mut Vec<String>) {
        let p = self.paint;
        match &self.offer {
            Some(super::Offer::Plan(_)) => {
                area.push(p.hue(Hue::Yellow, "? Carry out the plan now (all tools again)?"));
                area.push(format!(
                    "  {} yes · {} no, keep it in the conversation",
                    p.bold("[y]"),
                    p.bold("[n]")
                ));
            }
            Some(super::Offer::Init(path, _)) => {
                area.push(p.hue(Hue::Yellow, &format!("? Write {} as shown above?", path.display())));
                area.push(format!(
                    "  {} yes · {} no, leave it as it is",
                    p.bold("[y]"),
                    p.bold("[n]")
                ));
            }
            Some(super::Offer::Memory(fact)) => area.extend(self.memory_offer_lines(fact)),
            None => {}
        }
    }

    fn draw_form(&self, area: &mut Vec<String>) {
        let Some(form) = self.forms.front() else {
            return;
        };
        let p = self.paint;
        area.push(p.hue(
            Hue::Yellow,
            &format!(
                "? MCP server `{}` asks: {}",
                form.form.request.server, form.form.request.message
            ),
        ));
        for (i, (name, kind, default)) in form.fields.iter().enumerate() {
            let default = default.as_ref().map(|d| format!(" [{d}]")).unwrap_or_default();
            let value = match i.cmp(&form.at) {
                std::cmp::Ordering::Less => form
                    .answers
                    .get(name)
                    .map_or_else(|| "(default)".to_owned(), |v| v.to_string()),
                std::cmp::Ordering::Equal => format!("{}▏", self.field),
                std::cmp::Ordering::Greater => String::new(),
            };
            area.push(format!("  {name} ({kind}){default}: {value}"));
        }
        area.push(p.dim("  Enter takes a field (empty: its default) · Esc declines · Ctrl-C cancels"));
    }

    fn draw_ask(&self, area: &mut Vec<String>) {
        let Some(ask) = self.asks.front() else {
            return;
        };
        let p = self.paint;
        let who = self.who(&ask.call);
        area.push(p.hue(Hue::Yellow, &format!("⚠ {who} wants to:")));
        match ask.call.name.as_str() {
            "edit" | "multi_edit" | "write_file" => {
                area.push(format!("  {}", view::call(&p, 0, &ask.call.name, &ask.call.input)));
                let input = &ask.call.input;
                let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
                let pairs: Vec<(String, String)> = match ask.call.name.as_str() {
                    "edit" => vec![(text(input, "old_string"), text(input, "new_string"))],
                    "write_file" => vec![(String::new(), text(input, "content"))],
                    _ => input["edits"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|e| (text(e, "old_string"), text(e, "new_string")))
                        .collect(),
                };
                for (old, new) in pairs {
                    area.extend(view::diff(&p, "    ", &old, &new).into_iter().take(20));
                }
            }
            _ => {
                for line in zidane_app::ask::describe(&ask.call).lines().take(12) {
                    area.push(format!("  {line}"));
                }
            }
        }
        if let Some(reason) = &ask.reason {
            area.push(p.dim(&format!("  ({reason})")));
        }
        if self.reason.is_some() {
            area.push(p.dim("  Type why (optional), Enter to decline, Esc to decline without a reason"));
        } else {
            area.push(format!(
                "  {} yes · {} no · {} always this session · {} always in this project · {} always for me ({})",
                p.bold("[y]"),
                p.bold("[n]"),
                p.bold("[a]"),
                p.bold("[p]"),
                p.bold("[u]"),
                ask.rule
            ));
        }
    }

    /// Who asks: the agent, or a sub-agent named by its task.
    fn who(&self, call: &ToolCall) -> String {
        if call.depth == 0 {
            return "zidane".to_owned();
        }
        let spawn = call
            .session_id
            .as_deref()
            .and_then(zidane::agent::spawning_call_id)
            .and_then(|id| self.spawns.get(id));
        match spawn {
            Some(task) => format!("the sub-agent \"{task}\""),
            None => format!("a sub-agent (depth {})", call.depth),
        }
    }

    fn draw_picker(&self, area: &mut Vec<String>) {
        let p = self.paint;
        let (title, rows, at): (&str, Vec<String>, usize) = match &self.picker {
            None => return,
            Some(Picker::Sessions(list, at)) => {
                let now = zidane::providers::Timestamp::now();
                let rows = list
                    .iter()
                    .map(|(s, cost)| {
                        let age = now.since(s.updated_at).as_secs();
                        let mark = if s.interrupted { " [interrupted]" } else { "" };
                        let title: String = s.title.chars().take(50).collect();
                        let cost = cost.map(|c| format!(" · ${c:.4}")).unwrap_or_default();
                        format!("{title}  · {} ago · {} messages{cost}{mark}", ago(age), s.messages)
                    })
                    .collect();
                ("Resume which session? (↑/↓, Enter, Esc)", rows, *at)
            }
            Some(Picker::Tasks(ids, at)) => {
                let rows = ids
                    .iter()
                    .map(|id| {
                        let task = &self.tasks[id];
                        let state = if task.running { "running" } else { "ended" };
                        format!("{id}  {state}  {}", task.command)
                    })
                    .collect();
                (
                    "Background tasks (↑/↓, Enter shows the output's end, k kills, Esc)",
                    rows,
                    *at,
                )
            }
        };
        area.push(p.bold(title));
        let start = at.saturating_sub(7);
        for (i, row) in rows.iter().enumerate().skip(start).take(8) {
            if i == at {
                area.push(p.hue(Hue::Cyan, &format!("❯ {row}")));
            } else {
                area.push(format!("  {row}"));
            }
        }
    }

    /// The status line.
    pub(super) fn status(&self) -> String {
        let mut parts = Vec::new();
        // A lost connection comes first, where a narrow terminal shows it.
        let connection = self.link.connection();
        if let Some(lost) = connection.as_ref().filter(|c| !c.starts_with("attached")) {
            parts.push(lost.clone());
        }
        let model = self.link.model();
        match &self.fallback {
            Some(f) if *f != model => parts.push(format!("{model} → {f}")),
            _ => parts.push(model),
        }
        if let (Some(used), Some(window)) = (self.context_used, self.link.window()) {
            let pct = (used * 100 / u64::from(window.max(1))).min(999);
            parts.push(format!("ctx {pct}% of {}", tokens(u64::from(window))));
        }
        parts.push(format!(
            "{} in / {} out",
            tokens(self.totals.input),
            tokens(self.totals.output)
        ));
        if self.totals.priced {
            parts.push(format!("${:.4}", self.totals.cost));
        }
        if let Some(at) = self.link.cache_expires_at() {
            let now = zidane::providers::Timestamp::now();
            if at > now {
                let left = at.since(now).as_secs();
                parts.push(format!("cache {}:{:02}", left / 60, left % 60));
            } else {
                parts.push("cache expired".to_owned());
            }
        }
        let running = self.tasks.values().filter(|t| t.running).count();
        if running > 0 {
            parts.push(format!("{running} task{}", if running == 1 { "" } else { "s" }));
        }
        let mut queued = self.queued.len() + self.later.len();
        // Attached, other clients' steers wait too.
        if let Some(remote) = self.link.remote() {
            let waiting = remote.status()["queued"].as_array().map_or(0, Vec::len);
            queued = queued.max(waiting + self.later.len());
        }
        if queued > 0 {
            parts.push(format!("{queued} queued"));
        }
        if let Some(goal) = self.link.local().and_then(zidane_app::Conversation::goal) {
            let state = match goal.status {
                zidane::agent::GoalStatus::Active => "goal",
                zidane::agent::GoalStatus::Paused => "goal paused",
                zidane::agent::GoalStatus::Met => "goal met",
                zidane::agent::GoalStatus::Unmet => "goal unmet",
            };
            parts.push(format!("{state} {}/{}", goal.checks(), goal.goal.budget.max_checks));
        }
        if let Some(loops) = self.loops_status() {
            parts.push(loops);
        }
        if self.link.planning() {
            parts.push("⏸ plan mode".to_owned());
        }
        parts.push(format!("approve {}", self.link.approve()));
        parts.push(format!("sandbox {}", self.link.sandbox()));
        if let Some(attached) = connection.filter(|c| c.starts_with("attached")) {
            parts.push(attached);
        }
        parts.join(" · ")
    }
}

/// A token count, short.
pub(super) fn tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

/// An age, short.
fn ago(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        3600..86400 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86400),
    }
}
