//! The agent as a Restate Virtual Object keyed by session id.
//!
//! `run` is exclusive: Restate runs one invocation per key at a time, so
//! runs of one session queue behind each other and no lease is needed. The
//! other handlers are shared and run beside it: `turns` and `toolState`
//! read the session from K/V state; `steer`, `followUp`, `abort`,
//! `cancelTool` and `suspend` hand a message to the run in flight through
//! Restate (the [`ZidaneInbox`] object numbers it and signals the run's
//! invocation), so they reach it whichever replica serves them, and answer
//! whether the run took it.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

use restate_sdk::context::{
    ContextClient, ContextReadState, ContextSignals, ContextTimers, ContextWriteState, ObjectContext, RequestTarget,
    SharedObjectContext,
};
use restate_sdk::errors::{HandlerError, HandlerResult, TerminalError};
use restate_sdk::serde::Json;
use serde_json::Value;
use tokio::sync::{oneshot, watch};
use zidane_agent::{
    Agent, AgentOptions, AgentRunOptions, BACKGROUND_TASKS_KEY, GOAL_KEY, QueuedMessageOptions, create_agent,
};
use zidane_core::events::ToolStateOp;
use zidane_core::session::{Session, SessionInfo, SessionRun, SessionStore, StoreError};
use zidane_core::tool::{ToolFailure, ToolStateStore, apply_ops};
use zidane_provider::{BoxFuture, SessionTurn};

use crate::api::{
    AbortRequest, CancelToolRequest, Delivery, INBOX_NAME, InboxMessage, JournalCounts, MessageRequest,
    RUN_INVOCATION_KEY, RunRequest, RunResponse,
};
use crate::checkpoints::{CHECKPOINT_COUNT_KEY, StateCheckpoints, checkpoint_key};
use crate::journal::{
    CONTROL_IDS_KEY, Control, ControlIds, Driver, JournalError, ReplayClock, ReplayRuntime, ReplayTracker, Signal,
    Start, TAKEN_SIGNAL, TOOL_STATE_KEY, TURN_COUNT_KEY, meta_key, signal_name, turn_key,
};
use zidane_agent::checkpoints::Checkpoints;
use zidane_core::checkpoint::{JournaledSnapshot, Snapshot};

/// Builds the options of a session's agent (provider, model, tools,
/// hooks); the object fills in the runtime, clock, session and store.
pub type AgentFactory = Arc<dyn Fn(&str) -> Result<AgentOptions, String> + Send + Sync>;

/// The Virtual Object `ZidaneAgent`: one per session id.
pub struct ZidaneAgent {
    factory: AgentFactory,
    /// The Restate ingress, where `spawn` starts children as invocations.
    ingress: Option<String>,
}

impl ZidaneAgent {
    /// An object whose agents `factory` configures.
    pub fn new(factory: impl Fn(&str) -> Result<AgentOptions, String> + Send + Sync + 'static) -> Self {
        ZidaneAgent {
            factory: Arc::new(factory),
            ingress: None,
        }
    }

    /// Runs the `spawn` tool's children as `ZidaneAgent` invocations of
    /// their own (keyed `<session>/spawn-<call id>@<run id>`), started through the
    /// Restate ingress at `url` (`http://host:8080`): a child in flight at a
    /// crash then resumes in its own invocation instead of starting over.
    /// The child is built by the same factory from its key, with `spawn`'s
    /// task as its prompt; named sub-agents' prompts and tool sets do not
    /// apply. Without it, children run inside the parent's invocation.
    pub fn with_ingress(mut self, url: impl Into<String>) -> Self {
        self.ingress = Some(url.into());
        self
    }

    /// The factory's options for the session, with the journal as the
    /// runtime, the store and the clock.
    fn session_options(
        &self,
        session: Session,
        tool_state: BTreeMap<String, Value>,
        runtime: &Arc<ReplayRuntime>,
        invocation: &str,
    ) -> HandlerResult<AgentOptions> {
        let key = session.id.clone();
        let mut options = (self.factory)(&key).map_err(TerminalError::new)?;
        options.replay_runtime = Some(Arc::clone(runtime) as Arc<dyn zidane_core::seams::DurableRuntime>);
        options.clock = Some(Arc::new(ReplayClock::new(invocation)));
        options.session = None;
        options.session_id = Some(key.clone());
        options.store = Some(Arc::new(JournalStore {
            runtime: Arc::clone(runtime),
            session,
            tool_state: Arc::new(SeededToolState(Mutex::new(tool_state))),
        }));
        options.tool_state = None;
        if let (None, Some(ingress)) = (&options.spawner, &self.ingress) {
            options.spawner =
                crate::spawn::InvocationSpawner::new(ingress, &key, options.spawn.max_depth, Arc::clone(runtime))
                    .map(|s| Arc::new(s) as Arc<dyn zidane_core::seams::Spawner>);
        }
        Ok(options)
    }
}

