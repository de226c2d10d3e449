//! Sessions: a conversation with an id, its metadata and its runs, kept in a
//! [`SessionStore`].

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;
use zidane_provider::Timestamp;

use crate::events::{SessionArtifact, SharedError};
use crate::tool::{MemoryToolState, ToolStateStore};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use zidane_provider::{BoxFuture, SessionTurn};

/// How a session run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SessionRunStatus {
    /// In progress (or interrupted by a process death).
    Running,
    /// Completed.
    Completed,
    /// Aborted.
    Aborted,
    /// Failed.
    Error,
    /// Suspended for a later resume.
    Suspended,
}

/// One run recorded on a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRun {
    /// Run id.
    pub id: String,
    /// Status.
    pub status: SessionRunStatus,
    /// When it started (epoch milliseconds in JSON).
    pub started_at: Timestamp,
    /// When it ended (epoch milliseconds in JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<Timestamp>,
    /// First turn index the run produced.
    pub first_turn: u32,
    /// One past the last turn index the run produced.
    pub end_turn: u32,
    /// The prompt's text, as a label.
    pub prompt: String,
    /// A checkpoint run a resume can continue (until it ends).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resumable: bool,
    /// The options a resume runs it with again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<SessionRunOptions>,
    /// The loop turn its saved turns end at (checkpoint runs).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub loop_turn: u32,
    /// The id of the last turn it saved (checkpoint runs): a resume checks
    /// that the saved turns still end there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_turn_id: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The options of a run that a resume applies again: its caps, an explicit
/// model chain, thinking and model options.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRunOptions {
    /// Turn cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    /// Cost cap, USD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
    /// Token cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_total_tokens: Option<u64>,
    /// The explicit model chain, as `(provider, model)` pairs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub model: Vec<(Option<String>, String)>,
    /// Thinking level.
    #[serde(default)]
    pub thinking: zidane_provider::ThinkingLevel,
    /// Output token limit per request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// The run's system prompt, when it set one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
}

/// A conversation with its id, metadata and runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    /// Session id.
    pub id: String,
    /// The turns, in order.
    pub turns: Vec<SessionTurn>,
    /// Metadata.
    pub metadata: BTreeMap<String, Value>,
    /// The runs, in order.
    pub runs: Vec<SessionRun>,
    /// When it was created (epoch milliseconds in JSON).
    pub created_at: Timestamp,
    /// When it last changed (epoch milliseconds in JSON).
    pub updated_at: Timestamp,
}

/// A line of a session listing.
///
/// `messages` counts the session's messages (each prompt, answer and tool
/// result), not the model turns `AgentStats::turns` counts; `turns` is its
/// former name, kept with the same value for one release. In JSON the count
/// keeps its former key, `turns`.
///
/// ```
/// use zidane::agent::{MemoryStore, SessionStore};
/// # mod zidane { pub mod agent { pub use zidane_core::session::*; } }
/// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// # rt.block_on(async {
/// let store = MemoryStore::new();
/// store.create("s1", 0).await.unwrap();
/// let listed = store.list().await.unwrap();
/// assert_eq!(listed[0].messages, 0);
/// # });
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", from = "SessionInfoWire")]
pub struct SessionInfo {
    /// Session id.
    pub id: String,
    /// Number of messages.
    #[serde(rename = "turns")]
    pub messages: u32,
    /// Number of messages: the former name of [`SessionInfo::messages`].
    #[deprecated(since = "0.1.0", note = "counts messages, not model turns: use `messages`")]
    #[serde(skip_serializing)]
    pub turns: u32,
    /// When it was created (epoch milliseconds in JSON).
    pub created_at: Timestamp,
    /// When it last changed (epoch milliseconds in JSON).
    pub updated_at: Timestamp,
    /// The first user message's text, shortened, as a title.
    pub title: String,
    /// Whether a run a dead process left is waiting for a resume.
    #[serde(default)]
    pub interrupted: bool,
}

/// What a [`SessionInfo`] reads from JSON (the deprecated alias filled in).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SessionInfoWire {
    id: String,
    turns: u32,
    created_at: Timestamp,
    updated_at: Timestamp,
    title: String,
    #[serde(default)]
    interrupted: bool,
}

impl From<SessionInfoWire> for SessionInfo {
    #[allow(deprecated)]
    fn from(wire: SessionInfoWire) -> Self {
        SessionInfo {
            id: wire.id,
            messages: wire.turns,
            turns: wire.turns,
            created_at: wire.created_at,
            updated_at: wire.updated_at,
            title: wire.title,
            interrupted: wire.interrupted,
        }
    }
}

/// The error of a store.
pub type StoreError = SharedError;

/// Another writer changed the session since this one last saw it: its turns
/// were not saved (they would have interleaved with the other's).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "session `{session_id}` was changed by another writer (this agent expected {expected} turns, the store holds {found}); load it again to continue"
)]
pub struct SessionConflict {
    /// The session.
    pub session_id: String,
    /// Turns this writer knew of.
    pub expected: usize,
    /// Turns the store holds.
    pub found: usize,
}

