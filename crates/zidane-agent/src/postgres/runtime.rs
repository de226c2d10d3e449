//! The checkpoint backend on PostgreSQL: the same records, the same
//! fenced writes and the same resume as the SQLite runtime, shared by
//! processes on several hosts.
//!
//! Leases: a holder takes a session-level advisory lock on a connection
//! of its own, keyed by the session, and then moves the session's row in
//! `leases` to its owner id and the next epoch. The database drops the lock
//! when that connection ends, so a holder that dies (`kill -9`) gives the
//! session up as soon as the server sees its connection close, on any host
//! and without a look at `/proc`; a host that vanishes without closing it
//! gives it up when the server's keepalive probes or its idle-session
//! timeout end the connection (under a minute by default). A heartbeat renews
//! the row and checks the lock connection; a lost lock connection makes
//! every session it held stale, so this process writes no more to them.
//!
//! Every write runs in one transaction that first reads the session's
//! lease row `FOR SHARE` and checks the owner and the epoch: a process
//! that lost the lease never writes again, and a takeover waits for a
//! write in flight to commit.
//!
//! Each finished step's record is written as the step finishes (there is
//! no grouping of commits as in the SQLite runtime: a commit here is a
//! round trip to the server, which syncs it).

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, Weak};

use tokio_postgres::{Client, Transaction};
use zidane_core::clock::{Clock, SystemClock};
use zidane_core::durable::{
    CheckpointBackend, DurableMode, DurableRuntime, LeaseError, LeaseInfo, RunLeaseHeldError, SessionWrite,
    StaleEpochError, Step, StepError, StepKey, StepKind, StepRecord, StepValue,
};
use zidane_core::events::SharedError;
use zidane_core::session::{SessionRun, SessionStore, StoreError};
use zidane_provider::{BoxFuture, SessionTurn};

use super::{PostgresError, PostgresOptions, PostgresStore, apply_tool_state, db, err, upsert_run, write_turns};
use crate::durable::Lookup;

#[derive(Default)]
struct State {
    /// Leases held: the epoch, by session.
    leases: HashMap<String, u64>,
    /// The runs recorded, their records and the stale sessions.
    book: crate::durable::RunBook,
    /// Write transactions committed.
    commits: u64,
}

/// The checkpoint runtime on a PostgreSQL database.
pub struct PostgresRuntime {
    store: PostgresStore,
    owner: String,
    pid: u32,
    host: String,
    options: PostgresOptions,
    clock: Arc<dyn Clock>,
    state: Arc<Mutex<State>>,
    /// The connection that holds this process's advisory locks.
    locks: Arc<tokio::sync::Mutex<Option<Client>>>,
    heartbeat: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl std::fmt::Debug for PostgresRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresRuntime")
            .field("store", &self.store)
            .field("host", &self.host)
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

/// The advisory lock's key of a session: 64 bits of the hash of its schema
/// and id (advisory locks are the database's, whatever the schema; two
/// sessions that share a key only wait for each other).
const LOCK_KEY: &str = "hashtextextended('zidane:' || $2 || ':' || $1, 0)";

/// Checks inside a write transaction that `owner` still holds the lease of
/// `session_id` at `epoch`, and keeps the lease row from moving until the
/// transaction ends.
async fn fence(tx: &Transaction<'_>, session_id: &str, owner: &str, epoch: u64) -> Result<(), StoreError> {
    let row = tx
        .query_opt(
            "SELECT owner, epoch FROM leases WHERE session_id = $1 FOR SHARE",
            &[&session_id],
        )
        .await
        .map_err(db)?;
    match row {
        Some(r) if r.get::<_, &str>(0) == owner && r.get::<_, i64>(1) as u64 == epoch => Ok(()),
        Some(r) => Err(stale(session_id, epoch, r.get::<_, i64>(1) as u64)),
        None => Err(stale(session_id, epoch, 0)),
    }
}

impl PostgresRuntime {
    /// Connects to the database `url` names and creates the tables when
    /// missing.
    pub async fn connect(url: &str, options: PostgresOptions) -> Result<Self, PostgresError> {
        let store = PostgresStore::connect(url, &options).await?;
        Ok(Self::new(store, options))
    }

