//! `create_agent`: the options checked, then the parts assembled around one
//! run loop. The agent's own seams (the session sink, compaction, the
//! tool-call policy, `ctx.decide`) hold a weak reference to it, given at
//! construction.

use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Weak};

use zidane_core::clock::{Clock, SystemClock};
use zidane_core::events::HOOK_SPECS;
use zidane_core::session::{MemoryStore, SessionStore};
use zidane_hooks::HookBus;
use zidane_loop::{LoopConfig, RunLoop};
use zidane_tools::ProcessContext;

use super::compact::Compaction;
use super::subagents::Lineage;
use super::{Agent, ExecutionSlot, Inner, RunControl, SessionState};
use crate::binding::SessionBinding;
use crate::binding::SessionSink;
use crate::durable::DurableOptions;
use crate::error::BuildError;
use crate::mcp::Mcp;
use crate::options::AgentOptions;

/// Creates an agent. Synchronous: the session loads on the first run,
/// compaction or warm-up, and the execution handle is spawned then (or now,
/// with `eager`, when a runtime is available).
///
/// Fails on an empty provider list, blank or duplicate provider names,
/// unknown hook names, `session` together with `session_id`, and a
/// `session_id` without a store.
///
/// An agent with a `store` (or a `durable` runtime) and neither `session`
/// nor `session_id` gets a new session, so its turns are kept and its runs
/// can be resumed: read its id with [`Agent::session_id`] to come back to
/// it. [`new_session_id`] mints such an id ahead of time.
pub fn create_agent(options: AgentOptions) -> Result<Agent, BuildError> {
    let lineage = Lineage::root(&options.spawn);
    build(options, lineage, Origin::default())
}

/// A new session id (a random version-4 UUID), for
/// `AgentOptions::session_id` when the caller wants to know it before the
/// agent exists.
pub fn new_session_id() -> String {
    SystemClock::default().id()
}

/// A sub-agent: an agent at `lineage`'s depth, reporting `parent_run_id`
/// and the tracing carrier in its `agent:start`.
pub(crate) fn create_child(
    options: AgentOptions,
    lineage: Lineage,
    parent_run_id: Option<String>,
    tracing_context: BTreeMap<String, String>,
) -> Result<Agent, BuildError> {
    build(
        options,
        lineage,
        Origin {
            parent_run_id,
            tracing_context,
        },
    )
}

/// The execution context of an agent the host gives none: this machine in
/// the current folder, its commands confined as the `zidane` program's are
/// (writes in the folder and the temporary folder only, credential stores
/// unreadable), or unconfined, with a warning, where the kernel cannot
/// confine them.
fn default_execution() -> Arc<dyn zidane_core::ExecutionContext> {
    let context = ProcessContext::current_dir();
    match context.clone().sandboxed(zidane_tools::Sandbox::workspace_write()) {
        Ok(confined) => Arc::new(confined),
        Err(e) => {
            tracing::warn!(error = %e, "the agent's commands run unconfined");
            Arc::new(context)
        }
    }
}

/// The sessions file holds conversations, tool output and MCP OAuth
/// tokens: commands in this machine's sandbox and the file tools do not
/// read it (nor its log and shared-memory files).
fn withhold_store(execution: &dyn zidane_core::ExecutionContext, store: Option<&dyn SessionStore>) {
    let (Some(file), Some(context)) = (
        store.and_then(|s| s.location()),
        execution.as_any().and_then(|any| any.downcast_ref::<ProcessContext>()),
    ) else {
        return;
    };
    let beside = |suffix: &str| {
        let mut name = file.as_os_str().to_owned();
        name.push(suffix);
        std::path::PathBuf::from(name)
    };
    context.withhold([file.to_path_buf(), beside("-wal"), beside("-shm"), beside("-journal")]);
}

/// Where a child agent comes from (nothing, for a top-level agent).
#[derive(Default)]
struct Origin {
    parent_run_id: Option<String>,
    tracing_context: BTreeMap<String, String>,
}

