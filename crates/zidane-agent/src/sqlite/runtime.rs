//! The checkpoint backend on the embedded store: each finished
//! step is recorded in the sessions file, a per-session lease with an epoch
//! keeps a second process from driving the same session, and a resume
//! continues a run a dead process left from its saved turns and records.
//!
//! What is written, and when (each a single transaction):
//!
//! - turns when the loop flushes them (the prompt, a tool-calling turn with
//!   its results, a final answer), together with the run's position (the
//!   loop turn they complete, the last turn's id), the step records still
//!   waiting (see below) and the removal of the step records those turns now
//!   hold;
//! - the step records waiting, before an `unsafe` tool call starts: what
//!   led to the call (the model's message, the verdict that let it through)
//!   is on disk before the call can change anything, so a crash during it
//!   is reported as an interrupted call, never forgotten;
//! - the step records waiting, at the latest [`CheckpointOptions::group_commit`]
//!   after the first of them finished, or when a caller asks
//!   ([`DurableRuntime::sync`]: a compaction's summary);
//! - the run's record when it starts and ends (with the records waiting).
//!
//! A finished step (a model call's message, a tool call's outcome with its
//! tool-state writes, a decision) waits in memory for the next of these
//! commits, so a tool turn whose calls finish together costs one commit:
//! the flush, which holds the turn itself and needs none of its step
//! records. A crash loses only what waited: a safe call runs again, a model
//! call finished less than the window before the crash is asked again, and
//! an `unsafe` call that finished in that window is reported interrupted.
//! `group_commit` of zero writes each record as its step finishes.
//!
//! Every one of them first checks that this process still holds the
//! session's lease at the epoch it took it with: a process that lost the
//! lease never writes again.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Weak};
use std::time::Duration;

use rusqlite::{OptionalExtension, Transaction, params};
use zidane_core::clock::{Clock, SystemClock};
use zidane_core::durable::{
    CheckpointBackend, Durability, DurableMode, DurableRuntime, LeaseError, LeaseInfo, RunLeaseHeldError, SessionWrite,
    StaleEpochError, Step, StepError, StepKey, StepKind, StepRecord, StepValue,
};
use zidane_core::events::{MessageError, SharedError, ToolStateOp};

use crate::durable::Lookup;
use zidane_provider::{BoxFuture, SessionTurn};

use super::{SqliteStore, Synchronous, err, insert_turns};
use zidane_core::session::{SessionRun, SessionStore, StoreError};

/// How a checkpoint runtime keeps its leases and syncs its writes.
#[derive(Debug, Clone)]
pub struct CheckpointOptions {
    /// How long a lease outlives its holder's last heartbeat (a holder on
    /// this machine whose process is gone loses it at once).
    pub lease_ttl: Duration,
    /// How often a holder renews its lease.
    pub heartbeat: Duration,
    /// How the store syncs a commit (the default, full, survives power
    /// loss; normal survives a process crash only).
    pub synchronous: Synchronous,
    /// How long a finished step's record may wait for the next commit (the
    /// turn's flush, an `unsafe` call's start) before it is written on its
    /// own. Zero: each record is written as its step finishes.
    pub group_commit: Duration,
}

/// The default [`CheckpointOptions::group_commit`].
pub const DEFAULT_GROUP_COMMIT: Duration = Duration::from_millis(50);

impl Default for CheckpointOptions {
    fn default() -> Self {
        CheckpointOptions {
            lease_ttl: Duration::from_secs(30),
            heartbeat: Duration::from_secs(10),
            synchronous: Synchronous::Full,
            group_commit: DEFAULT_GROUP_COMMIT,
        }
    }
}

/// A finished step's record, waiting for its session's next commit.
struct PendingStep {
    run_id: String,
    turn: u32,
    kind: StepKind,
    name: String,
    body: String,
    ops: Vec<ToolStateOp>,
}

/// `value` as JSON in a string of exactly its size (a record of a 49 MB
/// tool call is one such string, not one grown by doubling).
fn exact_json(value: &StepValue) -> Result<String, StoreError> {
    let mut size = super::Counted(0);
    serde_json::to_writer(&mut size, value).map_err(err)?;
    let mut bytes = Vec::with_capacity(size.0);
    serde_json::to_writer(&mut bytes, value).map_err(err)?;
    String::from_utf8(bytes).map_err(err)
}

impl PendingStep {
    /// The record of `key`'s step: its value as JSON and, for a tool call,
    /// the tool-state writes it staged.
    fn new(key: &StepKey, value: &StepValue) -> Result<Arc<Self>, StoreError> {
        Ok(Arc::new(PendingStep {
            run_id: key.run_id.clone(),
            turn: key.turn,
            kind: key.kind,
            name: key.name.clone(),
            body: exact_json(value)?,
            ops: match value {
                StepValue::Tool(t) => t.state.clone(),
                _ => Vec::new(),
            },
        }))
    }
}

/// The records a session's next commit writes, and the batch they belong
/// to (the timer of a batch commits only that batch).
#[derive(Default)]
struct Pending {
    steps: Vec<Arc<PendingStep>>,
    batch: u64,
}

/// A lease this runtime holds.
struct Held {
    epoch: u64,
    heartbeat: Option<tokio::task::JoinHandle<()>>,
}

