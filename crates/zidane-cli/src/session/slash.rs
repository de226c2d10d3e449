//! The slash commands of the interactive session.

use zidane::agent::{AgentCacheChange, CompactOptions, SessionStore};
use zidane::providers::ThinkingLevel;

use super::draw::tokens;
use super::screen::{Hue, Screen};
use super::{Picker, Session, first_lines};

/// The built-in commands, each with its line for `/help`.
const COMMANDS: &[(&str, &str)] = &[
    ("help", "this list"),
    ("new", "a new session in this folder (same process)"),
    ("resume", "pick a session of this folder to continue"),
    (
        "compact",
        "[focus] summarize the older turns now, keeping `focus` in view",
    ),
    (
        "model",
        "[name] the model for the next turns (shows what the switch re-reads)",
    ),
    (
        "thinking",
        "[off|minimal|low|medium|high] the thinking level for the next turns",
    ),
    ("context", "what fills the context window, by category and piece"),
    (
        "cost",
        "tokens and cost: this session, the last run by model, cache reads and writes",
    ),
    (
        "skills",
        "[name] list the skills; a name activates it (or deactivates an active one)",
    ),
    (
        "tasks",
        "background tasks: list, show the end of one's output, kill one",
    ),
    ("mcp", "MCP servers, their state and tools; `/mcp login NAME` logs in"),
    ("approve", "[ask|auto-edit|yolo] what runs without asking"),
    ("sandbox", "how commands are confined"),
    ("undo", "take back the files the last prompt changed"),
    ("rewind", "[N] go back to checkpoint N (files and conversation)"),
    (
        "later",
        "TEXT queue a follow-up for when the model would otherwise finish",
    ),
    ("quit", "end the session (it stays resumable)"),
];

/// Edit distance, for "did you mean".
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(row[j]).min(row[j + 1])
            };
            prev = cur;
        }
    }
    row[b.len()]
}

impl Session {
    /// The names Tab completes: the built-in commands and the folder's own.
    pub(super) fn command_names(&self) -> Vec<String> {
        let mut names: Vec<String> = COMMANDS.iter().map(|(n, _)| (*n).to_owned()).collect();
        let folders = crate::commands::folders(&self.context.loaded.paths, self.context.loaded.trusted);
        names.extend(crate::commands::list(&folders).0.into_iter().map(|c| c.name));
        names.sort();
        names.dedup();
        names
    }

    fn say(&mut self, lines: Vec<String>) {
        self.draw(lines);
    }

    fn note(&mut self, line: &str) {
        let line = self.paint.dim(line);
        self.draw(vec![line]);
    }

    fn busy(&mut self, what: &str) -> bool {
        if self.run.is_some() {
            self.note(&format!("{what} waits for the run to end (Esc interrupts it)"));
            return true;
        }
        false
    }

    pub(super) async fn command(&mut self, text: String) {
        let mut words = text[1..].splitn(2, char::is_whitespace);
        let name = words.next().unwrap_or_default().to_owned();
        let rest = words.next().unwrap_or_default().trim().to_owned();
        let p = self.paint;
        self.draw(vec![String::new(), p.hue(Hue::Cyan, &format!("› {}", text.trim()))]);
        match name.as_str() {
            "help" | "?" => {
                let mut lines: Vec<String> = COMMANDS
                    .iter()
                    .map(|(n, about)| format!("  {} {}", p.bold(&format!("/{n}")), p.dim(about)))
                    .collect();
                let folders = crate::commands::folders(&self.context.loaded.paths, self.context.loaded.trusted);
                for c in crate::commands::list(&folders).0 {
                    let about = c.description.unwrap_or_default();
                    lines.push(format!("  {} {}", p.bold(&format!("/{}", c.name)), p.dim(&about)));
                }
                lines.push(p.dim(
                    "  Enter sends (while the model works: steers it); Shift-Enter, Alt-Enter or Ctrl-J: a new line; \
                     Esc interrupts; Ctrl-R searches the history; Tab completes /commands and @paths; Ctrl-T shows \
                     thinking; Ctrl-D quits",
                ));
                self.say(lines);
            }
            "quit" | "exit" | "q" => self.quit = true,
            "new" => {
                if !self.busy("/new") {
                    let id = zidane::agent::new_session_id();
                    self.switch_session(id).await;
                }
            }
            "resume" => self.resume_picker().await,
            "compact" => self.compact(rest).await,
            "model" => self.model(rest),
            "thinking" => self.thinking(&rest),
            "context" => self.context_report().await,
            "cost" => self.cost(),
            "skills" => self.skills(&rest).await,
            "tasks" => self.tasks(&rest).await,
            "mcp" => self.mcp(&rest).await,
            "approve" => self.approve(&rest),
            "sandbox" => {
                let line = self.built_sandbox_line();
                self.note(&line);
            }
            "undo" => self.rewind(None).await,
            "rewind" => match rest.parse::<usize>() {
                Ok(n) => self.rewind(Some(n)).await,
                Err(_) if rest.is_empty() => self.rewind(Some(0)).await,
                Err(_) => self.note("usage: /rewind N (the checkpoint's number; /rewind alone lists them)"),
            },
            other => self.custom(other, &rest).await,
        }
    }