fn build(options: AgentOptions, lineage: Lineage, origin: Origin) -> Result<Agent, BuildError> {
    let (mut options, transforms) = super::extensions::fold(options);
    check(&options)?;
    let store = session_store(
        options.durable.as_ref(),
        options.store.take(),
        options.session.is_some(),
    )?;
    let execution = options.execution.get_or_insert_with(default_execution);
    withhold_store(execution.as_ref(), store.as_deref());
    let mcp = Mcp::take(&mut options);
    super::lsp::prepare(&mut options);
    let eager = options.eager;
    let hooks = HookBus::new();
    let scope = options.hooks.install(&hooks, HOOK_SPECS)?;
    if let Some(lsp) = &options.lsp {
        lsp.install(&hooks);
        let exclude = options
            .checkpoints
            .as_ref()
            .map(|c| c.config().exclude.clone())
            .unwrap_or_default();
        super::lsp::install_commands(lsp, &hooks, exclude);
    }
    let inner = Arc::new_cyclic(|agent: &Weak<Inner>| {
        assemble(
            options,
            Parts {
                hooks,
                scope,
                store,
                mcp,
                transforms,
                lineage,
                origin,
                agent,
            },
        )
    });
    let agent = Agent { inner };
    if agent.inner.lineage.depth == 0 {
        agent.inner.lineage.approvals.bind_root(Arc::downgrade(&agent.inner));
    }
    if eager {
        warm(&agent);
    }
    Ok(agent)
}

/// Refuses options that cannot make an agent.
fn check(options: &AgentOptions) -> Result<(), BuildError> {
    let providers = &options.provider;
    if providers.is_empty() {
        return Err(BuildError::NoProvider);
    }
    if providers.len() > 1 {
        let mut names = BTreeSet::new();
        for (index, p) in providers.iter().enumerate() {
            if p.name().trim().is_empty() {
                return Err(BuildError::BlankProviderName { index });
            }
            if !names.insert(p.name().to_owned()) {
                return Err(BuildError::DuplicateProviderName {
                    name: p.name().to_owned(),
                });
            }
        }
    }
    options.hooks.validate(HOOK_SPECS)?;
    options.spawn.hooks.validate(HOOK_SPECS)?;
    if options.durable.is_some() && options.replay_runtime.is_some() {
        return Err(BuildError::TwoRuntimes);
    }
    if let (Some(d), Some(s)) = (&options.durable, &options.store)
        && !d.runtime.owns(&**s)
    {
        return Err(BuildError::DurableStoreMismatch);
    }
    let has_store = options.store.is_some() || options.durable.is_some();
    if options.session.is_some() && options.session_id.is_some() {
        return Err(BuildError::SessionAndSessionId);
    }
    if options.session_id.is_some() && !has_store {
        return Err(BuildError::SessionIdWithoutStore);
    }
    if options.require_session && options.session_id.is_none() {
        return Err(BuildError::RequireSessionWithoutId);
    }
    Ok(())
}

/// The store sessions live in: a durable agent's is its backend's; a
/// session given without a store is kept in memory.
fn session_store(
    durable: Option<&DurableOptions>,
    store: Option<Arc<dyn SessionStore>>,
    given_session: bool,
) -> Result<Option<Arc<dyn SessionStore>>, BuildError> {
    let store = store.or_else(|| durable.map(|d| d.runtime.session_store()));
    Ok(store.or_else(|| given_session.then(|| Arc::new(MemoryStore::new()) as Arc<dyn SessionStore>)))
}

/// What `build` made before the agent exists.
struct Parts<'a> {
    hooks: HookBus,
    scope: zidane_hooks::HookScope,
    store: Option<Arc<dyn SessionStore>>,
    mcp: Mcp,
    transforms: crate::extensions::Transforms,
    lineage: Lineage,
    origin: Origin,
    /// The agent being built (upgradable once `build` returns).
    agent: &'a Weak<Inner>,
}

