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
//!   ([`DurableRuntime::sync`](zidane_core::durable::DurableRuntime::sync): a compaction's summary);
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
use std::path::Path;
use std::sync::{Arc, Weak};
use std::time::Duration;

use rusqlite::{OptionalExtension, Transaction, params};
use zidane_core::clock::{Clock, SystemClock};
use zidane_core::durable::{
    LeaseError, LeaseInfo, RunLeaseHeldError, SessionWrite, StaleEpochError, StepKind, StepRecord,
};
use zidane_core::events::MessageError;

use zidane_provider::SessionTurn;

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

mod contract;
mod writer;

use self::writer::*;

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
