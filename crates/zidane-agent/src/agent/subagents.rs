//! Sub-agents: the spawner a run hands its tool calls, a child built from
//! its parent, and where it sits in its tree.

use crate::agent::Agent;
use crate::options::AgentOptions;
use crate::run_options::AgentRunOptions;
use crate::subagents::{SpawnConfig, SubagentDefinition, SubagentTools, child_session_id};
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use zidane_core::bubble::install_bubbling;
use zidane_core::events::{
    AgentStats, ChildRunStats, RunStatus, SharedError, SpawnBefore, SpawnBeforeInit, SpawnComplete, SpawnCompleteInit,
    SpawnError as SpawnErrorEvent, SpawnErrorInit, SpawnHookContext, SpawnQueued, SpawnQueuedInit,
};
use zidane_core::seams::{SpawnError, SpawnRequest, SpawnResult, Spawner};
use zidane_core::tool::Tool;
use zidane_loop::BehaviorOverride;
use zidane_provider::{AbortSignal, BoxFuture, ContentBlock, Role};

/// Where an agent sits in its tree: its depth, and the slot pool it shares
/// with every agent of the tree.
#[derive(Clone)]
pub(crate) struct Lineage {
    pub(crate) depth: u32,
    pub(crate) slots: Arc<Semaphore>,
    pub(crate) limit: u32,
    /// Approvals remembered for the tree (kept in the root's session).
    pub(crate) approvals: Arc<super::approvals::Approvals>,
}

impl Lineage {
    pub(crate) fn root(config: &SpawnConfig) -> Self {
        let limit = config.max_concurrent.max(1);
        Lineage {
            depth: 0,
            slots: Arc::new(Semaphore::new(limit as usize)),
            limit,
            approvals: Arc::default(),
        }
    }
}

/// What a durable child's session already holds, from an earlier process.
enum Prior {
    /// Nothing: the child starts.
    Fresh,
    /// A run that a process death left: the child continues it.
    Interrupted,
    /// A run that finished: its answer is the result, nothing runs again.
    Finished(AgentStats),
}

/// The statistics of a finished run, rebuilt from its saved turns.
fn stats_from_turns(turns: &[zidane_provider::SessionTurn]) -> AgentStats {
    let mut stats = AgentStats::default();
    for turn in turns.iter().filter(|t| t.role == Role::Assistant) {
        stats.tool_calls += turn
            .content
            .iter()
            .filter(|b| matches!(b, ContentBlock::ToolUse { .. }))
            .count() as u32;
        match &turn.usage {
            Some(usage) => stats.add_turn(usage),
            None => stats.turns += 1,
        }
    }
    stats
}

/// What a child of one run is built from: taken when the run starts.
pub(crate) struct RunSpawner {
    pub(crate) parent: Agent,
    /// The run's extra tools (the live MCP connection's), shared.
    pub(crate) extra_tools: Vec<Arc<dyn Tool>>,
    /// What the connection's servers say about their tools (a child with
    /// their tools reads it too).
    pub(crate) mcp_instructions: Option<String>,
    pub(crate) handle: zidane_core::events::ExecutionHandle,
}

/// The lower of two optional caps.
fn tighter<T>(a: Option<T>, b: Option<T>, min: fn(T, T) -> T) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(min(a, b)),
        (a, b) => a.or(b),
    }
}