    /// A runtime on a connected store.
    pub fn new(store: PostgresStore, options: PostgresOptions) -> Self {
        PostgresRuntime {
            store,
            owner: SystemClock::default().id(),
            pid: std::process::id(),
            host: options.host.clone().unwrap_or_else(crate::durable::host_name),
            options,
            clock: Arc::new(SystemClock::default()),
            state: Arc::default(),
            locks: Arc::default(),
            heartbeat: Mutex::new(None),
        }
    }

    /// The same runtime reading time from `clock` (the heartbeat's stamps).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The store underneath.
    pub fn store(&self) -> &PostgresStore {
        &self.store
    }

    /// How many fenced write transactions this runtime has committed.
    pub fn commits(&self) -> u64 {
        self.state.lock().commits
    }

    fn epoch(&self, session_id: &str) -> Result<u64, StoreError> {
        let state = self.state.lock();
        if let Some(stale) = state.book.stale.get(session_id) {
            return Err(Arc::new(stale.clone()));
        }
        state
            .leases
            .get(session_id)
            .copied()
            .ok_or_else(|| err(format!("this process holds no lease on session `{session_id}`")))
    }

    /// Runs `write` in one transaction after the fence; a lost lease is
    /// remembered, so the next write fails at once.
    async fn fenced<T>(
        &self,
        session_id: &str,
        write: impl AsyncFnOnce(&Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let epoch = self.epoch(session_id)?;
        let written: Result<T, StoreError> = async {
            let mut conn = self.store.conn().await?;
            let tx = conn.transaction().await.map_err(db)?;
            fence(&tx, session_id, &self.owner, epoch).await?;
            let out = write(&tx).await?;
            tx.commit().await.map_err(db)?;
            Ok(out)
        }
        .await;
        match &written {
            Ok(_) => self.state.lock().commits += 1,
            Err(e) => {
                if let Some(stale) = e.downcast_ref::<StaleEpochError>() {
                    self.state
                        .lock()
                        .book
                        .stale
                        .insert(session_id.to_owned(), stale.clone());
                }
            }
        }
        written
    }

    /// The lock connection, opened when missing.
    async fn lock_connection<'a>(&self, slot: &'a mut Option<Client>) -> Result<&'a mut Client, StoreError> {
        if slot.as_ref().is_none_or(Client::is_closed) {
            let client = self.store.dedicated().await?;
            let o = &self.options;
            // The server's side of the lock connection: a holder whose
            // machine vanished is found by the server's keepalive probes
            // or unacknowledged data, and one whose connection went silent
            // (nothing arrives, nothing closes) by the idle-session
            // timeout, which the heartbeat never lets a live holder reach.
            // Ending the session drops the lock, so the lease frees in
            // bounded time, not when the kernel gives up (hours).
            client
                .batch_execute(&format!(
                    "SET lock_timeout = {}; SET tcp_keepalives_idle = {}; SET tcp_keepalives_interval = {}; \
                     SET tcp_keepalives_count = {}; SET tcp_user_timeout = {}",
                    o.acquire_wait.as_millis().max(1),
                    o.keepalive_idle.as_secs().max(1),
                    o.keepalive_interval.as_secs().max(1),
                    o.keepalive_retries.max(1),
                    o.tcp_user_timeout.as_millis().max(1),
                ))
                .await
                .map_err(db)?;
            let idle = client
                .batch_execute(&format!(
                    "SET idle_session_timeout = {}",
                    o.lock_idle().as_millis().max(1)
                ))
                .await;
            if let Err(e) = idle {
                // Before PostgreSQL 14: the keepalives still apply.
                if e.code() != Some(&tokio_postgres::error::SqlState::UNDEFINED_OBJECT) {
                    return Err(db(e));
                }
                tracing::warn!(target: "zidane", "this PostgreSQL has no idle_session_timeout (14 and later): a holder whose connection goes silent keeps its leases until the keepalives end it");
            }
            return Ok(slot.insert(client));
        }
        slot.as_mut().ok_or_else(|| err("the lock connection is gone"))
    }