    async fn custom(&mut self, name: &str, rest: &str) {
        let folders = crate::commands::folders(&self.context.loaded.paths, self.context.loaded.trusted);
        match crate::commands::find(&folders, name) {
            Ok(command) => {
                let prompt = command.expand(rest);
                if self.run.is_some() {
                    self.steer(prompt);
                } else {
                    self.submit_prompt(prompt, Vec::new()).await;
                }
            }
            Err(_) => {
                let names = self.command_names();
                let closest = names.iter().min_by_key(|n| distance(n, name));
                let hint = closest
                    .filter(|n| distance(n, name) <= 3)
                    .map(|n| format!("; did you mean /{n}?"))
                    .unwrap_or_default();
                let line = self
                    .paint
                    .hue(Hue::Yellow, &format!("no command /{name}{hint} (/help lists them)"));
                self.say(vec![line]);
            }
        }
    }

    /// Ends this session's agent and opens `id`'s in its place.
    pub(super) async fn switch_session(&mut self, id: String) {
        if self.busy("switching sessions") {
            return;
        }
        let built = match crate::build(&self.context, &id, false).await {
            Ok(built) => built,
            Err(e) => {
                let line = self.paint.hue(Hue::Red, &format!("✗ {}", e.message));
                self.say(vec![line]);
                return;
            }
        };
        let old = std::mem::replace(&mut self.built, built);
        old.agent.destroy().await;
        self.install();
        if id != self.id {
            self.totals = Default::default();
            self.hook_context = None;
        }
        self.id = id;
        self.tasks.clear();
        let turns = self.stored_turns().await;
        let mut lines = vec![
            self.paint
                .dim(&format!("session {} · {} messages", self.id, turns.len())),
        ];
        // The last exchange, to pick the thread up.
        let last_text = |role: zidane::providers::Role| {
            turns
                .iter()
                .rev()
                .filter(|t| t.role == role)
                .map(|t| t.text())
                .find(|t| !t.trim().is_empty())
        };
        if let Some(asked) = last_text(zidane::providers::Role::User) {
            lines.push(self.paint.dim(&format!("  last asked: {}", first_lines(asked.trim()))));
        }
        if let Some(answered) = last_text(zidane::providers::Role::Assistant) {
            let short: String = answered.trim().chars().take(200).collect();
            lines.push(self.paint.dim(&format!("  last answer: {}", first_lines(&short))));
        }
        self.say(lines);
        self.refresh_context().await;
        let interrupted = self
            .context
            .store
            .list()
            .await
            .is_ok_and(|list| list.iter().any(|s| s.id == self.id && s.interrupted));
        if interrupted {
            self.note("this session's last run was interrupted; continuing it");
            self.continue_interrupted();
        }
    }

    /// The feed and the run summary on the current agent's bus.
    fn install(&mut self) {
        self._feeding = super::feed::install(self.built.agent.hooks(), &self.feed_tx);
        self._collecting = self.collector.install(self.built.agent.hooks());
        self._watching = super::watch_cache(self.built.agent.hooks());
    }

