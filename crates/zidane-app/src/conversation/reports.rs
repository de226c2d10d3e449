//! What a front end asks of a conversation besides a prompt: compaction,
//! the model and thinking level of the next turns, skills, background
//! tasks, and reports (what fills the context, what it cost). Each answer
//! is data; the front end words it.

use serde::{Deserialize, Serialize};
use zidane::agent::{AgentCacheChange, CompactOptions, SegmentSource};
use zidane::providers::ThinkingLevel;

use super::Conversation;

/// What `/compact` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompactOutcome {
    /// Older turns were replaced by a summary.
    Compacted {
        /// How many.
        replaced: u32,
    },
    /// There was nothing to compact yet.
    Nothing,
}

/// A model switch and what it costs the prompt cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelSwitch {
    /// The model before.
    pub from: String,
    /// The model of the next turns.
    pub to: String,
    /// Prompt tokens the next request reads again instead of from the cache.
    pub reread: u64,
    /// What changes in the cached prefix.
    pub changed: Vec<String>,
}

/// What fills the context window before the next request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ContextReport {
    /// Each category and its estimated tokens.
    pub categories: Vec<(String, u64)>,
    /// All of it.
    pub used: u64,
    /// The window, when known.
    pub window: Option<u64>,
    /// Where it comes from: each piece (the system prompt, a rules file, a
    /// tool, a turn) and its estimated tokens.
    pub pieces: Vec<(String, u64)>,
}

/// One model's share of a run's cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelCost {
    /// The model.
    pub model: String,
    /// Its turns.
    pub turns: u32,
    /// Prompt tokens read without the cache.
    pub input: u64,
    /// Tokens written.
    pub output: u64,
    /// Prompt tokens read from the cache.
    pub cache_read: u64,
    /// Prompt tokens written to the cache.
    pub cache_creation: u64,
    /// USD.
    pub cost: f64,
}

/// What the session cost, and the last run by model and sub-agent.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CostReport {
    /// Prompt tokens of every turn of the session (cached or not).
    pub input: u64,
    /// Tokens written.
    pub output: u64,
    /// USD, when every priced turn says.
    pub cost: Option<f64>,
    /// The last run, by model.
    pub by_model: Vec<ModelCost>,
    /// The last run's sub-agents: name, turns, USD.
    pub children: Vec<(String, u32, f64)>,
}

/// A skill and whether it is active.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillState {
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// Whether it is active.
    pub active: bool,
}

impl Conversation {
    /// Summarizes the older turns now, keeping `focus` in view.
    pub async fn compact(&self, focus: Option<String>) -> Result<CompactOutcome, String> {
        let options = CompactOptions {
            keep_turns: None,
            focus: focus.filter(|f| !f.trim().is_empty()),
        };
        match self.inner.agent.compact(options).await {
            Ok(r) if r.compacted => Ok(CompactOutcome::Compacted { replaced: r.replaced }),
            Ok(_) => Ok(CompactOutcome::Nothing),
            Err(e) => Err(e.to_string()),
        }
    }

    /// The model of the next turns.
    pub fn model(&self) -> String {
        self.inner
            .state
            .lock()
            .model
            .clone()
            .unwrap_or_else(|| self.inner.agent.meta().default_model)
    }

    /// The models tried after it when it fails.
    pub fn fallback_models(&self) -> &[String] {
        &self.inner.setup.settings.fallback_models
    }