#[derive(Default)]
struct State {
    /// Leases held, by session.
    leases: HashMap<String, Held>,
    /// The runs recorded, their records and the stale sessions.
    book: crate::durable::RunBook,
    /// Finished steps' records not written yet, by session.
    pending: HashMap<String, Pending>,
    /// Tool calls running, by session (a batch's calls run side by side).
    running: HashMap<String, usize>,
    /// The last batch number given out.
    batches: u64,
    /// Write transactions committed.
    commits: u64,
}

/// A tool call running in a session; counted until it finishes or is
/// dropped (a cancelled call).
struct Running<'a> {
    state: &'a Mutex<State>,
    session: String,
}

impl<'a> Running<'a> {
    fn start(state: &'a Mutex<State>, session: &str) -> Self {
        *state.lock().running.entry(session.to_owned()).or_default() += 1;
        Running {
            state,
            session: session.to_owned(),
        }
    }

    /// Stops counting this call; whether others still run.
    fn finish(self) -> bool {
        let state = self.state;
        let session = self.session.clone();
        drop(self);
        state.lock().running.get(&session).is_some_and(|n| *n > 0)
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let mut state = self.state.lock();
        if let Some(n) = state.running.get_mut(&self.session) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                state.running.remove(&self.session);
            }
        }
    }
}