/// Hands `control` to the session's run in flight through the inbox,
/// which numbers it and signals the run's invocation (wherever it runs).
/// A message with an id a run of the session took is answered from the
/// session's state, without sending it again.
async fn deliver(ctx: &SharedObjectContext<'_>, control: Control, id: Option<String>) -> HandlerResult<Json<Delivery>> {
    if let Some(id) = &id
        && let Some(Json(taken)) = ctx.get::<Json<ControlIds>>(CONTROL_IDS_KEY).await?
        && let Some((_, accepted)) = taken.iter().find(|(known, _)| known == id)
    {
        return Ok(Json(Delivery::answered(*accepted)));
    }
    let Some(invocation) = ctx.get::<String>(RUN_INVOCATION_KEY).await? else {
        return Ok(Json(Delivery::answered(false)));
    };
    let delivery = ctx
        .request::<Json<InboxMessage>, Json<Delivery>>(
            RequestTarget::object(INBOX_NAME, ctx.key(), "deliver"),
            Json(InboxMessage {
                invocation,
                control,
                id,
            }),
        )
        .call()
        .await?;
    Ok(delivery)
}

/// How long the inbox waits for a run to say whether it took a message
/// before it answers `{"delivered": false, "pending": true}` (the run is
/// between attempts, and answers when Restate runs it again).
pub const TAKE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The Virtual Object `ZidaneInbox`, one per session: it numbers the
/// control messages for the session's run in flight and hands each to the
/// run's invocation as the named signal `control-N`, in order. Its handler
/// is exclusive, so two replicas' messages never take one number.
#[derive(Debug, Default, Clone, Copy)]
pub struct ZidaneInbox;

#[restate_sdk::object(name = "ZidaneInbox")]
impl ZidaneInbox {
    /// Signals `message.control` to `message.invocation` as its next
    /// control message.
    #[handler]
    async fn deliver(&self, ctx: ObjectContext<'_>, message: Json<InboxMessage>) -> HandlerResult<Json<Delivery>> {
        let InboxMessage {
            invocation,
            control,
            id,
        } = message.into_inner();
        let seq = match ctx.get::<String>("invocation").await? {
            Some(current) if current == invocation => ctx.get::<u64>("next").await?.unwrap_or(0),
            _ => {
                ctx.set("invocation", invocation.clone());
                0
            }
        };
        let reply_to = ctx.invocation_id().to_owned();
        ctx.invocation_handle(invocation)
            .signal(signal_name(seq))
            .resolve(Json(Signal {
                seq,
                control,
                reply_to,
                id,
            }));
        ctx.set("next", seq + 1);
        // The run says, once it has journaled the message, whether it took
        // it.
        let taken = ctx.signal::<bool>(TAKEN_SIGNAL);
        let delivery = restate_sdk::select! {
            taken = taken => Delivery::answered(taken.unwrap_or(false)),
            _ = ctx.sleep(TAKE_WAIT) => Delivery { delivered: false, pending: true },
        };
        Ok(Json(delivery))
    }
}

/// An error a retry may get past (the journal or the connection to
/// Restate), or one it would only repeat (a configuration or provider
/// failure the run already retried), which ends the invocation.
fn failure(error: &zidane_agent::AgentError) -> HandlerError {
    if retryable(error) {
        return HandlerError::from(error.to_string());
    }
    TerminalError::new(error.to_string()).into()
}

/// Whether the journal or the connection to Restate failed the run.
fn retryable(error: &zidane_agent::AgentError) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if e.downcast_ref::<JournalError>().is_some() {
            return true;
        }
        source = e.source();
    }
    false
}

// The session's turns, and the records of its checkpoints (oldest first),
// from the object's K/V state, for a handler of either kind (the context's
// lifetime ties each key to the handler's context, so these stay macros).
macro_rules! read_turns {
    ($ctx:expr) => {
        async {
            let count = $ctx.get::<u64>(TURN_COUNT_KEY).await?.unwrap_or(0) as usize;
            let mut turns = Vec::with_capacity(count);
            for i in 0..count {
                if let Some(turn) = $ctx.get::<Json<SessionTurn>>(&turn_key(i)).await? {
                    turns.push(turn.into_inner());
                }
            }
            HandlerResult::Ok(turns)
        }
    };
}