    /// Takes the session's lease (or keeps one this runtime holds). The
    /// advisory lock waits at most [`PostgresOptions::acquire_wait`] for
    /// a holder whose connection is closing; a live holder keeps it.
    async fn acquire(self: &Arc<Self>, session_id: &str) -> Result<bool, LeaseError> {
        {
            let mut state = self.state.lock();
            if state.book.stale.contains_key(session_id) {
                // Lost: try to take it back (and load what the other
                // process wrote) rather than fail every run.
                state.leases.remove(session_id);
            } else if state.leases.contains_key(session_id) {
                return Ok(false);
            }
        }
        let mut slot = self.locks.lock().await;
        let client = self.lock_connection(&mut slot).await.map_err(LeaseError::Store)?;
        let locked = client
            .execute(
                &format!("SELECT pg_advisory_lock({LOCK_KEY})"),
                &[&session_id, &self.store.space],
            )
            .await;
        if let Err(e) = locked {
            if e.code() != Some(&tokio_postgres::error::SqlState::LOCK_NOT_AVAILABLE) {
                return Err(LeaseError::Store(db(e)));
            }
            let holder = self.lease(session_id).await.map_err(LeaseError::Store)?;
            return Err(LeaseError::Held(RunLeaseHeldError {
                session_id: session_id.to_owned(),
                pid: holder.as_ref().map_or(0, |h| h.pid),
                host: holder.map(|h| h.host).unwrap_or_default(),
            }));
        }
        let taken = self.take_row(session_id).await;
        let epoch = match taken {
            Ok(epoch) => epoch,
            Err(e) => {
                let _ = client
                    .execute(
                        &format!("SELECT pg_advisory_unlock({LOCK_KEY})"),
                        &[&session_id, &self.store.space],
                    )
                    .await;
                return Err(LeaseError::Store(e));
            }
        };
        drop(slot);
        {
            let mut state = self.state.lock();
            state.book.stale.remove(session_id);
            state.leases.insert(session_id.to_owned(), epoch);
        }
        self.start_heartbeat();
        Ok(true)
    }

    /// Moves the session's lease row to this process at the next epoch.
    async fn take_row(&self, session_id: &str) -> Result<u64, StoreError> {
        let mut conn = self.store.conn().await?;
        let tx = conn.transaction().await.map_err(db)?;
        let current: Option<i64> = tx
            .query_opt(
                "SELECT epoch FROM leases WHERE session_id = $1 FOR UPDATE",
                &[&session_id],
            )
            .await
            .map_err(db)?
            .map(|r| r.get(0));
        let epoch = current.map_or(1, |e| e as u64 + 1);
        tx.execute(
            "INSERT INTO leases (session_id, owner, pid, host, epoch, heartbeat_at, released)
             VALUES ($1, $2, $3, $4, $5, $6, FALSE)
             ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, pid = excluded.pid,
               host = excluded.host, epoch = excluded.epoch, heartbeat_at = excluded.heartbeat_at, released = FALSE",
            &[
                &session_id,
                &self.owner,
                &(self.pid as i64),
                &self.host,
                &(epoch as i64),
                &(self.clock.now_ms() as i64),
            ],
        )
        .await
        .map_err(db)?;
        tx.commit().await.map_err(db)?;
        Ok(epoch)
    }

