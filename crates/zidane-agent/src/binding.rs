//! The session an agent is bound to: loading or creating it, recording its
//! runs and metadata, and the sink that saves turns as the loop makes them.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use zidane_core::durable::CheckpointBackend;
use zidane_core::events::{
    ArtifactRecorded, ArtifactRecordedInit, MessageError, SessionArtifact, SessionMeta, SessionSave, SessionTurns,
    SharedError,
};
use zidane_core::sink::{ArtifactRecord, TurnMark, TurnSink};

use zidane_core::clock::Clock;
use zidane_hooks::HookBus;
use zidane_provider::{BoxFuture, SessionTurn};

use zidane_core::events::{SessionMetaInit, SessionSaveInit, SessionTurnsInit};
use zidane_core::session::{Session, SessionRun, SessionStore};

use crate::agent::{Agent, SessionState, lock};
use crate::error::AgentError;

impl Agent {
    /// Records a run on the session. A durable agent's record is what a
    /// resume needs, so its failure is the caller's; otherwise it is logged.
    pub(crate) async fn save_run(&self, session_id: &str, run: SessionRun) -> Result<(), AgentError> {
        if let Some(state) = lock(&self.inner.session).as_mut() {
            match state.runs.iter_mut().find(|r| r.id == run.id) {
                Some(existing) => *existing = run.clone(),
                None => state.runs.push(run.clone()),
            }
        }
        if let Some(d) = &self.inner.durable {
            return d.runtime.save_run(session_id, &run).await.map_err(store_error);
        }
        if let Some(store) = &self.inner.store
            && let Err(e) = store.save_run(session_id, &run).await
        {
            tracing::warn!(target: "zidane", "the run could not be recorded: {e}");
        }
        Ok(())
    }

    /// Loads (or creates) the session named by `session_id`, once.
    pub(crate) async fn load_session(&self) -> Result<(), AgentError> {
        let to_check = lock(&self.inner.session_to_check).clone();
        if let Some(id) = to_check {
            self.ensure_session_stored(&id).await?;
            *lock(&self.inner.session_to_check) = None;
        }
        let Some(id) = lock(&self.inner.pending_session_id).clone() else {
            return Ok(());
        };
        let Some(store) = &self.inner.store else {
            return Err(AgentError::SessionIdWithoutStore);
        };
        let now = self.inner.clock.now_ms();
        let session = match store.load(&id).await.map_err(AgentError::Store)? {
            Some(session) => session,
            None => {
                store.create(&id, now).await.map_err(AgentError::Store)?;
                Session {
                    id: id.clone(),
                    created_at: now,
                    updated_at: now,
                    ..Default::default()
                }
            }
        };
        let turn_count = session.turns.len();
        self.inner.looped.set_turns(session.turns);
        if let Some(Value::Array(names)) = session.metadata.get(crate::skills::ACTIVE_KEY) {
            let names: Vec<String> = names.iter().filter_map(|n| n.as_str().map(str::to_owned)).collect();
            self.inner.skills.restore(&names);
        }
        *lock(&self.inner.session) = Some(SessionState {
            id: session.id,
            metadata: session.metadata,
            runs: session.runs,
            created_at: session.created_at,
            turn_count,
        });
        *lock(&self.inner.pending_session_id) = None;
        Ok(())
    }

    /// Creates the given session in the store when the store does not hold
    /// it, with the turns it came with.
    pub(crate) async fn ensure_session_stored(&self, id: &str) -> Result<(), AgentError> {
        let Some(store) = &self.inner.store else {
            return Err(AgentError::SessionWithoutStore);
        };
        if store.load(id).await.map_err(AgentError::Store)?.is_some() {
            return Ok(());
        }
        let now = self.inner.clock.now_ms();
        store.create(id, now).await.map_err(AgentError::Store)?;
        let turns = self.turns();
        if !turns.is_empty() {
            store.append_turns(id, &turns, now).await.map_err(AgentError::Store)?;
        }
        Ok(())
    }

    /// Sets a session metadata key (`session:meta`).
    pub async fn set_session_meta(&self, key: &str, value: Value) -> Result<(), AgentError> {
        self.load_session().await?;
        let Some(id) = lock(&self.inner.session).as_ref().map(|s| s.id.clone()) else {
            return Err(AgentError::Store(Arc::new(MessageError(
                "the agent has no session".into(),
            ))));
        };
        if let Some(store) = &self.inner.store {
            store.set_meta(&id, key, &value).await.map_err(AgentError::Store)?;
        }
        if let Some(state) = lock(&self.inner.session).as_mut() {
            state.metadata.insert(key.to_owned(), value.clone());
        }
        let mut ev = SessionMeta::new(SessionMetaInit {
            session_id: id,
            key: key.to_owned(),
            value,
        });
        self.observe(&mut ev).await;
        Ok(())
    }