macro_rules! read_checkpoints {
    ($ctx:expr) => {
        async {
            let count = $ctx.get::<u64>(CHECKPOINT_COUNT_KEY).await?.unwrap_or(0) as i64;
            let mut journaled = Vec::with_capacity(count as usize);
            for id in 1..=count {
                if let Some(entry) = $ctx.get::<Json<JournaledSnapshot>>(&checkpoint_key(id)).await? {
                    journaled.push(entry.into_inner());
                }
            }
            HandlerResult::Ok(journaled)
        }
    };
}

#[restate_sdk::object]
impl ZidaneAgent {
    /// Runs the agent on the session's turns, each step journaled.
    #[handler]
    async fn run(&self, ctx: ObjectContext<'_>, request: Json<RunRequest>) -> HandlerResult<Json<RunResponse>> {
        let request = request.into_inner();
        let key = ctx.key().to_owned();
        // The session as the K/V state holds it; these reads are the same
        // journal entries on every attempt.
        let turns = read_turns!(ctx).await?;
        let tool_state = ctx
            .get::<Json<BTreeMap<String, Value>>>(TOOL_STATE_KEY)
            .await?
            .map(Json::into_inner)
            .unwrap_or_default();
        // The background tasks earlier runs left running, and the goal and
        // what it spent.
        let mut metadata = BTreeMap::new();
        for key in [BACKGROUND_TASKS_KEY, GOAL_KEY] {
            if let Some(value) = ctx.get::<Json<Value>>(&meta_key(key)).await? {
                metadata.insert(key.to_owned(), value.into_inner());
            }
        }

        let control_ids = ctx
            .get::<Json<ControlIds>>(CONTROL_IDS_KEY)
            .await?
            .map(Json::into_inner)
            .unwrap_or_default();
        let (mut driver, handles) = Driver::new(Start {
            turns: turns.len(),
            tool_state: tool_state.clone(),
            control_ids,
        });
        let session = Session {
            id: key.clone(),
            turns,
            metadata,
            ..Default::default()
        };
        let mut options = self.session_options(session, tool_state, &handles.runtime, ctx.invocation_id())?;
        // The host's checkpoints keep their contents where the host put
        // them; their records live in the object's state.
        if let Some(checkpoints) = options.checkpoints.take() {
            options.checkpoints = Some(state_checkpoints(&checkpoints, read_checkpoints!(ctx).await?));
        }
        let agent = Arc::new(create_agent(options).map_err(|e| TerminalError::new(e.to_string()))?);
        let applied = Arc::clone(&agent);
        // Where the control handlers send this run's messages (set once
        // nothing before the run can fail the invocation).
        ctx.set(RUN_INVOCATION_KEY, ctx.invocation_id().to_owned());
        let suspend = handles.suspend.clone();
        driver.attach(
            ReplayTracker::new(agent.hooks().clone()),
            Arc::new(move |control: &Control| apply(&applied, &suspend, control)),
            on_live(Arc::clone(&agent)),
        );
        let run_options = run_options(request);
        let (finished_tx, finished_rx) = oneshot::channel::<()>();
        let run = async {
            let result = agent.run(run_options).await;
            let _ = finished_tx.send(());
            result
        };
        let drive = driver.drive(&ctx, async {
            let _ = finished_rx.await;
        });
        let (result, ()) = tokio::join!(run, drive);
        let goal = agent.goal();
        agent.destroy().await;
        drop(handles);

        if driver.suspended() {
            // Restate runs the invocation again; it replays to here and goes on.
            return Err(HandlerError::from(JournalError::Suspended.to_string()));
        }
        let output = result.map_err(|error| {
            if !retryable(&error) {
                // The invocation ends: no run is in flight any more.
                ctx.clear(RUN_INVOCATION_KEY);
            }
            failure(&error)
        })?;
        ctx.clear(RUN_INVOCATION_KEY);
        Ok(Json(RunResponse {
            text: output.text,
            stats: output.stats,
            journal: JournalCounts {
                replayed: driver.replayed,
                written: driver.written,
            },
            goal,
        }))
    }

