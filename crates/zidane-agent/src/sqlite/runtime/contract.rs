//! The runtime as the engine's contracts see it: [`DurableRuntime`] (steps
//! and their records) and [`CheckpointBackend`] (leases, runs, turns).

use std::sync::Arc;

use zidane_core::durable::{
    CheckpointBackend, Durability, DurableMode, DurableRuntime, LeaseError, LeaseInfo, SessionWrite, StaleEpochError,
    Step, StepError, StepKey, StepKind, StepRecord, StepValue,
};
use zidane_core::events::SharedError;

use crate::durable::Lookup;
use zidane_provider::{BoxFuture, SessionTurn};

use zidane_core::session::{SessionRun, SessionStore, StoreError};

use super::*;

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