    async fn resume_picker(&mut self) {
        if self.busy("/resume") {
            return;
        }
        let sessions = match self.context.store.list().await {
            Ok(list) => list,
            Err(e) => {
                self.note(&format!("cannot read the sessions: {e}"));
                return;
            }
        };
        let folder = serde_json::Value::from(self.context.cwd.to_string_lossy().into_owned());
        let mut mine = Vec::new();
        let mut candidates: Vec<_> = sessions
            .into_iter()
            .filter(|s| !s.id.contains(zidane::agent::CHILD_SESSION_MARK) && s.id != self.id)
            .collect();
        candidates.sort_by_key(|s| std::cmp::Reverse(s.updated_at));
        // This folder's sessions (each records its folder after a run), the
        // most recent first; a session that recorded none is listed too.
        for s in candidates.into_iter().take(200) {
            let (recorded, cost) = match self.context.store.load(&s.id).await {
                Ok(Some(session)) => (
                    session.metadata.get(super::FOLDER_KEY).cloned(),
                    session
                        .turns
                        .iter()
                        .filter_map(|t| t.usage.as_ref().and_then(|u| u.cost))
                        .reduce(|a, b| a + b),
                ),
                _ => (None, None),
            };
            if recorded.is_none_or(|f| f == folder) {
                mine.push((s, cost));
            }
            if mine.len() == 50 {
                break;
            }
        }
        if mine.is_empty() {
            self.note("no other session of this folder to resume");
            return;
        }
        self.picker = Some(Picker::Sessions(mine, 0));
    }

    async fn compact(&mut self, focus: String) {
        if self.busy("/compact") {
            return;
        }
        self.note("⇣ compacting…");
        let result = self
            .built
            .agent
            .compact(CompactOptions {
                keep_turns: None,
                focus: Some(focus).filter(|f| !f.is_empty()),
            })
            .await;
        match result {
            Ok(r) if r.compacted => self.note(&format!("⇣ {} turns replaced by a summary", r.replaced)),
            Ok(_) => self.note("nothing to compact yet"),
            Err(e) => {
                let line = self.paint.hue(Hue::Red, &format!("✗ {e}"));
                self.say(vec![line]);
            }
        }
        self.refresh_context().await;
    }

    fn model(&mut self, name: String) {
        let current = self
            .model
            .clone()
            .unwrap_or_else(|| self.built.agent.meta().default_model);
        if name.is_empty() {
            let mut line = format!("model: {current}");
            if !self.context.loaded.fallback_models.is_empty() {
                line.push_str(&format!(
                    " (fallbacks: {})",
                    self.context.loaded.fallback_models.join(", ")
                ));
            }
            self.note(&line);
            return;
        }
        let impact = self.built.agent.cache_impact(&AgentCacheChange {
            model: Some(name.clone()),
            ..Default::default()
        });
        let cost = if impact.tokens > 0 {
            format!(
                "the next request reads ~{} tokens again instead of from the cache ({} changes)",
                tokens(impact.tokens),
                impact.changed.join(", ")
            )
        } else {
            "no cached prefix is lost".to_owned()
        };
        self.note(&format!("model: {current} → {name}; {cost}"));
        self.model = Some(name);
        self.fallback = None;
    }

    fn thinking(&mut self, level: &str) {
        let parsed = match level {
            "" => {
                let line = format!("thinking: {:?}", self.thinking_level).to_lowercase();
                self.note(&line);
                return;
            }
            "off" => ThinkingLevel::Off,
            "minimal" => ThinkingLevel::Minimal,
            "low" => ThinkingLevel::Low,
            "medium" => ThinkingLevel::Medium,
            "high" => ThinkingLevel::High,
            other => {
                self.note(&format!("unknown level `{other}` (off, minimal, low, medium, high)"));
                return;
            }
        };
        let impact = self.built.agent.cache_impact(&AgentCacheChange {
            thinking: Some(parsed),
            ..Default::default()
        });
        self.thinking_level = parsed;
        self.note(&format!(
            "thinking: {level} for the next turns{}",
            if impact.tokens > 0 {
                format!("; ~{} tokens are read again", tokens(impact.tokens))
            } else {
                String::new()
            }
        ));
    }

    async fn context_report(&mut self) {
        let mut options = self.context.instructions.context_options();
        let window = self.context.window.as_ref().map(|w| u64::from(w.tokens));
        options.effective_window = window;
        let p = self.paint;
        let mut lines = Vec::new();
        if let Some(breakdown) = self.built.agent.get_context_breakdown(&options).await {
            let total = window.unwrap_or(breakdown.used.max(1)).max(1);
            for c in &breakdown.categories {
                let cells = ((c.tokens * 30).div_ceil(total)).min(30) as usize;
                let bar = format!("{}{}", "█".repeat(cells), "░".repeat(30 - cells));
                lines.push(format!("  {:<18} {} {:>8}", c.name, p.hue(Hue::Cyan, &bar), c.tokens));
            }
            let pct = breakdown.used * 100 / total;
            lines.push(format!(
                "  {:<18} {} tokens of {} ({pct}%)",
                "in all",
                breakdown.used,
                window.map_or_else(|| "an unknown window".to_owned(), |w| w.to_string())
            ));
            self.context_used = Some(breakdown.used);
        }
        lines.push(p.dim("  pieces:"));
        for segment in self.built.agent.get_context_segments(&options).into_iter().flatten() {
            use zidane::agent::SegmentSource;
            let what = match &segment.source {
                SegmentSource::System => "system prompt".to_owned(),
                SegmentSource::RulesFile { path } => format!("rules file {path}"),
                SegmentSource::Tool { name } => format!("tool {name}"),
                SegmentSource::Turn { id, role } => format!("turn {id} ({role:?})"),
            };
            lines.push(p.dim(&format!("    {what:<50} {:>7}", segment.text.len().div_ceil(4))));
        }
        self.say(lines);
    }