/// Where sessions live. Turns are appended as a run produces them; a
/// tool-calling assistant turn always arrives with its tool-results turn in
/// one call, so a store that writes each call atomically never holds an
/// unanswered call.
pub trait SessionStore: Send + Sync {
    /// Loads a session.
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Session>, StoreError>>;
    /// Creates an empty session (no-op when it exists).
    fn create<'a>(&'a self, id: &'a str, now_ms: u64) -> BoxFuture<'a, Result<(), StoreError>>;
    /// Appends turns, atomically.
    fn append_turns<'a>(
        &'a self,
        id: &'a str,
        turns: &'a [SessionTurn],
        now_ms: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// Appends turns, atomically, only when the session holds exactly
    /// `expected` turns: a writer that did not see another's turns must not
    /// interleave its own with them. A mismatch fails with
    /// [`SessionConflict`]. The default appends without the check (for
    /// stores that cannot make it).
    fn append_turns_after<'a>(
        &'a self,
        id: &'a str,
        expected: usize,
        turns: &'a [SessionTurn],
        now_ms: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let _ = expected;
        self.append_turns(id, turns, now_ms)
    }
    /// Replaces all turns (a compaction), atomically.
    fn replace_turns<'a>(
        &'a self,
        id: &'a str,
        turns: &'a [SessionTurn],
        now_ms: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// Sets a metadata key.
    fn set_meta<'a>(&'a self, id: &'a str, key: &'a str, value: &'a Value) -> BoxFuture<'a, Result<(), StoreError>>;
    /// Records (inserts or updates) a run.
    fn save_run<'a>(&'a self, id: &'a str, run: &'a SessionRun) -> BoxFuture<'a, Result<(), StoreError>>;
    /// Lists sessions, most recent first.
    fn list(&self) -> BoxFuture<'_, Result<Vec<SessionInfo>, StoreError>>;
    /// The durable tool state of a session.
    fn tool_state(&self, id: &str) -> Arc<dyn ToolStateStore>;
    /// The file the store lives in, when it is one (a checkpoint runtime
    /// checks that an agent's store is its own).
    fn location(&self) -> Option<&std::path::Path> {
        None
    }
    /// What names the store's data: two handles with the same key share
    /// their sessions (a checkpoint backend checks that an agent's store is
    /// its own). By default the file it lives in.
    fn key(&self) -> Option<String> {
        self.location().map(|p| p.display().to_string())
    }
    /// Keeps artifacts of the session (one of the same id replaces the
    /// earlier). `Ok(false)`: this store keeps none (the default).
    fn add_artifacts<'a>(
        &'a self,
        id: &'a str,
        artifacts: &'a [SessionArtifact],
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let _ = (id, artifacts);
        Box::pin(async { Ok(false) })
    }
    /// The session's artifacts, in the order they were first kept.
    fn artifacts<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Vec<SessionArtifact>, StoreError>> {
        let _ = id;
        Box::pin(async { Ok(Vec::new()) })
    }
}

/// Keeps `incoming` in `kept`: an artifact of a known id replaces it where
/// it stands, a new one goes last (how a store keeps artifacts).
pub fn keep_artifacts(kept: &mut Vec<SessionArtifact>, incoming: &[SessionArtifact]) {
    for artifact in incoming {
        match kept.iter_mut().find(|a| a.id == artifact.id) {
            Some(slot) => *slot = artifact.clone(),
            None => kept.push(artifact.clone()),
        }
    }
}

/// A store in memory (tests, short-lived hosts).
#[derive(Debug, Default, Clone)]
pub struct MemoryStore {
    sessions: Arc<Mutex<BTreeMap<String, Session>>>,
    tool_states: Arc<Mutex<BTreeMap<String, Arc<MemoryToolState>>>>,
    artifacts: Arc<Mutex<BTreeMap<String, Vec<SessionArtifact>>>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn with<T>(&self, f: impl FnOnce(&mut BTreeMap<String, Session>) -> T) -> T {
        f(&mut self.sessions.lock())
    }

    /// Appends turns; with `expected`, only onto a session of that many.
    fn append(&self, id: &str, expected: Option<usize>, turns: &[SessionTurn], now_ms: u64) -> Result<(), StoreError> {
        self.with(|s| match s.get_mut(id) {
            Some(session) if expected.is_some_and(|n| n != session.turns.len()) => Err(Arc::new(SessionConflict {
                session_id: id.to_owned(),
                expected: expected.unwrap_or_default(),
                found: session.turns.len(),
            }) as StoreError),
            Some(session) => {
                session.turns.extend_from_slice(turns);
                session.updated_at = zidane_provider::Timestamp::from_millis(now_ms);
                Ok(())
            }
            None => Err(missing(id)),
        })
    }
}

fn missing(id: &str) -> StoreError {
    Arc::new(SessionNotFound { id: id.to_owned() })
}

