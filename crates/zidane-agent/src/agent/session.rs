//! The agent's session: loading (or creating) it, recording its runs and
//! metadata, and replacing its turns.

use std::sync::Arc;

use serde_json::Value;
use zidane_core::events::{MessageError, SessionMeta, SessionMetaInit, SharedError};
use zidane_core::session::{Session, SessionRun};
use zidane_provider::SessionTurn;

use crate::agent::Agent;
use crate::binding::{SessionState, store_error};
use crate::error::AgentError;

impl Agent {
    /// Records a run on the session. A durable agent's record is what a
    /// resume needs, so its failure is the caller's; otherwise it is logged.
    pub(crate) async fn save_run(&self, session_id: &str, run: SessionRun) -> Result<(), AgentError> {
        if let Some(state) = self.inner.session.state().as_mut() {
            match state.runs.iter_mut().find(|r| r.id == run.id) {
                Some(existing) => *existing = run.clone(),
                None => state.runs.push(run.clone()),
            }
        }
        if let Some(d) = &self.inner.durable {
            return d.runtime.save_run(session_id, &run).await.map_err(store_error);
        }
        if let Some(store) = self.inner.session.store()
            && let Err(e) = store.save_run(session_id, &run).await
        {
            tracing::warn!(target: "zidane", "the run could not be recorded: {e}");
        }
        Ok(())
    }

    /// Loads (or creates) the session named by `session_id`, once.
    pub(crate) async fn load_session(&self) -> Result<(), AgentError> {
        let _loading = self.inner.session.loading().await;
        if let Some(id) = self.inner.session.to_check() {
            self.ensure_session_stored(&id).await?;
            self.inner.session.checked();
        }
        let Some(id) = self.inner.session.pending() else {
            return Ok(());
        };
        let Some(store) = self.inner.session.store() else {
            return Err(AgentError::SessionIdWithoutStore);
        };
        let now = self.inner.clock.now_ms();
        let session = match store.load(&id).await.map_err(AgentError::Store)? {
            Some(session) => session,
            None if self.inner.session.is_required() => {
                return Err(AgentError::SessionNotFound {
                    store: store.key().map_or_else(
                        || "the session store".to_owned(),
                        |key| format!("the session store `{key}`"),
                    ),
                    id,
                });
            }
            None => {
                store.create(&id, now).await.map_err(AgentError::Store)?;
                Session {
                    id: id.clone(),
                    created_at: zidane_provider::Timestamp::from_millis(now),
                    updated_at: zidane_provider::Timestamp::from_millis(now),
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
        self.inner.session.bind(SessionState {
            id: session.id,
            metadata: session.metadata,
            runs: session.runs,
            created_at: session.created_at.as_millis(),
            turn_count,
        });
        Ok(())
    }

    /// Creates the given session in the store when the store does not hold
    /// it, with the turns it came with.
    pub(crate) async fn ensure_session_stored(&self, id: &str) -> Result<(), AgentError> {
        let Some(store) = self.inner.session.store() else {
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

    /// Sets a session metadata key (`session:meta`). A durable agent takes
    /// its session's lease first (refused with [`AgentError::RunLeaseHeld`]
    /// while another live process holds it) and writes the key fenced on
    /// it.
    pub async fn set_session_meta(&self, key: &str, value: Value) -> Result<(), AgentError> {
        self.load_session().await?;
        let Some(id) = self.inner.session.state().as_ref().map(|s| s.id.clone()) else {
            return Err(AgentError::Store(Arc::new(MessageError(
                "the agent has no session".into(),
            ))));
        };
        if let Some(durable) = self.inner.durable.clone() {
            self.take_lease().await?;
            let write = zidane_core::durable::SessionWrite::SetMeta {
                id: id.clone(),
                key: key.to_owned(),
                value: value.clone(),
            };
            durable
                .runtime
                .write_session(&id, vec![write])
                .await
                .map_err(AgentError::Store)?;
        } else if let Some(store) = self.inner.session.store() {
            store.set_meta(&id, key, &value).await.map_err(AgentError::Store)?;
        }
        if let Some(state) = self.inner.session.state().as_mut() {
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
