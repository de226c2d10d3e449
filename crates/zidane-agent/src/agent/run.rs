//! One run: `run` (or a resume) starts it, `prepare_run` / `prepare_resume`
//! decide everything it needs into a [`RunPlan`], and `execute` records it,
//! hands the loop its options with the agent's additions, and records its
//! end.

use std::sync::Arc;

use zidane_core::events::{
    AgentStats, RunStatus, SessionEnd, SessionEndInit, SessionEndStatus, SessionStart, SessionStartInit,
};
use zidane_core::execution::Workspace;
use zidane_core::session::{SessionRun, SessionRunOptions, SessionRunStatus};
use zidane_loop::{BehaviorOverride, ModelRef, ResumeFrom, RunError, RunOptions, SystemAddition};
use zidane_provider::{AbortSignal, ContentBlock, ThinkingLevel};

use super::Agent;
use crate::error::AgentError;
use crate::mcp::McpRun;
use crate::output::RunOutput;
use crate::run_options::AgentRunOptions;
use zidane_core::durable::OnInterrupted;

/// Everything a run needs, decided before it starts.
pub(crate) struct RunPlan {
    /// The run's record on the session (its id, first turn, label and the
    /// options a resume applies again).
    record: SessionRun,
    /// The session it runs on.
    session_id: Option<String>,
    /// A resumed run continues at this loop turn.
    resume: Option<ResumeFrom>,
    /// The prompt (empty for a resumed run).
    prompt: Vec<ContentBlock>,
    /// What the run sets, on top of the agent's.
    settings: RunSettings,
    /// Where its tools act, and what its MCP servers add.
    workspace: Workspace,
    mcp: McpRun,
}

/// What one run sets: the options a resume applies again, and the ones that
/// hold for this call only.
struct RunSettings {
    model: Vec<ModelRef>,
    thinking: ThinkingLevel,
    max_tokens: Option<u32>,
    system: Option<String>,
    behavior: BehaviorOverride,
    system_notes: Vec<String>,
    hooks: zidane_hooks::HookMap,
    response_schema: Option<serde_json::Value>,
}

impl RunPlan {
    /// The run's id.
    pub(crate) fn run_id(&self) -> &str {
        &self.record.id
    }

    /// Whether the plan continues a run that stopped.
    pub(crate) fn is_resume(&self) -> bool {
        self.resume.is_some()
    }

    /// A turn limit for a run that sets none.
    pub(crate) fn set_default_max_turns(&mut self, turns: u32) {
        let behavior = &mut self.settings.behavior;
        if behavior.max_turns.is_none() {
            behavior.max_turns = Some(Some(turns));
        }
    }

    /// Adds run hooks.
    pub(crate) fn add_hook(&mut self, add: impl FnOnce(zidane_hooks::HookMap) -> zidane_hooks::HookMap) {
        let hooks = std::mem::take(&mut self.settings.hooks);
        self.settings.hooks = add(hooks);
    }
}

/// What a run started with before it is planned: its workspace, the
/// background notifications it reports first, and the MCP servers' part.
pub(crate) struct Started {
    workspace: Workspace,
    notifications: Vec<ContentBlock>,
    mcp: McpRun,
}

impl Agent {
    /// Runs a prompt to the end. Refused while another run is active.
    ///
    /// A run that the model finished, that stopped at the turn cap
    /// (`max_turns`), or that was aborted (before or after it started)
    /// returns `Ok` with its statistics: check [`AgentStats::completed`] or
    /// `stats.status` ([`RunStatus::MaxTurns`], [`RunStatus::Aborted`]) to
    /// tell them apart. A failure (the provider after retries, a cost or
    /// token cap, a failing decision hook) is an `Err` that carries the
    /// statistics too ([`AgentError::stats`]).
    ///
    /// The output carries the final answer's text ([`RunOutput::text`])
    /// beside the statistics it dereferences to.
    ///
    /// Cancel safety: dropping the returned future stops the run where it
    /// is, as an abort would, without losing what was recorded: the turns
    /// already written stay in the session, and a durable agent's run stays
    /// recorded as interrupted, for [`Agent::resume`] (or the next `run`,
    /// under [`OnInterrupted::Resume`]) to continue.
    pub async fn run(&self, options: AgentRunOptions) -> Result<RunOutput, AgentError> {
        let stats = self.run_to_end(options).await?;
        Ok(self.output(stats))
    }

    /// Runs like [`run`](Self::run) and returns the statistics alone: the
    /// last answer's text is not copied out. For a caller that streamed the
    /// answer (or reads it from [`turns`](Self::turns)), a long answer then
    /// costs its one copy in the conversation.
    pub async fn run_stats(&self, options: AgentRunOptions) -> Result<AgentStats, AgentError> {
        self.run_to_end(options).await
    }

