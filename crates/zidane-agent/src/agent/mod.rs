//! The `Agent`: what it holds, and the accessors a host reads it through.
//!
//! - [`build`]: `create_agent` checks the options and assembles the parts;
//! - [`run`]: a run is planned (`prepare_run`, `prepare_resume`) and
//!   executed (`execute`);
//! - [`control`]: who holds the agent, aborts, suspend, steering;
//! - [`execution`]: the execution handle, warm-up and destroy.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use zidane_core::clock::Clock;
use zidane_core::events::{self, AgentStats, ExecutionHandle, RunStatus};
use zidane_core::execution::ExecutionContext;
use zidane_core::session::Session;
use zidane_hooks::{HookBus, HookScope};
use zidane_loop::RunLoop;
use zidane_provider::{CacheTtl, Provider, ProviderMeta, SessionTurn};

mod approvals;
mod background;
mod build;
mod cache;
mod checkpoints;
mod compact;
mod context;
mod control;
mod decide;
mod execution;
mod extensions;
mod goal;
mod lsp;
#[cfg(feature = "mcp")]
mod mcp;
mod resume;
mod run;
mod session;
mod skills;
mod stream;
mod subagents;

pub(crate) use build::create_child;
pub use build::{create_agent, new_session_id};
pub(crate) use control::{BusyGuard, RunControl};
pub(crate) use execution::ExecutionSlot;

use crate::binding::SessionBinding;
pub(crate) use crate::binding::SessionState;
pub(crate) use crate::cache::estimate_tokens;
use crate::decide::Decisions;
use crate::durable::DurableOptions;
use crate::error::AgentError;
use crate::mcp::Mcp;
use compact::Compaction;

/// What an agent holds. Each concern with state of its own is a part with
/// private fields ([`RunControl`], [`ExecutionSlot`], [`Mcp`], the
/// background tasks, the skills, compaction); the rest is configuration
/// fixed at construction.
pub(crate) struct Inner {
    pub(crate) looped: RunLoop,
    pub(crate) hooks: HookBus,
    pub(crate) providers: Vec<Arc<dyn Provider>>,
    pub(crate) clock: Arc<dyn Clock>,
    /// The session the agent is bound to, and its store.
    pub(crate) session: SessionBinding,
    pub(crate) control: RunControl,
    pub(crate) exec: ExecutionSlot,
    pub(crate) cache_ttl: Option<CacheTtl>,
    pub(crate) max_tokens: Option<u32>,
    pub(crate) compaction: Arc<Compaction>,
    /// The skills (resolved on the first run or warm-up).
    pub(crate) skills: Arc<crate::skills::Skills>,
    /// The checkpoint backend, when runs are durable.
    pub(crate) durable: Option<DurableOptions>,
    pub(crate) decisions: Decisions,
    /// Decisions asked in the current loop turn: the run, the turn, and how
    /// many times each question was asked in it, so each gets a step key
    /// of its own that does not depend on the order of the others.
    pub(crate) decision_count: Mutex<crate::decide::AskedInTurn>,
    pub(crate) name: Option<String>,
    /// How `spawn` calls run.
    pub(crate) spawn: crate::subagents::SpawnConfig,
    /// The host's spawner, instead of children in this process.
    pub(crate) spawner: Option<Arc<dyn zidane_core::seams::Spawner>>,
    /// Where the agent sits in its tree, and the tree's slot pool.
    pub(crate) lineage: subagents::Lineage,
    /// What the extensions transform at each run.
    pub(crate) transforms: crate::extensions::Transforms,
    /// The tool-call interceptors and the approver (a child gets them too).
    pub(crate) interceptors: Vec<Arc<dyn crate::approvals::ToolCallInterceptor>>,
    pub(crate) approver: Option<Arc<dyn crate::approvals::ToolCallApprover>>,
    /// Background tasks: their events, notifications and watchdog.
    pub(crate) background: crate::background::Background,
    /// Sub-agents running now, by child id (`cancel_tool` reaches their
    /// calls too).
    pub(crate) live_children: Mutex<Vec<(String, Agent)>>,
    pub(crate) mcp: Mcp,
    pub(crate) _hooks_scope: HookScope,
    /// Folder checkpoints, when kept.
    pub(crate) checkpoints: Option<Arc<crate::checkpoints::Checkpoints>>,
    /// The language servers (shared with sub-agents).
    pub(crate) lsp: Option<zidane_lsp::Lsp>,
    pub(crate) _checkpoint_scope: Option<HookScope>,
    /// The goal runs work toward, and what it has spent.
    pub(crate) goal: Mutex<Option<crate::goal::GoalProgress>>,
}