    /// Switches the next turns to `model`.
    pub fn set_model(&self, model: &str) -> ModelSwitch {
        let from = self.model();
        let impact = self.inner.agent.cache_impact(&AgentCacheChange {
            model: Some(model.to_owned()),
            ..Default::default()
        });
        self.inner.state.lock().model = Some(model.to_owned());
        ModelSwitch {
            from,
            to: model.to_owned(),
            reread: impact.tokens,
            changed: impact.changed.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    /// The thinking level of the next turns.
    pub fn thinking(&self) -> ThinkingLevel {
        self.inner.state.lock().thinking
    }

    /// Sets the thinking level of the next turns; the tokens the next
    /// request reads again.
    pub fn set_thinking(&self, level: ThinkingLevel) -> u64 {
        let impact = self.inner.agent.cache_impact(&AgentCacheChange {
            thinking: Some(level),
            ..Default::default()
        });
        self.inner.state.lock().thinking = level;
        impact.tokens
    }

    /// What fills the context window before the next request.
    pub async fn context_report(&self) -> ContextReport {
        let setup = &self.inner.setup;
        let mut options = setup.instructions.context_options();
        let window = setup.window_tokens().map(u64::from);
        options.effective_window = window;
        let mut report = ContextReport {
            window,
            ..Default::default()
        };
        if let Some(breakdown) = self.inner.agent.get_context_breakdown(&options).await {
            report.categories = breakdown
                .categories
                .iter()
                .map(|c| (c.name.to_owned(), c.tokens))
                .collect();
            report.used = breakdown.used;
        }
        for segment in self.inner.agent.get_context_segments(&options).into_iter().flatten() {
            let what = match &segment.source {
                SegmentSource::System => "system prompt".to_owned(),
                SegmentSource::RulesFile { path } => format!("rules file {path}"),
                SegmentSource::Tool { name } => format!("tool {name}"),
                SegmentSource::Turn { id, role } => format!("turn {id} ({role:?})"),
            };
            report.pieces.push((what, segment.text.len().div_ceil(4) as u64));
        }
        report
    }

    /// The context's size before the next request (estimated).
    pub async fn context_used(&self) -> Option<u64> {
        let setup = &self.inner.setup;
        let mut options = setup.instructions.context_options();
        options.effective_window = setup.window_tokens().map(u64::from);
        self.inner.agent.get_context_breakdown(&options).await.map(|b| b.used)
    }

    /// What the session cost, and the last run by model and sub-agent.
    pub fn cost(&self) -> CostReport {
        let mut report = CostReport::default();
        let mut priced = false;
        let mut cost = 0.0;
        for usage in self.inner.agent.turns().iter().filter_map(|t| t.usage.as_ref()) {
            report.input += usage.input + usage.cache_read + usage.cache_creation;
            report.output += usage.output;
            if let Some(c) = usage.cost {
                cost += c;
                priced = true;
            }
        }
        report.cost = priced.then_some(cost);
        if let Some(summary) = self.inner.collector.latest() {
            report.by_model = summary
                .by_model
                .iter()
                .map(|m| ModelCost {
                    model: m.model_id.clone(),
                    turns: m.turns,
                    input: m.input,
                    output: m.output,
                    cache_read: m.cache_read,
                    cache_creation: m.cache_creation,
                    cost: m.cost,
                })
                .collect();
            report.children = summary
                .children
                .iter()
                .flatten()
                .map(|child| {
                    let cost: f64 = child.by_model.iter().map(|m| m.cost).sum();
                    (
                        child.agent_name.clone().unwrap_or_else(|| "?".into()),
                        child.turns,
                        cost,
                    )
                })
                .collect();
        }
        report
    }

    /// The language servers and where each stands, with the diagnostics
    /// reported and fixed after edits so far; empty when none is on (see
    /// [`language_server_lines`](crate::language_server_lines)).
    pub fn language_servers(&self) -> (Vec<zidane::lsp::ServerStatus>, zidane::lsp::Counts) {
        match self.inner.agent.lsp() {
            Some(lsp) => (lsp.status(), lsp.counts()),
            None => (Vec::new(), zidane::lsp::Counts::default()),
        }
    }

    /// The skills, each with whether it is active.
    pub async fn skills(&self) -> Vec<SkillState> {
        let active: Vec<String> = self.inner.agent.active_skills().into_iter().map(|s| s.name).collect();
        self.inner
            .agent
            .skills()
            .await
            .into_iter()
            .map(|s| SkillState {
                active: active.contains(&s.name),
                name: s.name,
                description: s.description,
            })
            .collect()
    }

    /// Activates skill `name`, or deactivates it when active; whether it
    /// is active now.
    pub async fn toggle_skill(&self, name: &str) -> Result<bool, String> {
        let agent = &self.inner.agent;
        if agent.active_skills().iter().any(|s| s.name == name) {
            agent
                .deactivate_skill(name)
                .await
                .map(|()| false)
                .map_err(|e| e.to_string())
        } else {
            agent
                .activate_skill(name)
                .await
                .map(|()| true)
                .map_err(|e| e.to_string())
        }
    }

    /// Stops background task `id`; `false` when no such task runs.
    pub async fn kill_task(&self, id: &str) -> bool {
        self.inner.agent.kill_background_task(id).await
    }

    /// The session's turns as stored (the agent loads them with its first
    /// run).
    pub async fn stored_turns(&self) -> Vec<zidane::providers::SessionTurn> {
        use zidane::agent::SessionStore;
        match self.inner.setup.store.load(&self.inner.id).await {
            Ok(Some(session)) => session.turns,
            _ => self.inner.agent.turns(),
        }
    }

    /// Whether the session's last run was interrupted.
    pub async fn interrupted(&self) -> bool {
        use zidane::agent::SessionStore;
        self.inner
            .setup
            .store
            .list()
            .await
            .is_ok_and(|list| list.iter().any(|s| s.id == self.inner.id && s.interrupted))
    }

    /// `/diff`: what the session's prompts changed (`prompt`: only that
    /// checkpoint's), from the folder's checkpoints; empty when nothing was
    /// recorded yet.
    pub async fn changes(&self, prompt: Option<usize>) -> Result<Vec<crate::diff::FileDiff>, String> {
        let checkpoints = &self.inner.setup.checkpoints;
        let count = checkpoints
            .list(&self.inner.id)
            .await
            .map_err(|e| format!("cannot read the checkpoints: {e}"))?
            .len();
        let (first, last) = match prompt {
            Some(n) if n == 0 || n > count => {
                return Err(format!("no checkpoint {n} (this session has {count})"));
            }
            Some(n) => (n, n),
            None if count == 0 => return Ok(Vec::new()),
            None => (1, count),
        };
        let files = checkpoints
            .contents(&self.inner.id, first, last)
            .await
            .map_err(|e| format!("cannot read the checkpoints: {e}"))?;
        Ok(files.iter().map(crate::diff::file_diff).collect())
    }
}

/// `/lsp` in every front end: each server the folder calls for or that
/// can run, as its name, its state and its languages (none: say
/// [`NO_LANGUAGE_SERVER`]); then [`diagnostics_tally`].
pub fn language_server_lines(servers: &[zidane::lsp::ServerStatus]) -> Vec<(String, String, String)> {
    use zidane::lsp::ServerState;
    servers
        .iter()
        .filter(|s| s.applies || !matches!(s.state, ServerState::NotFound))
        .map(|server| {
            let state = match &server.state {
                ServerState::Ready => "ready (starts with the first file of its language)".to_owned(),
                ServerState::Running { pid } => format!(
                    "running (pid {})",
                    pid.map_or_else(|| "?".to_owned(), |p| p.to_string())
                ),
                ServerState::Restarting { failures } => format!("restarting after {failures} failures"),
                ServerState::Off { reason } => format!("off for this session: {reason}"),
                ServerState::Disabled => "disabled in the configuration".to_owned(),
                ServerState::NotFound => format!("`{}` not found on PATH", server.command),
            };
            (server.name.clone(), state, format!("({})", server.languages.join(", ")))
        })
        .collect()
}

/// The diagnostics the servers gave so far, in a line.
pub fn diagnostics_tally(counts: zidane::lsp::Counts) -> String {
    format!(
        "after edits and commands: {} diagnostics reported, {} fixed",
        counts.reported, counts.fixed
    )
}

/// The line `/lsp` shows when no server serves the folder.
pub const NO_LANGUAGE_SERVER: &str =
    "no language server for this folder (install one, or add [lsp.NAME] command and languages)";
