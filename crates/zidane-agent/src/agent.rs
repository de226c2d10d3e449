//! `create_agent` and the `Agent`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use zidane_core::events::{
    self, AgentStats, ExecutionHandle, ExecutionReady, HOOK_SPECS, RunStatus, SessionEnd, SessionEndStatus,
    SessionStart,
};

use zidane_hooks::{HookBus, HookScope};
use zidane_loop::{Clock, LoopConfig, RunLoop, RunOptions, SystemClock};
use zidane_provider::{AbortController, CacheTtl, ContentBlock, Provider, ProviderMeta, SessionTurn};

use zidane_core::execution::{ExecutionContext, Workspace};
#[cfg(feature = "mcp")]
use zidane_mcp::DefaultConnector;
use zidane_tools::ProcessContext;

use crate::binding::SessionSink;
pub(crate) use crate::cache::estimate_tokens;
use crate::compact::{CompactOptions, Compaction, CompactionResult};
use crate::decide::Decisions;
use crate::error::AgentError;
#[cfg(feature = "mcp")]
use crate::mcp::Mcp;
use crate::options::{AgentOptions, AgentRunOptions, Prompt, QueuedMessageOptions, queued};
use crate::session::{Session, SessionRun, SessionRunStatus, SessionStore};
use zidane_core::events::{ExecutionReadyInit, SessionEndInit, SessionStartInit};

pub(crate) struct Inner {
    pub(crate) looped: RunLoop,
    pub(crate) hooks: HookBus,
    pub(crate) providers: Vec<Arc<dyn Provider>>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) store: Option<Arc<dyn SessionStore>>,
    pub(crate) session: Arc<Mutex<Option<SessionState>>>,
    pub(crate) pending_session_id: Mutex<Option<String>>,
    pub(crate) session_to_check: Mutex<Option<String>>,
    pub(crate) execution: Arc<dyn ExecutionContext>,
    pub(crate) handle: tokio::sync::Mutex<Option<ExecutionHandle>>,
    pub(crate) handle_injected: bool,
    pub(crate) execution_ready: AtomicBool,
    pub(crate) destroyed: AtomicBool,
    pub(crate) busy: AtomicBool,
    pub(crate) idle: tokio::sync::watch::Sender<bool>,
    pub(crate) cache_ttl: Option<CacheTtl>,
    pub(crate) max_tokens: Option<u32>,
    pub(crate) compaction: Arc<Compaction>,
    /// Aborts a manual compaction in progress.
    pub(crate) compact_abort: Mutex<Option<AbortController>>,
    /// Aborts a run that is still starting (loading the session, spawning
    /// the execution handle, connecting MCP servers) and, once it runs, the
    /// run itself.
    pub(crate) run_abort: Mutex<Option<AbortController>>,
    pub(crate) decisions: Decisions,
    pub(crate) name: Option<String>,
    #[cfg(feature = "mcp")]
    pub(crate) mcp: Mcp,
    pub(crate) _hooks_scope: Mutex<Option<HookScope>>,
}

