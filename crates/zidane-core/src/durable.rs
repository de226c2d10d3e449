//! Durable steps: what a run journals, how a step is keyed, the runtime the
//! loop runs every step through, and the checkpoint backends a durable agent
//! keeps its sessions, leases and records in.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use zidane_provider::{AssistantMessage, BoxFuture, SessionTurn};

use crate::events::{SharedError, ToolStateOp};
use crate::session::{SessionRun, SessionStore, StoreError};
use crate::tool::ToolOutput;

pub use crate::tool::Durability;

/// What a step produced, typed. The in-memory runtime hands it back as it
/// came (no serialization); a checkpoint runtime serializes it into its
/// record (it is `Serialize` + `Deserialize`) and answers a finished step
/// from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "camelCase")]
pub enum StepValue {
    /// A model call's assistant message.
    Model(AssistantMessage),
    /// A settled tool call.
    Tool(ToolStep),
    /// A loop decision.
    Decision(Value),
    /// A folder checkpoint taken (its snapshot and, when the folder's
    /// state was new, its manifest).
    Checkpoint(Box<crate::checkpoint::JournaledSnapshot>),
}

/// A settled tool call: what the body returned (or how it failed) and the
/// tool-state writes it staged. A checkpoint runtime commits `state` in the
/// same transaction as the step's record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolStep {
    /// The body's output, or its failure message.
    pub outcome: ToolStepOutcome,
    /// Tool-state writes staged by the call, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub state: Vec<ToolStateOp>,
    /// What `tool:gate` handlers kept for the call (`resumeState`): a
    /// resumed call's gate sees it again.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub resume_state: serde_json::Map<String, Value>,
}

/// How a tool body ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ToolStepOutcome {
    /// It returned.
    Output(ToolOutput),
    /// It failed (an error, a panic, a timeout) with this message.
    Failed(String),
}

/// What kind of work a step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepKind {
    /// A provider request (its whole response, retries included).
    ModelCall,
    /// A tool call.
    ToolCall,
    /// A loop decision (continue with a follow-up or stop).
    Decision,
    /// A folder checkpoint (on a replay-mode runtime, so a replay does not
    /// take it again).
    Checkpoint,
}

impl StepKind {
    /// The kind's name in records.
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::ModelCall => "model-call",
            StepKind::ToolCall => "tool-call",
            StepKind::Decision => "decision",
            StepKind::Checkpoint => "checkpoint",
        }
    }

    /// The kind a record names ([`as_str`](Self::as_str) read back).
    pub fn from_name(name: &str) -> Option<StepKind> {
        [
            StepKind::ModelCall,
            StepKind::ToolCall,
            StepKind::Decision,
            StepKind::Checkpoint,
        ]
        .into_iter()
        .find(|k| k.as_str() == name)
    }
}

/// One step's identity within a run: stable across processes, so a resumed
/// run asks for the same keys as the run that died.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StepKey {
    /// The run.
    pub run_id: String,
    /// The loop turn.
    pub turn: u32,
    /// Kind of step.
    pub kind: StepKind,
    /// Distinguishes steps of one kind in a turn (a call id, a decision's
    /// name).
    pub name: String,
}

/// A step as the loop hands it to the runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Its identity.
    pub key: StepKey,
    /// Whether it may run again after a crash (model calls and decisions
    /// are safe; a tool declares its own).
    pub durability: Durability,
}

/// How a runtime makes runs durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DurableMode {
    /// Nothing is recorded (the default runtime).
    Memory,
    /// Each finished step is recorded; `resume` continues from the records.
    Checkpoint,
    /// A durable-execution engine replays the whole invocation from its
    /// journal.
    Replay,
}

/// Why a step did not produce a value.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StepError {
    /// The work failed (or was stopped); nothing was recorded.
    #[error("{0}")]
    Work(SharedError),
    /// The work finished but the runtime could not record it: `value` is
    /// what it produced (a resume would not find it).
    #[error("the step could not be recorded: {error}")]
    Record {
        /// The store's error.
        error: SharedError,
        /// The step's value.
        value: Box<StepValue>,
    },
    /// Another process took the run over: this one must stop and write
    /// nothing more.
    #[error(transparent)]
    StaleEpoch(#[from] StaleEpochError),
}

