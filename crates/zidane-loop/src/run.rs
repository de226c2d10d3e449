//! A run: turns until the model stops, a cap is hit or the run is aborted.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::Value;
use zidane_hooks::{HookBus, HookEvent, HookMap, HookScope};
use zidane_provider::{
    AbortController, AbortSignal, AssistantMessage, CacheTtl, ContentBlock, ErrorKind, FinishReason, Message,
    MessageAccumulator, Pricing, Provider, ProviderError, Role, SessionTurn, StreamEvent, StreamOptions, ThinkingLevel,
    ToolResultContent, TurnUsage,
};

use crate::behavior::{Behavior, BehaviorOverride};
use crate::clock::{Clock, SystemClock};
use crate::error::{BudgetCap, RunError, RunErrorKind};
use crate::pairing::{INTERRUPT_MESSAGE_FOR_TOOL_USE, ends_with_user_message, ensure_tool_result_pairing};
use zidane_core::events::{
    self, AgentAbort, AgentDone, AgentStart, AgentStats, ContextOverflow, ContextTransform, CumulativeUsage,
    ModelFallback, ModelTarget, Output, PairingRepair, RunBeforeEnd, RunStatus, SharedError, SteerInject, StreamEnd,
    StreamError, StreamProgress, StreamRetry, StreamServerToolResult, StreamServerToolUse, StreamStart, StreamText,
    StreamThinking, SystemBefore, SystemTransform, ToolCounts, TurnAfter, TurnBefore, TurnToolCounts, Usage,
};
use zidane_core::events::{
    AgentAbortInit, AgentDoneInit, AgentStartInit, ContextOverflowInit, ModelFallbackInit, OutputInit,
    PairingRepairInit, RunBeforeEndInit, SteerInjectInit, StreamEndInit, StreamErrorInit, StreamProgressInit,
    StreamRetryInit, StreamServerToolResultInit, StreamServerToolUseInit, StreamStartInit, StreamTextInit,
    StreamThinkingInit, SystemBeforeInit, SystemTransformInit, TurnAfterInit, TurnBeforeInit, UsageInit,
};
use zidane_core::execution::Workspace;
use zidane_core::seams::{CompactCheck, Compactor, DurableRuntime, MemoryRuntime, StepKey, StepKind, TurnSink};
use zidane_core::tool::{MemoryToolState, ReadStateMap, ToolSet, ToolStateStore};

/// A model to run on: a model id, optionally pinned to a provider by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRef {
    /// Provider name; `None` tries every provider in order.
    pub provider: Option<String>,
    /// Model id.
    pub model: String,
}

impl From<&str> for ModelRef {
    fn from(model: &str) -> Self {
        ModelRef::any(model)
    }
}

impl From<String> for ModelRef {
    fn from(model: String) -> Self {
        ModelRef::any(model)
    }
}

impl ModelRef {
    /// A model id on any provider.
    pub fn any(model: impl Into<String>) -> Self {
        ModelRef {
            provider: None,
            model: model.into(),
        }
    }

    /// A model id on the named provider.
    pub fn on(provider: impl Into<String>, model: impl Into<String>) -> Self {
        ModelRef {
            provider: Some(provider.into()),
            model: model.into(),
        }
    }
}

/// What a loop is built with; lives as long as the loop.
#[derive(Clone)]
pub struct LoopConfig {
    /// Providers; the first is the primary.
    pub providers: Vec<Arc<dyn Provider>>,
    /// The default model chain of a run that names none (empty: the primary
    /// provider's default model). The same shape as [`RunOptions::model`].
    pub model: Vec<ModelRef>,
    /// Default system prompt.
    pub system: Option<String>,
    /// Tools offered to the model.
    pub tools: ToolSet,
    /// The hook bus.
    pub hooks: HookBus,
    /// Default behavior (a run may override it).
    pub behavior: Behavior,
    /// Time and id source.
    pub clock: Arc<dyn Clock>,
    /// Prices for turn costs.
    pub pricing: Pricing,
    /// Where steps run (and, when durable, are recorded).
    pub runtime: Arc<dyn DurableRuntime>,
    /// Where turns go as they are produced.
    pub sink: Option<Arc<dyn TurnSink>>,
    /// Checked before each provider request; may compact the conversation.
    pub compactor: Option<Arc<dyn Compactor>>,
    /// Backing store of durable tool state.
    pub tool_state: Arc<dyn ToolStateStore>,
    /// Read state shared by the tools.
    pub read_state: ReadStateMap,
    /// Display name (in `agent:start`).
    pub agent_name: Option<String>,
    /// Depth below the root agent (0 for a root).
    pub depth: u32,
    /// The spawning run, for sub-agents.
    pub parent_run_id: Option<String>,
    /// Trace carrier from the parent, for sub-agents.
    pub tracing_context: BTreeMap<String, String>,
    /// Reason given to a `cancel_tool` without one.
    pub cancel_reason: String,
}

impl LoopConfig {
    /// The model to ask `provider` for when nothing else says: the first
    /// entry of the default chain that may run on it, else its own default.
    pub fn default_model_for(&self, provider: &dyn Provider) -> String {
        self.model
            .iter()
            .find(|r| r.provider.as_deref().is_none_or(|p| p == provider.name()))
            .map_or_else(|| provider.meta().default_model.clone(), |r| r.model.clone())
    }