/// A fenced write, handed to the thread that runs it.
type WriteFn<T> = Box<dyn FnOnce(Transaction<'_>) -> Result<T, StoreError> + Send>;

/// What a write needs, apart from the runtime: a timer that commits a
/// batch holds one.
#[derive(Clone)]
struct Writer {
    store: SqliteStore,
    owner: String,
    state: Arc<Mutex<State>>,
    /// The store syncs only the commits before an effect
    /// ([`Synchronous::BeforeEffects`]).
    sync_effects: bool,
    /// A commit that is not synced runs on the calling thread when the
    /// file can be locked at once (the store does not sync every commit).
    inline: bool,
}

/// Writes `steps` in `tx`: every one's tool-state writes, and the records
/// not covered by turns the same transaction saves (`covered`: the run and
/// the loop turn those turns complete).
fn write_steps(
    tx: &Transaction<'_>,
    session_id: &str,
    steps: &[Arc<PendingStep>],
    covered: Option<(&str, u32)>,
) -> Result<(), StoreError> {
    for step in steps {
        crate::sqlite::apply_tool_state(tx, session_id, &step.ops)?;
        if covered.is_some_and(|(run, turn)| run == step.run_id && step.turn <= turn) {
            continue;
        }
        if step.body.len() <= super::STREAMED_CONTENT {
            tx.prepare_cached(
                "INSERT INTO steps (session_id, run_id, turn, kind, name, value) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (run_id, turn, kind, name) DO UPDATE SET value = excluded.value",
            )
            .map_err(err)?
            .execute(params![
                session_id,
                step.run_id,
                step.turn as i64,
                step.kind.as_str(),
                step.name,
                step.body
            ])
            .map_err(err)?;
            continue;
        }
        write_large_step(tx, session_id, step)?;
    }
    Ok(())
}

/// A large record (a tool call carrying a whole file) is written in pieces
/// into a blob made at its size: binding it whole would copy it twice
/// more (the bound text, then the row SQLite builds).
fn write_large_step(tx: &Transaction<'_>, session_id: &str, step: &PendingStep) -> Result<(), StoreError> {
    let size = i32::try_from(step.body.len()).map_err(err)?;
    tx.prepare_cached(
        "INSERT INTO steps (session_id, run_id, turn, kind, name, value) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (run_id, turn, kind, name) DO UPDATE SET value = excluded.value",
    )
    .map_err(err)?
    .execute(params![
        session_id,
        step.run_id,
        step.turn as i64,
        step.kind.as_str(),
        step.name,
        rusqlite::blob::ZeroBlob(size)
    ])
    .map_err(err)?;
    let row: i64 = tx
        .prepare_cached("SELECT rowid FROM steps WHERE run_id = ?1 AND turn = ?2 AND kind = ?3 AND name = ?4")
        .map_err(err)?
        .query_row(
            params![step.run_id, step.turn as i64, step.kind.as_str(), step.name],
            |r| r.get(0),
        )
        .map_err(err)?;
    let mut blob = tx
        .blob_open(rusqlite::MAIN_DB, "steps", "value", row, false)
        .map_err(err)?;
    for piece in step.body.as_bytes().chunks(1 << 20) {
        std::io::Write::write_all(&mut blob, piece).map_err(err)?;
    }
    Ok(())
}

impl Writer {
    fn epoch(&self, session_id: &str) -> Result<u64, StoreError> {
        let state = self.state.lock();
        if let Some(stale) = state.book.stale.get(session_id) {
            return Err(Arc::new(stale.clone()));
        }
        state
            .leases
            .get(session_id)
            .map(|h| h.epoch)
            .ok_or_else(|| err(format!("this process holds no lease on session `{session_id}`")))
    }

    /// Takes the session's waiting records (a batch's, when given and
    /// still current).
    fn take_pending(&self, session_id: &str, batch: Option<u64>) -> Vec<Arc<PendingStep>> {
        let mut state = self.state.lock();
        match state.pending.get_mut(session_id) {
            Some(p) if batch.is_none_or(|b| b == p.batch) => std::mem::take(&mut p.steps),
            _ => Vec::new(),
        }
    }

    /// Puts records a failed commit took back in front of those that came
    /// since.
    fn restore_pending(&self, session_id: &str, mut steps: Vec<Arc<PendingStep>>) {
        if steps.is_empty() {
            return;
        }
        let mut state = self.state.lock();
        let pending = state.pending.entry(session_id.to_owned()).or_default();
        steps.append(&mut pending.steps);
        pending.steps = steps;
    }

    /// Runs `f` in one immediate transaction after checking that this
    /// process still holds `session_id`'s lease at its epoch, with the
    /// session's waiting records (those `f`'s turns do not cover, see
    /// [`write_steps`]), and commits. A lost lease is remembered, so the
    /// next write fails at once and the next run tries to take the lease
    /// back; records a failed commit took wait for the next one.
    async fn fenced<T: Send + 'static>(
        &self,
        session_id: &str,
        covered: Option<(String, u32)>,
        f: impl FnOnce(&Transaction<'_>, &str) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.fenced_synced(session_id, covered, false, f).await
    }

    /// [`fenced`](Self::fenced), synced to disk when `before_effect` and the
    /// store syncs only such commits.
    async fn fenced_synced<T: Send + 'static>(
        &self,
        session_id: &str,
        covered: Option<(String, u32)>,
        before_effect: bool,
        f: impl FnOnce(&Transaction<'_>, &str) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let epoch = self.epoch(session_id)?;
        let steps = self.take_pending(session_id, None);
        let (sid, owner) = (session_id.to_owned(), self.owner.clone());
        let taken = steps.clone();
        let synced = before_effect && self.sync_effects;
        let work = move |tx: Transaction<'_>| -> Result<T, StoreError> {
            fence(&tx, &sid, &owner, epoch)?;
            let covered = covered.as_ref().map(|(run, turn)| (run.as_str(), *turn));
            write_steps(&tx, &sid, &taken, covered)?;
            let out = f(&tx, &sid)?;
            tx.commit().map_err(err)?;
            Ok(out)
        };
        let work = if self.inline && !synced {
            match self.try_inline(work) {
                Ok(written) => return self.settle(session_id, steps, written),
                Err(work) => work,
            }
        } else {
            Box::new(work) as WriteFn<T>
        };
        let written = self
            .store
            .blocking(move |conn| {
                if synced {
                    conn.execute_batch("PRAGMA synchronous = FULL").map_err(err)?;
                }
                let out = conn
                    .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                    .map_err(err)
                    .and_then(work);
                if synced {
                    conn.execute_batch("PRAGMA synchronous = NORMAL").map_err(err)?;
                }
                out
            })
            .await;
        self.settle(session_id, steps, written)
    }

    /// Runs a write on the calling thread when the connection is free and
    /// the file's write lock can be taken without waiting: such a commit
    /// (not synced) costs less than the hand-off to a blocking thread.
    /// Hands the write back when it cannot start.
    fn try_inline<T: Send + 'static>(
        &self,
        work: impl FnOnce(Transaction<'_>) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<Result<T, StoreError>, WriteFn<T>> {
        let connection = self.store.connection();
        let Some(mut conn) = connection.try_lock() else {
            return Err(Box::new(work));
        };
        if conn.busy_timeout(Duration::ZERO).is_err() {
            return Err(Box::new(work));
        }
        let written = match conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate) {
            Ok(tx) => Ok(work(tx)),
            // Another process writes: wait for it off the async threads.
            Err(_) => Err(Box::new(work) as WriteFn<T>),
        };
        let _ = conn.busy_timeout(super::BUSY_TIMEOUT);
        written
    }

    /// Notes what a finished write means for the session: a lost lease is
    /// remembered; records a failed commit took wait for the next one.
    fn settle<T>(
        &self,
        session_id: &str,
        steps: Vec<Arc<PendingStep>>,
        written: Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        if written.is_ok() {
            self.state.lock().commits += 1;
        }
        if let Err(e) = &written {
            if let Some(stale) = e.downcast_ref::<StaleEpochError>() {
                self.state
                    .lock()
                    .book
                    .stale
                    .insert(session_id.to_owned(), stale.clone());
            } else {
                self.restore_pending(session_id, steps);
            }
        }
        written
    }

    /// Writes the session's waiting records (only `batch`'s, when given),
    /// synced when an effect follows.
    async fn commit_pending(
        &self,
        session_id: &str,
        batch: Option<u64>,
        before_effect: bool,
    ) -> Result<(), StoreError> {
        let has = {
            let state = self.state.lock();
            state
                .pending
                .get(session_id)
                .is_some_and(|p| !p.steps.is_empty() && batch.is_none_or(|b| b == p.batch))
        };
        let synced = before_effect && self.sync_effects;
        if !has && !synced {
            return Ok(());
        }
        self.fenced_synced(session_id, None, before_effect, move |tx, sid| {
            if !has {
                // Nothing waits, but earlier commits may not be on disk: a
                // write to sync them with (a commit that writes nothing
                // syncs nothing).
                tx.prepare_cached("UPDATE leases SET released = 0 WHERE session_id = ?1")
                    .map_err(err)?
                    .execute([sid])
                    .map_err(err)?;
            }
            Ok(())
        })
        .await
    }

    /// Writes the session's waiting records at once, on the calling thread
    /// (a run being unbound, the runtime dropped).
    fn commit_pending_now(&self, session_id: &str) {
        let steps = self.take_pending(session_id, None);
        if steps.is_empty() {
            return;
        }
        let Ok(epoch) = self.epoch(session_id) else { return };
        let conn = self.store.connection();
        let mut conn = conn.lock();
        let written = (|| {
            let tx = conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(err)?;
            fence(&tx, session_id, &self.owner, epoch)?;
            write_steps(&tx, session_id, &steps, None)?;
            tx.commit().map_err(err)
        })();
        match &written {
            Ok(()) => self.state.lock().commits += 1,
            Err(_) => self.restore_pending(session_id, steps),
        }
        if let Err(e) = written {
            tracing::warn!(target: "zidane", "step records of session `{session_id}` could not be written: {e}");
        }
    }
}