/// Another process took over the session's lease (a newer epoch): the run
/// of this process stops at its next step and writes nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("session `{session_id}` was taken over by another process (epoch {current}, this process held {held})")]
pub struct StaleEpochError {
    /// The session.
    pub session_id: String,
    /// The epoch this process held.
    pub held: u64,
    /// The epoch in the store.
    pub current: u64,
}

/// Runs every model call, tool call and loop decision of a run. The work of
/// a step runs inside [`step`](Self::step), so a checkpoint runtime can
/// answer a finished step from its record without running it again.
pub trait DurableRuntime: Send + Sync {
    /// How this runtime makes runs durable.
    fn mode(&self) -> DurableMode {
        DurableMode::Memory
    }

    /// Runs `work` as `step` and records its value, or answers the step
    /// from its record. A failed `work` is not recorded.
    fn step<'a>(
        &'a self,
        step: Step,
        work: BoxFuture<'a, Result<StepValue, SharedError>>,
    ) -> BoxFuture<'a, Result<StepValue, StepError>>;

    /// Whether an earlier process recorded `key` (a finished step of a
    /// resumed run, which [`step`](Self::step) answers without running).
    fn recorded(&self, key: &StepKey) -> bool {
        self.record(key).is_some()
    }

    /// The value an earlier process recorded for `key`, if any.
    fn record(&self, _key: &StepKey) -> Option<StepValue> {
        None
    }

    /// Makes every step of `run_id` recorded so far durable before it
    /// returns. A runtime that groups its writes (a checkpoint runtime
    /// commits a turn's steps together) writes them now; one that writes
    /// each step as it finishes has nothing to do (the default). Called
    /// after a step too costly to do again (a compaction's summary).
    fn sync<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), SharedError>> {
        let _ = run_id;
        Box::pin(async { Ok(()) })
    }
}

/// The default runtime: runs each step, records nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct MemoryRuntime;

impl DurableRuntime for MemoryRuntime {
    fn step<'a>(
        &'a self,
        _step: Step,
        work: BoxFuture<'a, Result<StepValue, SharedError>>,
    ) -> BoxFuture<'a, Result<StepValue, StepError>> {
        Box::pin(async move { work.await.map_err(StepError::Work) })
    }
}

/// The result text of a tool call a process death interrupted: it may or
/// may not have taken effect. A resume gives it to an `unsafe` call it does
/// not run again; a heal to every call its records do not finish.
pub const INTERRUPTED_CALL_MESSAGE: &str = "Tool error: this call was interrupted (the process running it stopped before it finished), so it may or may not have taken effect. Check the current state before running it again.";

/// A step record as a checkpoint backend hands it to a resume.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRecord {
    /// The loop turn of the step.
    pub turn: u32,
    /// What kind of step it is.
    pub kind: StepKind,
    /// Its name within the turn (a tool call's id, a decision's key).
    pub name: String,
    /// What it produced.
    pub value: StepValue,
}

/// Who holds a session's lease, as the backend says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseInfo {
    /// The holder's process id.
    pub pid: u32,
    /// The holder's host name.
    pub host: String,
    /// The lease's epoch (each takeover adds one).
    pub epoch: u64,
    /// The holder's last heartbeat, epoch ms.
    pub heartbeat_at_ms: u64,
    /// The holder gave it up.
    pub released: bool,
}

/// Another live process holds the session's lease: a run there must end
/// (or that process must die) before a run here can start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("session `{session_id}` is in use by process {pid} on {host}")]
pub struct RunLeaseHeldError {
    /// The session.
    pub session_id: String,
    /// The holder's process id.
    pub pid: u32,
    /// The holder's host name.
    pub host: String,
}

/// Why a lease was not taken.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LeaseError {
    /// Another live process holds it.
    #[error(transparent)]
    Held(#[from] RunLeaseHeldError),
    /// The backend failed.
    #[error(transparent)]
    Store(StoreError),
}

/// What `run()` does with a run a dead process left in the session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum OnInterrupted {
    /// Close it: its finished work is saved, its unfinished tool calls are
    /// reported interrupted, and the prompt runs.
    #[default]
    Heal,
    /// Continue it first (as the agent's `resume` does), then run the
    /// prompt, unless the resumed run was aborted or suspended.
    Resume,
}

