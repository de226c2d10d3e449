//! The session an agent is bound to: loading or creating it, recording its
//! runs and metadata, and the sink that saves turns as the loop makes them.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use zidane_core::durable::CheckpointBackend;
use zidane_core::events::{
    ArtifactRecorded, ArtifactRecordedInit, SessionArtifact, SessionSave, SessionTurns, SharedError,
};

use zidane_core::sink::{ArtifactRecord, TurnMark, TurnSink};

use zidane_core::clock::Clock;
use zidane_hooks::HookBus;
use zidane_provider::{BoxFuture, SessionTurn};

use zidane_core::events::{SessionSaveInit, SessionTurnsInit};
use zidane_core::session::{Session, SessionRun, SessionStore};

use crate::error::AgentError;

/// The session an agent is bound to: its id, metadata and runs (the turns
/// live in the loop).
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionState {
    pub(crate) id: String,
    pub(crate) metadata: BTreeMap<String, Value>,
    pub(crate) runs: Vec<SessionRun>,
    pub(crate) created_at: u64,
    /// Turns the session holds (what `session:turns` reports as `count`).
    pub(crate) turn_count: usize,
}

impl SessionState {
    /// The session this state describes, holding `turns`.
    pub(crate) fn with_turns(self, turns: Vec<SessionTurn>, now: zidane_provider::Timestamp) -> Session {
        Session {
            id: self.id,
            turns,
            metadata: self.metadata,
            runs: self.runs,
            created_at: zidane_provider::Timestamp::from_millis(self.created_at),
            updated_at: now,
        }
    }
}

/// The session an agent is bound to and the store it lives in: the id a
/// first run loads (or creates), a session given whole to check against
/// the store, and, once loaded, its state.
pub(crate) struct SessionBinding {
    store: Option<Arc<dyn SessionStore>>,
    state: Arc<Mutex<Option<SessionState>>>,
    /// The id to load on the first run (`session_id`).
    pending: Mutex<Option<String>>,
    /// A session given whole, to be created in the store when it lacks it.
    to_check: Mutex<Option<String>>,
    /// Held while the session loads: an eager load in the background and
    /// the first run never load it twice at once.
    loading: tokio::sync::Mutex<()>,
    /// Whether the pending id must name a session the store holds.
    required: bool,
}

impl SessionBinding {
    /// A binding to `session` (given whole) or to the id `session_id`
    /// (loaded on the first run), in `store`.
    pub(crate) fn new(
        store: Option<Arc<dyn SessionStore>>,
        session: Option<(SessionState, String)>,
        session_id: Option<String>,
    ) -> Self {
        let to_check = session.as_ref().map(|(_, id)| id.clone());
        SessionBinding {
            store,
            state: Arc::new(Mutex::new(session.map(|(state, _)| state))),
            pending: Mutex::new(session_id),
            to_check: Mutex::new(to_check),
            loading: tokio::sync::Mutex::new(()),
            required: false,
        }
    }

    /// The same binding, its pending id required to exist in the store.
    pub(crate) fn required(mut self, required: bool) -> Self {
        self.required = required;
        self
    }

    /// Whether the pending id must name a session the store holds.
    pub(crate) fn is_required(&self) -> bool {
        self.required
    }

    /// Held while the session loads.
    pub(crate) async fn loading(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.loading.lock().await
    }

    /// The store sessions live in, when there is one.
    pub(crate) fn store(&self) -> Option<&Arc<dyn SessionStore>> {
        self.store.as_ref()
    }

    /// The bound session's id, once loaded.
    pub(crate) fn id(&self) -> Option<String> {
        self.state.lock().as_ref().map(|s| s.id.clone())
    }

    /// The bound session's id, or the id it loads on the first run.
    pub(crate) fn id_or_pending(&self) -> Option<String> {
        self.id().or_else(|| self.pending.lock().clone())
    }

    /// The bound session's state (`None` before it is loaded, and without
    /// a session).
    pub(crate) fn state(&self) -> parking_lot::MutexGuard<'_, Option<SessionState>> {
        self.state.lock()
    }

    /// The state, shared with the loop's session sink.
    pub(crate) fn shared(&self) -> Arc<Mutex<Option<SessionState>>> {
        Arc::clone(&self.state)
    }

    /// The id of a session given whole that the store has not been checked
    /// for yet.
    pub(crate) fn to_check(&self) -> Option<String> {
        self.to_check.lock().clone()
    }

    /// The given session is in the store now.
    pub(crate) fn checked(&self) {
        *self.to_check.lock() = None;
    }

    /// The id the first run loads, until it is loaded.
    pub(crate) fn pending(&self) -> Option<String> {
        self.pending.lock().clone()
    }

    /// The session is loaded: it is the agent's from now on.
    pub(crate) fn bind(&self, state: SessionState) {
        *self.state.lock() = Some(state);
        *self.pending.lock() = None;
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
    fn session(&self, turns: Vec<SessionTurn>) -> Option<Session> {
        let state = self.session.lock().clone()?;
        Some(state.with_turns(turns, self.clock.now()))
    }

    fn replace<'a>(&'a self, turns: &'a [SessionTurn]) -> BoxFuture<'a, Result<(), SharedError>> {
        Box::pin(async move {
            let id = self.session.lock().as_ref().map(|s| s.id.clone());
            let (Some(store), Some(id)) = (&self.store, id) else {
                return Ok(());
            };
            match &self.durable {
                Some(rt) => rt.replace_turns(&id, turns).await?,
                None => store.replace_turns(&id, turns, self.clock.now_ms()).await?,
            }
            if let Some(state) = self.session.lock().as_mut() {
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
            let (Some(id), Some(store)) = (self.session.lock().as_ref().map(|s| s.id.clone()), &self.store) else {
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
            let Some(id) = self.session.lock().as_ref().map(|s| s.id.clone()) else {
                return Ok(());
            };
            match (&self.durable, &self.store) {
                (Some(rt), _) => rt.append_turns(&id, mark.run_id, mark.turn, turns).await?,
                (_, Some(store)) => {
                    let expected = self.session.lock().as_ref().map_or(0, |s| s.turn_count);
                    store
                        .append_turns_after(&id, expected, turns, self.clock.now_ms())
                        .await?
                }
                _ => {}
            }
            let count = {
                let mut session = self.session.lock();
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
