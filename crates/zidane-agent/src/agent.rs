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
use crate::options::{AgentOptions, AgentRunOptions, Prompt, QueuedMessageOptions, SuspendOptions, queued};
use crate::session::{Session, SessionRun, SessionRunOptions, SessionRunStatus, SessionStore};

/// A recorded run a resume continues.
pub(crate) struct Resumed {
    pub(crate) run: SessionRun,
}
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
    /// `suspend` was called for the current run.
    pub(crate) suspend_requested: AtomicBool,
    /// The skills (resolved on the first run or warm-up).
    pub(crate) skills: Arc<crate::skills::Skills>,
    /// The checkpoint runtime, when runs are durable.
    #[cfg(feature = "sqlite")]
    pub(crate) durable: Option<crate::durable::DurableOptions>,
    pub(crate) decisions: Decisions,
    pub(crate) name: Option<String>,
    /// How `spawn` calls run.
    pub(crate) spawn: crate::subagents::SpawnConfig,
    /// Where the agent sits in its tree, and the tree's slot pool.
    pub(crate) lineage: crate::subagents::Lineage,
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
    #[cfg(feature = "mcp")]
    pub(crate) mcp: Mcp,
    pub(crate) _hooks_scope: Mutex<Option<HookScope>>,
    /// Folder checkpoints, when kept.
    pub(crate) checkpoints: Option<Arc<crate::checkpoints::Checkpoints>>,
    pub(crate) _checkpoint_scope: Option<HookScope>,
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
    let lineage = crate::subagents::Lineage::root(&options.spawn);
    build(options, lineage, None, BTreeMap::new())
}

/// A sub-agent: an agent at `lineage`'s depth, reporting `parent_run_id`
/// and the tracing carrier in its `agent:start`.
pub(crate) fn create_child(
    options: AgentOptions,
    lineage: crate::subagents::Lineage,
    parent_run_id: Option<String>,
    tracing_context: BTreeMap<String, String>,
) -> Result<Agent, AgentError> {
    build(options, lineage, parent_run_id, tracing_context)
}