    fn start_heartbeat(self: &Arc<Self>) {
        let mut slot = self.heartbeat.lock();
        if slot.as_ref().is_some_and(|h| !h.is_finished()) {
            return;
        }
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            *slot = Some(rt.spawn(heartbeat(Arc::downgrade(self))));
        }
    }

    /// Who holds the session's lease (`None`: nobody ever took it).
    pub async fn lease(&self, session_id: &str) -> Result<Option<LeaseInfo>, StoreError> {
        let conn = self.store.conn().await?;
        let row = conn
            .query_opt(
                "SELECT pid, host, epoch, heartbeat_at, released FROM leases WHERE session_id = $1",
                &[&session_id],
            )
            .await
            .map_err(db)?;
        Ok(row.map(|r| LeaseInfo {
            pid: r.get::<_, i64>(0) as u32,
            host: r.get(1),
            epoch: r.get::<_, i64>(2) as u64,
            heartbeat_at_ms: r.get::<_, i64>(3) as u64,
            released: r.get(4),
        }))
    }

    /// Gives the session's lease up: the row is marked released and the
    /// lock dropped, in a task (this also runs from `Drop`; without a
    /// runtime the lock goes with the connection).
    fn release(&self, session_id: &str) {
        let Some(epoch) = self.state.lock().leases.remove(session_id) else {
            return;
        };
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let space = self.store.space.clone();
        let (store, locks, owner, sid) = (
            self.store.clone(),
            Arc::clone(&self.locks),
            self.owner.clone(),
            session_id.to_owned(),
        );
        rt.spawn(async move {
            if let Ok(conn) = store.conn().await {
                let _ = conn
                    .execute(
                        "UPDATE leases SET released = TRUE WHERE session_id = $1 AND owner = $2 AND epoch = $3",
                        &[&sid, &owner, &(epoch as i64)],
                    )
                    .await;
            }
            if let Some(client) = locks.lock().await.as_ref() {
                let _ = client
                    .execute(&format!("SELECT pg_advisory_unlock({LOCK_KEY})"), &[&sid, &space])
                    .await;
            }
        });
    }

    /// The step records of a run, in the order they were written.
    async fn records(&self, run_id: &str) -> Result<Vec<StepRecord>, StoreError> {
        let conn = self.store.conn().await?;
        let rows = conn
            .query(
                "SELECT turn, kind, name, value FROM steps WHERE run_id = $1 ORDER BY seq",
                &[&run_id],
            )
            .await
            .map_err(db)?;
        let mut out = Vec::new();
        for r in rows {
            let Some(kind) = StepKind::from_name(r.get(1)) else {
                continue;
            };
            out.push(StepRecord {
                turn: r.get::<_, i64>(0) as u32,
                kind,
                name: r.get(2),
                value: serde_json::from_str(r.get(3)).map_err(err)?,
            });
        }
        Ok(out)
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
        let now = self.clock.now_ms() as i64;
        self.fenced(session_id, async |tx| {
            let next = super::next_index(tx, session_id).await?;
            write_turns(tx, session_id, Some(next), turns, now).await?;
            if let Some(last) = turns.last() {
                tx.execute(
                    "UPDATE runs SET body = body || jsonb_build_object('loopTurn', $3::bigint, 'lastTurnId', $4::text, 'endTurn', $5::bigint)
                     WHERE session_id = $1 AND id = $2",
                    &[
                        &session_id,
                        &run_id,
                        &(loop_turn as i64),
                        &last.id,
                        &(next + turns.len() as i64),
                    ],
                )
                .await
                .map_err(db)?;
            }
            tx.execute(
                "DELETE FROM steps WHERE run_id = $1 AND turn <= $2",
                &[&run_id, &(loop_turn as i64)],
            )
            .await
            .map_err(db)?;
            Ok(())
        })
        .await
    }

    /// Replaces the session's turns (a compaction), fenced; resumable runs
    /// of the session now end at the new last turn.
    async fn replace_turns(&self, session_id: &str, turns: &[SessionTurn]) -> Result<(), StoreError> {
        let now = self.clock.now_ms() as i64;
        let last = turns.last().map(|t| t.id.clone());
        self.fenced(session_id, async |tx| {
            write_turns(tx, session_id, None, turns, now).await?;
            tx.execute(
                "UPDATE runs SET body = jsonb_set(body, '{lastTurnId}', COALESCE(to_jsonb($2::text), 'null'::jsonb))
                 WHERE session_id = $1 AND COALESCE((body->>'resumable')::boolean, FALSE)",
                &[&session_id, &last],
            )
            .await
            .map_err(db)?;
            Ok(())
        })
        .await
    }

    /// Makes `writes` in one transaction fenced on `session_id`'s lease.
    async fn write_session(&self, session_id: &str, writes: Vec<SessionWrite>) -> Result<(), StoreError> {
        let now = self.clock.now_ms() as i64;
        self.fenced(session_id, async |tx| {
            for write in writes {
                super::apply_write(tx, write, now).await?;
            }
            Ok(())
        })
        .await
    }

    /// Records a run (its start, its end), fenced; a run that is no longer
    /// resumable loses its step records.
    async fn save_run(&self, session_id: &str, run: &SessionRun) -> Result<(), StoreError> {
        self.fenced(session_id, async |tx| {
            // The position is the store's (flushes move it); the rest is the
            // caller's.
            let stored = tx
                .query_opt(
                    "SELECT body::text FROM runs WHERE session_id = $1 AND id = $2 FOR UPDATE",
                    &[&session_id, &run.id],
                )
                .await
                .map_err(db)?;
            let mut run = run.clone();
            if let Some(prev) = stored.and_then(|r| serde_json::from_str::<SessionRun>(r.get(0)).ok()) {
                run.loop_turn = run.loop_turn.max(prev.loop_turn);
                if prev.last_turn_id.is_some() && prev.loop_turn >= run.loop_turn {
                    run.last_turn_id = prev.last_turn_id;
                }
                run.end_turn = run.end_turn.max(prev.end_turn);
            }
            upsert_run(tx, session_id, &run).await?;
            if !run.resumable {
                tx.execute("DELETE FROM steps WHERE run_id = $1", &[&run.id])
                    .await
                    .map_err(db)?;
            }
            Ok(())
        })
        .await
    }

    /// One transaction: the step's record and, for a tool call, the tool
    /// state it staged.
    async fn write_step(&self, session_id: &str, key: &StepKey, value: &StepValue) -> Result<(), StoreError> {
        let body = serde_json::to_string(value).map_err(err)?;
        self.fenced(session_id, async |tx| {
            if let StepValue::Tool(t) = value {
                apply_tool_state(tx, session_id, &t.state).await?;
            }
            tx.execute(
                "INSERT INTO steps (session_id, run_id, turn, kind, name, value) VALUES ($1, $2, $3, $4, $5, $6)
                 ON CONFLICT (run_id, turn, kind, name) DO UPDATE SET value = excluded.value",
                &[
                    &session_id,
                    &key.run_id,
                    &(key.turn as i64),
                    &key.kind.as_str(),
                    &key.name,
                    &body,
                ],
            )
            .await
            .map_err(db)?;
            Ok(())
        })
        .await
    }
}