    /// The output of a run that ended with `stats`.
    pub(crate) fn output(&self, stats: AgentStats) -> RunOutput {
        let text = if stats.turns > 0 {
            self.inner.looped.last_text().unwrap_or_default()
        } else {
            String::new()
        };
        RunOutput::new(text, stats)
    }

    async fn run_to_end(&self, mut options: AgentRunOptions) -> Result<AgentStats, AgentError> {
        let _busy = self.claim()?;
        for transform in &self.inner.transforms.run {
            transform(&mut options);
        }
        let Some(signal) = self.start_run().await? else {
            return Ok(self.not_started());
        };
        if let Some(stats) = self.settle_interrupted(&signal).await? {
            return Ok(stats);
        }
        self.launch(options, None, signal).await
    }

    /// A durable agent's interrupted run, before a new one: healed, or
    /// resumed (`Some` when the resumed run, or an abort, ends this call).
    async fn settle_interrupted(&self, signal: &AbortSignal) -> Result<Option<AgentStats>, AgentError> {
        let Some(durable) = &self.inner.durable else {
            return Ok(None);
        };
        match durable.on_interrupted {
            OnInterrupted::Resume => {
                if let Some(stats) = self.resume_interrupted(None, signal).await?
                    && matches!(stats.status, RunStatus::Aborted | RunStatus::Suspended)
                {
                    return Ok(Some(stats));
                }
            }
            OnInterrupted::Heal => self.heal_interrupted().await?,
        }
        Ok(signal.is_aborted().then(|| self.not_started()))
    }

    /// Loads the session and takes its lease; `None` when an abort or a
    /// suspend came first (the run does not start).
    pub(crate) async fn start_run(&self) -> Result<Option<AbortSignal>, AgentError> {
        if self.inner.control.take_deferred_warm() {
            super::build::warm(self);
        }
        let signal = self.inner.control.start_run();
        self.load_session().await?;
        self.take_lease().await?;
        Ok((!signal.is_aborted()).then_some(signal))
    }

    /// Runs a prompt (or, with `resume`, continues a recorded run) once the
    /// session is loaded.
    pub(crate) async fn launch(
        &self,
        mut options: AgentRunOptions,
        resume: Option<SessionRun>,
        signal: AbortSignal,
    ) -> Result<AgentStats, AgentError> {
        let _scope = self.inner.control.run_scope();
        let Some(started) = self.set_up(resume.is_none(), &signal).await? else {
            return Ok(self.not_started());
        };
        let goal = options.goal.take();
        let mut plan = match resume {
            None => self.prepare_run(options, started),
            Some(run) => self.prepare_resume(options, run, started),
        };
        self.arm_goal(&mut plan, goal, &signal).await;
        let run_id = plan.record.id.clone();
        let outcome = self.execute(plan, signal).await;
        let stats = match &outcome {
            Ok(stats) => Some(stats),
            Err(AgentError::Run(e)) => Some(e.stats.as_ref()),
            Err(_) => None,
        };
        self.settle_goal(&run_id, stats).await;
        outcome
    }

    /// Binds the execution handle and connects the MCP servers; `None`
    /// when an abort (or a suspend) came meanwhile: the run does not start,
    /// and does not wait out a slow server's bound.
    async fn set_up(&self, fresh: bool, signal: &AbortSignal) -> Result<Option<Started>, AgentError> {
        let handle = self.ensure_execution().await?;
        if signal.is_aborted() {
            return Ok(None);
        }
        // A resumed run continues where it stopped; what happened in the
        // background meanwhile waits for the next run.
        let notifications = if fresh {
            self.take_task_notifications(&handle).await
        } else {
            Vec::new()
        };
        let workspace = Workspace {
            execution: Arc::clone(self.inner.exec.context()),
            handle,
            background: Some(self.inner.background.owner()),
        };
        // A server that fails is on the bus and left out of this run; the
        // next run or warm-up tries it again.
        let mcp = tokio::select! {
            biased;
            () = signal.aborted() => return Ok(None),
            mcp = self.inner.mcp.for_run(&self.inner.hooks) => mcp,
        };
        if signal.is_aborted() {
            return Ok(None);
        }
        Ok(Some(Started {
            workspace,
            notifications,
            mcp,
        }))
    }