fn answer_of(agent: &Agent) -> String {
    let turns = agent.turns();
    let Some(last) = turns.iter().rev().find(|t| t.role == Role::Assistant) else {
        return String::new();
    };
    last.content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl RunSpawner {
    fn child_options(
        &self,
        def: Option<&SubagentDefinition>,
        read_state: bool,
        #[allow(unused_variables)] child_session: Option<&str>,
    ) -> AgentOptions {
        let inner = &self.parent.inner;
        let config = inner.looped.config();
        let mut tools = match def.map(|d| &d.tools) {
            Some(SubagentTools::Set(set)) => set.clone(),
            _ => {
                let mut tools = config.tools.clone();
                for tool in &self.extra_tools {
                    tools.insert(Arc::clone(tool));
                }
                tools
            }
        };
        match def.map(|d| &d.tools) {
            Some(SubagentTools::Only(names)) => tools.retain(|n| names.iter().any(|k| k == n)),
            Some(SubagentTools::Except(names)) => tools.retain(|n| !names.iter().any(|k| k == n)),
            _ => {}
        }
        let mut system = def
            .and_then(|d| d.system.clone())
            .or_else(|| inner.spawn.system.clone())
            .or_else(|| config.system.clone());
        let has_mcp_tools = self.extra_tools.iter().any(|t| tools.get(t.name()).is_some());
        if let (Some(instructions), true) = (&self.mcp_instructions, has_mcp_tools) {
            let base = system.unwrap_or_default();
            system = Some(format!("{base}\n\n# MCP servers\n\n{instructions}"));
        }
        AgentOptions {
            provider: inner.providers.clone(),
            name: def.map(|d| d.name.clone()),
            system,
            model: def
                .filter(|d| !d.model.is_empty())
                .map_or_else(|| config.model.clone(), |d| d.model.clone()),
            max_tokens: def.and_then(|d| d.max_tokens).or(inner.max_tokens),
            // A long child run compacts as its parent's would.
            auto_compact: def
                .and_then(|d| d.auto_compact.clone())
                .unwrap_or_else(|| inner.compaction.settings().cloned()),
            tools,
            hooks: inner.spawn.hooks.clone(),
            interceptors: inner.interceptors.clone(),
            approve_tool_call: inner.approver.clone(),
            // A child decides where its parent does (and not at all when
            // the parent's decisions are off).
            decisions: inner.decisions.clone(),
            behavior: config.behavior.clone(),
            cache_ttl: inner.cache_ttl,
            clock: Some(Arc::clone(&inner.clock)),
            pricing: Some(config.pricing.clone()),
            execution: Some(Arc::clone(inner.exec.context())),
            handle: Some(self.handle.clone()),
            read_state: read_state.then(|| Arc::clone(&config.read_state)),
            spawn: inner.spawn.clone(),
            // A durable parent's child keeps its own records, in a session
            // of the same store named after the spawning call.
            durable: child_session
                .and(inner.durable.clone())
                .map(|d| crate::durable::DurableOptions {
                    on_interrupted: zidane_core::durable::OnInterrupted::Heal,
                    ..d
                }),
            session_id: child_session.map(str::to_owned),
            // One server per language per folder: the parent's.
            lsp: inner.lsp.as_ref().map(zidane_lsp::Lsp::shared_handle),
            ..Default::default()
        }
    }

    /// The child's session when the parent's runs are durable (see
    /// [`child_session_id`]), so a resumed parent finds it and no other run
    /// does.
    fn child_session(&self, request: &SpawnRequest) -> Option<String> {
        self.parent.inner.durable.as_ref()?;
        let parent = self.parent.inner.session.state().as_ref()?.id.clone();
        Some(child_session_id(&parent, &request.call_id, &request.parent_run_id))
    }

    async fn observe<E: zidane_hooks::HookEvent>(&self, event: &mut E) {
        self.parent.observe(event).await;
    }

    /// What a durable child's session holds from an earlier process.
    async fn prior(&self, session_id: &str) -> Prior {
        let Some(d) = &self.parent.inner.durable else {
            return Prior::Fresh;
        };
        let store = d.runtime.session_store();
        // An unreadable store shows when the child's run saves.
        let Ok(Some(session)) = store.load(session_id).await else {
            return Prior::Fresh;
        };
        match session.runs.last() {
            None => Prior::Fresh,
            Some(run) if run.is_interrupted() => Prior::Interrupted,
            Some(run) if run.status == zidane_core::session::SessionRunStatus::Completed => {
                let from = (run.first_turn as usize).min(session.turns.len());
                Prior::Finished(stats_from_turns(&session.turns[from..]))
            }
            // Aborted or failed earlier: the task runs again.
            Some(_) => Prior::Fresh,
        }
    }

    /// Takes a slot: at once, or (top level only) after `spawn:queued`.
    async fn slot(
        &self,
        child_id: &str,
        agent_name: Option<&str>,
        signal: &AbortSignal,
    ) -> Result<OwnedSemaphorePermit, SpawnError> {
        let lineage = &self.parent.inner.lineage;
        if let Ok(permit) = Arc::clone(&lineage.slots).try_acquire_owned() {
            return Ok(permit);
        }
        if lineage.depth > 0 {
            return Err(SpawnError::SlotsFull { limit: lineage.limit });
        }
        let running = lineage.limit - lineage.slots.available_permits() as u32;
        let mut ev = SpawnQueued::new(SpawnQueuedInit {
            child_id: child_id.to_owned(),
            agent_name: agent_name.map(str::to_owned),
            running,
            limit: lineage.limit,
        });
        self.observe(&mut ev).await;
        tokio::select! {
            biased;
            () = signal.aborted() => Err(SpawnError::Aborted {
                reason: signal.reason().unwrap_or_else(|| "aborted".to_owned()),
                stats: None,
            }),
            permit = Arc::clone(&lineage.slots).acquire_owned() => {
                permit.map_err(|_| SpawnError::SlotsFull { limit: lineage.limit })
            }
        }
    }

    /// The child agent; a failure to build it is `spawn:error`.
    async fn create(
        &self,
        options: AgentOptions,
        depth: u32,
        request: &SpawnRequest,
        spawn: SpawnHookContext,
    ) -> Result<Agent, SpawnError> {
        let lineage = Lineage {
            depth,
            ..self.parent.inner.lineage.clone()
        };
        match crate::agent::create_child(
            options,
            lineage,
            Some(request.parent_run_id.clone()),
            spawn.tracing_context.clone(),
        ) {
            Ok(child) => Ok(child),
            Err(e) => {
                let error: SharedError = Arc::new(e);
                let mut ev = SpawnErrorEvent::new(SpawnErrorInit {
                    spawn,
                    error: Arc::clone(&error),
                });
                self.observe(&mut ev).await;
                Err(SpawnError::Failed { error, stats: None })
            }
        }
    }

    async fn run_child(
        &self,
        request: SpawnRequest,
        signal: AbortSignal,
        ledger: zidane_core::seams::ChildLedger,
    ) -> Result<SpawnResult, SpawnError> {
        let inner = &self.parent.inner;
        let config = &inner.spawn;
        let depth = inner.lineage.depth + 1;
        if depth > config.max_depth {
            return Err(SpawnError::DepthLimit {
                depth: inner.lineage.depth,
                max: config.max_depth,
            });
        }
        if request.task.trim().is_empty() {
            return Err(SpawnError::EmptyTask);
        }
        let def = definition(config, request.agent.as_deref())?;
        let child_id = request.call_id.clone();
        let agent_name = def.map(|d| d.name.clone());
        let permit = self.slot(&child_id, agent_name.as_deref(), &signal).await?;

        let mut before = SpawnBefore::new(SpawnBeforeInit {
            child_id: child_id.clone(),
            agent_name: agent_name.clone(),
            prompt: request.task.clone(),
            depth,
            parent_run_id: Some(request.parent_run_id.clone()),
        });
        self.observe(&mut before).await;
        let spawn = SpawnHookContext {
            child_id: child_id.clone(),
            agent_name: agent_name.clone(),
            prompt: request.task.clone(),
            depth,
            parent_run_id: Some(request.parent_run_id.clone()),
            tracing_context: before.tracing_context.clone(),
        };
        let child_session = self.child_session(&request);
        let prior = match &child_session {
            Some(id) => self.prior(id).await,
            None => Prior::Fresh,
        };
        let options = self.child_options(def, config.share_read_state, child_session.as_deref());
        let child = self.create(options, depth, &request, spawn.clone()).await?;
        let bubbling = install_bubbling(child.hooks(), &inner.hooks, &child_id, depth);
        inner.live_children.lock().push((child_id.clone(), child.clone()));
        let run_options = child_run_options(def, &request);
        let settle = Settle {
            parent: self.parent.clone(),
            child: child.clone(),
            spawn,
            started: inner.clock.now_ms(),
            signal: signal.clone(),
            ledger,
        };
        // The child runs as a task of its own: when the spawning call is
        // dropped (the parent's run aborted), the child is stopped and still
        // reports (`spawn:error`, the ledger) and is torn down.
        let (tx, rx) = tokio::sync::oneshot::channel();
        let runner = child.clone();
        tokio::spawn(async move {
            let _slot = permit;
            let _bubbling = bubbling;
            let outcome = run_prior(&runner, prior, run_options).await;
            let _ = tx.send(settle.finish(outcome).await);
        });
        let guard = StopOnDrop(Some(child.clone()));
        let mut rx = rx;
        let result = tokio::select! {
            biased;
            result = &mut rx => result,
            () = signal.aborted() => {
                child.abort_with(&signal.reason().unwrap_or_else(|| "aborted".to_owned()));
                rx.await
            }
        };
        guard.disarm();
        result.unwrap_or_else(|_| {
            Err(SpawnError::Aborted {
                reason: "the sub-agent's task ended without an answer".to_owned(),
                stats: None,
            })
        })
    }
}

/// The named definition a spawn asks for (`None`: a general child).
fn definition<'a>(config: &'a SpawnConfig, name: Option<&str>) -> Result<Option<&'a SubagentDefinition>, SpawnError> {
    let Some(name) = name else {
        return Ok(None);
    };
    if let Some(def) = config.agents.iter().find(|a| a.name == name) {
        return Ok(Some(def));
    }
    let known: Vec<&str> = config.agents.iter().map(|a| a.name.as_str()).collect();
    Err(SpawnError::UnknownAgent {
        name: name.to_owned(),
        known: if known.is_empty() {
            "none".to_owned()
        } else {
            known.join(", ")
        },
    })
}