/// A checkpoint-mode runtime: where a durable agent keeps its sessions,
/// step records and leases. The agent takes the session's lease before a
/// run writes, binds the run so its steps are recorded, appends turns
/// fenced on the lease's epoch, and reads a dead run's records back to
/// resume or heal it.
///
/// Every write checks that this process still holds the session's lease at
/// the epoch it took it with; a process that lost the lease never writes
/// again (the write fails with [`StaleEpochError`]).
pub trait CheckpointBackend: DurableRuntime {
    /// The store the backend keeps its sessions in (the agent's store).
    fn session_store(&self) -> Arc<dyn SessionStore>;

    /// Whether `store` is this backend's own store.
    fn owns(&self, store: &dyn SessionStore) -> bool;

    /// Takes the session's lease for this process (kept, with a heartbeat,
    /// until [`release`](Self::release)). `Ok(true)` when it was newly
    /// taken: another process may have written to the session before.
    fn acquire(self: Arc<Self>, session_id: String) -> BoxFuture<'static, Result<bool, LeaseError>>;

    /// Who holds the session's lease, if anyone took it.
    fn lease<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<Option<LeaseInfo>, StoreError>>;

    /// Gives the session's lease up (no-op when not held).
    fn release(&self, session_id: &str);

    /// Records `run_id` as the session's: its steps are recorded from now
    /// on.
    fn bind_run(&self, run_id: &str, session_id: &str);

    /// Stops recording `run_id` and forgets the records it resumed from.
    fn unbind_run(&self, run_id: &str);

    /// The step records of a run, in the order they were written.
    fn records<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<Vec<StepRecord>, StoreError>>;

    /// Makes `records` the answers of `run_id`'s steps (a resume).
    fn load_records(&self, run_id: &str, records: &[StepRecord]);

    /// Appends turns to the session, fenced, with the run's position (the
    /// loop turn they complete, the last turn's id), and drops the step
    /// records those turns now hold: one transaction.
    fn append_turns<'a>(
        &'a self,
        session_id: &'a str,
        run_id: &'a str,
        loop_turn: u32,
        turns: &'a [SessionTurn],
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Replaces the session's turns (a compaction or a repair), fenced.
    fn replace_turns<'a>(
        &'a self,
        session_id: &'a str,
        turns: &'a [SessionTurn],
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Records (inserts or updates) a run, fenced.
    fn save_run<'a>(&'a self, session_id: &'a str, run: &'a SessionRun) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Makes `writes`, in order, in one transaction fenced on this
    /// process's lease of `session_id`: all of them or none, and none once
    /// another process took the lease. What the agent writes outside a run
    /// goes through it (a rewind: the branch, the cut and the runs past it;
    /// a fork's new session; a metadata key), so a crash never leaves half
    /// of it and a second process never writes under a live holder.
    fn write_session<'a>(
        &'a self,
        session_id: &'a str,
        writes: Vec<SessionWrite>,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
}

/// One write of [`CheckpointBackend::write_session`]. The session a write
/// names is the leased one, or one it creates. (Not `non_exhaustive`: a
/// backend must make every kind of write.)
#[derive(Debug, Clone, PartialEq)]
pub enum SessionWrite {
    /// Creates the session `id` (a branch, a fork); the write fails when it
    /// exists.
    Create {
        /// The new session.
        id: String,
    },
    /// Appends turns to the session `id`.
    AppendTurns {
        /// The session.
        id: String,
        /// The turns.
        turns: Vec<SessionTurn>,
    },
    /// Keeps the first `keep` turns of the session `id`.
    Truncate {
        /// The session.
        id: String,
        /// How many turns stay.
        keep: usize,
    },
    /// Sets a metadata key of the session `id`.
    SetMeta {
        /// The session.
        id: String,
        /// The key.
        key: String,
        /// Its value.
        value: Value,
    },
    /// Records (inserts or replaces) a run of the session `id`; a run that
    /// is no longer resumable loses its step records.
    SaveRun {
        /// The session.
        id: String,
        /// The run.
        run: SessionRun,
    },
}

/// A runtime answered a step with the value of another kind of step (a
/// journal or a record that does not belong to this run).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the durable runtime answered a {asked} step with a {answered} step")]
pub struct StepMismatch {
    /// The kind of step asked for.
    pub asked: &'static str,
    /// The kind of value it answered with.
    pub answered: &'static str,
}

impl StepValue {
    /// The kind of step this value is of, as a word.
    pub fn kind_name(&self) -> &'static str {
        match self {
            StepValue::Model(_) => "model call",
            StepValue::Tool(_) => "tool call",
            StepValue::Decision(_) => "decision",
            StepValue::Checkpoint(_) => "checkpoint",
        }
    }
}