    /// The plan of a new run: a fresh record, the background notifications
    /// and the prompt.
    fn prepare_run(&self, options: AgentRunOptions, started: Started) -> RunPlan {
        let session_id = self.inner.session_id();
        let durable = self.is_durable() && session_id.is_some();
        let kept = kept_options(&options);
        let first_turn = self.inner.looped.turn_count() as u32;
        let record = SessionRun {
            id: self.inner.clock.id(),
            status: SessionRunStatus::Running,
            started_at: self.inner.clock.now(),
            ended_at: None,
            first_turn,
            end_turn: first_turn,
            prompt: options.prompt.clone(),
            resumable: durable,
            options: durable.then_some(kept),
            loop_turn: 0,
            last_turn_id: None,
        };
        // Background exits and stalls since the last run come first.
        let mut prompt = started.notifications;
        if !options.prompt.trim().is_empty() {
            prompt.push(ContentBlock::text(options.prompt));
        }
        prompt.extend(options.parts);
        RunPlan {
            record,
            session_id,
            resume: None,
            prompt,
            settings: RunSettings {
                model: options.model,
                thinking: options.thinking,
                max_tokens: options.max_tokens,
                system: options.system,
                behavior: options.behavior,
                system_notes: options.system_notes,
                hooks: options.hooks,
                response_schema: options.response_schema,
            },
            workspace: started.workspace,
            mcp: started.mcp,
        }
    }

    /// The plan of a resumed run: its record as kept, no prompt, and the
    /// options its record kept under what this call sets.
    fn prepare_resume(&self, options: AgentRunOptions, run: SessionRun, started: Started) -> RunPlan {
        let session_id = self.inner.session_id();
        let durable = self.is_durable() && session_id.is_some();
        let kept = run.options.clone().unwrap_or_else(|| kept_options(&options));
        let mut behavior = options.behavior;
        behavior.max_turns = behavior.max_turns.or(kept.max_turns.map(Some));
        behavior.max_cost_usd = behavior.max_cost_usd.or(kept.max_cost_usd.map(Some));
        behavior.max_total_tokens = behavior.max_total_tokens.or(kept.max_total_tokens.map(Some));
        let model = if options.model.is_empty() {
            kept.model
                .iter()
                .map(|(provider, model)| ModelRef {
                    provider: provider.clone(),
                    model: model.clone(),
                })
                .collect()
        } else {
            options.model
        };
        let thinking = if options.thinking == ThinkingLevel::Off {
            kept.thinking
        } else {
            options.thinking
        };
        let record = SessionRun {
            status: SessionRunStatus::Running,
            ended_at: None,
            end_turn: run.first_turn,
            resumable: durable,
            options: durable.then(|| kept.clone()),
            ..run
        };
        RunPlan {
            resume: Some(ResumeFrom { turn: record.loop_turn }),
            record,
            session_id,
            prompt: Vec::new(),
            settings: RunSettings {
                model,
                thinking,
                max_tokens: options.max_tokens.or(kept.max_tokens),
                system: options.system.or(kept.system),
                behavior,
                system_notes: Vec::new(),
                hooks: options.hooks,
                response_schema: options.response_schema,
            },
            workspace: started.workspace,
            mcp: started.mcp,
        }
    }

    /// Runs a plan: the run is recorded, the loop runs it with the agent's
    /// additions, and its end is recorded.
    async fn execute(&self, plan: RunPlan, signal: AbortSignal) -> Result<AgentStats, AgentError> {
        let mut record = plan.record.clone();
        let session_id = plan.session_id.clone();
        self.record_start(&plan).await?;
        let run_id = record.id.clone();
        let options = self.loop_options(plan, signal).await;
        let outcome = self.inner.looped.run(options).await;
        if let Some(d) = &self.inner.durable {
            d.runtime.unbind_run(&run_id);
        }
        self.keep_active_skills().await;
        let end_turn = self.inner.looped.turn_count() as u32;
        if let Some(checkpoints) = &self.inner.checkpoints {
            checkpoints.end(end_turn).await;
        }
        if let Some(id) = &session_id {
            self.record_end(id, &mut record, &outcome, end_turn).await;
        }
        Ok(outcome?)
    }

    /// The run starts on its session: its checkpoints begin, a new run
    /// fires `session:start`, its record is saved and its steps recorded.
    async fn record_start(&self, plan: &RunPlan) -> Result<(), AgentError> {
        let Some(id) = &plan.session_id else {
            return Ok(());
        };
        let record = &plan.record;
        if let Some(checkpoints) = &self.inner.checkpoints {
            match plan.resume {
                None => {
                    checkpoints
                        .begin(id, &record.id, record.first_turn, &record.prompt)
                        .await
                }
                Some(_) => checkpoints.resume(id, &record.id),
            }
        }
        if plan.resume.is_none() {
            let mut ev = SessionStart::new(SessionStartInit {
                session_id: id.clone(),
                prompt: record.prompt.clone(),
                run_id: record.id.clone(),
            });
            self.observe(&mut ev).await;
        }
        self.save_run(id, record.clone()).await?;
        if let Some(d) = &self.inner.durable {
            d.runtime.bind_run(&record.id, id);
        }
        Ok(())
    }