/// An agent: a provider, tools, hooks and an optional session behind one
/// [`Agent::run`]. Cheap to clone; clones are the same agent.
#[derive(Clone)]
pub struct Agent {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("name", &self.inner.name)
            .field("running", &self.is_running())
            .finish_non_exhaustive()
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The last clone of the agent is gone: so is its hold on the session.
        if let (Some(d), Some(id)) = (&self.durable, self.session.id()) {
            d.runtime.release(&id);
        }
    }
}

impl Inner {
    /// The auto-compaction threshold, when auto-compaction is on.
    pub(crate) fn compaction_threshold(&self) -> Option<f64> {
        self.compaction.threshold()
    }

    /// The bound session's id, once loaded.
    pub(crate) fn session_id(&self) -> Option<String> {
        self.session.id()
    }
}

impl Agent {
    /// The id of the session the agent runs in: the one given
    /// (`AgentOptions::session` or `session_id`), or the one it minted
    /// because it has a store (or a durable runtime) and was given none.
    /// `None` for an agent that keeps its turns in memory only.
    pub fn session_id(&self) -> Option<String> {
        self.inner.session.id_or_pending()
    }

    /// Whether `destroy` ran (and no run resurrected the agent since).
    pub fn is_destroyed(&self) -> bool {
        self.inner.control.is_destroyed()
    }

    /// The hook bus.
    pub fn hooks(&self) -> &HookBus {
        &self.inner.hooks
    }

    /// The run loop underneath (the conversation, `last_request`, ...).
    pub fn run_loop(&self) -> &RunLoop {
        &self.inner.looped
    }

    /// A read-only copy of the primary provider's metadata.
    pub fn meta(&self) -> ProviderMeta {
        self.inner
            .providers
            .first()
            .map(|p| p.meta().clone())
            .unwrap_or_default()
    }

    /// The execution context.
    pub fn execution(&self) -> &Arc<dyn ExecutionContext> {
        self.inner.exec.context()
    }

    /// The live execution handle, once bound.
    pub async fn handle(&self) -> Option<ExecutionHandle> {
        self.inner.exec.current().await
    }

    /// Whether a run (or a compaction) is in progress.
    pub fn is_running(&self) -> bool {
        self.inner.control.is_running()
    }

    /// The conversation.
    pub fn turns(&self) -> Vec<SessionTurn> {
        self.inner.looped.turns()
    }

    /// The text of the conversation's newest assistant turn (the last
    /// answer, from this run or one before it); `None` before the model's
    /// first answer.
    pub fn last_text(&self) -> Option<String> {
        self.inner.looped.last_text()
    }

    /// The bound session (its turns are the agent's), once loaded.
    pub fn session(&self) -> Option<Session> {
        let state = self.inner.session.state().clone()?;
        Some(state.with_turns(self.turns(), self.inner.clock.now()))
    }

    /// The artifacts the session kept from tool results (files the basic
    /// preset wrote or edited, what other tools declared), in the order
    /// they were first kept; empty without a session or a store that keeps
    /// them.
    pub async fn artifacts(&self) -> Result<Vec<events::SessionArtifact>, AgentError> {
        self.load_session().await?;
        let (Some(store), Some(id)) = (self.inner.session.store(), self.inner.session_id()) else {
            return Ok(Vec::new());
        };
        store.artifacts(&id).await.map_err(AgentError::Store)
    }

    /// The committed durable tool state (read-only).
    pub fn tool_state(&self) -> BTreeMap<String, Value> {
        self.inner.looped.committed_tool_state()
    }

    /// Holds the agent for one run or compaction.
    pub(crate) fn claim(&self) -> Result<BusyGuard<'_>, AgentError> {
        self.inner.control.claim()
    }

    /// A run that an abort or a suspend stopped before it started.
    pub(crate) fn not_started(&self) -> AgentStats {
        let mut stats = AgentStats::default();
        stats.status = RunStatus::Aborted;
        if self.inner.control.suspend_requested() {
            stats.status = RunStatus::Suspended;
            stats.suspended = true;
        }
        stats
    }

    /// Whether runs record steps (a checkpoint backend).
    pub(crate) fn is_durable(&self) -> bool {
        self.inner.durable.is_some()
    }

    pub(crate) async fn observe<E: zidane_hooks::HookEvent>(&self, event: &mut E) {
        self.inner.hooks.observe(event).await;
    }
}

/// The hook names of the vocabulary, for hosts that list them.
pub fn hook_names() -> impl Iterator<Item = &'static str> {
    events::CATALOGUE.iter().map(|h| h.name)
}