/// The checkpoint runtime on the embedded SQLite store: sessions, turns,
/// runs, step records, leases and tool state in one file.
pub struct CheckpointRuntime {
    store: SqliteStore,
    owner: String,
    pid: u32,
    host: String,
    options: CheckpointOptions,
    clock: Arc<dyn Clock>,
    state: Arc<Mutex<State>>,
}

impl std::fmt::Debug for CheckpointRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckpointRuntime")
            .field("path", &self.store.path())
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

fn stale(session_id: &str, held: u64, current: u64) -> StoreError {
    Arc::new(StaleEpochError {
        session_id: session_id.to_owned(),
        held,
        current,
    })
}

/// Checks inside a write transaction that `owner` still holds the lease of
/// `session_id` at `epoch`.
fn fence(tx: &Transaction<'_>, session_id: &str, owner: &str, epoch: u64) -> Result<(), StoreError> {
    let row: Option<(String, i64)> = tx
        .prepare_cached("SELECT owner, epoch FROM leases WHERE session_id = ?1")
        .map_err(err)?
        .query_row([session_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()
        .map_err(err)?;
    match row {
        Some((o, e)) if o == owner && e as u64 == epoch => Ok(()),
        Some((_, e)) => Err(stale(session_id, epoch, e as u64)),
        None => Err(stale(session_id, epoch, 0)),
    }
}

/// Whether process `pid` of this machine is gone (a zombie counts as gone).
fn process_gone(pid: u32) -> bool {
    let stat = Path::new("/proc").join(pid.to_string()).join("stat");
    if !Path::new("/proc/self").exists() {
        return false; // no way to tell here: the heartbeat decides
    }
    match std::fs::read_to_string(stat) {
        Ok(text) => text
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => true,
    }
}

impl CheckpointRuntime {
    /// Opens (or creates) the store at `path` with the default options.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, super::OpenError> {
        Self::open_with(path, CheckpointOptions::default())
    }

    /// Opens (or creates) the store at `path`.
    pub fn open_with(path: impl AsRef<Path>, options: CheckpointOptions) -> Result<Self, super::OpenError> {
        let store = SqliteStore::open_with(path, options.synchronous)?;
        Ok(Self::new(store, options))
    }

    /// A runtime on an open store.
    pub fn new(store: SqliteStore, options: CheckpointOptions) -> Self {
        CheckpointRuntime {
            store,
            owner: SystemClock::default().id(),
            pid: std::process::id(),
            host: crate::durable::host_name(),
            options,
            clock: Arc::new(SystemClock::default()),
            state: Arc::default(),
        }
    }

    /// The same runtime reading time from `clock` (lease expiry in tests).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// How many fenced write transactions (records, turns, runs,
    /// heartbeats) this runtime has committed: each is one sync of the
    /// sessions file under [`Synchronous::Full`].
    pub fn commits(&self) -> u64 {
        self.state.lock().commits
    }

    /// The SQLite store underneath.
    pub fn sqlite(&self) -> &SqliteStore {
        &self.store
    }

    /// Whether `store` is this runtime's store (the same file).
    fn owns(&self, store: &dyn SessionStore) -> bool {
        store.location().is_some_and(|p| p == self.store.path())
    }

    fn writer(&self) -> Writer {
        Writer {
            store: self.store.clone(),
            owner: self.owner.clone(),
            state: Arc::clone(&self.state),
            sync_effects: self.options.synchronous == Synchronous::BeforeEffects,
            inline: self.options.synchronous != Synchronous::Full,
        }
    }

    /// Takes the session's lease (or renews one this runtime holds). A
    /// holder on this machine whose process is gone, or whose heartbeat is
    /// older than the lease's lifetime, loses it; any other holder keeps
    /// it. Returns whether the lease was newly taken.
    async fn acquire(self: &Arc<Self>, session_id: &str) -> Result<bool, LeaseError> {
        {
            let mut state = self.state.lock();
            if state.book.stale.contains_key(session_id) {
                // Lost to another process: try to take it back (and load
                // what that process wrote) rather than fail every run.
                if let Some(task) = state.leases.remove(session_id).and_then(|h| h.heartbeat) {
                    task.abort();
                }
            } else if state.leases.contains_key(session_id) {
                return Ok(false);
            }
        }
        let (sid, owner, pid, host) = (session_id.to_owned(), self.owner.clone(), self.pid, self.host.clone());
        let now = self.clock.now_ms() as i64;
        let ttl = self.options.lease_ttl.as_millis() as i64;
        let outcome = self
            .store
            .blocking(move |conn| {
                let tx = conn
                    .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                    .map_err(err)?;
                let row: Option<(String, i64, String, i64, i64, i64)> = tx
                    .query_row(
                        "SELECT owner, pid, host, epoch, heartbeat_at, released FROM leases WHERE session_id = ?1",
                        [&sid],
                        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)),
                    )
                    .optional()
                    .map_err(err)?;
                let epoch = match row {
                    None => 1,
                    Some((o, p, h, e, beat, released)) => {
                        let expired = now - beat >= ttl;
                        let gone = h == host && p as u32 != pid && process_gone(p as u32);
                        if o != owner && released == 0 && !expired && !gone {
                            return Ok(Err(RunLeaseHeldError {
                                session_id: sid,
                                pid: p as u32,
                                host: h,
                            }));
                        }
                        e as u64 + 1
                    }
                };
                tx.execute(
                    "INSERT INTO leases (session_id, owner, pid, host, epoch, heartbeat_at, released)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0)
                     ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, pid = excluded.pid,
                       host = excluded.host, epoch = excluded.epoch, heartbeat_at = excluded.heartbeat_at, released = 0",
                    params![sid, owner, pid as i64, host, epoch as i64, now],
                )
                .map_err(err)?;
                tx.commit().map_err(err)?;
                Ok(Ok(epoch))
            })
            .await
            .map_err(LeaseError::Store)?;
        let epoch = outcome.map_err(LeaseError::Held)?;
        let heartbeat = tokio::runtime::Handle::try_current()
            .ok()
            .map(|rt| rt.spawn(heartbeat(Arc::downgrade(self), session_id.to_owned(), epoch)));
        let mut state = self.state.lock();
        state.book.stale.remove(session_id);
        state.leases.insert(session_id.to_owned(), Held { epoch, heartbeat });
        Ok(true)
    }

    /// Who holds the session's lease (`None`: nobody ever took it).
    pub async fn lease(&self, session_id: &str) -> Result<Option<LeaseInfo>, StoreError> {
        let sid = session_id.to_owned();
        self.store
            .blocking(move |conn| {
                conn.query_row(
                    "SELECT pid, host, epoch, heartbeat_at, released FROM leases WHERE session_id = ?1",
                    [&sid],
                    |r| {
                        Ok(LeaseInfo {
                            pid: r.get::<_, i64>(0)? as u32,
                            host: r.get(1)?,
                            epoch: r.get::<_, i64>(2)? as u64,
                            heartbeat_at_ms: r.get::<_, i64>(3)? as u64,
                            released: r.get::<_, i64>(4)? != 0,
                        })
                    },
                )
                .optional()
                .map_err(err)
            })
            .await
    }

    /// Gives the session's lease up (when the agent is done with it).
    fn release(&self, session_id: &str) {
        self.writer().commit_pending_now(session_id);
        let Some(held) = self.state.lock().leases.remove(session_id) else {
            return;
        };
        if let Some(task) = held.heartbeat {
            task.abort();
        }
        // Synchronous on purpose: this also runs from `Drop`.
        let conn = self.store.connection();
        let conn = conn.lock();
        let _ = conn.execute(
            "UPDATE leases SET released = 1 WHERE session_id = ?1 AND owner = ?2 AND epoch = ?3",
            params![session_id, self.owner, held.epoch as i64],
        );
    }

    /// Records `run` as this runtime's: its steps are recorded from now on.
    fn bind_run(&self, run_id: &str, session_id: &str) {
        self.state.lock().book.bind(run_id, session_id);
    }

    /// Stops recording `run` and forgets the records it was resumed from.
    fn unbind_run(&self, run_id: &str) {
        let session = self.state.lock().book.unbind(run_id);
        if let Some(session) = session {
            self.writer().commit_pending_now(&session);
        }
    }

    /// Makes `records` the answers of `run_id`'s steps.
    fn load_records(&self, run_id: &str, records: &[StepRecord]) {
        self.state.lock().book.load(run_id, records);
    }

    /// The step records of a run.
    async fn records(&self, run_id: &str) -> Result<Vec<StepRecord>, StoreError> {
        let run_id = run_id.to_owned();
        self.store
            .blocking(move |conn| {
                let mut stmt = conn
                    .prepare("SELECT turn, kind, name, value FROM steps WHERE run_id = ?1 ORDER BY rowid")
                    .map_err(err)?;
                let rows = stmt
                    .query_map([&run_id], |r| {
                        Ok((
                            r.get::<_, i64>(0)?,
                            r.get::<_, String>(1)?,
                            r.get::<_, String>(2)?,
                            // Large records are blobs of the JSON's bytes.
                            match r.get_ref(3)? {
                                rusqlite::types::ValueRef::Blob(bytes) => String::from_utf8_lossy(bytes).into_owned(),
                                _ => r.get::<_, String>(3)?,
                            },
                        ))
                    })
                    .map_err(err)?;
                let mut out = Vec::new();
                for row in rows {
                    let (turn, kind, name, value) = row.map_err(err)?;
                    let Some(kind) = StepKind::from_name(&kind) else {
                        continue;
                    };
                    out.push(StepRecord {
                        turn: turn as u32,
                        kind,
                        name,
                        value: serde_json::from_str(&value).map_err(err)?,
                    });
                }
                Ok(out)
            })
            .await
    }

    /// Appends turns to the session, fenced, with the run's position, and
    /// drops the step records those turns now hold.
    async fn append_turns(
        &self,
        session_id: &str,
        run_id: &str,
        loop_turn: u32,
        turns: &[SessionTurn],
    ) -> Result<(), StoreError> {
        let (rid, turns) = (run_id.to_owned(), turns.to_vec());
        let now = self.clock.now_ms() as i64;
        let covered = Some((run_id.to_owned(), loop_turn));
        self.writer()
            .fenced(session_id, covered, move |tx, sid| {
                // Every turn runs these: their statements are kept prepared.
                let next: i64 = tx
                    .prepare_cached("SELECT COALESCE(MAX(idx) + 1, 0) FROM turns WHERE session_id = ?1")
                    .map_err(err)?
                    .query_row([sid], |r| r.get(0))
                    .map_err(err)?;
                insert_turns(tx, sid, next, &turns)?;
                tx.prepare_cached("UPDATE sessions SET updated_at = ?2 WHERE id = ?1")
                    .map_err(err)?
                    .execute(params![sid, now])
                    .map_err(err)?;
                if let Some(last) = turns.last() {
                    tx.prepare_cached(
                        "UPDATE runs SET body = json_set(body, '$.loopTurn', ?3, '$.lastTurnId', ?4, '$.endTurn', ?5)
                     WHERE session_id = ?1 AND id = ?2",
                    )
                    .map_err(err)?
                    .execute(params![sid, rid, loop_turn as i64, last.id, next + turns.len() as i64])
                    .map_err(err)?;
                }
                tx.prepare_cached("DELETE FROM steps WHERE run_id = ?1 AND turn <= ?2")
                    .map_err(err)?
                    .execute(params![rid, loop_turn as i64])
                    .map_err(err)?;
                Ok(())
            })
            .await
    }

    /// Replaces the session's turns (a compaction), fenced; resumable runs
    /// of the session now end at the new last turn.
    async fn replace_turns(&self, session_id: &str, turns: &[SessionTurn]) -> Result<(), StoreError> {
        let turns = turns.to_vec();
        let now = self.clock.now_ms() as i64;
        self.fenced(session_id, move |tx, sid| {
            tx.execute("DELETE FROM turn_content WHERE session_id = ?1", [sid])
                .map_err(err)?;
            tx.execute("DELETE FROM turns WHERE session_id = ?1", [sid])
                .map_err(err)?;
            insert_turns(tx, sid, 0, &turns)?;
            tx.execute("UPDATE sessions SET updated_at = ?2 WHERE id = ?1", params![sid, now])
                .map_err(err)?;
            tx.execute(
                "UPDATE runs SET body = json_set(body, '$.lastTurnId', ?2)
                 WHERE session_id = ?1 AND json_extract(body, '$.resumable')",
                params![sid, turns.last().map(|t| t.id.clone())],
            )
            .map_err(err)?;
            Ok(())
        })
        .await
    }

    /// Makes `writes` in one transaction fenced on `session_id`'s lease.
    async fn write_session(&self, session_id: &str, writes: Vec<SessionWrite>) -> Result<(), StoreError> {
        let now = self.clock.now_ms() as i64;
        self.fenced(session_id, move |tx, _| {
            for write in writes {
                apply_write(tx, write, now)?;
            }
            Ok(())
        })
        .await
    }

    /// Records a run (its start, its end), fenced; a run that is no longer
    /// resumable loses its step records.
    async fn save_run(&self, session_id: &str, run: &SessionRun) -> Result<(), StoreError> {
        let run = run.clone();
        self.fenced(session_id, move |tx, sid| {
            // The position is the store's (flushes move it); the rest is the
            // caller's.
            let stored: Option<String> = tx
                .query_row(
                    "SELECT body FROM runs WHERE session_id = ?1 AND id = ?2",
                    params![sid, run.id],
                    |r| r.get(0),
                )
                .optional()
                .map_err(err)?;
            let mut run = run;
            if let Some(prev) = stored.and_then(|b| serde_json::from_str::<SessionRun>(&b).ok()) {
                run.loop_turn = run.loop_turn.max(prev.loop_turn);
                if prev.last_turn_id.is_some() && prev.loop_turn >= run.loop_turn {
                    run.last_turn_id = prev.last_turn_id;
                }
                run.end_turn = run.end_turn.max(prev.end_turn);
            }
            let body = serde_json::to_string(&run).map_err(err)?;
            tx.execute(
                "INSERT INTO runs (session_id, id, body, started_at) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (session_id, id) DO UPDATE SET body = excluded.body",
                params![sid, run.id, body, run.started_at.as_millis() as i64],
            )
            .map_err(err)?;
            if !run.resumable {
                tx.execute("DELETE FROM steps WHERE run_id = ?1", [&run.id])
                    .map_err(err)?;
            }
            Ok(())
        })
        .await
    }

    /// Runs `f` in one fenced transaction with the session's waiting
    /// records (see [`Writer::fenced`]).
    async fn fenced<T: Send + 'static>(
        &self,
        session_id: &str,
        f: impl FnOnce(&Transaction<'_>, &str) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.writer().fenced(session_id, None, f).await
    }
}