impl Drop for PostgresRuntime {
    fn drop(&mut self) {
        let sessions: Vec<String> = self.state.lock().leases.keys().cloned().collect();
        for session in sessions {
            self.release(&session);
        }
        if let Some(task) = self.heartbeat.lock().take() {
            task.abort();
        }
    }
}

/// Renews every lease the runtime holds until it is dropped; a takeover or
/// a lost lock connection marks the session stale, so the next write fails
/// at once.
async fn heartbeat(runtime: Weak<PostgresRuntime>) {
    let period = match runtime.upgrade() {
        Some(rt) => rt.options.heartbeat,
        None => return,
    };
    let mut ticks = tokio::time::interval(period);
    ticks.tick().await;
    loop {
        ticks.tick().await;
        let Some(rt) = runtime.upgrade() else { return };
        let held: Vec<(String, u64)> = rt.state.lock().leases.iter().map(|(s, e)| (s.clone(), *e)).collect();
        let alive = {
            let mut slot = rt.locks.lock().await;
            let answered = match slot.as_ref() {
                // A connection that went silent never answers: past the
                // idle timeout the server has ended it anyway.
                Some(client) => tokio::time::timeout(rt.options.lock_idle(), client.simple_query("SELECT 1"))
                    .await
                    .is_ok_and(|r| r.is_ok()),
                None => false,
            };
            if !answered {
                // The next lease opens a new one.
                slot.take();
            }
            answered
        };
        let now = rt.clock.now_ms() as i64;
        for (session, epoch) in held {
            let renewed = if alive {
                rt.fenced(&session, async |tx| {
                    tx.execute(
                        "UPDATE leases SET heartbeat_at = $2 WHERE session_id = $1",
                        &[&session, &now],
                    )
                    .await
                    .map_err(db)?;
                    Ok(())
                })
                .await
            } else {
                // The lock went with its connection: another process may
                // hold the session now.
                Err(stale(&session, epoch, epoch))
            };
            if let Err(e) = renewed
                && let Some(stale) = e.downcast_ref::<StaleEpochError>()
            {
                rt.state.lock().book.stale.insert(session, stale.clone());
            }
        }
    }
}