    /// A loop over one provider, everything else default.
    pub fn new(provider: Arc<dyn Provider>) -> Self {
        LoopConfig {
            providers: vec![provider],
            model: Vec::new(),
            system: None,
            tools: ToolSet::new(),
            hooks: HookBus::new(),
            behavior: Behavior::default(),
            clock: Arc::new(SystemClock::default()),
            pricing: Pricing::new(),
            runtime: Arc::new(MemoryRuntime),
            sink: None,
            compactor: None,
            tool_state: Arc::new(MemoryToolState::default()),
            read_state: ReadStateMap::default(),
            agent_name: None,
            depth: 0,
            parent_run_id: None,
            tracing_context: BTreeMap::new(),
            cancel_reason: "user-cancelled-tool".to_owned(),
        }
    }
}

/// One run's input.
#[derive(Clone, Default)]
pub struct RunOptions {
    /// The prompt: text, images, documents. May be empty when messages are
    /// queued.
    pub prompt: Vec<ContentBlock>,
    /// A run-level system prompt (replaces the loop's for this run).
    pub system: Option<String>,
    /// Notes appended to the prompt as extra text blocks.
    pub system_notes: Vec<String>,
    /// The model fallback chain (empty: the loop's default model).
    pub model: Vec<ModelRef>,
    /// Thinking level.
    pub thinking: ThinkingLevel,
    /// Exact thinking budget.
    pub thinking_budget: Option<u32>,
    /// Output token limit per request.
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Prompt-cache lifetime.
    pub cache_ttl: Option<CacheTtl>,
    /// This run's changes to the loop's behavior, merged field by field.
    pub behavior: BehaviorOverride,
    /// Hooks for this run only, removed when it ends.
    pub hooks: HookMap,
    /// JSON schema the final answer must match (`output` fires with it).
    pub response_schema: Option<Value>,
    /// The run's id (else one from the clock), for hosts that announce the
    /// run before it starts.
    pub run_id: Option<String>,
    /// Tools added for this run (discovered MCP tools), beside the loop's.
    pub extra_tools: Vec<Arc<dyn zidane_core::tool::Tool>>,
    /// The session the run is on, named in `run:beforeEnd` and
    /// `system:transform`.
    pub session_id: Option<String>,
    /// An outer signal: the run aborts when it fires (also before the run
    /// started, in which case no request is sent).
    pub signal: Option<AbortSignal>,
    /// Where this run's tool calls act (the agent's execution context and
    /// live handle); tools see it as [`ToolContext::workspace`](zidane_core::ToolContext::workspace).
    pub workspace: Option<Workspace>,
}

impl RunOptions {
    /// A text prompt.
    pub fn prompt(text: impl Into<String>) -> Self {
        RunOptions {
            prompt: vec![ContentBlock::text(text)],
            ..Default::default()
        }
    }
}

/// A queued message.
#[derive(Debug, Clone)]
pub(crate) struct Queued {
    pub(crate) content: Vec<ContentBlock>,
    pub(crate) id: Option<String>,
}

/// What `steer` / `cancel_tool` reach while a run is in flight.
#[derive(Default)]
pub(crate) struct Control {
    pub(crate) abort: AbortController,
    pub(crate) steer: VecDeque<Queued>,
    pub(crate) follow_up: VecDeque<Queued>,
    pub(crate) calls: BTreeMap<String, (AbortController, Option<String>)>,
}

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
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
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
    /// Where tool calls act.
    pub(crate) workspace: Option<Workspace>,
}

enum Ending {
    Completed,
    MaxTurns,
    Aborted { reason: Option<String>, hook: bool },
    Paused,
    Failed(RunErrorKind),
}

enum TurnFailure {
    Aborted(Option<AssistantMessage>),
    Failed(RunErrorKind),
}

