//! The agent's checkpoint methods: list, rewind and fork its session.

use std::sync::Arc;

use crate::agent::Agent;
use crate::checkpoints::{Checkpoint, Checkpoints, ForkOutcome, RewindOptions, RewindOutcome, RewindPlan};
use crate::error::AgentError;

impl Agent {
    fn checkpointer(&self) -> Result<&Arc<Checkpoints>, AgentError> {
        self.inner.checkpoints.as_ref().ok_or(AgentError::NoCheckpoints)
    }

    /// The session the agent is bound to (loaded first).
    async fn bound_session(&self) -> Result<String, AgentError> {
        self.load_session().await?;
        self.inner
            .session
            .state()
            .as_ref()
            .map(|s| s.id.clone())
            .ok_or(AgentError::NoSession)
    }

    /// The session's folder checkpoints, oldest first: each prompt's text,
    /// time, turn index and the files it created, modified and deleted.
    pub async fn checkpoints(&self) -> Result<Vec<Checkpoint>, AgentError> {
        let checkpoints = self.checkpointer()?;
        let session = self.bound_session().await?;
        Ok(checkpoints.list(&session).await?)
    }

    /// What [`Agent::rewind`] would do to the files for checkpoint `index`
    /// (from 1), without doing it.
    pub async fn plan_rewind(&self, index: usize) -> Result<RewindPlan, AgentError> {
        let checkpoints = self.checkpointer()?;
        let session = self.bound_session().await?;
        Ok(checkpoints.plan_rewind(&session, index).await?)
    }

    /// Rewinds to checkpoint `index` (from 1): the files every later prompt
    /// changed go back (`code`), and the conversation keeps the turns before
    /// that prompt (`conversation`; the later turns stay stored, in the
    /// branch session the outcome names). A file changed since the agent
    /// left it is a conflict: nothing changes unless `force`, and then it is
    /// left alone. The folder is checkpointed first, so a rewind can be
    /// rewound. Refused while a run is in progress.
    ///
    /// A durable agent takes its session's lease first (refused with
    /// [`AgentError::RunLeaseHeld`] while another live process holds it:
    /// that process's folder and conversation are not rewound under it),
    /// and the conversation side is one transaction fenced on it.
    pub async fn rewind(&self, index: usize, options: RewindOptions) -> Result<RewindOutcome, AgentError> {
        let _busy = self.claim()?;
        let checkpoints = Arc::clone(self.checkpointer()?);
        let session = self.bound_session().await?;
        self.take_lease().await?;
        let list = checkpoints.list(&session).await?;
        let target =
            list.get(index.wrapping_sub(1))
                .ok_or_else(|| crate::checkpoints::CheckpointError::NoSuchCheckpoint {
                    session: session.clone(),
                    index,
                    count: list.len(),
                })?;
        let mut outcome = RewindOutcome {
            checkpoint: index,
            ..Default::default()
        };
        let turns_now = self.inner.looped.turn_count() as u32;
        if options.code {
            let plan = checkpoints.plan_rewind(&session, index).await?;
            outcome.files = Some(checkpoints.apply_rewind(plan, turns_now, options.force).await?);
        }
        if options.conversation {
            let Some(store) = self.inner.session.store() else {
                return Err(AgentError::SessionIdWithoutStore);
            };
            let keep = target.turn_index.min(turns_now);
            outcome.branch = match &self.inner.durable {
                Some(d) => crate::checkpoints::rewind_conversation_leased(&d.runtime, &session, keep).await?,
                None => crate::checkpoints::rewind_conversation(store.as_ref(), &session, keep).await?,
            };
            let mut turns = self.inner.looped.turns();
            turns.truncate(keep as usize);
            self.inner.looped.set_turns(turns);
            if let Some(state) = self.inner.session.state().as_mut() {
                state.turn_count = keep as usize;
                for run in state.runs.iter_mut().filter(|r| r.first_turn >= keep) {
                    run.resumable = false;
                }
            }
            outcome.turns_kept = Some(keep);
        }
        Ok(outcome)
    }

    /// A new session `new_session_id` from this one: its turns up to
    /// checkpoint `index` (all of them without one), and with
    /// `restore_files` the folder rewound to that checkpoint. The agent stays
    /// on its own session; run the fork with an agent on the new id.
    ///
    /// A durable agent writes the new session in one transaction under its
    /// lease, and restores files only under its own session's lease (the
    /// folder is the one that session's holder works in).
    pub async fn fork(
        &self,
        index: Option<usize>,
        new_session_id: &str,
        restore_files: bool,
    ) -> Result<ForkOutcome, AgentError> {
        let _busy = self.claim()?;
        let checkpoints = Arc::clone(self.checkpointer()?);
        let session = self.bound_session().await?;
        if let Some(d) = &self.inner.durable {
            if restore_files {
                self.take_lease().await?;
            }
            return Ok(crate::checkpoints::fork_session_leased(
                &d.runtime,
                &checkpoints,
                &session,
                index,
                new_session_id,
                restore_files,
                false,
            )
            .await?);
        }
        let Some(store) = self.inner.session.store() else {
            return Err(AgentError::SessionIdWithoutStore);
        };
        Ok(crate::checkpoints::fork_session(
            store.as_ref(),
            &checkpoints,
            &session,
            index,
            new_session_id,
            restore_files,
            false,
        )
        .await?)
    }
}