/// One write of a fenced [`CheckpointRuntime::write_session`].
fn apply_write(tx: &Transaction<'_>, write: SessionWrite, now: i64) -> Result<(), StoreError> {
    let touch = |id: &str| {
        tx.execute("UPDATE sessions SET updated_at = ?2 WHERE id = ?1", params![id, now])
            .map_err(err)
    };
    match write {
        SessionWrite::Create { id } => {
            let exists: bool = tx
                .query_row("SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?1)", [&id], |r| {
                    r.get(0)
                })
                .map_err(err)?;
            if exists {
                return Err(Arc::new(MessageError(format!("a session `{id}` exists already"))));
            }
            tx.execute(
                "INSERT INTO sessions (id, created_at, updated_at) VALUES (?1, ?2, ?2)",
                params![id, now],
            )
            .map_err(err)?;
        }
        SessionWrite::AppendTurns { id, turns } => {
            let next: i64 = tx
                .query_row(
                    "SELECT COALESCE(MAX(idx) + 1, 0) FROM turns WHERE session_id = ?1",
                    [&id],
                    |r| r.get(0),
                )
                .map_err(err)?;
            insert_turns(tx, &id, next, &turns)?;
            touch(&id)?;
        }
        SessionWrite::Truncate { id, keep } => {
            let keep = keep as i64;
            tx.execute(
                "DELETE FROM turn_content WHERE session_id = ?1 AND idx >= ?2",
                params![id, keep],
            )
            .map_err(err)?;
            tx.execute(
                "DELETE FROM turns WHERE session_id = ?1 AND idx >= ?2",
                params![id, keep],
            )
            .map_err(err)?;
            touch(&id)?;
        }
        SessionWrite::SetMeta { id, key, value } => {
            let raw: String = tx
                .query_row("SELECT metadata FROM sessions WHERE id = ?1", [&id], |r| r.get(0))
                .map_err(err)?;
            let mut meta: std::collections::BTreeMap<String, serde_json::Value> =
                serde_json::from_str(&raw).unwrap_or_default();
            meta.insert(key, value);
            tx.execute(
                "UPDATE sessions SET metadata = ?2 WHERE id = ?1",
                params![id, serde_json::to_string(&meta).map_err(err)?],
            )
            .map_err(err)?;
        }
        SessionWrite::SaveRun { id, run } => {
            let body = serde_json::to_string(&run).map_err(err)?;
            tx.execute(
                "INSERT INTO runs (session_id, id, body, started_at) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (session_id, id) DO UPDATE SET body = excluded.body",
                params![id, run.id, body, run.started_at.as_millis() as i64],
            )
            .map_err(err)?;
            if !run.resumable {
                tx.execute("DELETE FROM steps WHERE run_id = ?1", [&run.id])
                    .map_err(err)?;
            }
        }
    }
    Ok(())
}