impl DurableRuntime for PostgresRuntime {
    fn mode(&self) -> DurableMode {
        DurableMode::Checkpoint
    }

    fn recorded(&self, key: &StepKey) -> bool {
        self.state.lock().book.records.contains_key(key)
    }

    fn record(&self, key: &StepKey) -> Option<StepValue> {
        self.state.lock().book.records.get(key).cloned()
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
            let value = work.await.map_err(StepError::Work)?;
            // An answer that calls no tool is saved as a turn right after
            // this step (that turn is its record).
            if crate::durable::kept_as_turn(&value) {
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

impl CheckpointBackend for PostgresRuntime {
    fn session_store(&self) -> Arc<dyn SessionStore> {
        Arc::new(self.store.clone())
    }

    fn owns(&self, store: &dyn SessionStore) -> bool {
        store.key() == self.store.key()
    }

    fn acquire(self: Arc<Self>, session_id: String) -> BoxFuture<'static, Result<bool, LeaseError>> {
        Box::pin(async move { PostgresRuntime::acquire(&self, &session_id).await })
    }

    fn lease<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<Option<LeaseInfo>, StoreError>> {
        Box::pin(PostgresRuntime::lease(self, session_id))
    }

    fn release(&self, session_id: &str) {
        PostgresRuntime::release(self, session_id);
    }

    fn bind_run(&self, run_id: &str, session_id: &str) {
        self.state.lock().book.bind(run_id, session_id);
    }

    fn unbind_run(&self, run_id: &str) {
        self.state.lock().book.unbind(run_id);
    }

    fn records<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<Vec<StepRecord>, StoreError>> {
        Box::pin(PostgresRuntime::records(self, run_id))
    }

    fn load_records(&self, run_id: &str, records: &[StepRecord]) {
        self.state.lock().book.load(run_id, records);
    }

    fn append_turns<'a>(
        &'a self,
        session_id: &'a str,
        run_id: &'a str,
        loop_turn: u32,
        turns: &'a [SessionTurn],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(PostgresRuntime::append_turns(
            self, session_id, run_id, loop_turn, turns,
        ))
    }

    fn replace_turns<'a>(
        &'a self,
        session_id: &'a str,
        turns: &'a [SessionTurn],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(PostgresRuntime::replace_turns(self, session_id, turns))
    }

    fn save_run<'a>(&'a self, session_id: &'a str, run: &'a SessionRun) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(PostgresRuntime::save_run(self, session_id, run))
    }

    fn write_session<'a>(
        &'a self,
        session_id: &'a str,
        writes: Vec<SessionWrite>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(PostgresRuntime::write_session(self, session_id, writes))
    }
}
