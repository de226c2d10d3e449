//! A run: turns until the model stops, a cap is hit or the run is aborted.

/// An event's `…Init` with the run, the loop turn, the turn id and the
/// model of a stream event (every `stream:*` event, `context:overflow`,
/// `model:fallback`), then its own fields.
macro_rules! stream_init {
    ($init:ident { $($body:tt)* }, $cx:expr, $turn_id:expr, $model:expr) => {
        $init {
            run_id: $cx.run_id.clone(),
            turn: $cx.turn,
            turn_id: ($turn_id).to_owned(),
            model: ($model).to_owned(),
            $($body)*
        }
    };
}

mod config;
mod control;
mod finish;
mod recover;
mod request;
mod stream;

pub use config::{
    BehaviorTransform, LateTools, LoopConfig, ModelRef, ResumeFrom, RunOptions, SystemAddition, ToolTransform,
};
pub(crate) use control::{Control, Queued};

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;
use zidane_hooks::{HookBus, HookEvent, HookScope};
use zidane_provider::{
    AbortController, AbortSignal, AssistantMessage, ContentBlock, FinishReason, Message, Provider, ProviderError, Role,
    SessionTurn, StreamOptions, TurnUsage,
};

use crate::behavior::Behavior;
use crate::error::{RunError, RunErrorKind};
use crate::pairing::INTERRUPT_MESSAGE_FOR_TOOL_USE;
use zidane_core::events::{
    self, AgentAbort, AgentDone, AgentStart, AgentStats, RunBeforeEnd, RunStatus, SystemBefore, ToolCounts,
};
use zidane_core::events::{AgentAbortInit, AgentDoneInit, AgentStartInit, RunBeforeEndInit, SystemBeforeInit};
use zidane_core::execution::Workspace;
use zidane_core::seams::{Durability, Spawning, StaleEpochError, Step, StepError, StepKey, StepKind, StepValue};
use zidane_core::tool::ToolSet;

#[derive(Default)]
pub(crate) struct State {
    pub(crate) turns: Vec<SessionTurn>,
    pub(crate) messages: Vec<Message>,
    pub(crate) control: Option<Control>,
    pub(crate) parked_cancels: BTreeMap<String, String>,
    pub(crate) committed_tool_state: Option<Arc<Mutex<BTreeMap<String, Value>>>>,
    pub(crate) last_request_at: Option<u64>,
    pub(crate) last_request: Option<Arc<StreamOptions>>,
    pub(crate) last_provider: Option<Arc<dyn Provider>>,
    /// The first `paired` messages passed the pairing pass unchanged; the
    /// loop's own appends keep calls and results together, so a request
    /// built from the loop's own transcript needs no new pass.
    pub(crate) paired: usize,
    /// Turns the sink could not save, in order: the next flush sends them
    /// first, so the store never holds a later turn without an earlier one.
    pub(crate) unsaved: Vec<SessionTurn>,
    /// The last save failure not yet reported to a run.
    pub(crate) save_failure: Option<zidane_core::events::SharedError>,
    /// The store refused a save because another process took the session
    /// over: the run stops and writes nothing more.
    pub(crate) stale: Option<StaleEpochError>,
    /// The run and loop turn the next flush belongs to.
    pub(crate) mark: Option<(String, u32)>,
}

pub(crate) struct Inner {
    pub(crate) config: LoopConfig,
    pub(crate) state: Mutex<State>,
    pub(crate) running: AtomicBool,
    /// Compiled input schemas, by tool name (tools do not change during a
    /// loop's life).
    pub(crate) validators: Mutex<BTreeMap<String, Arc<crate::validate::InputValidator>>>,
}

impl Inner {
    pub(crate) fn lock(&self) -> parking_lot::MutexGuard<'_, State> {
        self.state.lock()
    }
}

/// The run loop: holds the conversation and runs prompts against it, one run
/// at a time. Cheap to clone; clones share the conversation, so another task
/// can `steer`, `abort` or `cancel_tool` while `run` is awaited.
#[derive(Clone)]
pub struct RunLoop {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for RunLoop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunLoop")
            .field("running", &self.is_running())
            .finish_non_exhaustive()
    }
}

/// A provider and the model id to ask it for.
pub(crate) type Target = (Arc<dyn Provider>, String);