impl Drop for CheckpointRuntime {
    fn drop(&mut self) {
        let sessions: Vec<String> = self.state.lock().leases.keys().cloned().collect();
        for session in sessions {
            self.release(&session);
        }
    }
}

/// Renews a lease until it is released or taken over; a takeover marks the
/// session stale, so the next write fails at once.
async fn heartbeat(runtime: Weak<CheckpointRuntime>, session_id: String, epoch: u64) {
    let period = match runtime.upgrade() {
        Some(rt) => rt.options.heartbeat,
        None => return,
    };
    let mut ticks = tokio::time::interval(period);
    ticks.tick().await;
    loop {
        ticks.tick().await;
        let Some(rt) = runtime.upgrade() else { return };
        // A renewal under another epoch (this one was taken over) fails the
        // fence and marks the session stale.
        if rt.state.lock().leases.get(&session_id).is_none_or(|h| h.epoch != epoch) {
            return;
        }
        let now = rt.clock.now_ms() as i64;
        let renewed = rt
            .fenced(&session_id, move |tx, sid| {
                tx.execute(
                    "UPDATE leases SET heartbeat_at = ?2 WHERE session_id = ?1",
                    params![sid, now],
                )
                .map_err(err)?;
                Ok(())
            })
            .await;
        if renewed
            .as_ref()
            .is_err_and(|e| e.downcast_ref::<StaleEpochError>().is_some())
        {
            return;
        }
    }
}