    fn cost(&mut self) {
        let p = self.paint;
        let t = &self.totals;
        let mut lines = vec![format!(
            "  this session: {} in / {} out tokens{}",
            t.input,
            t.output,
            if t.priced {
                format!(" · ${:.4}", t.cost)
            } else {
                " · cost unknown".to_owned()
            }
        )];
        if let Some(summary) = self.collector.latest() {
            lines.push(p.dim("  the last run, by model:"));
            for m in &summary.by_model {
                lines.push(format!(
                    "    {:<28} {} turns · {} in · {} out · cache read {} · cache write {} · ${:.4}",
                    m.model_id, m.turns, m.input, m.output, m.cache_read, m.cache_creation, m.cost
                ));
            }
            for child in summary.children.iter().flatten() {
                let cost: f64 = child.by_model.iter().map(|m| m.cost).sum();
                lines.push(format!(
                    "    sub-agent {} · {} turns · ${cost:.4}",
                    child.agent_name.as_deref().unwrap_or("?"),
                    child.turns
                ));
            }
        }
        self.say(lines);
    }

    async fn skills(&mut self, name: &str) {
        let all = self.built.agent.skills().await;
        let active: Vec<String> = self.built.agent.active_skills().into_iter().map(|s| s.name).collect();
        if name.is_empty() {
            let mut lines: Vec<String> = all
                .iter()
                .map(|s| {
                    let mark = if active.contains(&s.name) { "●" } else { "○" };
                    format!(
                        "  {mark} {} {}",
                        self.paint.bold(&s.name),
                        self.paint.dim(&s.description)
                    )
                })
                .collect();
            if lines.is_empty() {
                lines.push(
                    self.paint
                        .dim("  no skills (put them in .zidane/skills/<name>/SKILL.md)"),
                );
            }
            self.say(lines);
            return;
        }
        let result = if active.iter().any(|a| a == name) {
            self.built.agent.deactivate_skill(name).await.map(|()| "deactivated")
        } else {
            self.built.agent.activate_skill(name).await.map(|()| "activated")
        };
        match result {
            Ok(done) => self.note(&format!("skill `{name}` {done}")),
            Err(e) => self.note(&format!("skill `{name}`: {e}")),
        }
    }

    async fn tasks(&mut self, rest: &str) {
        let mut words = rest.split_whitespace();
        match (words.next(), words.next()) {
            (Some("kill"), Some(id)) => self.kill_task(id).await,
            (Some(id), None) if self.tasks.contains_key(id) => self.show_task(id),
            _ => {
                if self.tasks.is_empty() {
                    self.note("no background tasks");
                    return;
                }
                let ids: Vec<String> = self.tasks.keys().rev().cloned().collect();
                self.picker = Some(Picker::Tasks(ids, 0));
            }
        }
    }

    /// The end of a task's output.
    pub(super) fn show_task(&mut self, id: &str) {
        let Some(task) = self.tasks.get(id) else {
            return;
        };
        let text = std::fs::read(&task.output)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let start = lines.len().saturating_sub(15);
        let mut out = vec![self.paint.dim(&format!(
            "  task {id}: {} (the last {} of {} lines, in {})",
            task.command,
            lines.len() - start,
            lines.len(),
            task.output
        ))];
        out.extend(lines[start..].iter().map(|l| format!("    {l}")));
        self.say(out);
    }

    pub(super) async fn kill_task(&mut self, id: &str) {
        if self.built.agent.kill_background_task(id).await {
            self.note(&format!("⚙ task {id}: stopping it"));
        } else {
            self.note(&format!("no running task {id}"));
        }
    }