    /// Persists a compacted conversation to the session.
    pub(crate) async fn persist_replacement(&self, turns: &[SessionTurn]) -> Result<(), SharedError> {
        match &self.inner.looped.config().sink {
            Some(sink) => sink.replace(turns).await,
            None => Ok(()),
        }
    }
}

/// Delivers turns to the session store and the session hooks.
pub(crate) struct SessionSink {
    pub(crate) store: Option<Arc<dyn SessionStore>>,
    pub(crate) session: Arc<Mutex<Option<SessionState>>>,
    pub(crate) hooks: HookBus,
    pub(crate) clock: Arc<dyn Clock>,
    /// A durable agent's turns go through its runtime (fenced on the
    /// session's lease, with the run's position).
    pub(crate) durable: Option<Arc<dyn CheckpointBackend>>,
}

/// A store failure as the agent reports it (a lost lease is its own error).
pub(crate) fn store_error(e: SharedError) -> AgentError {
    match e.downcast_ref::<zidane_core::durable::StaleEpochError>() {
        Some(stale) => AgentError::StaleEpoch {
            error: stale.clone(),
            stats: Box::default(),
        },
        None => AgentError::Store(e),
    }
}

impl TurnSink for SessionSink {
    fn replace<'a>(&'a self, turns: &'a [SessionTurn]) -> BoxFuture<'a, Result<(), SharedError>> {
        Box::pin(async move {
            let id = lock(&self.session).as_ref().map(|s| s.id.clone());
            let (Some(store), Some(id)) = (&self.store, id) else {
                return Ok(());
            };
            match &self.durable {
                Some(rt) => rt.replace_turns(&id, turns).await?,
                None => store.replace_turns(&id, turns, self.clock.now_ms()).await?,
            }
            if let Some(state) = lock(&self.session).as_mut() {
                state.turn_count = turns.len();
            }
            let mut ev = SessionSave::new(SessionSaveInit { session_id: id });
            self.hooks.observe(&mut ev).await;
            Ok(())
        })
    }

    fn artifacts<'a>(&'a self, records: &'a [ArtifactRecord], mark: TurnMark<'a>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            // Sessionless runs and stores without artifacts keep none.
            let (Some(id), Some(store)) = (lock(&self.session).as_ref().map(|s| s.id.clone()), &self.store) else {
                return;
            };
            let artifacts: Vec<SessionArtifact> = records.iter().map(|r| r.artifact.clone()).collect();
            match store.add_artifacts(&id, &artifacts).await {
                Ok(true) => {}
                Ok(false) => return,
                Err(e) => {
                    // The turns holding them are saved; the listing misses them.
                    tracing::warn!(target: "zidane", "the artifacts of a tool result could not be kept: {e}");
                    return;
                }
            }
            if !self.hooks.has::<ArtifactRecorded>() {
                return;
            }
            for record in records {
                let mut ev = ArtifactRecorded::new(ArtifactRecordedInit {
                    artifact: record.artifact.clone(),
                    call_id: record.call_id.clone(),
                    name: record.name.clone(),
                    run_id: mark.run_id.to_owned(),
                    turn_id: record.turn_id.clone(),
                });
                self.hooks.observe(&mut ev).await;
            }
        })
    }

    fn flush<'a>(&'a self, turns: &'a [SessionTurn], mark: TurnMark<'a>) -> BoxFuture<'a, Result<(), SharedError>> {
        Box::pin(async move {
            let Some(id) = lock(&self.session).as_ref().map(|s| s.id.clone()) else {
                return Ok(());
            };
            match (&self.durable, &self.store) {
                (Some(rt), _) => rt.append_turns(&id, mark.run_id, mark.turn, turns).await?,
                (_, Some(store)) => {
                    let expected = lock(&self.session).as_ref().map_or(0, |s| s.turn_count);
                    store
                        .append_turns_after(&id, expected, turns, self.clock.now_ms())
                        .await?
                }
                _ => {}
            }
            let count = {
                let mut session = lock(&self.session);
                let Some(state) = session.as_mut() else { return Ok(()) };
                state.turn_count += turns.len();
                state.turn_count
            };
            if self.hooks.has::<SessionTurns>() {
                let mut ev = SessionTurns::new(SessionTurnsInit {
                    session_id: id.clone(),
                    count,
                    turns: turns.to_vec(),
                });
                self.hooks.observe(&mut ev).await;
            }
            let mut save = SessionSave::new(SessionSaveInit { session_id: id });
            self.hooks.observe(&mut save).await;
            Ok(())
        })
    }
}