/// The store holds no session of this id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no session `{id}`")]
pub struct SessionNotFound {
    /// The id asked for.
    pub id: String,
}

impl SessionStore for MemoryStore {
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Session>, StoreError>> {
        let found = self.with(|s| s.get(id).cloned());
        Box::pin(async move { Ok(found) })
    }

    fn create<'a>(&'a self, id: &'a str, now_ms: u64) -> BoxFuture<'a, Result<(), StoreError>> {
        self.with(|s| {
            s.entry(id.to_owned()).or_insert_with(|| Session {
                id: id.to_owned(),
                created_at: zidane_provider::Timestamp::from_millis(now_ms),
                updated_at: zidane_provider::Timestamp::from_millis(now_ms),
                ..Default::default()
            });
        });
        Box::pin(async { Ok(()) })
    }

    fn append_turns<'a>(
        &'a self,
        id: &'a str,
        turns: &'a [SessionTurn],
        now_ms: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let r = self.append(id, None, turns, now_ms);
        Box::pin(async move { r })
    }

    fn append_turns_after<'a>(
        &'a self,
        id: &'a str,
        expected: usize,
        turns: &'a [SessionTurn],
        now_ms: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let r = self.append(id, Some(expected), turns, now_ms);
        Box::pin(async move { r })
    }

    fn replace_turns<'a>(
        &'a self,
        id: &'a str,
        turns: &'a [SessionTurn],
        now_ms: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let r = self.with(|s| match s.get_mut(id) {
            Some(session) => {
                session.turns = turns.to_vec();
                session.updated_at = zidane_provider::Timestamp::from_millis(now_ms);
                Ok(())
            }
            None => Err(missing(id)),
        });
        Box::pin(async move { r })
    }

    fn set_meta<'a>(&'a self, id: &'a str, key: &'a str, value: &'a Value) -> BoxFuture<'a, Result<(), StoreError>> {
        let r = self.with(|s| match s.get_mut(id) {
            Some(session) => {
                session.metadata.insert(key.to_owned(), value.clone());
                Ok(())
            }
            None => Err(missing(id)),
        });
        Box::pin(async move { r })
    }

    fn save_run<'a>(&'a self, id: &'a str, run: &'a SessionRun) -> BoxFuture<'a, Result<(), StoreError>> {
        let r = self.with(|s| match s.get_mut(id) {
            Some(session) => {
                match session.runs.iter_mut().find(|r| r.id == run.id) {
                    Some(existing) => *existing = run.clone(),
                    None => session.runs.push(run.clone()),
                }
                Ok(())
            }
            None => Err(missing(id)),
        });
        Box::pin(async move { r })
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<SessionInfo>, StoreError>> {
        let mut list: Vec<SessionInfo> = self.with(|s| s.values().map(SessionInfo::of).collect());
        list.sort_by_key(|s| std::cmp::Reverse(s.updated_at));
        Box::pin(async move { Ok(list) })
    }

    fn add_artifacts<'a>(
        &'a self,
        id: &'a str,
        artifacts: &'a [SessionArtifact],
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        keep_artifacts(self.artifacts.lock().entry(id.to_owned()).or_default(), artifacts);
        Box::pin(async { Ok(true) })
    }

    fn artifacts<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Vec<SessionArtifact>, StoreError>> {
        let kept = self.artifacts.lock().get(id).cloned().unwrap_or_default();
        Box::pin(async move { Ok(kept) })
    }

    fn tool_state(&self, id: &str) -> Arc<dyn ToolStateStore> {
        let mut states = self.tool_states.lock();
        Arc::clone(states.entry(id.to_owned()).or_default()) as Arc<dyn ToolStateStore>
    }
}

impl SessionInfo {
    /// The listing line of `session`.
    #[allow(deprecated)]
    pub fn of(session: &Session) -> SessionInfo {
        SessionInfo {
            id: session.id.clone(),
            messages: session.turns.len() as u32,
            turns: session.turns.len() as u32,
            created_at: session.created_at,
            updated_at: session.updated_at,
            title: title(&session.turns),
            interrupted: session.runs.iter().any(SessionRun::is_interrupted),
        }
    }
}

impl SessionRun {
    /// A run a resume (or a heal) picks up: resumable, and not ended.
    pub fn is_interrupted(&self) -> bool {
        self.resumable && matches!(self.status, SessionRunStatus::Running | SessionRunStatus::Suspended)
    }
}

/// A session's title: its first user text, shortened to 80 characters.
pub fn title(turns: &[SessionTurn]) -> String {
    let text = turns
        .iter()
        .find(|t| t.role == zidane_provider::Role::User)
        .and_then(|t| {
            t.content.iter().find_map(|b| match b {
                zidane_provider::ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
        })
        .unwrap_or_default();
    let mut title: String = text.chars().take(80).collect();
    if text.chars().count() > 80 {
        title.push('…');
    }
    title
}
