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
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{oneshot, watch};
use zidane_agent::{Agent, AgentOptions, AgentRunOptions, BACKGROUND_TASKS_KEY, QueuedMessageOptions, create_agent};
use zidane_core::events::{AgentStats, ToolStateOp};
use zidane_core::session::{Session, SessionInfo, SessionRun, SessionStore, StoreError};
use zidane_core::tool::{ToolFailure, ToolStateStore, apply_ops};
use zidane_provider::{BoxFuture, SessionTurn};

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

/// What `run` takes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRequest {
    /// The prompt.
    pub prompt: String,
    /// A system prompt for this run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// A turn cap for this run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
}

/// What `run` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunResponse {
    /// The final assistant turn's text.
    pub text: String,
    /// The run's statistics.
    pub stats: AgentStats,
    /// Journal entries this attempt read back, and wrote.
    pub journal: JournalCounts,
}

/// How much of an attempt came from the journal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JournalCounts {
    /// Entries read back from earlier attempts.
    pub replayed: u64,
    /// Entries this attempt wrote.
    pub written: u64,
}

/// A message for the run in flight (`steer`, `followUp`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageRequest {
    /// The message.
    pub text: String,
    /// An id of the client's choosing: a message sent again with the same
    /// id (a retry) is answered as the first was, and taken once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// `abort`'s input.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AbortRequest {
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// An id of the client's choosing (see [`MessageRequest::id`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// `cancelTool`'s input.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelToolRequest {
    /// The call.
    pub call_id: String,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// An id of the client's choosing (see [`MessageRequest::id`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// Whether a message reached a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    /// `true`: the session's run in flight took the message, wherever it
    /// runs: a turn of it reads a steer or a follow-up (unless the run is
    /// stopped first), an abort or a suspend stops it, a cancel reaches
    /// the call. `false`: it did not (no run is in flight, the run already
    /// decided to end, no such call), or it has not answered yet (then
    /// `pending`).
    pub delivered: bool,
    /// The run did not answer within ten seconds (it may be between two
    /// attempts): it may still take the message. Sent again with the same
    /// id, the message is answered as the run took it, never taken twice.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pending: bool,
}

impl Delivery {
    fn answered(delivered: bool) -> Self {
        Delivery {
            delivered,
            pending: false,
        }
    }
}

/// The K/V key of the run invocation in flight, for the control handlers.
pub const RUN_INVOCATION_KEY: &str = "run-invocation";

/// The name the inbox object is registered under.
pub const INBOX_NAME: &str = "ZidaneInbox";

/// What the inbox takes: a control message for a run invocation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InboxMessage {
    /// The run's invocation id.
    pub invocation: String,
    /// The message.
    pub control: Control,
    /// The client's id for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

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