/// The session an agent is bound to: its id, metadata and runs (the turns
/// live in the loop).
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionState {
    pub(crate) id: String,
    pub(crate) metadata: BTreeMap<String, Value>,
    pub(crate) runs: Vec<SessionRun>,
    pub(crate) created_at: u64,
    /// Turns the session holds (what `session:turns` reports as `count`).
    pub(crate) turn_count: usize,
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

/// Creates an agent. Synchronous: the session loads on the first run,
/// compaction or warm-up, and the execution handle is spawned then (or now,
/// with `eager`, when a runtime is available).
///
/// Fails on an empty provider list, blank or duplicate provider names,
/// unknown hook names, `session` together with `session_id`, and a
/// `session_id` without a store.
pub fn create_agent(options: AgentOptions) -> Result<Agent, AgentError> {
    let AgentOptions {
        provider,
        name,
        system,
        model,
        max_tokens,
        tools,
        hooks,
        behavior,
        auto_compact,
        cache_ttl,
        clock,
        session,
        session_id,
        store,
        tool_state,
        read_state,
        tool_kill_message,
        decisions,
        eager,
        execution,
        handle,
        pricing,
        #[cfg(feature = "mcp")]
        mcp_servers,
        #[cfg(feature = "mcp")]
        mcp_connector,
        #[cfg(feature = "mcp")]
        mcp_tool_wrap,
    } = options;
    let Some(primary) = provider.first() else {
        return Err(AgentError::NoProvider);
    };
    if provider.len() > 1 {
        let mut names = BTreeSet::new();
        for (index, p) in provider.iter().enumerate() {
            if p.name().trim().is_empty() {
                return Err(AgentError::BlankProviderName { index });
            }
            if !names.insert(p.name().to_owned()) {
                return Err(AgentError::DuplicateProviderName {
                    name: p.name().to_owned(),
                });
            }
        }
    }
    hooks.validate(HOOK_SPECS)?;
    if session.is_some() && session_id.is_some() {
        return Err(AgentError::SessionAndSessionId);
    }
    if session_id.is_some() && store.is_none() {
        return Err(AgentError::SessionIdWithoutStore);
    }
    if session.is_some() && store.is_none() {
        return Err(AgentError::SessionWithoutStore);
    }

    let bus = HookBus::new();
    let scope = hooks.install(&bus, HOOK_SPECS)?;
    let clock: Arc<dyn Clock> = clock.unwrap_or_else(|| Arc::new(SystemClock::default()));
    let session_key = session.as_ref().map(|s| s.id.clone()).or_else(|| session_id.clone());
    let tool_state = tool_state.or_else(|| {
        store
            .as_ref()
            .zip(session_key.as_ref())
            .map(|(store, id)| store.tool_state(id))
    });
    let shared_session: Arc<Mutex<Option<SessionState>>> = Arc::default();
    let compaction = Arc::new(Compaction::new(auto_compact, Arc::clone(primary)));

    let mut config = LoopConfig::new(Arc::clone(primary));
    config.providers = provider.clone();
    config.model = model;
    config.system = system;
    config.tools = tools;
    config.hooks = bus.clone();
    config.behavior = behavior;
    config.clock = Arc::clone(&clock);
    config.pricing = pricing.unwrap_or_default();
    config.agent_name = name.clone();
    if let Some(store) = tool_state {
        config.tool_state = store;
    }
    if let Some(read_state) = read_state {
        config.read_state = read_state;
    }
    if let Some(message) = tool_kill_message {
        config.cancel_reason = message;
    }
    config.sink = Some(Arc::new(SessionSink {
        store: store.clone(),
        session: Arc::clone(&shared_session),
        hooks: bus.clone(),
        clock: Arc::clone(&clock),
    }));
    config.compactor = Some(Arc::clone(&compaction) as Arc<dyn zidane_core::seams::Compactor>);
    let looped = RunLoop::new(config);

    // A given session is checked against the store on the first run: one
    // the store lacks is created there with its turns, so nothing is lost.
    let session_to_check = session.as_ref().map(|s| s.id.clone());
    if let Some(session) = session {
        looped.set_turns(session.turns.clone());
        *lock(&shared_session) = Some(SessionState {
            id: session.id,
            metadata: session.metadata,
            runs: session.runs,
            created_at: session.created_at,
            turn_count: session.turns.len(),
        });
    }
    let (idle, _) = tokio::sync::watch::channel(true);
    let agent = Agent {
        inner: Arc::new(Inner {
            looped,
            hooks: bus,
            providers: provider,
            clock,
            store,
            session: shared_session,
            pending_session_id: Mutex::new(session_id),
            session_to_check: Mutex::new(session_to_check),
            execution: execution.unwrap_or_else(|| Arc::new(ProcessContext::current_dir())),
            handle_injected: handle.is_some(),
            handle: tokio::sync::Mutex::new(handle),
            execution_ready: AtomicBool::new(false),
            destroyed: AtomicBool::new(false),
            busy: AtomicBool::new(false),
            idle,
            cache_ttl,
            max_tokens,
            compaction,
            compact_abort: Mutex::new(None),
            run_abort: Mutex::new(None),
            decisions,
            name,
            #[cfg(feature = "mcp")]
            mcp: Mcp {
                servers: mcp_servers,
                connector: mcp_connector.unwrap_or_else(|| Arc::new(DefaultConnector)),
                tool_wrap: mcp_tool_wrap,
                connection: tokio::sync::Mutex::new(None),
            },
            _hooks_scope: Mutex::new(Some(scope)),
        }),
    };
    agent.inner.compaction.bind(&agent);
    #[cfg(feature = "mcp")]
    if eager && !agent.inner.mcp.servers.is_empty() {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return Err(AgentError::EagerWithoutRuntime);
        };
        let warm = agent.clone();
        rt.spawn(async move {
            // Failures are on the bus; the next run or warm-up retries.
            let _ = warm.ensure_mcp().await;
        });
    }
    #[cfg(not(feature = "mcp"))]
    let _ = eager;
    Ok(agent)
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Empties an abort slot when the work it guards ends.
struct ClearOnDrop<'a>(&'a Mutex<Option<AbortController>>);