    async fn mcp(&mut self, rest: &str) {
        if let Some(name) = rest.strip_prefix("login").map(str::trim) {
            self.mcp_login(name).await;
            return;
        }
        let mut lines = Vec::new();
        for (name, _, origin) in &self.context.loaded.mcp {
            let state = self
                .mcp
                .get(name)
                .cloned()
                .unwrap_or_else(|| "not connected yet (connects with the first prompt)".to_owned());
            lines.push(format!(
                "  {} {state} {}",
                self.paint.bold(name),
                self.paint.dim(&format!("({origin})"))
            ));
        }
        if lines.is_empty() {
            lines.push(
                self.paint
                    .dim("  no MCP servers (add them under [mcp_servers.NAME] or in .mcp.json)"),
            );
        }
        self.say(lines);
    }

    async fn mcp_login(&mut self, name: &str) {
        let servers = match crate::setup::mcp_servers(&self.context.loaded) {
            Ok(servers) => servers,
            Err(e) => return self.note(&e.message),
        };
        let Some(mut config) = servers.into_iter().find(|s| s.name == name) else {
            return self.note(&format!("no MCP server `{name}`"));
        };
        config.oauth_store =
            Some(std::sync::Arc::new(self.context.store.clone()) as std::sync::Arc<dyn zidane::mcp::oauth::OAuthStore>);
        let hooks = zidane::hooks::HookBus::new();
        let tx = self.feed_tx.clone();
        hooks.on_sync::<zidane::agent::events::McpAuthUrl, _>(move |ev, _| {
            let _ = tx.send(super::feed::Feed::Note(format!(
                "open this URL to log in to `{}`: {}",
                ev.name(),
                ev.url()
            )));
            Ok(())
        });
        self.note(&format!("logging in to `{name}`; waiting for the browser…"));
        match zidane::mcp::login_mcp_server(&config, &hooks).await {
            Ok(_) => self.note(&format!("logged in to `{name}`; /new connects with the new tokens")),
            Err(e) => self.note(&format!("the login to `{name}` failed: {e}")),
        }
    }

    fn approve(&mut self, mode: &str) {
        use crate::setup::Approve;
        let new = match mode {
            "" => None,
            "ask" => Some(Approve::Ask),
            "auto-edit" => Some(Approve::AutoEdit),
            "yolo" => Some(Approve::Yolo),
            other => {
                self.note(&format!("unknown mode `{other}` (ask, auto-edit, yolo)"));
                return;
            }
        };
        if let Some(new) = new {
            *self.context.approve_mode.lock() = new;
        }
        let line = match *self.context.approve_mode.lock() {
            Approve::Ask => "approve ask: commands, file changes, MCP tools and fetches ask first",
            Approve::AutoEdit => {
                "approve auto-edit: file changes in the folder run; commands, MCP tools and fetches ask"
            }
            Approve::Yolo => "approve yolo: everything runs without asking (deny rules still hold)",
        };
        self.note(line);
    }

    fn built_sandbox_line(&self) -> String {
        match crate::setup::execution(&self.context.args, &self.context.cwd, None) {
            Ok((_, note)) => note,
            Err(e) => e.message,
        }
    }

    /// `/undo` and `/rewind`: the checkpoint commands, run with the terminal
    /// given back for their questions, then the session reloaded.
    async fn rewind(&mut self, index: Option<usize>) {
        if self.busy("/undo and /rewind") {
            return;
        }
        if self.context.args.no_checkpoints {
            self.note("checkpoints are off (--no-checkpoints)");
            return;
        }
        self.screen.leave();
        let args = &mut self.context.args;
        let saved = (args.session.clone(), args.undo);
        args.session = Some(self.id.clone());
        args.undo = index.is_none();
        let result = if index == Some(0) {
            crate::checkpoints::list(args, &self.context.store, &self.context.checkpoints).await
        } else {
            crate::checkpoints::rewind(args, &self.context.store, &self.context.checkpoints, index).await
        };
        (args.session, args.undo) = saved;
        if let Err(e) = result
            && !e.message.is_empty()
        {
            eprintln!("zidane: {}", e.message);
        }
        match Screen::enter() {
            Ok(screen) => self.screen = screen,
            Err(e) => {
                eprintln!("zidane: cannot take the terminal back: {e}");
                self.quit = true;
                return;
            }
        }
        if index != Some(0) {
            // The conversation may have changed under the agent.
            let id = self.id.clone();
            self.switch_session(id).await;
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn close_names() {
        assert_eq!(super::distance("compcat", "compact"), 2);
        assert_eq!(super::distance("", "new"), 3);
    }
}