/// Assembles the agent: the loop with the agent's seams, then the parts.
fn assemble(options: AgentOptions, parts: Parts<'_>) -> Inner {
    let Parts {
        hooks,
        scope,
        store,
        mcp,
        transforms,
        lineage,
        origin,
        agent,
    } = parts;
    let clock: Arc<dyn Clock> = options
        .clock
        .clone()
        .unwrap_or_else(|| Arc::new(SystemClock::default()));
    let given = options.session.as_ref().map(given_state);
    // A given session is checked against the store on the first run: one
    // the store lacks is created there with its turns, so nothing is lost.
    // An agent with a store but no session would persist nothing: it gets
    // a new session, from its clock (so a replayed build mints the same id).
    let session_id = options
        .session_id
        .clone()
        .or_else(|| (store.is_some() && given.is_none()).then(|| clock.id()));
    let session = SessionBinding::new(store, given, session_id).required(options.require_session);
    let shared_session = session.shared();
    let primary = Arc::clone(&options.provider[0]);
    let compaction = Arc::new(Compaction::new(options.auto_compact.clone(), primary, agent.clone()));
    let skills = crate::skills::Skills::new(options.skills.clone());
    // Before each tool batch that may change the folder; on a replay-mode
    // runtime each snapshot is a journaled step.
    let checkpoint_scope = options.checkpoints.as_ref().map(|c| c.install(&hooks));
    if let (Some(checkpoints), Some(runtime)) = (&options.checkpoints, &options.replay_runtime) {
        checkpoints.journal_steps(Arc::clone(runtime));
    }
    let config = loop_config(
        &options,
        Seams {
            hooks: &hooks,
            store: session.store(),
            clock: &clock,
            session: &shared_session,
            compaction: &compaction,
            skills: &skills,
            lineage: &lineage,
            agent,
        },
        origin,
    );
    let looped = RunLoop::new(config);
    // Handlers reach the agent's decisions through their context.
    hooks.provide(Arc::new(super::decide::HookDecider { agent: agent.clone() }));
    if let Some(given) = options.session {
        looped.set_turns(given.turns);
    }
    Inner {
        looped,
        hooks,
        providers: options.provider,
        clock,
        session,
        control: RunControl::new(),
        exec: ExecutionSlot::new(
            options
                .execution
                .unwrap_or_else(|| Arc::new(ProcessContext::current_dir())),
            options.handle,
        ),
        cache_ttl: options.cache_ttl,
        max_tokens: options.max_tokens,
        compaction,
        skills,
        durable: options.durable,
        decisions: options.decisions,
        decision_count: Mutex::default(),
        name: options.name,
        spawn: options.spawn,
        spawner: options.spawner,
        lineage,
        live_children: Mutex::new(Vec::new()),
        goal: Mutex::new(None),
        interceptors: options.interceptors,
        approver: options.approve_tool_call,
        transforms,
        background: crate::background::Background::new(),
        mcp,
        _hooks_scope: scope,
        checkpoints: options.checkpoints,
        _checkpoint_scope: checkpoint_scope,
        lsp: options.lsp,
    }
}

/// The state of a session the host gave, and its id.
fn given_state(session: &zidane_core::session::Session) -> (SessionState, String) {
    let state = SessionState {
        id: session.id.clone(),
        metadata: session.metadata.clone(),
        runs: session.runs.clone(),
        created_at: session.created_at.as_millis(),
        turn_count: session.turns.len(),
    };
    (state, session.id.clone())
}

/// What the loop's configuration takes from the agent being built.
struct Seams<'a> {
    hooks: &'a HookBus,
    store: Option<&'a Arc<dyn SessionStore>>,
    clock: &'a Arc<dyn Clock>,
    session: &'a Arc<Mutex<Option<SessionState>>>,
    compaction: &'a Arc<Compaction>,
    skills: &'a Arc<crate::skills::Skills>,
    lineage: &'a Lineage,
    agent: &'a Weak<Inner>,
}

/// The loop's configuration: the options, and the agent's seams (the
/// session sink, compaction, the tool-call policy).
fn loop_config(options: &AgentOptions, seams: Seams<'_>, origin: Origin) -> LoopConfig {
    let policy = (!options.interceptors.is_empty()).then(|| {
        Arc::new(super::approvals::Policy {
            interceptors: options.interceptors.clone(),
            approver: options.approve_tool_call.clone(),
            approvals: Arc::clone(&seams.lineage.approvals),
            agent: seams.agent.clone(),
            asked: Default::default(),
        }) as Arc<dyn zidane_core::policy::ToolCallPolicy>
    });
    let sink = Arc::new(SessionSink {
        store: seams.store.cloned(),
        session: Arc::clone(seams.session),
        hooks: seams.hooks.clone(),
        clock: Arc::clone(seams.clock),
        durable: options.durable.as_ref().map(|d| Arc::clone(&d.runtime)),
    });
    let mut config = LoopConfig::new(Arc::clone(&options.provider[0]));
    config.hooks = seams.hooks.clone();
    config.clock = Arc::clone(seams.clock);
    config.sink = Some(sink);
    config.compactor = Some(Arc::clone(seams.compaction) as Arc<dyn zidane_core::compact::Compactor>);
    config.policy = policy;
    config.depth = seams.lineage.depth;
    config.parent_run_id = origin.parent_run_id;
    config.tracing_context = origin.tracing_context;
    let session_key = options
        .session
        .as_ref()
        .map(|s| s.id.clone())
        .or_else(|| options.session_id.clone());
    configure(
        &mut config,
        options,
        seams.store,
        session_key.as_deref(),
        seams.skills,
        seams.lineage,
    );
    config
}