impl DurableRuntime for CheckpointRuntime {
    fn mode(&self) -> DurableMode {
        DurableMode::Checkpoint
    }

    fn recorded(&self, key: &StepKey) -> bool {
        self.state.lock().book.records.contains_key(key)
    }

    fn record(&self, key: &StepKey) -> Option<StepValue> {
        self.state.lock().book.records.get(key).cloned()
    }

    fn sync<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), SharedError>> {
        Box::pin(async move {
            let session = self.state.lock().book.runs.get(run_id).cloned();
            match session {
                Some(session) => self.writer().commit_pending(&session, None, true).await,
                None => Ok(()),
            }
        })
    }

    fn step<'a>(
        &'a self,
        step: Step,
        work: BoxFuture<'a, Result<StepValue, SharedError>>,
    ) -> BoxFuture<'a, Result<StepValue, StepError>> {
        Box::pin(async move {
            let lookup = self.state.lock().book.lookup(&step.key);
            let session = match lookup {
                Lookup::Recorded(value) => return Ok(value),
                // Not a run of this runtime's sessions: nothing to record.
                Lookup::Unbound => return work.await.map_err(StepError::Work),
                Lookup::Stale(stale) => return Err(StepError::StaleEpoch(stale)),
                Lookup::Live(session) => session,
            };
            if step.key.kind == StepKind::ToolCall && step.durability == Durability::Unsafe {
                // What led to this call is on disk before it can change
                // anything; a call that cannot be preceded by its records
                // does not run.
                if let Err(e) = self.before_effect(&session).await {
                    return Err(match e.downcast_ref::<StaleEpochError>() {
                        Some(stale) => StepError::StaleEpoch(stale.clone()),
                        None => StepError::Work(e),
                    });
                }
            }
            let running = (step.key.kind == StepKind::ToolCall).then(|| Running::start(&self.state, &session));
            let done = work.await;
            let siblings_running = running.is_some_and(Running::finish);
            let value = done.map_err(StepError::Work)?;
            // An answer that calls no tool is saved as a turn right after
            // this step (that turn is its record, and a resume that finds
            // it ends the run); recording it too would write it twice.
            if crate::durable::kept_as_turn(&value) {
                return Ok(value);
            }
            // An `unsafe` call that finished while others of its batch
            // still run is written now: they may run for long, and a crash
            // meanwhile must not report it interrupted.
            let now = siblings_running && step.durability == Durability::Unsafe;
            if !now
                && !self.options.group_commit.is_zero()
                && let Ok(runtime) = tokio::runtime::Handle::try_current()
            {
                return match self.defer(&runtime, &session, &step.key, &value) {
                    Ok(()) => Ok(value),
                    Err(error) => Err(StepError::Record {
                        error,
                        value: Box::new(value),
                    }),
                };
            }
            match self.write_step(&session, &step.key, &value).await {
                Ok(()) => Ok(value),
                Err(e) => match e.downcast_ref::<StaleEpochError>() {
                    Some(stale) => Err(StepError::StaleEpoch(stale.clone())),
                    None => Err(StepError::Record {
                        error: e,
                        value: Box::new(value),
                    }),
                },
            }
        })
    }
}