#[restate_sdk::object]
impl ZidaneAgent {
    /// Runs the agent on the session's turns, each step journaled.
    #[handler]
    async fn run(&self, ctx: ObjectContext<'_>, request: Json<RunRequest>) -> HandlerResult<Json<RunResponse>> {
        let request = request.into_inner();
        let key = ctx.key().to_owned();
        // The session as the K/V state holds it; these reads are the same
        // journal entries on every attempt.
        let count = ctx.get::<u64>(TURN_COUNT_KEY).await?.unwrap_or(0) as usize;
        let mut turns = Vec::with_capacity(count);
        for i in 0..count {
            if let Some(turn) = ctx.get::<Json<SessionTurn>>(&turn_key(i)).await? {
                turns.push(turn.into_inner());
            }
        }
        let tool_state = ctx
            .get::<Json<BTreeMap<String, Value>>>(TOOL_STATE_KEY)
            .await?
            .map(Json::into_inner)
            .unwrap_or_default();
        // The background tasks earlier runs left running.
        let mut metadata = BTreeMap::new();
        if let Some(tasks) = ctx.get::<Json<Value>>(&meta_key(BACKGROUND_TASKS_KEY)).await? {
            metadata.insert(BACKGROUND_TASKS_KEY.to_owned(), tasks.into_inner());
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
        let mut options = (self.factory)(&key).map_err(TerminalError::new)?;
        options.replay_runtime = Some(Arc::clone(&handles.runtime) as Arc<dyn zidane_core::seams::DurableRuntime>);
        options.clock = Some(Arc::new(ReplayClock::new(ctx.invocation_id())));
        options.session = None;
        options.session_id = Some(key.clone());
        options.store = Some(Arc::new(JournalStore {
            runtime: Arc::clone(&handles.runtime),
            session: Session {
                id: key.clone(),
                turns,
                metadata,
                ..Default::default()
            },
            tool_state: Arc::new(SeededToolState(Mutex::new(tool_state))),
        }));
        options.tool_state = None;
        if let (None, Some(ingress)) = (&options.spawner, &self.ingress) {
            options.spawner = crate::spawn::InvocationSpawner::new(
                ingress,
                &key,
                options.spawn.max_depth,
                Arc::clone(&handles.runtime),
            )
            .map(|s| Arc::new(s) as Arc<dyn zidane_core::seams::Spawner>);
        }
        // The host's checkpoints keep their contents where the host put
        // them; their records live in the object's state.
        if let Some(checkpoints) = options.checkpoints.take() {
            let count = ctx.get::<u64>(CHECKPOINT_COUNT_KEY).await?.unwrap_or(0) as i64;
            let mut journaled = Vec::with_capacity(count as usize);
            for id in 1..=count {
                if let Some(entry) = ctx.get::<Json<JournaledSnapshot>>(&checkpoint_key(id)).await? {
                    journaled.push(entry.into_inner());
                }
            }
            let store = StateCheckpoints::new(Arc::clone(checkpoints.store()), journaled);
            let mut config = checkpoints.config().clone();
            // Every checkpoint of the session stays in its state.
            config.max_checkpoints = usize::MAX;
            options.checkpoints = Some(Arc::new(Checkpoints::new(
                Arc::new(store) as Arc<dyn zidane_core::checkpoint::CheckpointStore>,
                config,
            )));
        }
        let agent = Arc::new(create_agent(options).map_err(|e| TerminalError::new(e.to_string()))?);
        let applied = Arc::clone(&agent);
        // Where the control handlers send this run's messages (set once
        // nothing before the run can fail the invocation).
        ctx.set(RUN_INVOCATION_KEY, ctx.invocation_id().to_owned());
        let taking_back = Arc::clone(&agent);
        let suspend = handles.suspend.clone();
        driver.attach(
            ReplayTracker::new(agent.hooks().clone()),
            Arc::new(move |control: &Control| apply(&applied, &suspend, control)),
            // The background tasks an earlier attempt started: the process
            // that ran them may be gone, and the model hears of each.
            Box::new(move |mut meta| {
                if let Some(tasks) = meta.remove(BACKGROUND_TASKS_KEY) {
                    tokio::spawn(async move { taking_back.take_back_tasks(tasks).await });
                }
            }),
        );

        let mut run_options = AgentRunOptions::prompt(request.prompt);
        run_options.system = request.system;
        if let Some(max) = request.max_turns {
            run_options.behavior.max_turns = Some(Some(max));
        }
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
        agent.destroy().await;
        drop(handles);

        if driver.suspended() {
            // Restate runs the invocation again; it replays to here and goes on.
            return Err(HandlerError::from(JournalError::Suspended.to_string()));
        }
        let output = match result {
            Ok(output) => output,
            Err(error) => {
                if !retryable(&error) {
                    // The invocation ends: no run is in flight any more.
                    ctx.clear(RUN_INVOCATION_KEY);
                }
                return Err(failure(&error));
            }
        };
        ctx.clear(RUN_INVOCATION_KEY);
        Ok(Json(RunResponse {
            text: output.text,
            stats: output.stats,
            journal: JournalCounts {
                replayed: driver.replayed,
                written: driver.written,
            },
        }))
    }

    /// The session's turns, also while a run is in flight (the turns it has
    /// written so far).
    #[handler]
    async fn turns(&self, ctx: SharedObjectContext<'_>) -> HandlerResult<Json<Vec<SessionTurn>>> {
        let count = ctx.get::<u64>(TURN_COUNT_KEY).await?.unwrap_or(0) as usize;
        let mut turns = Vec::with_capacity(count);
        for i in 0..count {
            if let Some(turn) = ctx.get::<Json<SessionTurn>>(&turn_key(i)).await? {
                turns.push(turn.into_inner());
            }
        }
        Ok(Json(turns))
    }

    /// The session's folder checkpoints, oldest first (their records; the
    /// contents stay on the service's disk).
    #[handler]
    async fn checkpoints(&self, ctx: SharedObjectContext<'_>) -> HandlerResult<Json<Vec<Snapshot>>> {
        let count = ctx.get::<u64>(CHECKPOINT_COUNT_KEY).await?.unwrap_or(0) as i64;
        let mut snapshots = Vec::with_capacity(count as usize);
        for id in 1..=count {
            if let Some(entry) = ctx.get::<Json<JournaledSnapshot>>(&checkpoint_key(id)).await? {
                snapshots.push(entry.into_inner().snapshot);
            }
        }
        Ok(Json(snapshots))
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
