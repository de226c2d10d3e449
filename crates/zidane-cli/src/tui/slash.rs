//! The slash commands of the interactive session.

use zidane::agent::SessionStore;
use zidane::providers::ThinkingLevel;
use zidane_app::CompactOutcome;
use zidane_app::slash::BUILTINS;

use super::draw::tokens;
use super::screen::{Hue, Screen};
use super::{Picker, Session, first_lines};

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
        let mut names: Vec<String> = BUILTINS.iter().map(|b| b.name.to_owned()).collect();
        names.extend(self.custom_commands().into_iter().map(|c| c.name));
        names.sort();
        names.dedup();
        names
    }

    /// The folder's and the user's own commands.
    fn custom_commands(&self) -> Vec<zidane_app::commands::CustomCommand> {
        let settings = &self.setup.settings;
        let folders = zidane_app::commands::folders(&settings.paths, settings.trusted);
        zidane_app::commands::list(&folders).0
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
                let mut lines: Vec<String> = BUILTINS
                    .iter()
                    .map(|b| {
                        let hint = b.hint.map(|h| format!("[{h}] ")).unwrap_or_default();
                        format!(
                            "  {} {}",
                            p.bold(&format!("/{}", b.name)),
                            p.dim(&format!("{hint}{}", b.about))
                        )
                    })
                    .collect();
                for c in self.custom_commands() {
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
                    let id = zidane_app::new_session_id();
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
                let line = self.setup.sandbox_line();
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
        let settings = &self.setup.settings;
        let folders = zidane_app::commands::folders(&settings.paths, settings.trusted);
        match zidane_app::commands::find(&folders, name) {
            Ok(_) if self.run.is_some() => match self.conversation.steering_text(&format!("/{name} {rest}")) {
                Ok(prompt) => self.steer(prompt),
                Err(e) => self.note(e.message()),
            },
            Ok(_) => {
                // The conversation's pipeline expands it (its model and
                // allowed tools with it).
                self.submit_prompt(format!("/{name} {rest}").trim_end().to_owned())
                    .await;
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
        let opened = if id == self.conversation.id() {
            // The same session again (its conversation may have changed
            // under it): what it said and set carries over.
            self.conversation.reopen().await
        } else {
            zidane_app::Conversation::open(std::sync::Arc::clone(&self.setup), &id, self.events.clone(), false).await
        };
        let conversation = match opened {
            Ok(conversation) => conversation,
            Err(e) => {
                let line = self.paint.hue(Hue::Red, &format!("✗ {e}"));
                self.say(vec![line]);
                return;
            }
        };
        let old = std::mem::replace(&mut self.conversation, conversation);
        if old.id() == id {
            old.agent().destroy().await;
        } else {
            old.end().await;
            self.totals = Default::default();
        }
        self.tasks.clear();
        let turns = self.conversation.stored_turns().await;
        let mut lines = vec![self.paint.dim(&format!("session {id} · {} messages", turns.len()))];
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
        if self.conversation.interrupted().await {
            self.note("this session's last run was interrupted; continuing it");
            self.continue_interrupted();
        }
    }

    async fn resume_picker(&mut self) {
        if self.busy("/resume") {
            return;
        }
        let sessions = match self.setup.store.list().await {
            Ok(list) => list,
            Err(e) => {
                self.note(&format!("cannot read the sessions: {e}"));
                return;
            }
        };
        let folder = serde_json::Value::from(self.setup.cwd().to_string_lossy().into_owned());
        let mut mine = Vec::new();
        let mut candidates: Vec<_> = sessions
            .into_iter()
            .filter(|s| !s.id.contains(zidane::agent::CHILD_SESSION_MARK) && s.id != self.conversation.id())
            .collect();
        candidates.sort_by_key(|s| std::cmp::Reverse(s.updated_at));
        // This folder's sessions (each records its folder after a run), the
        // most recent first; a session that recorded none is listed too.
        for s in candidates.into_iter().take(200) {
            let (recorded, cost) = match self.setup.store.load(&s.id).await {
                Ok(Some(session)) => (
                    session.metadata.get(zidane_app::FOLDER_KEY).cloned(),
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
        match self.conversation.compact(Some(focus)).await {
            Ok(CompactOutcome::Compacted { replaced }) => {
                self.note(&format!("⇣ {replaced} turns replaced by a summary"))
            }
            Ok(_) => self.note("nothing to compact yet"),
            Err(e) => {
                let line = self.paint.hue(Hue::Red, &format!("✗ {e}"));
                self.say(vec![line]);
            }
        }
        self.refresh_context().await;
    }

    fn model(&mut self, name: String) {
        if name.is_empty() {
            let mut line = format!("model: {}", self.conversation.model());
            let fallbacks = self.conversation.fallback_models();
            if !fallbacks.is_empty() {
                line.push_str(&format!(" (fallbacks: {})", fallbacks.join(", ")));
            }
            self.note(&line);
            return;
        }
        let switch = self.conversation.set_model(&name);
        let cost = if switch.reread > 0 {
            format!(
                "the next request reads ~{} tokens again instead of from the cache ({} changes)",
                tokens(switch.reread),
                switch.changed.join(", ")
            )
        } else {
            "no cached prefix is lost".to_owned()
        };
        self.note(&format!("model: {} → {name}; {cost}", switch.from));
        self.fallback = None;
    }

    fn thinking(&mut self, level: &str) {
        let parsed = match level {
            "" => {
                let line = format!("thinking: {:?}", self.conversation.thinking()).to_lowercase();
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
        let reread = self.conversation.set_thinking(parsed);
        self.note(&format!(
            "thinking: {level} for the next turns{}",
            if reread > 0 {
                format!("; ~{} tokens are read again", tokens(reread))
            } else {
                String::new()
            }
        ));
    }

    async fn context_report(&mut self) {
        let report = self.conversation.context_report().await;
        let p = self.paint;
        let mut lines = Vec::new();
        if !report.categories.is_empty() {
            let total = report.window.unwrap_or(report.used.max(1)).max(1);
            for (name, count) in &report.categories {
                let cells = ((count * 30).div_ceil(total)).min(30) as usize;
                let bar = format!("{}{}", "█".repeat(cells), "░".repeat(30 - cells));
                lines.push(format!("  {:<18} {} {:>8}", name, p.hue(Hue::Cyan, &bar), count));
            }
            let pct = report.used * 100 / total;
            lines.push(format!(
                "  {:<18} {} tokens of {} ({pct}%)",
                "in all",
                report.used,
                report
                    .window
                    .map_or_else(|| "an unknown window".to_owned(), |w| w.to_string())
            ));
            self.context_used = Some(report.used);
        }
        lines.push(p.dim("  pieces:"));
        for (what, count) in &report.pieces {
            lines.push(p.dim(&format!("    {what:<50} {count:>7}")));
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
        let cost = self.conversation.cost();
        if !cost.by_model.is_empty() {
            lines.push(p.dim("  the last run, by model:"));
            for m in &cost.by_model {
                lines.push(format!(
                    "    {:<28} {} turns · {} in · {} out · cache read {} · cache write {} · ${:.4}",
                    m.model, m.turns, m.input, m.output, m.cache_read, m.cache_creation, m.cost
                ));
            }
            for (name, turns, cost) in &cost.children {
                lines.push(format!("    sub-agent {name} · {turns} turns · ${cost:.4}"));
            }
        }
        self.say(lines);
    }

    async fn skills(&mut self, name: &str) {
        if name.is_empty() {
            let mut lines: Vec<String> = self
                .conversation
                .skills()
                .await
                .iter()
                .map(|s| {
                    let mark = if s.active { "●" } else { "○" };
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
        match self.conversation.toggle_skill(name).await {
            Ok(true) => self.note(&format!("skill `{name}` activated")),
            Ok(false) => self.note(&format!("skill `{name}` deactivated")),
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
        if self.conversation.kill_task(id).await {
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
        for (name, _, origin) in &self.setup.settings.mcp {
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
        let servers = match zidane_app::mcp_servers(&self.setup.settings) {
            Ok(servers) => servers,
            Err(e) => return self.note(e.message()),
        };
        let Some(mut config) = servers.into_iter().find(|s| s.name == name) else {
            return self.note(&format!("no MCP server `{name}`"));
        };
        config.oauth_store =
            Some(std::sync::Arc::new(self.setup.store.clone()) as std::sync::Arc<dyn zidane::mcp::oauth::OAuthStore>);
        let hooks = zidane::hooks::HookBus::new();
        let events = self.events.clone();
        hooks.on_sync::<zidane::agent::events::McpAuthUrl, _>(move |ev, _| {
            events.notice(format!("open this URL to log in to `{}`: {}", ev.name(), ev.url()));
            Ok(())
        });
        self.note(&format!("logging in to `{name}`; waiting for the browser…"));
        match zidane::mcp::login_mcp_server(&config, &hooks).await {
            Ok(_) => self.note(&format!("logged in to `{name}`; /new connects with the new tokens")),
            Err(e) => self.note(&format!("the login to `{name}` failed: {e}")),
        }
    }

    fn approve(&mut self, mode: &str) {
        use zidane_app::Approve;
        if !mode.is_empty() {
            match Approve::from_name(mode) {
                Some(new) => *self.setup.approve.lock() = new,
                None => {
                    self.note(&format!("unknown mode `{mode}` (ask, auto-edit, yolo)"));
                    return;
                }
            }
        }
        let line = match *self.setup.approve.lock() {
            Approve::Ask => "approve ask: commands, file changes, MCP tools and fetches ask first",
            Approve::AutoEdit => {
                "approve auto-edit: file changes in the folder run; commands, MCP tools and fetches ask"
            }
            Approve::Yolo => "approve yolo: everything runs without asking (deny rules still hold)",
        };
        self.note(line);
    }

    /// `/undo` and `/rewind`: the checkpoint commands, run with the terminal
    /// given back for their questions, then the session reloaded.
    async fn rewind(&mut self, index: Option<usize>) {
        if self.busy("/undo and /rewind") {
            return;
        }
        let settings = &self.setup.settings;
        if !settings.checkpoints {
            self.note("checkpoints are off (--no-checkpoints)");
            return;
        }
        self.screen.leave();
        let flags = zidane_app::Flags {
            store: settings.store.clone(),
            cwd: Some(settings.cwd.clone()),
            session: Some(self.conversation.id().to_owned()),
            max_checkpoints: settings.max_checkpoints,
            ..Default::default()
        };
        let result = crate::commands::checkpoints_from_session(flags, index).await;
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
            let id = self.conversation.id().to_owned();
            self.switch_session(id).await;
        }
    }
}

#[cfg(test)]
mod tests;