/// Per-stream bookkeeping for the stream hooks.
struct Streamed {
    text: String,
    thinking: String,
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
        committed
            .map(|c| c.lock().unwrap_or_else(PoisonError::into_inner).clone())
            .unwrap_or_default()
    }

    /// When the last request was sent (epoch ms) and the options it used.
    pub fn last_request(&self) -> (Option<u64>, Option<Arc<StreamOptions>>) {
        let state = self.inner.lock();
        (state.last_request_at, state.last_request.clone())
    }

    /// The provider the last request went to.
    pub fn last_provider(&self) -> Option<Arc<dyn Provider>> {
        self.inner.lock().last_provider.clone()
    }

    /// Aborts the run in progress (no-op when idle). The run ends with its
    /// statistics so far and `agent:abort`.
    pub fn abort(&self, reason: Option<&str>) {
        if let Some(control) = &self.inner.lock().control {
            control.abort.abort(reason);
        }
    }

    /// Queues a message injected as a user turn at the next turn boundary.
    /// Returns `false` (queuing nothing) when no run is in flight, the run is
    /// aborted, or the prompt is empty.
    #[must_use = "`false` means nothing was queued or cancelled"]
    pub fn steer(&self, prompt: Vec<ContentBlock>, id: Option<String>) -> bool {
        self.queue(prompt, id, false)
    }

    /// Queues a message delivered when the model would otherwise finish.
    /// Same contract as [`RunLoop::steer`].
    #[must_use = "`false` means nothing was queued or cancelled"]
    pub fn follow_up(&self, prompt: Vec<ContentBlock>, id: Option<String>) -> bool {
        self.queue(prompt, id, true)
    }

    fn queue(&self, content: Vec<ContentBlock>, id: Option<String>, follow_up: bool) -> bool {
        if is_empty_prompt(&content) {
            return false;
        }
        let mut state = self.inner.lock();
        let Some(control) = state.control.as_mut() else {
            return false;
        };
        if control.abort.signal().is_aborted() {
            return false;
        }
        let queued = Queued { content, id };
        if follow_up {
            control.follow_up.push_back(queued);
        } else {
            control.steer.push_back(queued);
        }
        true
    }

    /// Cancels one in-flight tool call. `false` when no such call is running;
    /// the cancel is then parked and applied if the call registers before
    /// the next run starts.
    #[must_use = "`false` means nothing was queued or cancelled"]
    pub fn cancel_tool(&self, call_id: &str, reason: Option<&str>) -> bool {
        let reason = reason.map_or_else(|| self.inner.config.cancel_reason.clone(), str::to_owned);
        let mut state = self.inner.lock();
        if let Some(control) = state.control.as_mut()
            && let Some((call, cancelled)) = control.calls.get_mut(call_id)
        {
            if cancelled.is_some() {
                return false;
            }
            *cancelled = Some(reason.clone());
            call.abort(Some(&reason));
            return true;
        }
        state.parked_cancels.insert(call_id.to_owned(), reason);
        false
    }

    /// Clears the conversation. Refused while running.
    pub fn reset(&self) -> bool {
        if self.is_running() {
            return false;
        }
        let mut state = self.inner.lock();
        state.turns.clear();
        state.messages.clear();
        state.parked_cancels.clear();
        state.paired = 0;
        true
    }

    /// Runs `options` to the end. Returns the run's statistics on completion,
    /// on a turn cap and on abort; a failure carries them too.
    pub async fn run(&self, options: RunOptions) -> Result<AgentStats, RunError> {
        if self.inner.running.swap(true, Ordering::AcqRel) {
            return Err(RunError {
                kind: RunErrorKind::Busy,
                stats: Box::default(),
            });
        }
        let _running = RunningGuard(&self.inner);
        let config = &self.inner.config;
        let run_id = options.run_id.clone().unwrap_or_else(|| config.clock.id());
        let behavior = options.behavior.apply(&config.behavior);

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
            tools: {
                let mut tools = config.tools.clone();
                for tool in &options.extra_tools {
                    tools.insert(Arc::clone(tool));
                }
                tools
            },
            workspace: options.workspace.clone(),
        };

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
        let ending = self.run_turns(&mut cx, &options).await;
        let (status, error, abort) = match ending {
            Ending::Completed => (RunStatus::Completed, None, None),
            Ending::MaxTurns => (RunStatus::MaxTurns, None, None),
            Ending::Paused => (RunStatus::Aborted, None, None),
            Ending::Aborted { reason, hook } => (RunStatus::Aborted, None, Some((reason, hook))),
            Ending::Failed(kind @ RunErrorKind::BudgetExceeded { .. }) => (RunStatus::Aborted, Some(kind), None),
            Ending::Failed(kind) => (RunStatus::Error, Some(kind), None),
        };
        cx.stats.status = status;
        self.inner.lock().control = None;
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
        drop(scope);
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
        if let Err(e) = self.inner.config.hooks.emit(event).await {
            tracing_warn(&format!("{} handler failed: {e}", E::NAME));
        }
    }

    /// Emits a decision or transform event: a handler's failure fails the run.
    pub(crate) async fn decide<E: HookEvent>(&self, event: &mut E) -> Result<(), RunErrorKind> {
        self.inner.config.hooks.emit(event).await.map_err(RunErrorKind::Hook)
    }

    async fn run_turns(&self, cx: &mut RunCx, options: &RunOptions) -> Ending {
        let config = &self.inner.config;
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
            return Ending::Failed(RunErrorKind::EmptyPrompt);
        }
        let mut pauses = 0u32;
        let mut output_retries = 0u32;
        loop {
            if cx.signal.is_aborted() {
                return Ending::Aborted {
                    reason: cx.signal.reason(),
                    hook: false,
                };
            }
            if cx.behavior.max_turns.is_some_and(|max| cx.turn >= max) {
                return Ending::MaxTurns;
            }
            self.inject_queued(false).await;
            cx.turn += 1;
            self.maybe_compact(cx).await;
            let turn_id = config.clock.id();
            let request = match self.build_request(cx, options, &turn_id).await {
                Ok(r) => r,
                Err(kind) => return Ending::Failed(kind),
            };
            cx.continuing_pause = false;
            let message = match self.stream_turn(cx, request, &turn_id).await {
                Ok(message) => message,
                Err(TurnFailure::Aborted(partial)) => {
                    if let Some(partial) = partial {
                        self.finish_turn(cx, partial, &turn_id).await;
                        self.close_pending_calls(INTERRUPT_MESSAGE_FOR_TOOL_USE).await;
                    }
                    return Ending::Aborted {
                        reason: cx.signal.reason(),
                        hook: false,
                    };
                }
                Err(TurnFailure::Failed(kind)) => return Ending::Failed(kind),
            };
            let finish = message.finish_reason;
            let has_calls = message.tool_calls().next().is_some();
            let assistant = self.finish_turn(cx, message, &turn_id).await;
            if let Some(kind) = self.check_caps(cx) {
                self.close_pending_calls(INTERRUPT_MESSAGE_FOR_TOOL_USE).await;
                return Ending::Failed(kind);
            }
            if has_calls {
                let results = self.dispatch_turn(cx, &assistant, &turn_id).await;
                cx.stats.tool_calls += results.len() as u32;
                if let Err(kind) = self.push_results(cx, assistant, results, &turn_id).await {
                    return Ending::Failed(kind);
                }
                if cx.signal.is_aborted() {
                    return Ending::Aborted {
                        reason: cx.signal.reason(),
                        hook: false,
                    };
                }
                pauses = 0;
                continue;
            }
            self.flush(std::slice::from_ref(&assistant)).await;
            if finish == FinishReason::Pause {
                pauses += 1;
                if pauses > cx.behavior.max_consecutive_pause_turns {
                    return Ending::Paused;
                }
                cx.continuing_pause = true;
                continue;
            }
            pauses = 0;
            if let Some(schema) = &options.response_schema {
                match self.check_output(schema, &assistant).await {
                    Ok(()) => {}
                    Err(reason) if output_retries < 2 => {
                        output_retries += 1;
                        self.queue_internal(format!(
                            "Your answer does not match the required JSON schema ({reason}). Reply again with only a JSON value that matches it."
                        ));
                        continue;
                    }
                    Err(reason) => return Ending::Failed(RunErrorKind::Output(reason)),
                }
            }
            if self.inject_queued(true).await {
                continue;
            }
            if cx.signal.is_aborted() {
                return Ending::Aborted {
                    reason: cx.signal.reason(),
                    hook: false,
                };
            }
            let mut before_end = RunBeforeEnd::new(RunBeforeEndInit {
                run_id: cx.run_id.clone(),
                session_id: options.session_id.clone(),
                turn: cx.turn,
            });
            if let Err(kind) = self.decide(&mut before_end).await {
                return Ending::Failed(kind);
            }
            let follow_up = before_end.follow_up_message().map(str::to_owned);
            let decision = serde_json::json!({ "followUp": follow_up });
            let key = StepKey {
                run_id: cx.run_id.clone(),
                turn: cx.turn,
                kind: StepKind::Decision,
                name: "beforeEnd".into(),
            };
            let recorded = config.runtime.step(key, Box::pin(async move { Ok(decision) })).await;
            match recorded
                .ok()
                .and_then(|v| v.get("followUp").and_then(Value::as_str).map(str::to_owned))
            {
                Some(message) => {
                    self.inject(Queued {
                        content: vec![ContentBlock::text(message)],
                        id: None,
                    })
                    .await;
                }
                None => return Ending::Completed,
            }
        }
    }

    /// Lets the compactor replace the conversation before the next request.
    async fn maybe_compact(&self, cx: &RunCx) {
        let Some(compactor) = &self.inner.config.compactor else {
            return;
        };
        let last_input_tokens = cx
            .stats
            .turn_usage
            .last()
            .map(|u| u.input + u.cache_read + u.cache_creation);
        // Asked first, so a turn copies the transcript only when a
        // compaction may actually happen.
        if !compactor.wants_check(last_input_tokens) {
            return;
        }
        let turns = self.inner.lock().turns.clone();
        let check = CompactCheck {
            run_id: &cx.run_id,
            turn: cx.turn,
            turns: &turns,
            last_input_tokens,
            signal: &cx.signal,
        };
        if let Some(compacted) = compactor.before_request(check).await {
            self.replace_turns(compacted);
        }
    }

    /// Replaces the conversation (after a compaction).
    pub(crate) fn replace_turns(&self, turns: Vec<SessionTurn>) {
        let mut state = self.inner.lock();
        state.messages = turns.iter().map(SessionTurn::to_message).collect();
        state.turns = turns;
        state.paired = 0;
    }

    /// Appends a turn to the conversation and returns it.
    pub(crate) fn push_turn(&self, role: Role, content: Vec<ContentBlock>, usage: Option<TurnUsage>) -> SessionTurn {
        let id = self.inner.config.clock.id();
        self.push_turn_with_id(id, role, content, usage)
    }

    fn push_turn_with_id(
        &self,
        id: String,
        role: Role,
        content: Vec<ContentBlock>,
        usage: Option<TurnUsage>,
    ) -> SessionTurn {
        let turn = SessionTurn {
            id,
            role,
            content,
            created_at: self.inner.config.clock.now_ms(),
            usage,
        };
        let mut state = self.inner.lock();
        state.messages.push(turn.to_message());
        state.turns.push(turn.clone());
        turn
    }

    /// Injects the queued steers (or one follow-up); returns whether anything
    /// was injected.
    async fn inject_queued(&self, follow_up: bool) -> bool {
        let queued: Vec<Queued> = {
            let mut state = self.inner.lock();
            let Some(control) = state.control.as_mut() else {
                return false;
            };
            if follow_up {
                control.follow_up.pop_front().into_iter().collect()
            } else {
                control.steer.drain(..).collect()
            }
        };
        let any = !queued.is_empty();
        for q in queued {
            self.inject(q).await;
        }
        any
    }

    async fn inject(&self, queued: Queued) {
        let text = queued
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let mut ev = SteerInject::new(SteerInjectInit {
            content: queued.content.clone(),
            id: queued.id,
            text,
        });
        self.observe(&mut ev).await;
        let turn = self.push_turn(Role::User, queued.content, None);
        self.flush(&[turn]).await;
    }

    /// A message of the loop's own, delivered at the next turn boundary.
    pub(crate) fn queue_internal(&self, text: String) {
        if let Some(control) = self.inner.lock().control.as_mut() {
            control.steer.push_back(Queued {
                content: vec![ContentBlock::text(text)],
                id: None,
            });
        }
    }

    async fn build_request(
        &self,
        cx: &RunCx,
        options: &RunOptions,
        turn_id: &str,
    ) -> Result<StreamOptions, RunErrorKind> {
        let config = &self.inner.config;
        let hooks = &config.hooks;
        let (mut messages, paired) = {
            let state = self.inner.lock();
            (state.messages.clone(), state.paired)
        };
        let own_len = messages.len();
        // Whether the request still holds the loop's own messages, by
        // pointer (only a transform handler can change that).
        let mut untouched = true;
        if hooks.has::<ContextTransform>() {
            let own = messages.clone();
            let mut transform = ContextTransform::new();
            transform.messages = messages;
            self.decide(&mut transform).await?;
            messages = transform.messages;
            untouched = messages.len() == own.len() && messages.iter().zip(&own).all(|(a, b)| a.same_as(b));
        }
        // Only the part after the checked prefix is checked, from the last
        // assistant message of the prefix on (its calls meet their results
        // there).
        let start = if untouched {
            messages[..paired.min(messages.len())]
                .iter()
                .rposition(|m| m.role() == Role::Assistant)
                .unwrap_or(0)
        } else {
            0
        };
        if !(untouched && paired == own_len) {
            let mut tail = messages.split_off(start);
            let repaired = self.repair_pairing(cx, &mut tail, Some(turn_id), start).await?;
            messages.append(&mut tail);
            if untouched && !repaired {
                self.inner.lock().paired = own_len;
            }
        }

        let system = options
            .system
            .clone()
            .or_else(|| config.system.clone())
            .unwrap_or_default();
        let system = if hooks.has::<SystemTransform>() {
            let mut sys = SystemTransform::new(SystemTransformInit {
                messages: messages.clone(),
                session_id: options.session_id.clone(),
                turn: cx.turn,
                turn_id: turn_id.to_owned(),
            });
            sys.system = system;
            self.decide(&mut sys).await?;
            sys.system
        } else {
            system
        };

        let (_, model) = &cx.targets[cx.target];
        let mut request = StreamOptions::new(model.clone(), self.wire_messages(cx, messages));
        request.system = (!system.is_empty()).then_some(system);
        request.tools = cx.tool_specs.clone();
        request.thinking = options.thinking;
        request.thinking_budget = options.thinking_budget;
        request.max_tokens = options.max_tokens;
        request.temperature = options.temperature;
        request.cache_ttl = options.cache_ttl;
        request.response_schema = options.response_schema.clone();

        if hooks.has::<TurnBefore>() {
            let sent = request.messages.clone();
            let mut before = TurnBefore::new(TurnBeforeInit {
                turn: cx.turn,
                turn_id: turn_id.to_owned(),
            });
            before.options = request;
            self.decide(&mut before).await?;
            request = before.options;
            // A handler that edited the messages gets them checked again.
            let edited =
                request.messages.len() != sent.len() || request.messages.iter().zip(&sent).any(|(a, b)| !a.same_as(b));
            if edited {
                self.repair_pairing(cx, &mut request.messages, Some(turn_id), 0).await?;
            }
        }
        if !ends_with_user_message(&request.messages) && !cx.continuing_pause {
            return Err(RunErrorKind::Pairing(
                "the conversation must end with a user message".into(),
            ));
        }
        Ok(request)
    }

    /// Canonical tool names become the model-facing aliases (only messages
    /// carrying an aliased call are copied; the rest keep their wire bytes).
    fn wire_messages(&self, cx: &RunCx, mut messages: Vec<Message>) -> Vec<Message> {
        let tools = &cx.tools;
        if !tools.has_aliases() {
            return messages;
        }
        for message in &mut messages {
            let aliased = message.content().iter().any(|b| match b {
                ContentBlock::ToolUse { name, .. } => tools.wire_name(name) != name,
                _ => false,
            });
            if aliased {
                for block in message.content_mut() {
                    if let ContentBlock::ToolUse { name, .. } = block {
                        *name = tools.wire_name(name).to_owned();
                    }
                }
            }
        }
        messages
    }

    /// Runs the pairing pass; returns whether it repaired anything.
    async fn repair_pairing(
        &self,
        cx: &RunCx,
        messages: &mut Vec<Message>,
        turn_id: Option<&str>,
        offset: usize,
    ) -> Result<bool, RunErrorKind> {
        let repairs = ensure_tool_result_pairing(messages);
        if repairs.is_empty() {
            return Ok(false);
        }
        if cx.behavior.strict_tool_pairing {
            let first = &repairs[0];
            return Err(RunErrorKind::Pairing(format!(
                "{:?} for `{}`",
                first.kind, first.tool_use_id
            )));
        }
        for repair in repairs {
            let mut ev = PairingRepair::new(PairingRepairInit {
                kind: repair.kind,
                tool_use_id: repair.tool_use_id,
                message_index: repair.message_index + offset,
                turn_id: turn_id.map(str::to_owned),
            });
            self.observe(&mut ev).await;
        }
        Ok(true)
    }

    async fn stream_turn(
        &self,
        cx: &mut RunCx,
        request: StreamOptions,
        turn_id: &str,
    ) -> Result<AssistantMessage, TurnFailure> {
        let mut request = Arc::new(request);
        let config = &self.inner.config;
        let hooks = &config.hooks;
        let mut provider_attempt = 0u32;
        let mut transport_attempt = 0u32;
        let mut overflow_passes = 0u32;
        loop {
            let (provider, model) = cx.targets[cx.target].clone();
            if request.model != model {
                Arc::make_mut(&mut request).model = model.clone();
            }
            {
                let mut state = self.inner.lock();
                state.last_request_at = Some(config.clock.now_ms());
                state.last_request = Some(Arc::clone(&request));
                state.last_provider = Some(Arc::clone(&provider));
            }
            let mut start = StreamStart::new(StreamStartInit {
                run_id: cx.run_id.clone(),
                turn: cx.turn,
                turn_id: turn_id.to_owned(),
                model: model.clone(),
                started_at: config.clock.now_ms(),
            });
            self.observe(&mut start).await;

            let mut stream = provider.stream(&request, cx.signal.clone());
            let mut acc = MessageAccumulator::new();
            let mut streamed = Streamed {
                text: String::new(),
                thinking: String::new(),
            };
            let mut last_progress: Option<tokio::time::Instant> = None;
            let mut outcome: Result<(), ProviderError> = Ok(());
            while let Some(item) = std::future::poll_fn(|c| stream.as_mut().poll_next(c)).await {
                match item {
                    Ok(event) => {
                        self.stream_hooks(cx, turn_id, &model, &event, &mut streamed).await;
                        acc.push(&event);
                        if hooks.has::<StreamProgress>() {
                            let now = tokio::time::Instant::now();
                            if last_progress.is_none_or(|t| now.duration_since(t) >= cx.behavior.progress_interval) {
                                last_progress = Some(now);
                                self.progress(cx, turn_id, &model, &acc, &streamed).await;
                            }
                        }
                    }
                    Err(e) => {
                        outcome = Err(e);
                        break;
                    }
                }
            }
            if outcome.is_ok() && !acc.is_finished() {
                outcome = Err(ProviderError::new(
                    ErrorKind::Transport,
                    provider.name(),
                    "the stream ended without its end event",
                ));
            }
            let error = match outcome {
                Ok(()) => {
                    if hooks.has::<StreamProgress>() {
                        self.progress(cx, turn_id, &model, &acc, &streamed).await;
                    }
                    let mut end = StreamEnd::new(StreamEndInit {
                        run_id: cx.run_id.clone(),
                        turn: cx.turn,
                        turn_id: turn_id.to_owned(),
                        model: model.clone(),
                        text: streamed.text,
                    });
                    self.observe(&mut end).await;
                    let message = acc.finish();
                    let key = StepKey {
                        run_id: cx.run_id.clone(),
                        turn: cx.turn,
                        kind: StepKind::ModelCall,
                        name: model,
                    };
                    let value = serde_json::to_value(&message).unwrap_or(Value::Null);
                    let _ = config.runtime.step(key, Box::pin(async move { Ok(value) })).await;
                    return Ok(message);
                }
                Err(e) => e,
            };
            if cx.signal.is_aborted() || error.kind() == ErrorKind::Aborted {
                let partial = acc.finish();
                let keep = !partial.content.is_empty();
                return Err(TurnFailure::Aborted(keep.then_some(partial)));
            }
            let discarded_text = !streamed.text.is_empty();
            let discarded_thinking = !streamed.thinking.is_empty();
            let shared: SharedError = Arc::new(ProviderError::clone(&error));

            if error.kind() == ErrorKind::ContextExceeded && overflow_passes < cx.behavior.max_overflow_recoveries {
                overflow_passes += 1;
                if elide_tool_results(&mut Arc::make_mut(&mut request).messages, overflow_passes) {
                    let mut ev = ContextOverflow::new(ContextOverflowInit {
                        run_id: cx.run_id.clone(),
                        turn: cx.turn,
                        turn_id: turn_id.to_owned(),
                        model: request.model.clone(),
                        attempt: overflow_passes,
                        err: shared,
                    });
                    self.observe(&mut ev).await;
                    continue;
                }
            }

            let transport = error.kind() == ErrorKind::Transport;
            let (attempt, max) = if transport {
                transport_attempt += 1;
                (transport_attempt, cx.behavior.retry.transport_max_attempts)
            } else {
                provider_attempt += 1;
                (provider_attempt, cx.behavior.retry.max_attempts)
            };
            if error.is_retryable() && attempt < max {
                let delay = retry_delay(&cx.behavior, attempt, error.retry_after(), config.clock.jitter());
                let mut ev = StreamRetry::new(StreamRetryInit {
                    run_id: cx.run_id.clone(),
                    turn: cx.turn,
                    turn_id: turn_id.to_owned(),
                    model: request.model.clone(),
                    attempt,
                    delay_ms: delay.as_millis() as u64,
                    discarded_text,
                    discarded_thinking,
                    err: Arc::clone(&shared),
                    max_attempts: max,
                    next_attempt: attempt + 1,
                    request_id: error.request_id().map(str::to_owned),
                    status_code: error.status(),
                });
                self.observe(&mut ev).await;
                tokio::select! {
                    biased;
                    () = cx.signal.aborted() => return Err(TurnFailure::Aborted(None)),
                    () = tokio::time::sleep(delay) => {}
                }
                continue;
            }
            if cx.target + 1 < cx.targets.len() {
                let from = ModelTarget {
                    provider: provider.name().to_owned(),
                    model: request.model.clone(),
                };
                cx.target += 1;
                let (next, next_model) = &cx.targets[cx.target];
                let to = ModelTarget {
                    provider: next.name().to_owned(),
                    model: next_model.clone(),
                };
                let mut ev = ModelFallback::new(ModelFallbackInit {
                    run_id: cx.run_id.clone(),
                    turn: cx.turn,
                    turn_id: turn_id.to_owned(),
                    model: request.model.clone(),
                    discarded_thinking,
                    err: shared,
                    from,
                    target_index: cx.target as u32,
                    to,
                });
                self.observe(&mut ev).await;
                provider_attempt = 0;
                transport_attempt = 0;
                continue;
            }
            let mut ev = StreamError::new(StreamErrorInit {
                run_id: cx.run_id.clone(),
                turn: cx.turn,
                turn_id: turn_id.to_owned(),
                model: request.model.clone(),
                err: shared,
                status_code: error.status(),
                request_id: error.request_id().map(str::to_owned),
            });
            self.observe(&mut ev).await;
            return Err(TurnFailure::Failed(RunErrorKind::Provider(error)));
        }
    }

    async fn stream_hooks(&self, cx: &RunCx, turn_id: &str, model: &str, event: &StreamEvent, streamed: &mut Streamed) {
        let hooks = &self.inner.config.hooks;
        match event {
            StreamEvent::TextDelta { text, .. } => {
                streamed.text.push_str(text);
                if hooks.has::<StreamText>() {
                    let mut ev = StreamText::new(StreamTextInit {
                        run_id: cx.run_id.clone(),
                        turn: cx.turn,
                        turn_id: turn_id.to_owned(),
                        model: model.to_owned(),
                        delta: text.clone(),
                        text: streamed.text.clone(),
                    });
                    self.observe(&mut ev).await;
                }
            }
            StreamEvent::ThinkingDelta { text, .. } => {
                streamed.thinking.push_str(text);
                if hooks.has::<StreamThinking>() {
                    let mut ev = StreamThinking::new(StreamThinkingInit {
                        run_id: cx.run_id.clone(),
                        turn: cx.turn,
                        turn_id: turn_id.to_owned(),
                        model: model.to_owned(),
                        delta: text.clone(),
                        thinking: streamed.thinking.clone(),
                    });
                    self.observe(&mut ev).await;
                }
            }
            StreamEvent::ServerToolUse { id, name, input, .. } => {
                let mut ev = StreamServerToolUse::new(StreamServerToolUseInit {
                    run_id: cx.run_id.clone(),
                    turn: cx.turn,
                    turn_id: turn_id.to_owned(),
                    model: model.to_owned(),
                    id: id.clone(),
                    input: input.clone(),
                    name: name.clone(),
                });
                self.observe(&mut ev).await;
            }
            StreamEvent::ServerToolResult {
                tool_use_id,
                kind,
                content,
                ..
            } => {
                let mut ev = StreamServerToolResult::new(StreamServerToolResultInit {
                    run_id: cx.run_id.clone(),
                    turn: cx.turn,
                    turn_id: turn_id.to_owned(),
                    model: model.to_owned(),
                    content: content.clone(),
                    tool_name: kind.clone(),
                    tool_use_id: tool_use_id.clone(),
                });
                self.observe(&mut ev).await;
            }
            _ => {}
        }
    }

    async fn progress(&self, cx: &RunCx, turn_id: &str, model: &str, acc: &MessageAccumulator, streamed: &Streamed) {
        let (tokens, counted) = match acc.usage().output {
            Some(out) if out > 1 => (out, true),
            _ => (((streamed.text.len() + streamed.thinking.len()) / 4) as u64, false),
        };
        let usage = TurnUsage {
            output: tokens,
            input: acc.usage().input.unwrap_or(0),
            ..Default::default()
        };
        let cost = self.inner.config.pricing.cost(model, &usage);
        let mut ev = StreamProgress::new(StreamProgressInit {
            run_id: cx.run_id.clone(),
            turn: cx.turn,
            turn_id: turn_id.to_owned(),
            model: model.to_owned(),
            tokens,
            provider_counted: counted,
            cost_usd: cost,
        });
        self.observe(&mut ev).await;
    }

    /// Appends the assistant turn, updates the statistics, emits `turn:after`
    /// and `usage`.
    async fn finish_turn(&self, cx: &mut RunCx, message: AssistantMessage, turn_id: &str) -> SessionTurn {
        let config = &self.inner.config;
        let model = cx.targets[cx.target].1.clone();
        let mut usage = message.usage.clone();
        usage.model_id = Some(model.clone());
        usage.cost = config.pricing.cost(&model, &usage);
        let mut content = message.content;
        let mut turn_counts = ToolCounts::new();
        for block in &mut content {
            if let ContentBlock::ToolUse { name, .. } = block {
                let canonical = cx.tools.canonical(name).to_owned();
                *turn_counts.entry(canonical.clone()).or_insert(0) += 1;
                *name = canonical;
            }
        }
        let turn = self.push_turn_with_id(turn_id.to_owned(), Role::Assistant, content, Some(usage.clone()));
        let stats = &mut cx.stats;
        stats.turns += 1;
        stats.total_in += usage.input;
        stats.total_out += usage.output;
        stats.total_cache_read += usage.cache_read;
        stats.total_cache_creation += usage.cache_creation;
        if let Some(cost) = usage.cost {
            stats.cost = Some(stats.cost.unwrap_or(0.0) + cost);
        }
        stats.turn_usage.push(usage.clone());
        let cumulative = CumulativeUsage {
            input: stats.total_in,
            output: stats.total_out,
            cache_read: stats.total_cache_read,
            cache_creation: stats.total_cache_creation,
            cost: stats.cost,
            turns: stats.turns,
        };
        let run_counts = cx.run_counts.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let mut after = TurnAfter::new(TurnAfterInit {
            aborted: cx.signal.is_aborted(),
            cumulative_usage: cumulative,
            message: turn.clone(),
            tool_counts: TurnToolCounts {
                run: run_counts,
                turn: turn_counts,
            },
            turn: cx.turn,
            turn_id: turn_id.to_owned(),
            usage: usage.clone(),
        });
        self.observe(&mut after).await;
        let mut ev = Usage::new(UsageInit {
            total_in: cx.stats.total_in,
            total_out: cx.stats.total_out,
            turn: cx.turn,
            turn_id: turn_id.to_owned(),
            usage,
        });
        self.observe(&mut ev).await;
        turn
    }

    fn check_caps(&self, cx: &RunCx) -> Option<RunErrorKind> {
        let stats = &cx.stats;
        if let (Some(max), Some(cost)) = (cx.behavior.max_cost_usd, stats.cost)
            && cost > max
        {
            return Some(RunErrorKind::BudgetExceeded {
                cap: BudgetCap::CostUsd,
                limit: max,
                observed: cost,
            });
        }
        let total = stats.total_in + stats.total_out + stats.total_cache_read + stats.total_cache_creation;
        if let Some(max) = cx.behavior.max_total_tokens
            && total > max
        {
            return Some(RunErrorKind::BudgetExceeded {
                cap: BudgetCap::TotalTokens,
                limit: max as f64,
                observed: total as f64,
            });
        }
        None
    }

    /// Answers every call of the last assistant turn that has no result yet,
    /// so the history stays paired.
    async fn close_pending_calls(&self, text: &str) {
        let pending: Vec<ContentBlock> = {
            let state = self.inner.lock();
            let Some(last) = state.messages.last().filter(|m| m.role() == Role::Assistant) else {
                return;
            };
            last.content()
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolUse { id, .. } => Some(ContentBlock::ToolResult {
                        tool_use_id: id.clone(),
                        content: ToolResultContent::Text(text.to_owned()),
                        is_error: true,
                    }),
                    _ => None,
                })
                .collect()
        };
        let last = self.inner.lock().turns.last().cloned();
        if pending.is_empty() {
            if let Some(last) = last {
                self.flush(&[last]).await;
            }
            return;
        }
        let results = self.push_turn(Role::User, pending, None);
        if let Some(last) = last {
            self.flush(&[last, results]).await;
        }
    }

    pub(crate) async fn flush(&self, turns: &[SessionTurn]) {
        if let Some(sink) = &self.inner.config.sink
            && let Err(e) = sink.flush(turns).await
        {
            tracing_warn(&format!("turns could not be saved: {e}"));
        }
    }

    async fn check_output(&self, schema: &Value, assistant: &SessionTurn) -> Result<(), String> {
        let text: String = assistant
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        let trimmed = text
            .trim()
            .trim_start_matches("```json")
            .trim_start_matches("```")
            .trim_end_matches("```")
            .trim();
        let value: Value = serde_json::from_str(trimmed).map_err(|e| format!("not JSON: {e}"))?;
        let validator = jsonschema::validator_for(schema).map_err(|e| format!("the schema does not compile: {e}"))?;
        if let Some(error) = validator.iter_errors(&value).next() {
            return Err(error.to_string());
        }
        let mut ev = Output::new(OutputInit {
            output: value,
            schema: schema.clone(),
        });
        self.observe(&mut ev).await;
        Ok(())
    }
}