fn build(
    options: AgentOptions,
    lineage: crate::subagents::Lineage,
    parent_run_id: Option<String>,
    tracing_context: BTreeMap<String, String>,
) -> Result<Agent, AgentError> {
    let (options, transforms) = crate::extensions::fold(options);
    let AgentOptions {
        provider,
        name,
        system,
        model,
        max_tokens,
        tools,
        tool_aliases,
        tool_descriptions,
        hooks,
        behavior,
        auto_compact,
        cache_ttl,
        clock,
        session,
        session_id,
        store,
        tool_state,
        #[cfg(feature = "sqlite")]
        durable,
        replay_runtime,
        skills,
        read_state,
        tool_kill_message,
        decisions,
        eager,
        execution,
        handle,
        pricing,
        spawn,
        interceptors,
        approve_tool_call,
        extensions: _,
        artifacts,
        #[cfg(feature = "mcp")]
        mcp_servers,
        #[cfg(feature = "mcp")]
        mcp_connector,
        #[cfg(feature = "mcp")]
        mcp_tool_wrap,
        #[cfg(feature = "mcp")]
        mcp_oauth_store,
        #[cfg(feature = "mcp")]
        mcp_elicitation,
        checkpoints,
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
    spawn.hooks.validate(HOOK_SPECS)?;
    #[cfg(feature = "sqlite")]
    if durable.is_some() && replay_runtime.is_some() {
        return Err(AgentError::TwoRuntimes);
    }
    // A durable agent's sessions live in its runtime's store.
    #[cfg(feature = "sqlite")]
    let store = match &durable {
        Some(d) => match store {
            Some(s) if !d.runtime.owns(&*s) => return Err(AgentError::DurableStoreMismatch),
            Some(s) => Some(s),
            None => Some(d.runtime.session_store()),
        },
        None => store,
    };
    let explicit_tool_state = tool_state.is_some();
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
    // Before each tool batch that may change the folder; on a replay-mode
    // runtime each snapshot is a journaled step.
    let checkpoint_scope = checkpoints.as_ref().map(|c| c.install(&bus));
    if let (Some(checkpoints), Some(runtime)) = (&checkpoints, &replay_runtime) {
        checkpoints.journal_steps(Arc::clone(runtime));
    }
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

    let skills = crate::skills::Skills::new(skills);
    let mut config = LoopConfig::new(Arc::clone(primary));
    config.providers = provider.clone();
    config.model = model;
    config.system = system;
    config.tools = tools;
    if skills.enabled() {
        config
            .tools
            .insert(Arc::new(crate::skills::skill_tool(Arc::clone(&skills), bus.clone())));
    }
    config.hooks = bus.clone();
    config.behavior = behavior;
    config.clock = Arc::clone(&clock);
    config.pricing = pricing.unwrap_or_default();
    config.agent_name = name.clone();
    config.depth = lineage.depth;
    config.artifacts = artifacts.unwrap_or(true);
    config.parent_run_id = parent_run_id;
    config.tracing_context = tracing_context;
    // The named sub-agents are listed in the spawn tool's description (a
    // child inherits the listing with its parent's tools).
    if lineage.depth == 0
        && config.tools.get("spawn").is_some()
        && let Some(listing) = spawn.listing()
    {
        config.tools.append_description("spawn", &listing);
    }
    for (canonical, alias) in tool_aliases {
        config.tools = std::mem::take(&mut config.tools).alias(canonical, alias);
    }
    for (canonical, description) in tool_descriptions {
        config.tools = std::mem::take(&mut config.tools).describe(canonical, description);
    }
    if let Some(store) = tool_state {
        config.tool_state = store;
    }
    #[cfg(feature = "sqlite")]
    if let Some(d) = &durable {
        config.runtime = Arc::clone(&d.runtime) as Arc<dyn zidane_core::seams::DurableRuntime>;
        // The runtime commits a call's state with its step record.
        config.tool_state_in_steps = !explicit_tool_state && session_key.is_some();
    }
    #[cfg(not(feature = "sqlite"))]
    let _ = explicit_tool_state;
    if let Some(runtime) = replay_runtime {
        config.runtime = runtime;
        // A replayed call's writes come back with its step value.
        config.tool_state_in_steps = true;
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
        #[cfg(feature = "sqlite")]
        durable: durable.as_ref().map(|d| Arc::clone(&d.runtime)),
    }));
    config.compactor = Some(Arc::clone(&compaction) as Arc<dyn zidane_core::seams::Compactor>);
    let policy = (!interceptors.is_empty()).then(|| {
        Arc::new(crate::approvals::Policy {
            interceptors: interceptors.clone(),
            approver: approve_tool_call.clone(),
            approvals: Arc::clone(&lineage.approvals),
            agent: std::sync::OnceLock::new(),
        })
    });
    config.policy = policy.clone().map(|p| p as Arc<dyn zidane_core::seams::ToolCallPolicy>);
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
            suspend_requested: AtomicBool::new(false),
            skills,
            #[cfg(feature = "sqlite")]
            durable,
            decisions,
            name,
            spawn,
            lineage,
            live_children: Mutex::new(Vec::new()),
            interceptors,
            approver: approve_tool_call,
            transforms,
            background: crate::background::Background::new(),
            #[cfg(feature = "mcp")]
            mcp: Mcp {
                servers: {
                    let store =
                        mcp_oauth_store.unwrap_or_else(|| Arc::new(zidane_mcp::oauth::MemoryOAuthStore::default()));
                    let mut servers = mcp_servers;
                    for server in &mut servers {
                        server.oauth_store.get_or_insert_with(|| Arc::clone(&store));
                        if server.elicitation.is_none() {
                            server.elicitation.clone_from(&mcp_elicitation);
                        }
                    }
                    servers
                },
                connector: mcp_connector.unwrap_or_else(|| Arc::new(DefaultConnector)),
                tool_wrap: mcp_tool_wrap,
                connection: tokio::sync::Mutex::new(None),
            },
            _hooks_scope: Mutex::new(Some(scope)),
            checkpoints,
            _checkpoint_scope: checkpoint_scope,
        }),
    };
    agent.inner.compaction.bind(&agent);
    // Handlers reach the agent's decisions through their context.
    agent.inner.hooks.provide(Arc::new(crate::decide::HookDecider {
        agent: Arc::downgrade(&agent.inner),
    }));
    if let Some(policy) = &policy {
        let _ = policy.agent.set(Arc::downgrade(&agent.inner));
    }
    if agent.inner.lineage.depth == 0 {
        agent.inner.lineage.approvals.bind_root(&agent.inner);
    }
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
    if eager && agent.inner.skills.enabled() {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return Err(AgentError::EagerWithoutRuntime);
        };
        let warm = agent.clone();
        rt.spawn(async move {
            warm.inner.skills.resolve(&warm.inner.hooks).await;
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
pub(crate) struct BusyGuard<'a>(&'a Inner);

impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        self.0.busy.store(false, Ordering::Release);
        self.0.idle.send_replace(true);
    }
}