    /// The loop's options for a plan, with what the agent adds: the MCP
    /// servers' tools and instructions, the skills catalog, the
    /// extensions' transforms and the spawner.
    async fn loop_options(&self, plan: RunPlan, signal: AbortSignal) -> RunOptions {
        let RunPlan {
            record,
            session_id,
            resume,
            prompt,
            settings,
            workspace,
            mcp,
        } = plan;
        let mut system_additions = Vec::new();
        if let Some(instructions) = &mcp.instructions {
            system_additions.push(SystemAddition::Section(format!("# MCP servers\n\n{instructions}")));
        }
        let mut system_notes = settings.system_notes;
        // The skills catalog goes in the dynamic half of the system prompt,
        // so the cached static half stays the same bytes.
        if self.inner.skills.enabled() {
            self.inner.skills.resolve(&self.inner.hooks).await;
            if let Some((catalog, listed)) = self.inner.skills.catalog() {
                system_additions.push(SystemAddition::Dynamic(catalog.clone()));
                self.inner.skills.announce(&self.inner.hooks, &catalog, listed).await;
            }
            system_notes.extend(self.inner.skills.take_notes());
        }
        let spawning = zidane_core::spawn::Spawning::new(match &self.inner.spawner {
            Some(spawner) => Arc::clone(spawner),
            None => Arc::new(super::subagents::RunSpawner {
                parent: self.clone(),
                extra_tools: mcp.tools.clone(),
                mcp_instructions: mcp.instructions,
                handle: workspace.handle.clone(),
            }),
        });
        RunOptions {
            spawning,
            prompt,
            system: settings.system,
            system_additions,
            extra_tools: mcp.tools,
            late_tools: mcp.late,
            system_notes,
            model: settings.model,
            thinking: settings.thinking,
            max_tokens: settings.max_tokens.or(self.inner.max_tokens),
            cache_ttl: self.inner.cache_ttl,
            behavior: settings.behavior,
            behavior_transforms: self.inner.transforms.behavior.clone(),
            tool_transforms: self.inner.transforms.tool_catalog.clone(),
            hooks: settings.hooks,
            response_schema: settings.response_schema,
            run_id: Some(record.id),
            workspace: Some(workspace),
            signal: Some(signal),
            session_id,
            resume,
            ..Default::default()
        }
    }

    /// Records how the run ended on its session and fires `session:end`. A
    /// process that lost the session writes nothing more, not even the end
    /// of its run.
    async fn record_end(
        &self,
        session_id: &str,
        record: &mut SessionRun,
        outcome: &Result<AgentStats, RunError>,
        end_turn: u32,
    ) {
        let stale = matches!(outcome, Err(e) if matches!(e.kind, zidane_loop::RunErrorKind::StaleEpoch(_)));
        let status = match outcome {
            Ok(stats) => stats.status,
            Err(e) => e.stats.status,
        };
        let (run_status, end_status) = match status {
            RunStatus::Completed | RunStatus::MaxTurns => (SessionRunStatus::Completed, SessionEndStatus::Completed),
            RunStatus::Aborted => (SessionRunStatus::Aborted, SessionEndStatus::Aborted),
            RunStatus::Error => (SessionRunStatus::Error, SessionEndStatus::Error),
            RunStatus::Suspended => (SessionRunStatus::Suspended, SessionEndStatus::Suspended),
        };
        if !stale {
            let durable = self.is_durable();
            record.status = run_status;
            record.ended_at = Some(self.inner.clock.now());
            record.end_turn = end_turn;
            record.resumable = durable && run_status == SessionRunStatus::Suspended;
            if let Err(e) = self.save_run(session_id, record.clone()).await {
                tracing::warn!(target: "zidane", "the end of the run could not be recorded: {e}");
            }
        }
        let session = if self.inner.hooks.has::<SessionEnd>() {
            self.session()
        } else {
            None
        };
        let mut ev = SessionEnd::new(SessionEndInit {
            session,
            session_id: session_id.to_owned(),
            run_id: record.id.clone(),
            status: end_status,
            turn_range: (record.first_turn, end_turn),
        });
        self.observe(&mut ev).await;
    }
}

/// The options of a run that a resume applies again.
fn kept_options(options: &AgentRunOptions) -> SessionRunOptions {
    SessionRunOptions {
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
    }
}
