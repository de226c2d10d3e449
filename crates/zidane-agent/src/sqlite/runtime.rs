//! The checkpoint backend on the embedded store: each finished
//! step is recorded in the sessions file, a per-session lease with an epoch
//! keeps a second process from driving the same session, and a resume
//! continues a run a dead process left from its saved turns and records.
//!
//! What is written, and when (each a single transaction):
//!
//! - a step's record when the step finishes (a model call's message, a tool
//!   call's outcome with its tool-state writes, a decision);
//! - turns when the loop flushes them (the prompt, a tool-calling turn with
//!   its results, a final answer), together with the run's position (the
//!   loop turn they complete, the last turn's id) and the removal of the
//!   step records those turns now hold;
//! - the run's record when it starts and ends.
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
    CheckpointBackend, DurableMode, DurableRuntime, LeaseError, LeaseInfo, RunLeaseHeldError, StaleEpochError, Step,
    StepError, StepKey, StepKind, StepRecord, StepValue,
};
use zidane_core::events::{SharedError, ToolStateOp};
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
}

impl Default for CheckpointOptions {
    fn default() -> Self {
        CheckpointOptions {
            lease_ttl: Duration::from_secs(30),
            heartbeat: Duration::from_secs(10),
            synchronous: Synchronous::Full,
        }
    }
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
    /// Runs being recorded, with their session.
    runs: HashMap<String, String>,
    /// Records an earlier process left, answered without running.
    records: HashMap<StepKey, StepValue>,
    /// Sessions another process took over (noticed by a heartbeat).
    stale: HashMap<String, StaleEpochError>,
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

fn kind_of(name: &str) -> Option<StepKind> {
    [StepKind::ModelCall, StepKind::ToolCall, StepKind::Decision]
        .into_iter()
        .find(|k| k.as_str() == name)
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

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_owned())
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
            host: host_name(),
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

    /// The SQLite store underneath.
    pub fn sqlite(&self) -> &SqliteStore {
        &self.store
    }

    /// Whether `store` is this runtime's store (the same file).
    fn owns(&self, store: &dyn SessionStore) -> bool {
        store.location().is_some_and(|p| p == self.store.path())
    }

    fn epoch(&self, session_id: &str) -> Result<u64, StoreError> {
        let state = self.state.lock();
        if let Some(stale) = state.stale.get(session_id) {
            return Err(Arc::new(stale.clone()));
        }
        state
            .leases
            .get(session_id)
            .map(|h| h.epoch)
            .ok_or_else(|| err(format!("this process holds no lease on session `{session_id}`")))
    }

    /// Takes the session's lease (or renews one this runtime holds). A
    /// holder on this machine whose process is gone, or whose heartbeat is
    /// older than the lease's lifetime, loses it; any other holder keeps
    /// it. Returns whether the lease was newly taken.
    async fn acquire(self: &Arc<Self>, session_id: &str) -> Result<bool, LeaseError> {
        {
            let mut state = self.state.lock();
            if state.stale.contains_key(session_id) {
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
        state.stale.remove(session_id);
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
        self.state.lock().runs.insert(run_id.to_owned(), session_id.to_owned());
    }

    /// Stops recording `run` and forgets the records it was resumed from.
    fn unbind_run(&self, run_id: &str) {
        let mut state = self.state.lock();
        state.runs.remove(run_id);
        state.records.retain(|k, _| k.run_id != run_id);
    }

    /// Makes `records` the answers of `run_id`'s steps.
    fn load_records(&self, run_id: &str, records: &[StepRecord]) {
        let mut state = self.state.lock();
        for r in records {
            state.records.insert(
                StepKey {
                    run_id: run_id.to_owned(),
                    turn: r.turn,
                    kind: r.kind,
                    name: r.name.clone(),
                },
                r.value.clone(),
            );
        }
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
                            r.get::<_, String>(3)?,
                        ))
                    })
                    .map_err(err)?;
                let mut out = Vec::new();
                for row in rows {
                    let (turn, kind, name, value) = row.map_err(err)?;
                    let Some(kind) = kind_of(&kind) else { continue };
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
        self.fenced(session_id, move |tx, sid| {
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

    /// Runs `f` in one immediate transaction after checking that this
    /// runtime still holds `session_id`'s lease at its epoch, and commits.
    /// A lost lease is remembered, so the next write fails at once and the
    /// next run tries to take the lease back.
    async fn fenced<T: Send + 'static>(
        &self,
        session_id: &str,
        f: impl FnOnce(&Transaction<'_>, &str) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let epoch = self.epoch(session_id)?;
        let (sid, owner) = (session_id.to_owned(), self.owner.clone());
        let written = self
            .store
            .blocking(move |conn| {
                let tx = conn
                    .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                    .map_err(err)?;
                fence(&tx, &sid, &owner, epoch)?;
                let out = f(&tx, &sid)?;
                tx.commit().map_err(err)?;
                Ok(out)
            })
            .await;
        if let Err(e) = &written
            && let Some(stale) = e.downcast_ref::<StaleEpochError>()
        {
            self.state.lock().stale.insert(session_id.to_owned(), stale.clone());
        }
        written
    }
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
        self.state.lock().records.contains_key(key)
    }

    fn record(&self, key: &StepKey) -> Option<StepValue> {
        self.state.lock().records.get(key).cloned()
    }

    fn step<'a>(
        &'a self,
        step: Step,
        work: BoxFuture<'a, Result<StepValue, SharedError>>,
    ) -> BoxFuture<'a, Result<StepValue, StepError>> {
        Box::pin(async move {
            let (recorded, session) = {
                let state = self.state.lock();
                (
                    state.records.get(&step.key).cloned(),
                    state.runs.get(&step.key.run_id).cloned(),
                )
            };
            if let Some(value) = recorded {
                return Ok(value);
            }
            let Some(session) = session else {
                // Not a run of this runtime's sessions: nothing to record.
                return work.await.map_err(StepError::Work);
            };
            if let Some(stale) = self.state.lock().stale.get(&session) {
                return Err(StepError::StaleEpoch(stale.clone()));
            }
            let value = work.await.map_err(StepError::Work)?;
            // An answer that calls no tool is saved as a turn right after
            // this step (that turn is its record, and a resume that finds
            // it ends the run); recording it too would write it twice.
            if let StepValue::Model(message) = &value
                && message.incomplete_tool_calls.is_empty()
                && !message
                    .content
                    .iter()
                    .any(|b| matches!(b, zidane_provider::ContentBlock::ToolUse { .. }))
            {
                return Ok(value);
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
    /// One transaction: the step's record and, for a tool call, the tool
    /// state it staged.
    async fn write_step(&self, session_id: &str, key: &StepKey, value: &StepValue) -> Result<(), StoreError> {
        let body = serde_json::to_string(value).map_err(err)?;
        let ops: Vec<ToolStateOp> = match value {
            StepValue::Tool(t) => t.state.clone(),
            _ => Vec::new(),
        };
        let (run_id, turn, kind, name) = (key.run_id.clone(), key.turn, key.kind.as_str(), key.name.clone());
        self.fenced(session_id, move |tx, sid| {
            tx.prepare_cached(
                "INSERT INTO steps (session_id, run_id, turn, kind, name, value) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (run_id, turn, kind, name) DO UPDATE SET value = excluded.value",
            )
            .map_err(err)?
            .execute(params![sid, run_id, turn as i64, kind, name, body])
            .map_err(err)?;
            crate::sqlite::apply_tool_state(tx, sid, &ops)
        })
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
}
