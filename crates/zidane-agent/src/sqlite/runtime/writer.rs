//! The writer: finished steps waiting for their session's next commit,
//! and the fenced transactions that write them with turns and runs.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rusqlite::{Transaction, params};
use zidane_core::durable::{StaleEpochError, StepKey, StepKind, StepValue};
use zidane_core::events::ToolStateOp;

use super::{SqliteStore, err};
use zidane_core::session::StoreError;

use super::*;

/// A finished step's record, waiting for its session's next commit.
pub(super) struct PendingStep {
    pub(super) run_id: String,
    pub(super) turn: u32,
    pub(super) kind: StepKind,
    pub(super) name: String,
    pub(super) body: String,
    pub(super) ops: Vec<ToolStateOp>,
}

/// `value` as JSON in a string of exactly its size (a record of a 49 MB
/// tool call is one such string, not one grown by doubling).
pub(super) fn exact_json(value: &StepValue) -> Result<String, StoreError> {
    let mut size = super::super::Counted(0);
    serde_json::to_writer(&mut size, value).map_err(err)?;
    let mut bytes = Vec::with_capacity(size.0);
    serde_json::to_writer(&mut bytes, value).map_err(err)?;
    String::from_utf8(bytes).map_err(err)
}

impl PendingStep {
    /// The record of `key`'s step: its value as JSON and, for a tool call,
    /// the tool-state writes it staged.
    pub(super) fn new(key: &StepKey, value: &StepValue) -> Result<Arc<Self>, StoreError> {
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
pub(super) struct Pending {
    pub(super) steps: Vec<Arc<PendingStep>>,
    pub(super) batch: u64,
}

/// A lease this runtime holds.
pub(super) struct Held {
    pub(super) epoch: u64,
    pub(super) heartbeat: Option<tokio::task::JoinHandle<()>>,
}

#[derive(Default)]
pub(super) struct State {
    /// Leases held, by session.
    pub(super) leases: HashMap<String, Held>,
    /// The runs recorded, their records and the stale sessions.
    pub(super) book: crate::durable::RunBook,
    /// Finished steps' records not written yet, by session.
    pub(super) pending: HashMap<String, Pending>,
    /// Tool calls running, by session (a batch's calls run side by side).
    pub(super) running: HashMap<String, usize>,
    /// The last batch number given out.
    pub(super) batches: u64,
    /// Write transactions committed.
    pub(super) commits: u64,
}

/// A tool call running in a session; counted until it finishes or is
/// dropped (a cancelled call).
pub(super) struct Running<'a> {
    pub(super) state: &'a Mutex<State>,
    pub(super) session: String,
}

impl<'a> Running<'a> {
    pub(super) fn start(state: &'a Mutex<State>, session: &str) -> Self {
        *state.lock().running.entry(session.to_owned()).or_default() += 1;
        Running {
            state,
            session: session.to_owned(),
        }
    }

    /// Stops counting this call; whether others still run.
    pub(super) fn finish(self) -> bool {
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
pub(super) struct Writer {
    pub(super) store: SqliteStore,
    pub(super) owner: String,
    pub(super) state: Arc<Mutex<State>>,
    /// The store syncs only the commits before an effect
    /// ([`Synchronous::BeforeEffects`]).
    pub(super) sync_effects: bool,
    /// A commit that is not synced runs on the calling thread when the
    /// file can be locked at once (the store does not sync every commit).
    pub(super) inline: bool,
}

/// Writes `steps` in `tx`: every one's tool-state writes, and the records
/// not covered by turns the same transaction saves (`covered`: the run and
/// the loop turn those turns complete).
pub(super) fn write_steps(
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
        if step.body.len() <= super::super::STREAMED_CONTENT {
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
pub(super) fn write_large_step(tx: &Transaction<'_>, session_id: &str, step: &PendingStep) -> Result<(), StoreError> {
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
    pub(super) fn epoch(&self, session_id: &str) -> Result<u64, StoreError> {
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
    pub(super) fn take_pending(&self, session_id: &str, batch: Option<u64>) -> Vec<Arc<PendingStep>> {
        let mut state = self.state.lock();
        match state.pending.get_mut(session_id) {
            Some(p) if batch.is_none_or(|b| b == p.batch) => std::mem::take(&mut p.steps),
            _ => Vec::new(),
        }
    }

    /// Puts records a failed commit took back in front of those that came
    /// since.
    pub(super) fn restore_pending(&self, session_id: &str, mut steps: Vec<Arc<PendingStep>>) {
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
    pub(super) async fn fenced<T: Send + 'static>(
        &self,
        session_id: &str,
        covered: Option<(String, u32)>,
        f: impl FnOnce(&Transaction<'_>, &str) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.fenced_synced(session_id, covered, false, f).await
    }

    /// [`fenced`](Self::fenced), synced to disk when `before_effect` and the
    /// store syncs only such commits.
    pub(super) async fn fenced_synced<T: Send + 'static>(
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
    pub(super) fn try_inline<T: Send + 'static>(
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
        let _ = conn.busy_timeout(super::super::BUSY_TIMEOUT);
        written
    }

    /// Notes what a finished write means for the session: a lost lease is
    /// remembered; records a failed commit took wait for the next one.
    pub(super) fn settle<T>(
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
    pub(super) async fn commit_pending(
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
    pub(super) fn commit_pending_now(&self, session_id: &str) {
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