/// The loop's configuration from the options: providers, model, prompt,
/// tools (with the skill tool, aliases and descriptions), behavior, tool
/// state and the durable runtime.
fn configure(
    config: &mut LoopConfig,
    options: &AgentOptions,
    store: Option<&Arc<dyn SessionStore>>,
    session_key: Option<&str>,
    skills: &Arc<crate::skills::Skills>,
    lineage: &Lineage,
) {
    config.providers.clone_from(&options.provider);
    config.model.clone_from(&options.model);
    config.system.clone_from(&options.system);
    config.tools = options.tools.clone();
    if skills.enabled() {
        config.tools.insert(Arc::new(crate::skills::skill_tool(
            Arc::clone(skills),
            config.hooks.clone(),
        )));
    }
    config.behavior = options.behavior.clone();
    config.pricing = options.pricing.clone().unwrap_or_default();
    config.agent_name.clone_from(&options.name);
    config.artifacts = options.artifacts.unwrap_or(true);
    // The named sub-agents are listed in the spawn tool's description (a
    // child inherits the listing with its parent's tools).
    if lineage.depth == 0
        && config.tools.get("spawn").is_some()
        && let Some(listing) = options.spawn.listing()
    {
        config.tools.append_description("spawn", &listing);
    }
    for (canonical, alias) in &options.tool_aliases {
        config.tools = std::mem::take(&mut config.tools).alias(canonical.clone(), alias.clone());
    }
    for (canonical, description) in &options.tool_descriptions {
        config.tools = std::mem::take(&mut config.tools).describe(canonical.clone(), description.clone());
    }
    let tool_state = options
        .tool_state
        .clone()
        .or_else(|| store.zip(session_key).map(|(store, id)| store.tool_state(id)));
    if let Some(tool_state) = tool_state {
        config.tool_state = tool_state;
    }
    if let Some(d) = &options.durable {
        config.runtime = Arc::clone(&d.runtime) as Arc<dyn zidane_core::durable::DurableRuntime>;
        // The runtime commits a call's state with its step record.
        config.tool_state_in_steps = options.tool_state.is_none() && session_key.is_some();
    }
    if let Some(runtime) = &options.replay_runtime {
        config.runtime = Arc::clone(runtime);
        // A replayed call's writes come back with its step value.
        config.tool_state_in_steps = true;
    }
    if let Some(read_state) = &options.read_state {
        config.read_state = Arc::clone(read_state);
    }
    if let Some(message) = &options.tool_kill_message {
        config.cancel_reason.clone_from(message);
    }
}

/// `eager`: the session loads, the MCP servers connect and the skills
/// resolve now, in the background (failures are on the bus; the next run or
/// warm-up retries). Outside a Tokio runtime, the first run starts them.
pub(crate) fn warm(agent: &Agent) {
    let servers = !agent.inner.mcp.is_empty();
    let skills = agent.inner.skills.enabled();
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        agent.inner.control.defer_warm();
        return;
    };
    {
        let warm = agent.clone();
        rt.spawn(async move {
            if let Err(e) = warm.load_session().await {
                tracing::warn!(target: "zidane", "the session did not load ahead of the first run: {e}");
            }
        });
    }
    if servers {
        let warm = agent.clone();
        rt.spawn(async move {
            warm.inner.mcp.connect_ahead(&warm.inner.hooks).await;
        });
    }
    if skills {
        let warm = agent.clone();
        rt.spawn(async move {
            warm.inner.skills.resolve(&warm.inner.hooks).await;
        });
    }
}