/// A run in flight: what the turn and dispatch code share.
pub(crate) struct RunCx {
    pub(crate) run_id: String,
    pub(crate) behavior: Behavior,
    pub(crate) signal: AbortSignal,
    pub(crate) targets: Vec<Target>,
    pub(crate) target: usize,
    pub(crate) stats: AgentStats,
    pub(crate) run_counts: Mutex<ToolCounts>,
    pub(crate) repeat_history: Mutex<Vec<(String, String)>>,
    pub(crate) nudges: Mutex<Vec<String>>,
    pub(crate) tool_state: Arc<Mutex<BTreeMap<String, Value>>>,
    pub(crate) turn: u32,
    /// The last turn paused: the next request sends it back as is, ending
    /// with the assistant message the provider continues.
    pub(crate) continuing_pause: bool,
    /// The tool list as the model sees it, built once per run.
    pub(crate) tool_specs: Vec<zidane_provider::ToolSpec>,
    /// The run's tools: the loop's and the run's extra ones.
    pub(crate) tools: ToolSet,
    /// Tools that joined the run after it started (`RunOptions::late_tools`).
    pub(crate) late_tools: Vec<Arc<dyn zidane_core::tool::Tool>>,
    /// Where tool calls act.
    pub(crate) workspace: Option<Workspace>,
    /// How tool calls spawn sub-agents, and the ledger of those that ran.
    pub(crate) spawning: Spawning,
    /// Calls of the current turn whose arguments were cut off or malformed:
    /// each is answered with this error instead of running.
    pub(crate) malformed: BTreeMap<String, String>,
    /// Calls of the current turn whose arguments were repaired, with what
    /// was changed (reported with the validation's coercions).
    pub(crate) repairs: BTreeMap<String, Vec<String>>,
    /// The loop turn a resumed run continues (its batch may be half done).
    pub(crate) resumed_turn: Option<u32>,
    /// What gate handlers kept per call (`resumeState`), stored with the
    /// call's step.
    pub(crate) resume_states: Mutex<BTreeMap<String, serde_json::Map<String, Value>>>,
    /// The current turn compacted the conversation for a context overflow
    /// (once a turn: a second overflow fails the run).
    pub(crate) overflow_compacted: bool,
}

impl RunCx {
    /// Adds the sub-agents that ended since the last call to the run's
    /// totals and its `children`.
    pub(crate) fn fold_children(&mut self) {
        for child in self.spawning.ledger().take() {
            self.stats.add_child(&child.stats);
            self.stats.children.push(child);
        }
    }
}

pub(crate) enum Ending {
    Completed,
    MaxTurns,
    Aborted { reason: Option<String>, hook: bool },
    Paused,
    Suspended,
    Failed(RunErrorKind),
}

pub(crate) enum TurnFailure {
    Aborted(Option<AssistantMessage>),
    Suspended,
    Failed(RunErrorKind),
    /// The request is larger than the provider's window and eliding could
    /// not shrink it: the turn compacts the conversation and asks again
    /// (`stream:error` has not fired yet).
    Overflow {
        error: ProviderError,
        model: String,
    },
}