#[cfg(feature = "sqlite")]
impl Drop for Inner {
    fn drop(&mut self) {
        // The last clone of the agent is gone: so is its hold on the session.
        if let (Some(d), Some(id)) = (&self.durable, lock(&self.session).as_ref().map(|s| s.id.clone())) {
            d.runtime.release(&id);
        }
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

    /// The artifacts the session kept from tool results (files the basic
    /// preset wrote or edited, what other tools declared), in the order
    /// they were first kept; empty without a session or a store that keeps
    /// them.
    pub async fn artifacts(&self) -> Result<Vec<zidane_core::events::SessionArtifact>, AgentError> {
        self.load_session().await?;
        let (Some(store), Some(id)) = (
            &self.inner.store,
            lock(&self.inner.session).as_ref().map(|s| s.id.clone()),
        ) else {
            return Ok(Vec::new());
        };
        store.artifacts(&id).await.map_err(AgentError::Store)
    }

    /// The committed durable tool state (read-only).
    pub fn tool_state(&self) -> BTreeMap<String, Value> {
        self.inner.looped.committed_tool_state()
    }

    pub(crate) fn claim(&self) -> Result<BusyGuard<'_>, AgentError> {
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
    pub async fn run(&self, mut options: AgentRunOptions) -> Result<AgentStats, AgentError> {
        let _busy = self.claim()?;
        for transform in &self.inner.transforms.run {
            transform(&mut options);
        }
        let Some(signal) = self.start_run().await? else {
            return Ok(self.not_started());
        };
        #[cfg(feature = "sqlite")]
        if let Some(durable) = self.inner.durable.clone() {
            match durable.on_interrupted {
                crate::durable::OnInterrupted::Resume => {
                    if let Some(stats) = self.resume_interrupted(None, &signal).await?
                        && matches!(stats.status, RunStatus::Aborted | RunStatus::Suspended)
                    {
                        return Ok(stats);
                    }
                }
                crate::durable::OnInterrupted::Heal => self.heal_interrupted().await?,
            }
            if signal.is_aborted() {
                return Ok(self.not_started());
            }
        }
        self.run_started(options, signal, None).await
    }

    /// A run that an abort or a suspend stopped before it started.
    pub(crate) fn not_started(&self) -> AgentStats {
        let mut stats = AgentStats::default();
        stats.status = RunStatus::Aborted;
        if self.inner.suspend_requested.load(Ordering::Acquire) {
            stats.status = RunStatus::Suspended;
            stats.suspended = true;
        }
        stats
    }

    /// Loads the session and takes its lease; `None` when an abort or a
    /// suspend came first (the run does not start).
    pub(crate) async fn start_run(&self) -> Result<Option<zidane_provider::AbortSignal>, AgentError> {
        let controller = AbortController::new();
        *lock(&self.inner.run_abort) = Some(controller.clone());
        self.inner.suspend_requested.store(false, Ordering::Release);
        let signal = controller.signal();
        self.inner.destroyed.store(false, Ordering::Release);
        self.load_session().await?;
        #[cfg(feature = "sqlite")]
        self.take_lease().await?;
        Ok((!signal.is_aborted()).then_some(signal))
    }

    /// Runs a prompt (or, with `resume`, continues a recorded run) once the
    /// session is loaded.
    pub(crate) async fn run_started(
        &self,
        options: AgentRunOptions,
        signal: zidane_provider::AbortSignal,
        resume: Option<Resumed>,
    ) -> Result<AgentStats, AgentError> {
        let _clear = ClearOnDrop(&self.inner.run_abort);
        let handle = self.ensure_execution().await?;
        if signal.is_aborted() {
            return Ok(self.not_started());
        }
        // A resumed run continues where it stopped; what happened in the
        // background meanwhile waits for the next run.
        let notifications = if resume.is_none() {
            self.take_task_notifications(&handle).await
        } else {
            Vec::new()
        };
        let workspace = Workspace {
            execution: Arc::clone(&self.inner.execution),
            handle,
            background: Some(self.inner.background.owner()),
        };
        // A server that fails is on the bus and left out of this run; the
        // next run or warm-up tries it again.
        // An abort (or a suspend) during the bootstrap stops it there: the
        // run does not wait out a slow server's bound.
        #[cfg(feature = "mcp")]
        let (mcp, _) = tokio::select! {
            biased;
            () = signal.aborted() => return Ok(self.not_started()),
            connected = self.ensure_mcp() => connected,
        };
        // An abort while the run was starting: it does not start.
        if signal.is_aborted() {
            return Ok(self.not_started());
        }
        let session_id = lock(&self.inner.session).as_ref().map(|s| s.id.clone());
        let durable = self.is_durable() && session_id.is_some();
        let (run_id, first_turn, started_at, label) = match &resume {
            Some(r) => (
                r.run.id.clone(),
                r.run.first_turn,
                r.run.started_at,
                r.run.prompt.clone(),
            ),
            None => (
                self.inner.clock.id(),
                self.inner.looped.turn_count() as u32,
                self.inner.clock.now_ms(),
                options.prompt.clone(),
            ),
        };
        let kept = resume
            .as_ref()
            .and_then(|r| r.run.options.clone())
            .unwrap_or_else(|| SessionRunOptions {
                max_turns: options.behavior.max_turns.flatten(),
                max_cost_usd: options.behavior.max_cost_usd.flatten(),
                max_total_tokens: options.behavior.max_total_tokens.flatten(),
                model: options
                    .model
                    .iter()
                    .map(|m| (m.provider.clone(), m.model.clone()))
                    .collect(),
                thinking: options.thinking,
                max_tokens: options.max_tokens,
                system: options.system.clone(),
            });
        let mut record = SessionRun {
            id: run_id.clone(),
            status: SessionRunStatus::Running,
            started_at,
            ended_at: None,
            first_turn,
            end_turn: first_turn,
            prompt: label.clone(),
            resumable: durable,
            options: durable.then(|| kept.clone()),
            loop_turn: resume.as_ref().map_or(0, |r| r.run.loop_turn),
            last_turn_id: resume.as_ref().and_then(|r| r.run.last_turn_id.clone()),
        };
        if let (Some(checkpoints), Some(id)) = (&self.inner.checkpoints, &session_id) {
            match &resume {
                None => checkpoints.begin(id, &run_id, first_turn, &label).await,
                Some(_) => checkpoints.resume(id, &run_id),
            }
        }
        if let Some(id) = &session_id {
            if resume.is_none() {
                let mut ev = SessionStart::new(SessionStartInit {
                    session_id: id.clone(),
                    prompt: options.prompt.clone(),
                    run_id: run_id.clone(),
                });
                self.observe(&mut ev).await;
            }
            self.save_run(id, record.clone()).await?;
            #[cfg(feature = "sqlite")]
            if let Some(d) = &self.inner.durable {
                d.runtime.bind_run(&run_id, id);
            }
        }
        // Background exits and stalls since the last run come first.
        let mut prompt = notifications;
        if resume.is_none() {
            if !options.prompt.trim().is_empty() {
                prompt.push(ContentBlock::text(options.prompt.clone()));
            }
            prompt.extend(options.parts);
        }
        // A resumed run keeps the options its record kept; what this call
        // sets wins.
        #[allow(unused_mut)]
        let (model, thinking, max_tokens, mut system, behavior) = if resume.is_some() {
            let mut behavior = options.behavior.clone();
            behavior.max_turns = behavior.max_turns.or(kept.max_turns.map(Some));
            behavior.max_cost_usd = behavior.max_cost_usd.or(kept.max_cost_usd.map(Some));
            behavior.max_total_tokens = behavior.max_total_tokens.or(kept.max_total_tokens.map(Some));
            let model = if options.model.is_empty() {
                kept.model
                    .iter()
                    .map(|(p, m)| zidane_loop::ModelRef {
                        provider: p.clone(),
                        model: m.clone(),
                    })
                    .collect()
            } else {
                options.model
            };
            let thinking = if options.thinking == zidane_provider::ThinkingLevel::Off {
                kept.thinking
            } else {
                options.thinking
            };
            (
                model,
                thinking,
                options.max_tokens.or(kept.max_tokens),
                options.system.or(kept.system),
                behavior,
            )
        } else {
            (
                options.model,
                options.thinking,
                options.max_tokens,
                options.system,
                options.behavior,
            )
        };
        #[allow(unused_mut)]
        let mut extra_tools = Vec::new();
        #[allow(unused_mut)]
        let mut mcp_instructions = None;
        #[cfg(feature = "mcp")]
        if let Some(connection) = &mcp {
            extra_tools = connection.tools();
            mcp_instructions = connection.instructions();
            if let Some(instructions) = connection.instructions() {
                let base = system
                    .clone()
                    .or_else(|| self.inner.looped.config().system.clone())
                    .unwrap_or_default();
                system = Some(format!("{base}\n\n# MCP servers\n\n{instructions}"));
            }
        }
        // The skills catalog goes in the dynamic half of the system prompt,
        // so the cached static half stays the same bytes.
        let mut system_notes = if resume.is_none() {
            options.system_notes
        } else {
            Vec::new()
        };
        if self.inner.skills.enabled() {
            self.inner.skills.resolve(&self.inner.hooks).await;
            if let Some((catalog, listed)) = self.inner.skills.catalog() {
                let base = system
                    .clone()
                    .or_else(|| self.inner.looped.config().system.clone())
                    .unwrap_or_default();
                system = Some(if base.contains(zidane_provider::SYSTEM_PROMPT_BOUNDARY) {
                    format!("{base}\n\n{catalog}")
                } else {
                    format!("{base}{}{catalog}", zidane_provider::SYSTEM_PROMPT_BOUNDARY)
                });
                self.inner.skills.announce(&self.inner.hooks, &catalog, listed).await;
            }
            system_notes.extend(self.inner.skills.take_notes());
        }
        // The extensions' behavior transforms see the behavior the run
        // would have, and their result is the run's whole behavior.
        let behavior = if self.inner.transforms.behavior.is_empty() {
            behavior
        } else {
            let mut effective = behavior.apply(&self.inner.looped.config().behavior);
            for transform in &self.inner.transforms.behavior {
                transform(&mut effective);
            }
            zidane_loop::BehaviorOverride::from(effective)
        };
        // And the tool-catalog transforms, this run's tools.
        let run_tools = (!self.inner.transforms.tool_catalog.is_empty()).then(|| {
            let mut tools = self.inner.looped.config().tools.clone();
            for tool in &extra_tools {
                tools.insert(Arc::clone(tool));
            }
            for transform in &self.inner.transforms.tool_catalog {
                transform(&mut tools);
            }
            tools
        });
        let spawning = zidane_core::seams::Spawning::new(Arc::new(crate::subagents::RunSpawner {
            parent: self.clone(),
            extra_tools: extra_tools.clone(),
            mcp_instructions,
            handle: workspace.handle.clone(),
        }));
        let run_options = RunOptions {
            spawning,
            tools: run_tools,
            prompt,
            system,
            extra_tools,
            system_notes,
            model,
            thinking,
            max_tokens: max_tokens.or(self.inner.max_tokens),
            cache_ttl: self.inner.cache_ttl,
            behavior,
            hooks: options.hooks,
            response_schema: options.response_schema,
            run_id: Some(run_id.clone()),
            workspace: Some(workspace),
            signal: Some(signal),
            session_id: session_id.clone(),
            resume: resume
                .as_ref()
                .map(|r| zidane_loop::ResumeFrom { turn: r.run.loop_turn }),
            ..Default::default()
        };
        let outcome = self.inner.looped.run(run_options).await;
        #[cfg(feature = "sqlite")]
        if let Some(d) = &self.inner.durable {
            d.runtime.unbind_run(&run_id);
        }
        self.keep_active_skills().await;
        let end_turn = self.inner.looped.turn_count() as u32;
        if let Some(checkpoints) = &self.inner.checkpoints {
            checkpoints.end(end_turn).await;
        }
        if let Some(id) = &session_id {
            let stale = matches!(&outcome, Err(e) if matches!(e.kind, zidane_loop::RunErrorKind::StaleEpoch(_)));
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
            // A process that lost the session writes nothing more, not even
            // the end of its run.
            if !stale {
                record.status = run_status;
                record.ended_at = Some(self.inner.clock.now_ms());
                record.end_turn = end_turn;
                record.resumable = durable && run_status == SessionRunStatus::Suspended;
                if let Err(e) = self.save_run(id, record).await {
                    tracing::warn!(target: "zidane", "the end of the run could not be recorded: {e}");
                }
            }
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

    /// Whether runs record steps (a checkpoint runtime).
    pub(crate) fn is_durable(&self) -> bool {
        #[cfg(feature = "sqlite")]
        {
            self.inner.durable.is_some()
        }
        #[cfg(not(feature = "sqlite"))]
        {
            false
        }
    }

    /// Stops the current run so [`Agent::resume`] can continue it later:
    /// the model stream stops at once (its request is sent again on
    /// resume); running tool calls may finish within `options.grace`
    /// (unset: they all finish), and a call still running then is cut off
    /// and stays pending. Nothing is recorded as failed and the run stays
    /// resumable; its `run()` resolves with `suspended: true`. Without a
    /// checkpoint runtime the run stops the same way, but nothing can
    /// resume it. A run on a replay-mode runtime (`replay_runtime`) is
    /// aborted instead: it continues when its engine runs the invocation
    /// again. Before the run started, it does not start. Resolves once the
    /// run stopped; no-op when idle.
    pub async fn suspend(&self, options: SuspendOptions) {
        if !self.is_running() {
            return;
        }
        // A replay-mode run continues by running its invocation again: the
        // engine replays it from its journal, so this one is only aborted.
        if self.inner.looped.config().runtime.mode() == zidane_core::seams::DurableMode::Replay {
            self.abort_with("suspended");
            self.wait_for_idle().await;
            return;
        }
        self.inner.suspend_requested.store(true, Ordering::Release);
        if !self.inner.looped.suspend() {
            // Still starting (loading the session, connecting servers).
            if let Some(controller) = lock(&self.inner.run_abort).as_ref() {
                controller.abort(Some("suspended"));
            }
        }
        if let Some(grace) = options.grace {
            tokio::select! {
                () = self.wait_for_idle() => return,
                () = tokio::time::sleep(grace) => self.inner.looped.abort(Some("suspended")),
            }
        }
        self.wait_for_idle().await;
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

    /// Cancels one in-flight tool call (see [`RunLoop::cancel_tool`]): one
    /// of this agent's, or of a running sub-agent's (a spawn call's id
    /// stops that whole child).
    #[must_use = "`false` means no such call was in flight"]
    pub fn cancel_tool(&self, call_id: &str, reason: Option<&str>) -> bool {
        if self.inner.looped.cancel_tool(call_id, reason) {
            return true;
        }
        let children: Vec<Agent> = lock(&self.inner.live_children).iter().map(|(_, a)| a.clone()).collect();
        children.iter().any(|child| child.cancel_tool(call_id, reason))
    }

    /// Resolves when no run is in progress.
    pub async fn wait_for_idle(&self) {
        let mut rx = self.inner.idle.subscribe();
        let _ = rx.wait_for(|idle| *idle).await;
    }

    /// Clears the conversation; refused while a run is in progress.
    pub async fn reset(&self) -> Result<(), AgentError> {
        let _busy = self.claim()?;
        self.inner.looped.reset();
        for active in self.inner.skills.active() {
            self.inner
                .skills
                .deactivate(
                    &self.inner.hooks,
                    &active.name,
                    zidane_core::events::DeactivationReason::Reset,
                )
                .await;
        }
        Ok(())
    }

    /// Activates a skill by name (`skills:activate`, `via: explicit`); its
    /// instructions reach the model with the next prompt. Refused when skills
    /// are off, the name is unknown, the policy denies it or `max_active`
    /// skills are active; a no-op for an active skill.
    pub async fn activate_skill(&self, name: &str) -> Result<(), AgentError> {
        self.load_session().await?;
        self.inner.skills.resolve(&self.inner.hooks).await;
        self.inner
            .skills
            .activate(&self.inner.hooks, name, zidane_core::events::ActivationVia::Explicit)
            .await?;
        self.keep_active_skills().await;
        Ok(())
    }

    /// Deactivates a skill by name (`skills:deactivate`, `reason:
    /// explicit`); the model is told with the next prompt. Refused when
    /// skills are off; a no-op for a skill that is not active.
    pub async fn deactivate_skill(&self, name: &str) -> Result<(), AgentError> {
        if !self.inner.skills.enabled() {
            return Err(crate::skills::SkillError::Off.into());
        }
        self.inner
            .skills
            .deactivate(
                &self.inner.hooks,
                name,
                zidane_core::events::DeactivationReason::Explicit,
            )
            .await;
        self.keep_active_skills().await;
        Ok(())
    }

    /// The active skills.
    pub fn active_skills(&self) -> Vec<crate::skills::ActiveSkill> {
        self.inner.skills.active()
    }

    /// The `SKILL.md` files that could not be used, and why (after the
    /// skills resolved).
    pub fn skill_problems(&self) -> Vec<crate::skills::SkillProblem> {
        self.inner.skills.problems()
    }

    /// Resolves the skills (once) and returns them.
    pub async fn skills(&self) -> Vec<crate::skills::SkillDefinition> {
        self.inner.skills.resolve(&self.inner.hooks).await
    }

    /// Keeps the active skills in the session's metadata when they changed.
    async fn keep_active_skills(&self) {
        if !self.inner.skills.enabled() {
            return;
        }
        let names = self.inner.skills.active_names();
        let kept = lock(&self.inner.session).as_ref().map(|s| {
            s.metadata
                .get(crate::skills::ACTIVE_KEY)
                .cloned()
                .unwrap_or_else(|| serde_json::json!([]))
        });
        if kept.is_some_and(|kept| kept != names)
            && let Err(e) = self.set_session_meta(crate::skills::ACTIVE_KEY, names).await
        {
            tracing::warn!(target: "zidane", "the active skills could not be kept in the session: {e}");
        }
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
            let watchdog = self.inner.looped.config().behavior.background_stall_watchdog;
            self.inner
                .background
                .start(Arc::downgrade(&self.inner), handle.clone(), watchdog);
            let mut ev = ExecutionReady::new(ExecutionReadyInit {
                handle: handle.clone(),
                spawned,
            });
            self.observe(&mut ev).await;
            // A host-owned handle may still run an earlier agent's tasks
            // (a sub-agent's handle is its parent's: not adopted).
            if self.inner.handle_injected && self.inner.lineage.depth == 0 {
                self.adopt_tasks(&handle).await;
            }
            // What an earlier process of this session left running.
            self.reattach_tasks(&handle).await;
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
        self.inner.skills.resolve(&self.inner.hooks).await;
        #[cfg(feature = "mcp")]
        {
            let (_, failures) = self.bootstrap_mcp(true).await;
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
        #[cfg(feature = "sqlite")]
        self.release_lease();
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
                // Its background tasks are killed with it; their exits
                // reach the bus before this returns.
                self.inner.execution.destroy(&handle).await;
                self.inner.background.flush().await;
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
        // A durable session is written only under its lease.
        #[cfg(feature = "sqlite")]
        self.take_lease().await?;
        let compaction = Arc::clone(&self.inner.compaction);
        compaction.manual(self, options).await
    }
}

/// The hook names of the vocabulary, for hosts that list them.
pub fn hook_names() -> impl Iterator<Item = &'static str> {
    events::CATALOGUE.iter().map(|h| h.name)
}