struct RunningGuard<'a>(&'a Inner);

impl Drop for RunningGuard<'_> {
    fn drop(&mut self) {
        // Also on a cancelled `run` future: the loop must not stay busy.
        self.0.lock().control = None;
        self.0.running.store(false, Ordering::Release);
    }
}

fn is_empty_prompt(content: &[ContentBlock]) -> bool {
    content
        .iter()
        .all(|b| matches!(b, ContentBlock::Text { text } if text.trim().is_empty()))
}

/// The wait before attempt `attempt + 1`: the server's delay when it gave
/// one, else exponential backoff with jitter; capped at `max_delay`.
pub(crate) fn retry_delay(behavior: &Behavior, attempt: u32, retry_after: Option<Duration>, jitter: f64) -> Duration {
    let policy = &behavior.retry;
    if let Some(after) = retry_after {
        return after.min(policy.max_delay);
    }
    let exp = policy
        .base_delay
        .saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
    // Jitter keeps 75-100% of the exponential delay, spreading retries.
    exp.mul_f64(0.75 + 0.25 * jitter.clamp(0.0, 1.0)).min(policy.max_delay)
}

/// Replaces old tool results with a stub, keeping fewer recent messages intact
/// on each pass. Returns whether anything changed.
fn elide_tool_results(messages: &mut [Message], pass: u32) -> bool {
    const STUB: &str = "[tool output elided to fit the context window]";
    let keep = match pass {
        1 => 6,
        2 => 2,
        _ => 0,
    };
    let cut = messages.len().saturating_sub(keep);
    let mut changed = false;
    for message in &mut messages[..cut] {
        let stale = message.content().iter().any(|b| match b {
            ContentBlock::ToolResult { content, .. } => content != &ToolResultContent::Text(STUB.to_owned()),
            _ => false,
        });
        if stale {
            for block in message.content_mut() {
                if let ContentBlock::ToolResult { content, .. } = block {
                    *content = ToolResultContent::Text(STUB.to_owned());
                }
            }
            changed = true;
        }
    }
    changed
}

/// Logs through `tracing` when a subscriber listens.
pub(crate) fn tracing_warn(message: &str) {
    tracing::warn!(target: "zidane", "{message}");
}