/// The child's run: the task, its definition's model and thinking, and
/// its caps (its definition's, never more than the parent run has left).
fn child_run_options(def: Option<&SubagentDefinition>, request: &SpawnRequest) -> AgentRunOptions {
    AgentRunOptions {
        prompt: request.task.clone(),
        model: def.map(|d| d.model.clone()).unwrap_or_default(),
        thinking: def.and_then(|d| d.thinking).unwrap_or_default(),
        behavior: BehaviorOverride {
            max_turns: def.and_then(|d| d.max_turns).map(Some),
            max_cost_usd: tighter(def.and_then(|d| d.max_cost_usd), request.budget.max_cost_usd, f64::min).map(Some),
            max_total_tokens: tighter(
                def.and_then(|d| d.max_total_tokens),
                request.budget.max_total_tokens,
                u64::min,
            )
            .map(Some),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Runs the child from what its session holds: a fresh run, the resume of
/// an interrupted one (a run again when nothing was left to continue), or
/// the answer a finished one gave.
async fn run_prior(child: &Agent, prior: Prior, options: AgentRunOptions) -> Result<AgentStats, crate::AgentError> {
    match prior {
        Prior::Fresh => child.run(options).await.map(AgentStats::from),
        Prior::Interrupted => {
            let resume = crate::run_options::DurableResumeOptions {
                run: Some(options.clone()),
            };
            match child.resume(resume).await {
                Ok(Some(output)) => Ok(output.stats),
                // Healed instead (nothing to continue): the task runs again
                // after what the earlier attempt left.
                Ok(None) => child.run(options).await.map(AgentStats::from),
                Err(e) => Err(e),
            }
        }
        Prior::Finished(stats) => child.load_session().await.map(|()| stats),
    }
}

/// Stops the child when the spawning call goes away before it answered.
struct StopOnDrop(Option<Agent>);

impl StopOnDrop {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if let Some(child) = self.0.take() {
            child.abort_with("the spawning call was stopped");
        }
    }
}

/// What the end of a child needs: the events, the ledger, the teardown.
struct Settle {
    parent: Agent,
    child: Agent,
    spawn: SpawnHookContext,
    started: u64,
    signal: AbortSignal,
    ledger: zidane_core::seams::ChildLedger,
}

impl Settle {
    async fn finish(self, outcome: Result<AgentStats, crate::error::AgentError>) -> Result<SpawnResult, SpawnError> {
        let duration_ms = self.parent.inner.clock.now_ms().saturating_sub(self.started);
        let stats_of = |stats: AgentStats| ChildRunStats {
            child_id: self.spawn.child_id.clone(),
            agent_name: self.spawn.agent_name.clone(),
            depth: self.spawn.depth,
            duration: std::time::Duration::from_millis(duration_ms),
            stats,
        };
        let result = match outcome {
            Ok(stats) if matches!(stats.status, RunStatus::Aborted | RunStatus::Suspended) => {
                let reason = self
                    .signal
                    .reason()
                    .unwrap_or_else(|| "the sub-agent's run was aborted".to_owned());
                let stats = stats_of(stats);
                self.ledger.record(stats.clone());
                let error: SharedError = Arc::new(SpawnError::Aborted {
                    reason: reason.clone(),
                    stats: None,
                });
                let mut ev = SpawnErrorEvent::new(SpawnErrorInit {
                    spawn: self.spawn.clone(),
                    error,
                });
                self.parent.observe(&mut ev).await;
                Err(SpawnError::Aborted {
                    reason,
                    stats: Some(Box::new(stats)),
                })
            }
            Ok(stats) => {
                let stats = stats_of(stats);
                self.ledger.record(stats.clone());
                let mut ev = SpawnComplete::new(SpawnCompleteInit { stats: stats.clone() });
                self.parent.observe(&mut ev).await;
                Ok(SpawnResult {
                    answer: answer_of(&self.child),
                    stats,
                })
            }
            Err(e) => {
                let stats = e.stats().cloned().map(stats_of);
                if let Some(stats) = &stats {
                    self.ledger.record(stats.clone());
                }
                let error: SharedError = Arc::new(e);
                let mut ev = SpawnErrorEvent::new(SpawnErrorInit {
                    spawn: self.spawn.clone(),
                    error: Arc::clone(&error),
                });
                self.parent.observe(&mut ev).await;
                Err(SpawnError::Failed {
                    error,
                    stats: stats.map(Box::new),
                })
            }
        };
        self.parent
            .inner
            .live_children
            .lock()
            .retain(|(id, _)| *id != self.spawn.child_id);
        // What the child left running outlives it, owned by the parent.
        self.parent.take_over_tasks(&self.child, &self.spawn.child_id).await;
        self.child.destroy().await;
        result
    }
}

impl Spawner for RunSpawner {
    fn spawn(
        &self,
        request: SpawnRequest,
        signal: AbortSignal,
        ledger: zidane_core::seams::ChildLedger,
    ) -> BoxFuture<'_, Result<SpawnResult, SpawnError>> {
        Box::pin(self.run_child(request, signal, ledger))
    }
}