impl Drop for ClearOnDrop<'_> {
    fn drop(&mut self) {
        *lock(self.0) = None;
    }
}

/// Releases the busy flag (and wakes `wait_for_idle`) however a run ends.
struct BusyGuard<'a>(&'a Inner);

impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        self.0.busy.store(false, Ordering::Release);
        self.0.idle.send_replace(true);
    }
}

impl Inner {
    /// The auto-compaction threshold, when auto-compaction is on.
    pub(crate) fn compaction_threshold(&self) -> Option<f64> {
        self.compaction.threshold()
    }
}

impl Agent {
    /// Whether `destroy` ran (and no run resurrected the agent since).
    pub fn is_destroyed(&self) -> bool {
        self.inner.destroyed.load(Ordering::Acquire)
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
        &self.inner.execution
    }

    /// The live execution handle, once bound.
    pub async fn handle(&self) -> Option<ExecutionHandle> {
        self.inner.handle.lock().await.clone()
    }

    /// Whether a run (or a compaction) is in progress.
    pub fn is_running(&self) -> bool {
        self.inner.busy.load(Ordering::Acquire)
    }

    /// The conversation.
    pub fn turns(&self) -> Vec<SessionTurn> {
        self.inner.looped.turns()
    }

    /// The bound session (its turns are the agent's), once loaded.
    pub fn session(&self) -> Option<Session> {
        let state = lock(&self.inner.session).clone()?;
        Some(Session {
            id: state.id,
            turns: self.turns(),
            metadata: state.metadata,
            runs: state.runs,
            created_at: state.created_at,
            updated_at: self.inner.clock.now_ms(),
        })
    }

    /// The committed durable tool state (read-only).
    pub fn tool_state(&self) -> BTreeMap<String, Value> {
        self.inner.looped.committed_tool_state()
    }

