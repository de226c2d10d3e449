//! The agent's resume: continuing a run a dead process left, the lease a
//! durable agent takes on its session, and healing a run that will not be
//! resumed (the helpers in `crate::resume`).

use std::collections::BTreeSet;

use zidane_core::durable::LeaseError;
use zidane_core::events::{AgentStats, ResumeMismatch, ResumeMismatchInit, RunStatus};
use zidane_provider::AbortSignal;

use crate::agent::Agent;
use crate::binding::store_error;
use crate::error::AgentError;
use crate::output::RunOutput;
use crate::run_options::{AgentRunOptions, DurableResumeOptions};
use zidane_core::session::{SessionRun, SessionRunStatus};

use crate::resume::{finished, mismatch, recover};

impl Agent {
    /// Takes the session's lease for this agent (kept until `destroy`).
    /// Newly taken, the session is loaded again: another process may have
    /// written to it before.
    pub(crate) async fn take_lease(&self) -> Result<(), AgentError> {
        let Some(durable) = self.inner.durable.clone() else {
            return Ok(());
        };
        let Some(id) = self.inner.session.state().as_ref().map(|s| s.id.clone()) else {
            return Ok(());
        };
        let taken = match std::sync::Arc::clone(&durable.runtime).acquire(id.clone()).await {
            Ok(taken) => taken,
            Err(LeaseError::Held(e)) => return Err(AgentError::RunLeaseHeld(e)),
            Err(LeaseError::Store(e)) => return Err(AgentError::Store(e)),
        };
        if taken {
            self.ensure_session_stored(&id).await?;
            self.reload_session(&id).await?;
        }
        Ok(())
    }

    /// Loads the session again from the runtime's store: what a resume or
    /// a heal decides on is what the store holds (a suspended run's last
    /// turn, for one, is only in memory).
    async fn reload_session(&self, id: &str) -> Result<(), AgentError> {
        let Some(durable) = &self.inner.durable else {
            return Ok(());
        };
        let store = durable.runtime.session_store();
        if let Some(session) = store.load(id).await.map_err(AgentError::Store)? {
            let turn_count = session.turns.len();
            self.inner.looped.set_turns(session.turns);
            if let Some(state) = self.inner.session.state().as_mut() {
                state.runs = session.runs;
                state.metadata = session.metadata;
                state.turn_count = turn_count;
            }
        }
        Ok(())
    }

    /// Gives the session's lease up.
    pub(crate) fn release_lease(&self) {
        if let (Some(d), Some(id)) = (
            &self.inner.durable,
            self.inner.session.state().as_ref().map(|s| s.id.clone()),
        ) {
            d.runtime.release(&id);
        }
    }

    /// The session's run a dead process left unfinished (the newest one).
    fn interrupted_run(&self) -> Option<SessionRun> {
        let session = self.inner.session.state();
        session
            .as_ref()?
            .runs
            .iter()
            .rev()
            .find(|r| r.is_interrupted())
            .cloned()
    }

    /// Continues the session's run that a process death (or a suspend) left
    /// unfinished, from its saved turns and its step records: a finished
    /// step answers from its record (no second request for a finished model
    /// call, no second execution of a finished tool call), a pending `safe`
    /// tool call runs again, a pending `unsafe` one is reported to the model
    /// as interrupted. `tool-batch:resumed` fires before any call of a half
    /// done batch runs again.
    ///
    /// The resumed run keeps its id and record and runs with the options
    /// its record kept, under what `options.run` sets.
    ///
    /// `Ok(None)` when there is no such run, and when its step records no
    /// longer match the saved turns (a history rewrite): that run is healed
    /// at once and `resume:mismatch` fires. Refused without a checkpoint
    /// runtime ([`AgentError::NotDurable`]), while a run is in progress, or
    /// without a session ([`AgentError::NoSession`]); a session another
    /// live process holds is [`AgentError::RunLeaseHeld`].
    ///
    /// Cancel safety: as for [`Agent::run`], dropping the future stops the
    /// resumed run where it is, and it stays recorded as interrupted, to be
    /// resumed again.
    pub async fn resume(&self, options: DurableResumeOptions) -> Result<Option<RunOutput>, AgentError> {
        let stats = self.resume_to_end(options).await?;
        Ok(stats.map(|stats| self.output(stats)))
    }