    /// The session's turns, also while a run is in flight (the turns it has
    /// written so far).
    #[handler]
    async fn turns(&self, ctx: SharedObjectContext<'_>) -> HandlerResult<Json<Vec<SessionTurn>>> {
        Ok(Json(read_turns!(ctx).await?))
    }

    /// The session's folder checkpoints, oldest first (their records; the
    /// contents stay on the service's disk).
    #[handler]
    async fn checkpoints(&self, ctx: SharedObjectContext<'_>) -> HandlerResult<Json<Vec<Snapshot>>> {
        let records = read_checkpoints!(ctx).await?;
        Ok(Json(records.into_iter().map(|entry| entry.snapshot).collect()))
    }

    /// The session's committed tool state.
    #[handler(name = "toolState")]
    async fn tool_state(&self, ctx: SharedObjectContext<'_>) -> HandlerResult<Json<BTreeMap<String, Value>>> {
        let state = ctx
            .get::<Json<BTreeMap<String, Value>>>(TOOL_STATE_KEY)
            .await?
            .map(Json::into_inner)
            .unwrap_or_default();
        Ok(Json(state))
    }

    /// `Agent::steer` on the run in flight.
    #[handler]
    async fn steer(
        &self,
        ctx: SharedObjectContext<'_>,
        message: Json<MessageRequest>,
    ) -> HandlerResult<Json<Delivery>> {
        let MessageRequest { text, id } = message.into_inner();
        deliver(&ctx, Control::Steer { text }, id).await
    }

    /// `Agent::follow_up` on the run in flight.
    #[handler(name = "followUp")]
    async fn follow_up(
        &self,
        ctx: SharedObjectContext<'_>,
        message: Json<MessageRequest>,
    ) -> HandlerResult<Json<Delivery>> {
        let MessageRequest { text, id } = message.into_inner();
        deliver(&ctx, Control::FollowUp { text }, id).await
    }

    /// `Agent::abort_with` on the run in flight: it ends as aborted.
    #[handler]
    async fn abort(&self, ctx: SharedObjectContext<'_>, request: Json<AbortRequest>) -> HandlerResult<Json<Delivery>> {
        let AbortRequest { reason, id } = request.into_inner();
        deliver(&ctx, Control::Abort { reason }, id).await
    }

    /// `Agent::cancel_tool` on the run in flight.
    #[handler(name = "cancelTool")]
    async fn cancel_tool(
        &self,
        ctx: SharedObjectContext<'_>,
        request: Json<CancelToolRequest>,
    ) -> HandlerResult<Json<Delivery>> {
        let CancelToolRequest { call_id, reason, id } = request.into_inner();
        deliver(&ctx, Control::CancelTool { call_id, reason }, id).await
    }

    /// Stops the attempt of the run in flight, wherever it runs: its
    /// journal takes nothing after the suspend's own entry, the invocation
    /// fails with a retryable error, and Restate runs it again from its
    /// journal (where the suspend does nothing).
    #[handler]
    async fn suspend(&self, ctx: SharedObjectContext<'_>) -> HandlerResult<Json<Delivery>> {
        deliver(&ctx, Control::Suspend, None).await
    }
}

/// The host's checkpoints with their records in the object's state (the
/// contents stay where the host put them); every checkpoint of the session
/// stays.
fn state_checkpoints(checkpoints: &Checkpoints, journaled: Vec<JournaledSnapshot>) -> Arc<Checkpoints> {
    let store = StateCheckpoints::new(Arc::clone(checkpoints.store()), journaled);
    let mut config = checkpoints.config().clone();
    config.max_checkpoints = usize::MAX;
    Arc::new(Checkpoints::new(
        Arc::new(store) as Arc<dyn zidane_core::checkpoint::CheckpointStore>,
        config,
    ))
}

/// What the run takes over from an earlier attempt once its replay is
/// done: the goal's progress as that attempt recorded it (the replayed
/// turns did not check it again), and the background tasks it started
/// (the process that ran them may be gone, and the model hears of each).
fn on_live(agent: Arc<Agent>) -> crate::journal::OnLive {
    Box::new(move |mut meta| {
        if let Some(progress) = meta
            .remove(GOAL_KEY)
            .and_then(|v| serde_json::from_value::<zidane_agent::GoalProgress>(v).ok())
        {
            agent.restore_goal(progress);
        }
        if let Some(tasks) = meta.remove(BACKGROUND_TASKS_KEY) {
            tokio::spawn(async move { agent.take_back_tasks(tasks).await });
        }
    })
}