    fn claim(&self) -> Result<BusyGuard<'_>, AgentError> {
        if self.inner.busy.swap(true, Ordering::AcqRel) {
            return Err(AgentError::Busy);
        }
        self.inner.idle.send_replace(false);
        Ok(BusyGuard(&self.inner))
    }

    /// Runs a prompt to the end. Refused while another run is active.
    ///
    /// A run that the model finished, that stopped at the turn cap
    /// (`max_turns`), or that was aborted (before or after it started)
    /// returns `Ok` with its statistics: check [`AgentStats::completed`] or
    /// `stats.status` ([`RunStatus::MaxTurns`], [`RunStatus::Aborted`]) to
    /// tell them apart. A failure (the provider after retries, a cost or
    /// token cap, a failing decision hook) is an `Err` that carries the
    /// statistics too ([`AgentError::stats`]).
    pub async fn run(&self, options: AgentRunOptions) -> Result<AgentStats, AgentError> {
        let _busy = self.claim()?;
        let controller = AbortController::new();
        *lock(&self.inner.run_abort) = Some(controller.clone());
        let _clear = ClearOnDrop(&self.inner.run_abort);
        let signal = controller.signal();
        let not_started = || {
            let mut stats = AgentStats::default();
            stats.status = RunStatus::Aborted;
            stats
        };
        self.inner.destroyed.store(false, Ordering::Release);
        self.load_session().await?;
        if signal.is_aborted() {
            return Ok(not_started());
        }
        let handle = self.ensure_execution().await?;
        if signal.is_aborted() {
            return Ok(not_started());
        }
        let workspace = Workspace {
            execution: Arc::clone(&self.inner.execution),
            handle,
        };
        // A server that fails is on the bus and left out of this run; the
        // next run or warm-up tries it again.
        #[cfg(feature = "mcp")]
        let (mcp, _) = self.ensure_mcp().await;
        // An abort while the run was starting: it does not start.
        if signal.is_aborted() {
            return Ok(not_started());
        }
        let run_id = self.inner.clock.id();
        let first_turn = self.inner.looped.turn_count() as u32;
        let session_id = lock(&self.inner.session).as_ref().map(|s| s.id.clone());
        if let Some(id) = &session_id {
            let mut ev = SessionStart::new(SessionStartInit {
                session_id: id.clone(),
                prompt: options.prompt.clone(),
                run_id: run_id.clone(),
            });
            self.observe(&mut ev).await;
            let run = SessionRun {
                id: run_id.clone(),
                status: SessionRunStatus::Running,
                started_at: self.inner.clock.now_ms(),
                ended_at: None,
                first_turn,
                end_turn: first_turn,
                prompt: options.prompt.clone(),
            };
            self.save_run(id, run).await;
        }
        let mut prompt = Vec::new();
        if !options.prompt.trim().is_empty() {
            prompt.push(ContentBlock::text(options.prompt.clone()));
        }
        prompt.extend(options.parts);
        #[allow(unused_mut)]
        let mut system = options.system;
        #[allow(unused_mut)]
        let mut extra_tools = Vec::new();
        #[cfg(feature = "mcp")]
        if let Some(connection) = &mcp {
            extra_tools = connection.tools();
            if let Some(instructions) = connection.instructions() {
                let base = system
                    .clone()
                    .or_else(|| self.inner.looped.config().system.clone())
                    .unwrap_or_default();
                system = Some(format!("{base}\n\n# MCP servers\n\n{instructions}"));
            }
        }
        let run_options = RunOptions {
            prompt,
            system,
            extra_tools,
            system_notes: options.system_notes,
            model: options.model,
            thinking: options.thinking,
            max_tokens: options.max_tokens.or(self.inner.max_tokens),
            cache_ttl: self.inner.cache_ttl,
            behavior: options.behavior,
            hooks: options.hooks,
            response_schema: options.response_schema,
            run_id: Some(run_id.clone()),
            workspace: Some(workspace),
            signal: Some(signal),
            session_id: session_id.clone(),
            ..Default::default()
        };
        let outcome = self.inner.looped.run(run_options).await;
        let end_turn = self.inner.looped.turn_count() as u32;
        if let Some(id) = &session_id {
            let status = match &outcome {
                Ok(stats) => stats.status,
                Err(e) => e.stats.status,
            };
            let (run_status, end_status) = match status {
                RunStatus::Completed | RunStatus::MaxTurns => {
                    (SessionRunStatus::Completed, SessionEndStatus::Completed)
                }
                RunStatus::Aborted => (SessionRunStatus::Aborted, SessionEndStatus::Aborted),
                RunStatus::Error => (SessionRunStatus::Error, SessionEndStatus::Error),
                RunStatus::Suspended => (SessionRunStatus::Suspended, SessionEndStatus::Suspended),
            };
            let started_at = lock(&self.inner.session)
                .as_ref()
                .and_then(|s| s.runs.iter().find(|r| r.id == run_id).map(|r| r.started_at))
                .unwrap_or_default();
            let run = SessionRun {
                id: run_id.clone(),
                status: run_status,
                started_at,
                ended_at: Some(self.inner.clock.now_ms()),
                first_turn,
                end_turn,
                prompt: options.prompt,
            };
            self.save_run(id, run).await;
            let mut ev = SessionEnd::new(SessionEndInit {
                session_id: id.clone(),
                run_id,
                status: end_status,
                turn_range: (first_turn, end_turn),
            });
            self.observe(&mut ev).await;
        }
        Ok(outcome?)
    }

    pub(crate) async fn observe<E: zidane_hooks::HookEvent>(&self, event: &mut E) {
        if let Err(e) = self.inner.hooks.emit(event).await {
            tracing::warn!(target: "zidane", "{} handler failed: {e}", E::NAME);
        }
    }

    /// Aborts the current run or manual compaction (no-op when idle).
    pub fn abort(&self) {
        self.abort_reason(None);
    }

    /// Aborts the current run with a reason (in `agent:abort`).
    pub fn abort_with(&self, reason: &str) {
        self.abort_reason(Some(reason));
    }

    fn abort_reason(&self, reason: Option<&str>) {
        self.inner.looped.abort(reason);
        if let Some(controller) = lock(&self.inner.compact_abort).as_ref() {
            controller.abort(reason);
        }
        if let Some(controller) = lock(&self.inner.run_abort).as_ref() {
            controller.abort(reason);
        }
    }

    /// Queues a mid-run message for the next turn boundary; `false` (and
    /// nothing queued) when no run is in flight, the run is aborted, or the
    /// prompt is empty. `prompt` is text or parts, as for a run; the
    /// options' `system_notes` follow it as text blocks and its `id` comes
    /// back in `steer:inject`.
    #[must_use = "`false` means nothing was queued"]
    pub fn steer(&self, prompt: impl Into<Prompt>, options: QueuedMessageOptions) -> bool {
        let (content, id) = queued(prompt.into(), options);
        self.inner.looped.steer(content, id)
    }

    /// Queues a message for when the model would otherwise finish; same
    /// contract as [`Agent::steer`].
    #[must_use = "`false` means nothing was queued"]
    pub fn follow_up(&self, prompt: impl Into<Prompt>, options: QueuedMessageOptions) -> bool {
        let (content, id) = queued(prompt.into(), options);
        self.inner.looped.follow_up(content, id)
    }

    /// Cancels one in-flight tool call (see [`RunLoop::cancel_tool`]).
    #[must_use = "`false` means no such call was in flight"]
    pub fn cancel_tool(&self, call_id: &str, reason: Option<&str>) -> bool {
        self.inner.looped.cancel_tool(call_id, reason)
    }

    /// Resolves when no run is in progress.
    pub async fn wait_for_idle(&self) {
        let mut rx = self.inner.idle.subscribe();
        let _ = rx.wait_for(|idle| *idle).await;
    }

    /// Clears the conversation; refused while a run is in progress.
    pub fn reset(&self) -> Result<(), AgentError> {
        let _busy = self.claim()?;
        self.inner.looped.reset();
        Ok(())
    }

    /// Binds the execution handle (spawning it if needed); `execution:ready`
    /// fires the first time. Concurrent callers share one spawn.
    pub async fn ensure_execution(&self) -> Result<ExecutionHandle, AgentError> {
        let mut slot = self.inner.handle.lock().await;
        let (handle, spawned) = match slot.as_ref() {
            Some(h) => (h.clone(), !self.inner.handle_injected),
            None => {
                let h = self.inner.execution.spawn().await.map_err(AgentError::Execution)?;
                *slot = Some(h.clone());
                (h, true)
            }
        };
        drop(slot);
        if !self.inner.execution_ready.swap(true, Ordering::AcqRel) {
            let mut ev = ExecutionReady::new(ExecutionReadyInit {
                handle: handle.clone(),
                spawned,
            });
            self.observe(&mut ev).await;
        }
        Ok(handle)
    }

    /// Loads the session, binds the execution handle and connects the MCP
    /// servers without running a turn. Idempotent and safe to call
    /// concurrently (callers share one bootstrap). Servers that failed an
    /// earlier bootstrap are tried again; when any server still fails, the
    /// others stay connected and this reports [`AgentError::McpBootstrap`].
    pub async fn warmup(&self) -> Result<(), AgentError> {
        self.load_session().await?;
        self.ensure_execution().await?;
        #[cfg(feature = "mcp")]
        {
            let (_, failures) = self.ensure_mcp().await;
            if !failures.is_empty() {
                return Err(AgentError::McpBootstrap { failures });
            }
        }
        Ok(())
    }

    /// Aborts any run and releases the execution handle (unless the host
    /// injected it). Idempotent.
    pub async fn destroy(&self) {
        if self.inner.destroyed.swap(true, Ordering::AcqRel) {
            return;
        }
        self.inner.looped.abort(Some("destroyed"));
        #[cfg(feature = "mcp")]
        {
            let connection = self.inner.mcp.connection.lock().await.take();
            if let Some(connection) = connection {
                connection.close().await;
            }
        }
        let handle = self.inner.handle.lock().await.take();
        if let Some(handle) = handle {
            if self.inner.handle_injected {
                *self.inner.handle.lock().await = Some(handle);
            } else {
                self.inner.execution.destroy(&handle).await;
            }
        }
    }

    /// Summarizes the older turns now (`compact:*` hooks, `reason: manual`),
    /// keeping the last `options.keep_turns` turns. Refused while a run is
    /// active; [`Agent::abort`] stops it (it then resolves with
    /// `compacted: false`).
    pub async fn compact(&self, options: CompactOptions) -> Result<CompactionResult, AgentError> {
        let _busy = self.claim()?;
        self.load_session().await?;
        let compaction = Arc::clone(&self.inner.compaction);
        compaction.manual(self, options).await
    }
}

/// The hook names of the vocabulary, for hosts that list them.
pub fn hook_names() -> impl Iterator<Item = &'static str> {
    events::CATALOGUE.iter().map(|h| h.name)
}