    async fn resume_to_end(&self, options: DurableResumeOptions) -> Result<Option<AgentStats>, AgentError> {
        if self.inner.durable.is_none() {
            return Err(AgentError::NotDurable);
        }
        let _busy = self.claim()?;
        let Some(signal) = self.start_run().await? else {
            return Ok(Some(self.not_started()));
        };
        if self.inner.session.state().is_none() {
            return Err(AgentError::NoSession);
        }
        self.resume_interrupted(options.run, &signal).await
    }

    /// The body of `resume`, once the session is loaded and leased.
    pub(crate) async fn resume_interrupted(
        &self,
        run_options: Option<AgentRunOptions>,
        signal: &AbortSignal,
    ) -> Result<Option<AgentStats>, AgentError> {
        let Some(durable) = self.inner.durable.clone() else {
            return Err(AgentError::NotDurable);
        };
        let Some(session_id) = self.inner.session.state().as_ref().map(|s| s.id.clone()) else {
            return Err(AgentError::NoSession);
        };
        self.reload_session(&session_id).await?;
        let Some(run) = self.interrupted_run() else {
            return Ok(None);
        };
        let records = durable.runtime.records(&run.id).await.map_err(AgentError::Store)?;
        let turns = self.turns();
        if run.last_turn_id.is_none() {
            // It died before it saved its prompt: nothing to continue.
            self.close_run(&session_id, run, SessionRunStatus::Aborted).await?;
            return Ok(None);
        }
        if let Some(reason) = mismatch(&run, &records, &turns) {
            let stored_turns: Vec<u32> = records
                .iter()
                .map(|r| r.turn)
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            let run_id = run.id.clone();
            let resume_turn = run.loop_turn + 1;
            self.close_run(&session_id, run, SessionRunStatus::Aborted).await?;
            let mut ev = ResumeMismatch::new(ResumeMismatchInit {
                reason,
                resume_turn,
                run_id,
                session_id,
                stored_turns,
            });
            self.observe(&mut ev).await;
            return Ok(None);
        }
        // Its last turn is a final answer: only the end of the run is left
        // (with its goal's check, when it works toward one).
        if finished(&turns) {
            let run_id = run.id.clone();
            let loop_turn = run.loop_turn;
            self.close_run(&session_id, run, SessionRunStatus::Completed).await?;
            if self.goal_active_in(&run_id) {
                return self.end_goal_run(&run_id, loop_turn, signal).await.map(Some);
            }
            let mut stats = AgentStats::default();
            stats.status = RunStatus::Completed;
            return Ok(Some(stats));
        }
        durable.runtime.load_records(&run.id, &records);
        let options = run_options.unwrap_or_default();
        self.launch(options, Some(run), signal.clone()).await.map(Some)
    }

    /// Closes every run a dead process left in the session: what its step
    /// records hold is saved (a recorded assistant turn with the results of
    /// its finished calls), its unfinished tool calls are reported
    /// interrupted, and the run is marked aborted.
    pub(crate) async fn heal_interrupted(&self) -> Result<(), AgentError> {
        let Some(durable) = self.inner.durable.clone() else {
            return Ok(());
        };
        let Some(session_id) = self.inner.session.state().as_ref().map(|s| s.id.clone()) else {
            return Ok(());
        };
        if self.interrupted_run().is_some() {
            self.reload_session(&session_id).await?;
        }
        while let Some(run) = self.interrupted_run() {
            let records = durable.runtime.records(&run.id).await.map_err(AgentError::Store)?;
            let turns = self.turns();
            let intact = run.last_turn_id.is_some() && mismatch(&run, &records, &turns).is_none();
            if intact {
                let recovered = recover(&run, &records, &*self.inner.clock);
                if !recovered.is_empty() {
                    durable
                        .runtime
                        .append_turns(&session_id, &run.id, run.loop_turn + 1, &recovered)
                        .await
                        .map_err(store_error)?;
                    let mut all = turns;
                    all.extend(recovered);
                    let count = all.len();
                    self.inner.looped.set_turns(all);
                    if let Some(state) = self.inner.session.state().as_mut() {
                        state.turn_count = count;
                    }
                }
            }
            self.close_run(&session_id, run, SessionRunStatus::Aborted).await?;
        }
        Ok(())
    }

    /// Marks a run ended (no longer resumable; its records go).
    async fn close_run(
        &self,
        session_id: &str,
        mut run: SessionRun,
        status: SessionRunStatus,
    ) -> Result<(), AgentError> {
        run.status = status;
        run.resumable = false;
        run.ended_at = Some(self.inner.clock.now());
        run.end_turn = self.inner.looped.turn_count() as u32;
        self.save_run(session_id, run).await
    }
}
