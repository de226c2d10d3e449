//! The slash commands that act on the session: compaction, the model and
//! thinking level, what fills the context and what it cost, skills,
//! background tasks, MCP servers, the approval mode, undo and rewind.

use zidane::providers::ThinkingLevel;
use zidane_app::CompactOutcome;

use super::draw::tokens;
use super::link::{LOCAL_ONLY, Link};
use super::screen::{Hue, Screen};
use super::{Picker, Session};

impl Session {
    pub(super) async fn compact(&mut self, focus: String) {
        if self.busy("/compact") {
            return;
        }
        self.note("⇣ compacting…");
        match self.link.compact(focus).await {
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

    /// `/review [ARGS]`: a read-only review of a change, its findings by
    /// priority with their places and excerpts.
    pub(super) async fn review(&mut self, args: &str) {
        if self.busy("/review") {
            return;
        }
        let Some(conversation) = self.link.local().cloned() else {
            self.note(&format!("/review: {}", super::link::LOCAL_ONLY));
            return;
        };
        let (target, focus) = match zidane_app::review::Target::parse_args(args) {
            Ok(parsed) => parsed,
            Err(e) => return self.note(e.message()),
        };
        self.note(&format!("reviewing {}…", target.describe()));
        let mut request = zidane_app::review::Request::new(target);
        request.focus = focus;
        match conversation.review(&request).await {
            Ok(report) => {
                let text = crate::commands::review::terminal(&report);
                self.say(text.lines().map(str::to_owned).collect());
            }
            Err(e) => {
                let line = self.paint.hue(Hue::Red, &format!("✗ the review failed: {e}"));
                self.say(vec![line]);
            }
        }
        self.refresh_context().await;
    }

    pub(super) async fn model(&mut self, name: String) {
        if name.is_empty() {
            let mut line = format!("model: {}", self.link.model());
            let fallbacks = self.link.fallback_models().await;
            if !fallbacks.is_empty() {
                line.push_str(&format!(" (fallbacks: {})", fallbacks.join(", ")));
            }
            self.note(&line);
            return;
        }
        let switch = match self.link.set_model(&name).await {
            Ok(switch) => switch,
            Err(e) => return self.note(&e),
        };
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

    pub(super) async fn thinking(&mut self, level: &str) {
        let parsed = match level {
            "" => {
                let line = format!("thinking: {}", self.link.thinking().await);
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
        let reread = match self.link.set_thinking(parsed).await {
            Ok(reread) => reread,
            Err(e) => return self.note(&e),
        };
        self.note(&format!(
            "thinking: {level} for the next turns{}",
            if reread > 0 {
                format!("; ~{} tokens are read again", tokens(reread))
            } else {
                String::new()
            }
        ));
    }

    pub(super) async fn context_report(&mut self) {
        let report = self.link.context_report().await;
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

    pub(super) async fn cost(&mut self) {
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
        let cost = self.link.cost().await;
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

    pub(super) async fn skills(&mut self, name: &str) {
        if name.is_empty() {
            let mut lines: Vec<String> = self
                .link
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
        match self.link.toggle_skill(name).await {
            Ok(true) => self.note(&format!("skill `{name}` activated")),
            Ok(false) => self.note(&format!("skill `{name}` deactivated")),
            Err(e) => self.note(&format!("skill `{name}`: {e}")),
        }
    }

    pub(super) async fn tasks(&mut self, rest: &str) {
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
        if self.link.kill_task(id).await {
            self.note(&format!("⚙ task {id}: stopping it"));
        } else {
            self.note(&format!("no running task {id}"));
        }
    }

    pub(super) async fn mcp(&mut self, rest: &str) {
        if let Some(name) = rest.strip_prefix("login").map(str::trim) {
            self.mcp_login(name).await;
            return;
        }
        let mut lines = Vec::new();
        for (name, origin) in self.link.mcp_servers() {
            let state = self
                .mcp
                .get(&name)
                .cloned()
                .unwrap_or_else(|| "not connected yet (connects with the first prompt)".to_owned());
            lines.push(format!(
                "  {} {state} {}",
                self.paint.bold(&name),
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

    pub(super) async fn lsp(&mut self) {
        let Some((servers, counts)) = self.link.language_servers().await else {
            return self.note("the served session did not say what its language servers are");
        };
        let lines = zidane_app::language_server_lines(&servers);
        if lines.is_empty() {
            return self.say(vec![self.paint.dim(&format!("  {}", zidane_app::NO_LANGUAGE_SERVER))]);
        }
        let mut shown: Vec<String> = lines
            .into_iter()
            .map(|(name, state, languages)| {
                format!("  {} {state} {}", self.paint.bold(&name), self.paint.dim(&languages))
            })
            .collect();
        shown.push(self.paint.dim(&format!("  {}", zidane_app::diagnostics_tally(counts))));
        self.say(shown);
    }

    async fn mcp_login(&mut self, name: &str) {
        let Some(setup) = self.setup.clone() else {
            return self.note(LOCAL_ONLY);
        };
        let servers = match zidane_app::mcp_servers(&setup.settings) {
            Ok(servers) => servers,
            Err(e) => return self.note(e.message()),
        };
        let Some(mut config) = servers.into_iter().find(|s| s.name == name) else {
            return self.note(&format!("no MCP server `{name}`"));
        };
        config.oauth_store =
            Some(std::sync::Arc::new(setup.store.clone()) as std::sync::Arc<dyn zidane::mcp::oauth::OAuthStore>);
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

    pub(super) async fn approve(&mut self, mode: &str) {
        let current = if mode.is_empty() {
            Ok(self.link.approve())
        } else {
            self.link.set_approve(mode).await
        };
        let line = match current.as_deref() {
            Ok("ask") => "approve ask: commands, file changes, MCP tools and fetches ask first",
            Ok("auto-edit") => "approve auto-edit: file changes in the folder run; commands, MCP tools and fetches ask",
            Ok("yolo") => "approve yolo: everything runs without asking (deny rules still hold)",
            Ok(other) => other,
            Err(e) => e,
        };
        let line = line.to_owned();
        self.note(&line);
    }

    /// `/undo` and `/rewind`: the checkpoint commands, run with the terminal
    /// given back for their questions, then the session reloaded.
    pub(super) async fn rewind(&mut self, index: Option<usize>) {
        if self.busy("/undo and /rewind") {
            return;
        }
        if !self.link.checkpoints() {
            self.note("checkpoints are off (--no-checkpoints)");
            return;
        }
        let (setup, link) = match (&self.setup, &self.link) {
            (Some(setup), Link::Local(_)) => (std::sync::Arc::clone(setup), self.link.clone()),
            _ => return self.rewind_remote(index).await,
        };
        self.screen.leave();
        let settings = &setup.settings;
        let flags = zidane_app::Flags {
            store: settings.store.clone(),
            cwd: Some(settings.cwd.clone()),
            session: Some(link.id()),
            max_checkpoints: settings.max_checkpoints,
            ..Default::default()
        };
        let result =
            crate::commands::checkpoints_from_session(flags, index, std::sync::Arc::clone(&setup.runtime)).await;
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
            self.switch_session(link.id()).await;
        }
    }

    /// `/undo` and `/rewind N` on a served session: the plan shown, then
    /// done at the server.
    async fn rewind_remote(&mut self, index: Option<usize>) {
        let Some(remote) = self.link.remote().cloned() else {
            return;
        };
        if index == Some(0) {
            return self.note("/rewind N: give the checkpoint's number (`zidane checkpoints` lists them)");
        }
        let mut params = serde_json::json!({ "apply": true });
        if let Some(n) = index {
            params["index"] = serde_json::json!(n);
        }
        match remote.call("_zidane/rewind", params).await {
            Ok(done) => {
                let mut lines: Vec<String> = done["plan"]
                    .as_str()
                    .unwrap_or_default()
                    .lines()
                    .map(|l| self.paint.dim(l))
                    .collect();
                lines.push(self.paint.dim(if done["empty"] == true {
                    "nothing to take back"
                } else {
                    "rewound at the server"
                }));
                self.say(lines);
            }
            Err(e) => self.note(&e),
        }
    }
}