/// The agent's options for the run `request` asks for.
fn run_options(request: RunRequest) -> AgentRunOptions {
    let mut options = AgentRunOptions::prompt(request.prompt);
    options.system = request.system;
    if let Some(max) = request.max_turns {
        options.behavior.max_turns = Some(Some(max));
    }
    options.goal = request.goal;
    options
}

/// Hands a control message to the run: whether it took it.
fn apply(agent: &Arc<Agent>, suspend: &watch::Sender<bool>, control: &Control) -> bool {
    match control {
        Control::Steer { text } => agent.steer(text.as_str(), QueuedMessageOptions::default()),
        Control::FollowUp { text } => agent.follow_up(text.as_str(), QueuedMessageOptions::default()),
        Control::Abort { reason } => {
            let running = agent.is_running();
            agent.abort_with(reason.as_deref().unwrap_or("aborted"));
            running
        }
        Control::CancelTool { call_id, reason } => agent.cancel_tool(call_id, reason.as_deref()),
        Control::Suspend => {
            if !agent.is_running() {
                return false;
            }
            // The journal takes nothing more from this attempt, whatever
            // the run does while it stops.
            let _ = suspend.send(true);
            // On a replay runtime, `Agent::suspend` aborts the run; it
            // resolves once the run stopped, which nobody waits for here.
            let agent = Arc::clone(agent);
            tokio::spawn(async move { agent.suspend(zidane_agent::SuspendOptions::default()).await });
            true
        }
    }
}

/// The session store of one invocation: the session read from K/V state,
/// and every write journaled through the driver (which then writes K/V).
/// Run records and metadata are not kept: Restate keeps the invocations.
struct JournalStore {
    runtime: Arc<ReplayRuntime>,
    session: Session,
    tool_state: Arc<SeededToolState>,
}

fn store_error(error: JournalError) -> StoreError {
    Arc::new(error)
}

impl SessionStore for JournalStore {
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Session>, StoreError>> {
        let session = (id == self.session.id).then(|| self.session.clone());
        Box::pin(async move { Ok(session) })
    }

    fn create<'a>(&'a self, _id: &'a str, _now_ms: u64) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async { Ok(()) })
    }

    fn append_turns<'a>(
        &'a self,
        _id: &'a str,
        turns: &'a [SessionTurn],
        _now_ms: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move { self.runtime.append(turns.to_vec()).await.map_err(store_error) })
    }

    fn replace_turns<'a>(
        &'a self,
        _id: &'a str,
        turns: &'a [SessionTurn],
        _now_ms: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move { self.runtime.replace(turns.to_vec()).await.map_err(store_error) })
    }

    fn set_meta<'a>(&'a self, _id: &'a str, key: &'a str, value: &'a Value) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.runtime
                .meta(key.to_owned(), value.clone())
                .await
                .map_err(store_error)
        })
    }

    fn save_run<'a>(&'a self, _id: &'a str, _run: &'a SessionRun) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async { Ok(()) })
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<SessionInfo>, StoreError>> {
        #[allow(deprecated)]
        let info = SessionInfo {
            id: self.session.id.clone(),
            messages: self.session.turns.len() as u32,
            turns: self.session.turns.len() as u32,
            created_at: zidane_provider::Timestamp::EPOCH,
            updated_at: zidane_provider::Timestamp::EPOCH,
            title: String::new(),
            interrupted: false,
        };
        Box::pin(async move { Ok(vec![info]) })
    }

    fn tool_state(&self, _id: &str) -> Arc<dyn ToolStateStore> {
        Arc::clone(&self.tool_state) as Arc<dyn ToolStateStore>
    }
}

/// The tool state read from K/V at the invocation's start. A call's writes
/// travel in its step value and reach K/V through the journal.
struct SeededToolState(Mutex<BTreeMap<String, Value>>);

impl ToolStateStore for SeededToolState {
    fn load(&self) -> BoxFuture<'_, Result<BTreeMap<String, Value>, ToolFailure>> {
        let snapshot = self.0.lock().clone();
        Box::pin(async move { Ok(snapshot) })
    }

    fn commit<'a>(&'a self, ops: &'a [ToolStateOp]) -> BoxFuture<'a, Result<(), ToolFailure>> {
        apply_ops(&mut self.0.lock(), ops);
        Box::pin(async { Ok(()) })
    }
}