impl RunLoop {
    /// A loop with an empty conversation.
    pub fn new(config: LoopConfig) -> Self {
        RunLoop {
            inner: Arc::new(Inner {
                config,
                state: Mutex::new(State::default()),
                running: AtomicBool::new(false),
                validators: Mutex::default(),
            }),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &LoopConfig {
        &self.inner.config
    }

    /// The hook bus.
    pub fn hooks(&self) -> &HookBus {
        &self.inner.config.hooks
    }

    /// Whether a run is in progress.
    pub fn is_running(&self) -> bool {
        self.inner.running.load(Ordering::Acquire)
    }

    /// The conversation so far.
    pub fn turns(&self) -> Vec<SessionTurn> {
        self.inner.lock().turns.clone()
    }

    /// How many turns the conversation holds (without copying them).
    pub fn turn_count(&self) -> usize {
        self.inner.lock().turns.len()
    }

    /// The text of the newest assistant turn, without copying the
    /// conversation; `None` before the model's first answer.
    pub fn last_text(&self) -> Option<String> {
        let inner = self.inner.lock();
        let turn = inner.turns.iter().rev().find(|t| t.role == Role::Assistant)?;
        Some(turn.text())
    }

    /// The usage of the newest turn that has one, without copying the
    /// conversation.
    pub fn last_usage(&self) -> Option<TurnUsage> {
        self.inner.lock().turns.iter().rev().find_map(|t| t.usage.clone())
    }

    /// Replaces the conversation (loading a session). Refused while running.
    pub fn set_turns(&self, turns: Vec<SessionTurn>) -> bool {
        if self.is_running() {
            return false;
        }
        self.replace_turns(turns);
        true
    }

    /// The committed durable tool state (loaded at the first run).
    pub fn committed_tool_state(&self) -> BTreeMap<String, Value> {
        let committed = self.inner.lock().committed_tool_state.clone();
        committed.map(|c| c.lock().clone()).unwrap_or_default()
    }

    /// When the last request was sent (epoch ms) and the options it used.
    /// The run and loop turn in flight, when one is.
    pub fn current_turn(&self) -> Option<(String, u32)> {
        self.inner.lock().mark.clone()
    }

    /// When the last request was sent, and the request.
    pub fn last_request(&self) -> (Option<u64>, Option<Arc<StreamOptions>>) {
        let state = self.inner.lock();
        (state.last_request_at, state.last_request.clone())
    }

    /// The provider the last request went to.
    pub fn last_provider(&self) -> Option<Arc<dyn Provider>> {
        self.inner.lock().last_provider.clone()
    }

    /// Runs `options` to the end. Returns the run's statistics on completion,
    /// on a turn cap and on abort; a failure carries them too.
    pub async fn run(&self, mut options: RunOptions) -> Result<AgentStats, RunError> {
        if self.inner.running.swap(true, Ordering::AcqRel) {
            return Err(RunError {
                kind: RunErrorKind::Busy,
                stats: Box::default(),
            });
        }
        let _running = RunningGuard(&self.inner);
        let (mut cx, scope) = self.start(&mut options).await?;
        let ending = self.run_turns(&mut cx, &options).await;
        let result = self.end(cx, ending).await;
        drop(scope);
        result
    }

    /// A run starts: its behavior, system prompt, hooks, targets and
    /// abort signal are settled, and `agent:start` fires.
    async fn start(&self, options: &mut RunOptions) -> Result<(RunCx, HookScope), RunError> {
        let config = &self.inner.config;
        let run_id = options.run_id.clone().unwrap_or_else(|| config.clock.id());
        let mut behavior = options.behavior.apply(&config.behavior);
        for transform in &options.behavior_transforms {
            transform(&mut behavior);
        }
        if !options.system_additions.is_empty() {
            options.system = options.run_system(config.system.as_ref());
            options.system_additions.clear();
        }

        // Per-run hooks: checked before anything happens, removed at the end.
        let scope: HookScope = match options.hooks.install(&config.hooks, events::HOOK_SPECS) {
            Ok(scope) => scope,
            Err(e) => {
                return Err(RunError {
                    kind: RunErrorKind::Hook(e),
                    stats: Box::default(),
                });
            }
        };
        let targets = match self.resolve_targets(&options.model) {
            Ok(t) => t,
            Err(kind) => {
                return Err(RunError {
                    kind,
                    stats: Box::default(),
                });
            }
        };
        let controller = match &options.signal {
            Some(outer) => outer.child(),
            None => AbortController::new(),
        };
        let committed = self.tool_state().await;
        {
            let mut state = self.inner.lock();
            state.parked_cancels.clear();
            state.control = Some(Control {
                abort: controller.clone(),
                ..Default::default()
            });
        }
        let mut cx = RunCx {
            run_id: run_id.clone(),
            behavior,
            signal: controller.signal(),
            targets,
            target: 0,
            stats: AgentStats::default(),
            run_counts: Mutex::default(),
            repeat_history: Mutex::default(),
            nudges: Mutex::default(),
            tool_state: committed,
            turn: 0,
            continuing_pause: false,
            tool_specs: Vec::new(),
            tools: self.run_tools(options),
            late_tools: Vec::new(),
            workspace: options.workspace.clone(),
            spawning: options.spawning.clone(),
            malformed: BTreeMap::new(),
            repairs: BTreeMap::new(),
            resumed_turn: options.resume.map(|r| r.turn + 1),
            resume_states: Mutex::default(),
            overflow_compacted: false,
        };
        if let Some(resume) = options.resume {
            cx.turn = resume.turn;
        }
        self.inner.lock().mark = Some((run_id.clone(), cx.turn));

        let mut start = AgentStart::new(AgentStartInit {
            agent_name: config.agent_name.clone(),
            depth: config.depth,
            parent_run_id: config.parent_run_id.clone(),
            provider_name: cx.targets.first().map(|(p, _)| p.name().to_owned()),
            run_id: run_id.clone(),
            started_at: config.clock.now_ms(),
            tracing_context: config.tracing_context.clone(),
        });
        self.observe(&mut start).await;

        cx.tool_specs = cx.tools.specs();
        Ok((cx, scope))
    }

    /// A run ends: how it ended becomes its status (a lost session or a
    /// failed save first), `agent:abort` and `agent:done` fire.
    async fn end(&self, mut cx: RunCx, mut ending: Ending) -> Result<AgentStats, RunError> {
        let run_id = cx.run_id.clone();
        // A turn the store could not keep fails the run, whatever else
        // happened: the host must not believe the session holds it.
        if let Some(stale) = self.inner.lock().stale.take() {
            ending = Ending::Failed(RunErrorKind::StaleEpoch(stale));
        } else if let Some(kind) = self.take_save_failure() {
            ending = Ending::Failed(kind);
        }
        // A suspend that a grace period ended with an abort is still a
        // suspend: nothing was answered as interrupted.
        if self.suspending() && matches!(ending, Ending::Aborted { .. }) {
            ending = Ending::Suspended;
        }
        let (status, error, abort) = match ending {
            Ending::Completed => (RunStatus::Completed, None, None),
            Ending::Suspended => {
                cx.stats.suspended = true;
                (RunStatus::Suspended, None, None)
            }
            Ending::MaxTurns => (RunStatus::MaxTurns, None, None),
            Ending::Paused => (RunStatus::Aborted, None, None),
            Ending::Aborted { reason, hook } => (RunStatus::Aborted, None, Some((reason, hook))),
            Ending::Failed(kind @ RunErrorKind::BudgetExceeded { .. }) => (RunStatus::Aborted, Some(kind), None),
            Ending::Failed(kind) => (RunStatus::Error, Some(kind), None),
        };
        cx.stats.status = status;
        cx.fold_children();
        {
            let mut state = self.inner.lock();
            state.control = None;
            state.mark = None;
        }
        if let Some((reason, _)) = abort {
            let mut ev = AgentAbort::new(AgentAbortInit {
                reason,
                run_id: Some(run_id.clone()),
            });
            self.observe(&mut ev).await;
        }
        let mut done = AgentDone::new(AgentDoneInit {
            stats: cx.stats.clone(),
        });
        self.observe(&mut done).await;
        match error {
            None => Ok(cx.stats),
            Some(kind) => Err(RunError {
                kind,
                stats: Box::new(cx.stats),
            }),
        }
    }

    async fn tool_state(&self) -> Arc<Mutex<BTreeMap<String, Value>>> {
        if let Some(committed) = self.inner.lock().committed_tool_state.clone() {
            return committed;
        }
        let loaded = match self.inner.config.tool_state.load().await {
            Ok(map) => map,
            Err(e) => {
                tracing_warn(&format!("tool state could not be loaded: {e}"));
                BTreeMap::new()
            }
        };
        // What the conversation read before this process: `edit` of a file
        // read then is not refused, and a re-read of it is deduplicated.
        let prefix = zidane_core::read_state::READ_STATE_PREFIX;
        if loaded
            .range::<str, _>((std::ops::Bound::Included(prefix), std::ops::Bound::Unbounded))
            .next()
            .is_some_and(|(k, _)| k.starts_with(prefix))
        {
            let turns = self.inner.lock().turns.clone();
            zidane_core::read_state::hydrate_read_state_from_tool_state(&self.inner.config.read_state, &loaded, &turns);
        }
        let committed = Arc::new(Mutex::new(loaded));
        self.inner.lock().committed_tool_state = Some(Arc::clone(&committed));
        committed
    }

    fn resolve_targets(&self, chain: &[ModelRef]) -> Result<Vec<Target>, RunErrorKind> {
        let config = &self.inner.config;
        let Some(primary) = config.providers.first() else {
            return Err(RunErrorKind::UnknownProvider(String::new()));
        };
        let chain = if chain.is_empty() { &config.model[..] } else { chain };
        if chain.is_empty() {
            return Ok(vec![(Arc::clone(primary), primary.meta().default_model.clone())]);
        }
        let mut targets = Vec::new();
        for r in chain {
            match &r.provider {
                Some(name) => {
                    let Some(p) = config.providers.iter().find(|p| p.name() == name) else {
                        return Err(RunErrorKind::UnknownProvider(name.clone()));
                    };
                    targets.push((Arc::clone(p), r.model.clone()));
                }
                None => targets.extend(config.providers.iter().map(|p| (Arc::clone(p), r.model.clone()))),
            }
        }
        Ok(targets)
    }

    /// Emits an observational event: a handler's failure is logged, never
    /// fatal.
    pub(crate) async fn observe<E: HookEvent>(&self, event: &mut E) {
        self.inner.config.hooks.observe(event).await;
    }

    /// The run's tools: `tools`, or the loop's with `extra_tools`; then the
    /// run's tool transforms.
    fn run_tools(&self, options: &RunOptions) -> ToolSet {
        self.run_tools_with(options, &[])
    }

    /// [`run_tools`](Self::run_tools) with the tools that joined the run
    /// late.
    fn run_tools_with(&self, options: &RunOptions, late: &[Arc<dyn zidane_core::tool::Tool>]) -> ToolSet {
        let mut tools = match &options.tools {
            Some(tools) => tools.clone(),
            None => {
                let mut tools = self.inner.config.tools.clone();
                for tool in options.extra_tools.iter().chain(late) {
                    tools.insert(Arc::clone(tool));
                }
                tools
            }
        };
        for transform in &options.tool_transforms {
            transform(&mut tools);
        }
        tools
    }

    /// Tools that became ready since the last turn join the run.
    fn take_late_tools(&self, cx: &mut RunCx, options: &RunOptions) {
        let Some(late) = &options.late_tools else {
            return;
        };
        let arrived = late();
        if arrived.is_empty() || options.tools.is_some() {
            return;
        }
        cx.late_tools.extend(arrived);
        cx.tools = self.run_tools_with(options, &cx.late_tools);
        cx.tool_specs = cx.tools.specs();
    }

    /// Emits a decision or transform event: a handler's failure fails the run.
    pub(crate) async fn decide<E: HookEvent>(&self, event: &mut E) -> Result<(), RunErrorKind> {
        self.inner.config.hooks.emit(event).await.map_err(RunErrorKind::Hook)
    }

    async fn run_turns(&self, cx: &mut RunCx, options: &RunOptions) -> Ending {
        if let Some(ending) = self.open_run(options).await {
            return ending;
        }
        let mut answers = Answers::default();
        loop {
            if let Some(ending) = self.stopped(cx) {
                return ending;
            }
            self.inject_queued(false).await;
            cx.turn += 1;
            self.inner.lock().mark = Some((cx.run_id.clone(), cx.turn));
            self.take_late_tools(cx, options);
            self.maybe_compact(cx).await;
            let turn_id = self.inner.config.clock.id();
            cx.overflow_compacted = false;
            let message = loop {
                let request = match self.build_request(cx, options, &turn_id).await {
                    Ok(r) => r,
                    Err(kind) => return Ending::Failed(kind),
                };
                cx.continuing_pause = false;
                match self.stream_turn(cx, request, &turn_id).await {
                    Ok(message) => break message,
                    Err(TurnFailure::Aborted(partial)) => {
                        if let Some(partial) = partial {
                            self.finish_turn(cx, partial, &turn_id).await;
                            self.close_pending_calls(INTERRUPT_MESSAGE_FOR_TOOL_USE).await;
                        }
                        return aborted(cx);
                    }
                    Err(TurnFailure::Suspended) => return Ending::Suspended,
                    Err(TurnFailure::Failed(kind)) => return Ending::Failed(kind),
                    // Compacted: the request is built again from the shorter
                    // conversation.
                    Err(TurnFailure::Overflow { error, model }) => {
                        if let Err(kind) = self.compact_for_overflow(cx, &turn_id, error, &model).await {
                            return Ending::Failed(kind);
                        }
                    }
                }
            };
            let finish = message.finish_reason;
            let has_calls = message.tool_calls().next().is_some() || !message.incomplete_tool_calls.is_empty();
            let assistant = self.finish_turn(cx, message, &turn_id).await;
            if let Some(kind) = self.check_caps(cx) {
                self.close_pending_calls(INTERRUPT_MESSAGE_FOR_TOOL_USE).await;
                return Ending::Failed(kind);
            }
            let flow = if has_calls {
                answers.pauses = 0;
                self.tool_batch(cx, assistant, &turn_id).await
            } else {
                self.answered(cx, options, &assistant, finish, &mut answers).await
            };
            if let Flow::End(ending) = flow {
                return ending;
            }
        }
    }

    /// The run's prompt, with `system:before` first; an empty prompt on an
    /// empty conversation ends the run.
    async fn open_run(&self, options: &RunOptions) -> Option<Ending> {
        if let Some(system) = &options.system {
            let mut ev = SystemBefore::new(SystemBeforeInit { system: system.clone() });
            self.observe(&mut ev).await;
        }
        let mut prompt = options.prompt.clone();
        prompt.extend(options.system_notes.iter().map(|n| ContentBlock::text(n.clone())));
        if !is_empty_prompt(&prompt) {
            let turn = self.push_turn(Role::User, prompt, None);
            self.flush(&[turn]).await;
        } else if self.inner.lock().messages.is_empty() {
            return Some(Ending::Failed(RunErrorKind::EmptyPrompt));
        }
        None
    }

    /// Whether the run stops before its next turn: a turn the store could
    /// not keep (the caller hears of it as the run's error) or a store
    /// another process took over, a suspend, an abort, the turn cap.
    fn stopped(&self, cx: &RunCx) -> Option<Ending> {
        {
            let state = self.inner.lock();
            if state.save_failure.is_some() || state.stale.is_some() {
                return Some(Ending::Completed);
            }
        }
        if self.suspending() {
            return Some(Ending::Suspended);
        }
        if cx.signal.is_aborted() {
            return Some(aborted(cx));
        }
        if cx.behavior.max_turns.is_some_and(|max| cx.turn >= max) {
            return Some(Ending::MaxTurns);
        }
        None
    }

    /// A tool-calling turn: its calls run, their results are kept, and the
    /// batch's sub-agents count against the budgets before the next
    /// request.
    async fn tool_batch(&self, cx: &mut RunCx, assistant: SessionTurn, turn_id: &str) -> Flow {
        if self.suspending() {
            return Flow::End(Ending::Suspended);
        }
        let results = self.dispatch_turn(cx, &assistant, turn_id).await;
        // A suspended batch is left pending: finished calls are in their
        // step records, the others run (or are reported interrupted) on
        // resume.
        if self.suspending() {
            return Flow::End(Ending::Suspended);
        }
        if let Some(stale) = self.inner.lock().stale.clone() {
            return Flow::End(Ending::Failed(RunErrorKind::StaleEpoch(stale)));
        }
        cx.stats.tool_calls += results.len() as u32;
        if let Err(kind) = self.push_results(cx, assistant, results, turn_id).await {
            return Flow::End(Ending::Failed(kind));
        }
        cx.fold_children();
        if let Some(kind) = self.check_caps(cx) {
            return Flow::End(Ending::Failed(kind));
        }
        if cx.signal.is_aborted() {
            return Flow::End(aborted(cx));
        }
        Flow::Continue
    }

    /// A turn that called no tool: a pause goes on, an answer that misses
    /// the response schema is asked again (twice), queued messages go on,
    /// and `run:beforeEnd` may keep the run going with a follow-up.
    async fn answered(
        &self,
        cx: &mut RunCx,
        options: &RunOptions,
        assistant: &SessionTurn,
        finish: FinishReason,
        answers: &mut Answers,
    ) -> Flow {
        if !assistant.content.is_empty() {
            self.flush(std::slice::from_ref(assistant)).await;
        }
        if finish == FinishReason::Pause {
            answers.pauses += 1;
            if answers.pauses > cx.behavior.max_consecutive_pause_turns {
                return Flow::End(Ending::Paused);
            }
            cx.continuing_pause = true;
            return Flow::Continue;
        }
        answers.pauses = 0;
        if let Some(schema) = &options.response_schema {
            match self.check_output(schema, assistant).await {
                Ok(()) => {}
                Err(reason) if answers.output_retries < 2 => {
                    answers.output_retries += 1;
                    self.queue_internal(format!(
                        "Your answer does not match the required JSON schema ({reason}). Reply again with only a JSON value that matches it."
                    ));
                    return Flow::Continue;
                }
                Err(reason) => return Flow::End(Ending::Failed(RunErrorKind::Output(reason))),
            }
        }
        if self.inject_queued(true).await {
            return Flow::Continue;
        }
        if cx.signal.is_aborted() {
            return Flow::End(aborted(cx));
        }
        match self.decide_end(cx, options).await {
            Ok(Some(message)) => {
                self.inject(Queued {
                    content: vec![ContentBlock::text(message)],
                    id: None,
                })
                .await;
                Flow::Continue
            }
            // A message that came while the end was decided keeps the run
            // going (a follow-up now, steers at the next turn); after this
            // none is taken.
            Ok(None) if self.close_queues() => {
                self.inject_queued(true).await;
                Flow::Continue
            }
            Ok(None) => Flow::End(Ending::Completed),
            Err(kind) => Flow::End(Ending::Failed(kind)),
        }
    }
}

/// Whether the turn loop goes on.
enum Flow {
    Continue,
    End(Ending),
}

/// What the turn loop counts across answers: pause turns in a row, and
/// answers asked again for the response schema.
#[derive(Default)]
struct Answers {
    pauses: u32,
    output_retries: u32,
}

/// The run was aborted (by the host, not a hook).
fn aborted(cx: &RunCx) -> Ending {
    Ending::Aborted {
        reason: cx.signal.reason(),
        hook: false,
    }
}

impl RunLoop {
    /// The end-of-run decision as a step: `run:beforeEnd` may keep the run
    /// going with a follow-up message; a checkpoint runtime answers a
    /// decision it recorded without asking again.
    async fn decide_end(&self, cx: &RunCx, options: &RunOptions) -> Result<Option<String>, RunErrorKind> {
        let step = Step {
            key: StepKey {
                run_id: cx.run_id.clone(),
                turn: cx.turn,
                kind: StepKind::Decision,
                name: "beforeEnd".into(),
            },
            durability: Durability::Safe,
        };
        let mut failure = None;
        let recorded = {
            let failure = &mut failure;
            let work = async move {
                let session = if self.inner.config.hooks.has::<RunBeforeEnd>() {
                    self.inner
                        .config
                        .sink
                        .as_ref()
                        .and_then(|sink| sink.session(self.turns()))
                } else {
                    None
                };
                let mut before_end = RunBeforeEnd::new(RunBeforeEndInit {
                    session,
                    run_id: cx.run_id.clone(),
                    session_id: options.session_id.clone(),
                    turn: cx.turn,
                });
                if let Err(kind) = self.decide(&mut before_end).await {
                    *failure = Some(kind);
                    return Err(Arc::new(events::MessageError("the decision failed".into())) as events::SharedError);
                }
                let follow_up = before_end.follow_up_message().map(str::to_owned);
                Ok(StepValue::Decision(serde_json::json!({ "followUp": follow_up })))
            };
            self.inner.config.runtime.step(step, Box::pin(work)).await
        };
        let value = match recorded {
            Ok(value) => value,
            Err(StepError::Record { value, .. }) => *value,
            Err(StepError::Work(e)) => return Err(failure.unwrap_or(RunErrorKind::Durable(e))),
            Err(StepError::StaleEpoch(e)) => return Err(RunErrorKind::StaleEpoch(e)),
        };
        Ok(match value {
            StepValue::Decision(v) => v.get("followUp").and_then(Value::as_str).map(str::to_owned),
            _ => None,
        })
    }
}

struct RunningGuard<'a>(&'a Inner);

impl Drop for RunningGuard<'_> {
    fn drop(&mut self) {
        // Also on a cancelled `run` future: the loop must not stay busy.
        let mut state = self.0.lock();
        state.control = None;
        state.mark = None;
        drop(state);
        self.0.running.store(false, Ordering::Release);
    }
}

pub(crate) fn is_empty_prompt(content: &[ContentBlock]) -> bool {
    content
        .iter()
        .all(|b| matches!(b, ContentBlock::Text { text } if text.trim().is_empty()))
}

/// Logs through `tracing` when a subscriber listens.
pub(crate) fn tracing_warn(message: &str) {
    tracing::warn!(target: "zidane", "{message}");
}