impl CheckpointRuntime {
    /// Writes what waits before an `unsafe` call of `session` starts: the
    /// other sessions' records first (a sub-agent's call is an effect of
    /// its parent's run too, whose spawn call waits in its records), then
    /// the session's own, synced.
    async fn before_effect(&self, session: &str) -> Result<(), StoreError> {
        let others: Vec<String> = {
            let state = self.state.lock();
            state
                .pending
                .iter()
                .filter(|(id, p)| id.as_str() != session && !p.steps.is_empty())
                .map(|(id, _)| id.clone())
                .collect()
        };
        let writer = self.writer();
        for other in others {
            if let Err(e) = writer.commit_pending(&other, None, false).await {
                tracing::warn!(target: "zidane", "step records of session `{other}` wait for its next write: {e}");
            }
        }
        writer.commit_pending(session, None, true).await
    }

    /// Keeps the step's record for the session's next commit; the first
    /// record of a batch starts the timer that writes the batch if nothing
    /// else has by then.
    fn defer(
        &self,
        runtime: &tokio::runtime::Handle,
        session_id: &str,
        key: &StepKey,
        value: &StepValue,
    ) -> Result<(), StoreError> {
        let step = PendingStep::new(key, value)?;
        let new_batch = {
            let mut state = self.state.lock();
            state.batches += 1;
            let next = state.batches;
            let pending = state.pending.entry(session_id.to_owned()).or_default();
            let first = pending.steps.is_empty();
            if first {
                pending.batch = next;
            }
            pending.steps.push(step);
            first.then_some(pending.batch)
        };
        if let Some(batch) = new_batch {
            let (writer, session, window) = (self.writer(), session_id.to_owned(), self.options.group_commit);
            runtime.spawn(async move {
                tokio::time::sleep(window).await;
                if let Err(e) = writer.commit_pending(&session, Some(batch), false).await {
                    tracing::warn!(target: "zidane", "step records of session `{session}` wait for the next write: {e}");
                }
            });
        }
        Ok(())
    }

    /// One transaction: the step's record and, for a tool call, the tool
    /// state it staged.
    async fn write_step(&self, session_id: &str, key: &StepKey, value: &StepValue) -> Result<(), StoreError> {
        let step = [PendingStep::new(key, value)?];
        self.fenced(session_id, move |tx, sid| write_steps(tx, sid, &step, None))
            .await
    }
}

impl CheckpointBackend for CheckpointRuntime {
    /// The store sessions live in (`AgentOptions::store` must be this one,
    /// or unset).
    fn session_store(&self) -> Arc<dyn SessionStore> {
        Arc::new(self.store.clone())
    }

    fn owns(&self, store: &dyn SessionStore) -> bool {
        CheckpointRuntime::owns(self, store)
    }

    fn acquire(self: Arc<Self>, session_id: String) -> BoxFuture<'static, Result<bool, LeaseError>> {
        Box::pin(async move { CheckpointRuntime::acquire(&self, &session_id).await })
    }

    fn lease<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<Option<LeaseInfo>, StoreError>> {
        Box::pin(CheckpointRuntime::lease(self, session_id))
    }

    fn release(&self, session_id: &str) {
        CheckpointRuntime::release(self, session_id);
    }

    fn bind_run(&self, run_id: &str, session_id: &str) {
        CheckpointRuntime::bind_run(self, run_id, session_id);
    }

    fn unbind_run(&self, run_id: &str) {
        CheckpointRuntime::unbind_run(self, run_id);
    }

    fn records<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<Vec<StepRecord>, StoreError>> {
        Box::pin(CheckpointRuntime::records(self, run_id))
    }

    fn load_records(&self, run_id: &str, records: &[StepRecord]) {
        CheckpointRuntime::load_records(self, run_id, records);
    }

    fn append_turns<'a>(
        &'a self,
        session_id: &'a str,
        run_id: &'a str,
        loop_turn: u32,
        turns: &'a [SessionTurn],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(CheckpointRuntime::append_turns(
            self, session_id, run_id, loop_turn, turns,
        ))
    }

    fn replace_turns<'a>(
        &'a self,
        session_id: &'a str,
        turns: &'a [SessionTurn],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(CheckpointRuntime::replace_turns(self, session_id, turns))
    }

    fn save_run<'a>(&'a self, session_id: &'a str, run: &'a SessionRun) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(CheckpointRuntime::save_run(self, session_id, run))
    }

    fn write_session<'a>(
        &'a self,
        session_id: &'a str,
        writes: Vec<SessionWrite>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(CheckpointRuntime::write_session(self, session_id, writes))
    }
}
