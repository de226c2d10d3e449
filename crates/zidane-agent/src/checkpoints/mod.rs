//! Folder checkpoints: the working folder's files recorded before every
//! prompt and before every tool batch that can change them, so that a
//! prompt's changes (whoever made them: a tool, a command, a background
//! task, a sub-agent) can be listed, undone, rewound or forked.
//!
//! A snapshot is a manifest (path → kind, mode, content hash) written once
//! per distinct state, as the changes from the previous manifest; contents
//! are kept once per hash. A file whose size, time and inode did not move
//! since the last snapshot is not read again, so a checkpoint of an
//! unchanged folder costs a stat walk. The user's git is never touched.

mod conversation;
mod listing;
mod plan;
pub(crate) mod scan;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(all(test, feature = "sqlite"))]
mod tests;

use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use zidane_core::checkpoint::JournaledSnapshot;
use zidane_core::checkpoint::{
    CheckpointStore, CheckpointStoreError, EntryKind, Manifest, ManifestEntry, NewSnapshot, NotCovered, Snapshot,
    SnapshotKind, StoredManifest,
};
use zidane_core::events::{SharedError, TurnAfter};
use zidane_core::seams::{Durability, DurableRuntime, Step, StepKey, StepKind, StepValue};
use zidane_hooks::{HookBus, HookScope};
use zidane_provider::ContentBlock;

pub use conversation::{
    ForkOutcome, RewindOptions, RewindOutcome, fork_session, fork_session_leased, rewind_conversation,
    rewind_conversation_leased,
};
pub use listing::FileChange;
pub use plan::{Conflict, RestoreAction, RestoreStep, RewindPlan, RewindReport};
use scan::{Read, WalkLimits};

/// Tools that never change the folder: no checkpoint is taken before a
/// batch of only these.
pub const READ_ONLY_TOOLS: &[&str] = &[
    "read_file",
    "list_files",
    "glob",
    "grep",
    "todoread",
    "todowrite",
    "wait_task",
    "activate_skill",
    "web_fetch",
    "tool_search",
];

/// How checkpoints are taken.
#[derive(Debug, Clone)]
pub struct CheckpointsConfig {
    /// The folder recorded.
    pub root: PathBuf,
    /// Files larger than this are not covered (named, never silently
    /// skipped). Default 10 MB.
    pub max_file_size: u64,
    /// Past this many files the rest of the folder is not covered (named by
    /// folder). Default 100,000.
    pub max_files: usize,
    /// Checkpoints kept per session; the oldest are dropped past it (with a
    /// note), never the newest. Default 100.
    pub max_checkpoints: usize,
    /// Tools whose batches take no checkpoint.
    pub read_only_tools: BTreeSet<String>,
    /// Folders never recorded (absolute), e.g. the sessions file's when it
    /// is inside the folder.
    pub exclude: Vec<PathBuf>,
}

impl CheckpointsConfig {
    /// The defaults for `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        CheckpointsConfig {
            root: root.into(),
            max_file_size: 10 * 1024 * 1024,
            max_files: 100_000,
            max_checkpoints: 100,
            read_only_tools: READ_ONLY_TOOLS.iter().map(|s| (*s).to_owned()).collect(),
            exclude: Vec::new(),
        }
    }
}

/// A checkpoint failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointError {
    /// The store failed.
    #[error("the checkpoint store failed: {0}")]
    Store(CheckpointStoreError),
    /// The folder could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A stored manifest or content is missing or unreadable.
    #[error("the checkpoint store is inconsistent: {0}")]
    Corrupt(String),
    /// No checkpoint with that number.
    #[error("session `{session}` has no checkpoint {index} (it has {count})")]
    NoSuchCheckpoint {
        /// The session.
        session: String,
        /// The number asked for.
        index: usize,
        /// How many it has.
        count: usize,
    },
    /// Files changed by the person since the agent did: nothing was
    /// changed.
    #[error("{} file(s) changed since the agent last wrote them; nothing was restored: {}", .0.len(), .0.iter().map(|c| c.path.as_str()).collect::<Vec<_>>().join(", "))]
    Conflicts(Vec<Conflict>),
    /// No such session in the store.
    #[error("no session `{0}`")]
    NoSuchSession(String),
    /// The session a fork would create exists.
    #[error("a session `{0}` exists already")]
    SessionExists(String),
    /// A durable runtime could not journal a checkpoint step.
    #[error("the checkpoint step could not be journaled: {0}")]
    Journal(String),
    /// A background step failed to finish.
    #[error("a checkpoint task failed: {0}")]
    Task(String),
    /// Another live process holds the session: a rewind or a fork that
    /// would write under it is refused.
    #[error(transparent)]
    InUse(#[from] zidane_core::durable::RunLeaseHeldError),
}

/// A prompt's (or a rewind's) changes to the folder.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Changes {
    /// Paths that did not exist before (folders end with `/`).
    pub created: Vec<String>,
    /// Paths whose content, kind or mode changed.
    pub modified: Vec<String>,
    /// Paths that existed and are gone.
    pub deleted: Vec<String>,
}

impl Changes {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.created.is_empty() && self.modified.is_empty() && self.deleted.is_empty()
    }

    /// How many paths changed.
    pub fn len(&self) -> usize {
        self.created.len() + self.modified.len() + self.deleted.len()
    }
}

/// A checkpoint a person can rewind to: the folder before a prompt (or
/// before a rewind), with what the prompt changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Checkpoint {
    /// Its number in the session, from 1.
    pub index: usize,
    /// A prompt, or a rewind.
    pub kind: SnapshotKind,
    /// The prompt's text (or what the rewind was).
    pub label: String,
    /// When (epoch milliseconds in JSON).
    pub created_at: zidane_provider::Timestamp,
    /// The run of the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The session's turn count before the prompt: a conversation rewind
    /// keeps the turns before it.
    pub turn_index: u32,
    /// The folder.
    pub root: String,
    /// What the prompt changed.
    pub changes: Changes,
    /// Paths left out of the checkpoint, named.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_covered: Vec<NotCovered>,
    /// The snapshot that opens it.
    pub snapshot_id: i64,
    /// For a rewind: the checkpoint it rewound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewind_to: Option<usize>,
    /// Whether its run (or rewind) got to its end: a rewind cut off by a
    /// crash is not, and running it again finishes it.
    pub finished: bool,
}

/// The snapshots of one checkpoint: the one that opens it, then those taken
/// until the next.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub(crate) start: Snapshot,
    pub(crate) rest: Vec<Snapshot>,
}

impl Group {
    /// The snapshot that closes it: a run's end or a rewind's result.
    fn closing(&self) -> Option<&Snapshot> {
        self.rest
            .iter()
            .rev()
            .find(|s| matches!(s.kind, SnapshotKind::End | SnapshotKind::Rewound))
    }
}

/// The session's snapshots grouped into checkpoints, oldest first.
pub(crate) fn groups(snapshots: Vec<Snapshot>) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for s in snapshots {
        if s.kind.opens_checkpoint() {
            groups.push(Group {
                start: s,
                rest: Vec::new(),
            });
        } else if let Some(last) = groups.last_mut() {
            last.rest.push(s);
        }
    }
    groups
}

/// The changes from `a` to `b`, over the paths both cover.
pub fn diff(a: &Manifest, b: &Manifest) -> Changes {
    let mut changes = Changes::default();
    let shown = |path: &str, e: &ManifestEntry| {
        if e.kind == EntryKind::Dir {
            format!("{path}/")
        } else {
            path.to_owned()
        }
    };
    for (path, entry) in &b.entries {
        if !covers(a, path) {
            continue;
        }
        match a.entries.get(path) {
            None => changes.created.push(shown(path, entry)),
            Some(old) if !old.same_content(entry) => changes.modified.push(shown(path, entry)),
            Some(_) => {}
        }
    }
    for (path, entry) in &a.entries {
        if !b.entries.contains_key(path) && covers(b, path) {
            changes.deleted.push(shown(path, entry));
        }
    }
    changes
}

/// Whether `manifest` says anything about `path` (a path it left out, or
/// one under a folder it left out, is unknown, not absent).
pub(crate) fn covers(manifest: &Manifest, path: &str) -> bool {
    !manifest.not_covered.iter().any(|n| {
        n.path == path
            || (matches!(n.reason, zidane_core::checkpoint::NotCoveredReason::TooManyFiles { .. })
                && path.starts_with(&n.path)
                && path.as_bytes().get(n.path.len()) == Some(&b'/'))
    })
}

/// How a manifest is written: whole, or as the changes from a base.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum Body {
    Full(Manifest),
    Delta {
        base: String,
        set: BTreeMap<String, ManifestEntry>,
        removed: Vec<String>,
        not_covered: Vec<NotCovered>,
    },
}

/// [`Body::Full`] written from a borrowed manifest (the same bytes).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
enum WholeBody<'a> {
    Full(&'a Manifest),
}

/// Manifests written as changes chain at most this deep before one is
/// written whole (a load reads at most this many).
const MAX_DELTA_DEPTH: u32 = 32;

/// A scan of the folder, its contents stored, its manifest not yet.
#[derive(Debug)]
pub(crate) struct Scanned {
    pub(crate) id: String,
    pub(crate) manifest: Arc<Manifest>,
    stored: Option<StoredManifest>,
    depth: u32,
}

/// The last manifest saved, which the next scan compares against.
struct Last {
    session: String,
    id: String,
    manifest: Arc<Manifest>,
    depth: u32,
}

/// The run a checkpointer is taking snapshots for.
#[derive(Debug, Clone)]
struct Active {
    session: String,
    run: String,
}

/// Takes, lists and restores the checkpoints of one folder. One per agent
/// (it tracks the agent's running run); the store may be shared.
pub struct Checkpoints {
    store: Arc<dyn CheckpointStore>,
    config: CheckpointsConfig,
    last: tokio::sync::Mutex<Option<Last>>,
    manifests: Mutex<HashMap<String, (Arc<Manifest>, u32)>>,
    active: Mutex<Option<Active>>,
    notes: Mutex<Vec<String>>,
    journal: Mutex<Option<Arc<dyn DurableRuntime>>>,
}

impl std::fmt::Debug for Checkpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpoints").field("root", &self.config.root).finish()
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, CheckpointError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| CheckpointError::Task(e.to_string()))
}

/// Contents are written to the store in batches of about this many bytes.
const BATCH_BYTES: usize = 32 * 1024 * 1024;

impl Checkpoints {
    /// Checkpoints of `config.root`, kept in `store`.
    pub fn new(store: Arc<dyn CheckpointStore>, mut config: CheckpointsConfig) -> Self {
        // One folder, one name: snapshots are matched to it by path.
        if let Ok(root) = std::fs::canonicalize(&config.root) {
            config.root = root;
        }
        Checkpoints {
            store,
            config,
            last: tokio::sync::Mutex::new(None),
            manifests: Mutex::new(HashMap::new()),
            active: Mutex::new(None),
            notes: Mutex::new(Vec::new()),
            journal: Mutex::new(None),
        }
    }

    /// The folder.
    pub fn root(&self) -> &Path {
        &self.config.root
    }

    /// How it takes checkpoints.
    pub fn config(&self) -> &CheckpointsConfig {
        &self.config
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn CheckpointStore> {
        &self.store
    }

    /// What the person should be told since the last call (paths not
    /// covered, checkpoints dropped past the cap, a checkpoint that failed).
    pub fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut *self.notes.lock())
    }

    fn note(&self, text: String) {
        let mut notes = self.notes.lock();
        if !notes.contains(&text) {
            notes.push(text);
        }
    }

    /// A manifest by id (resolving the changes it is written as).
    pub(crate) async fn load_manifest(&self, id: &str) -> Result<(Arc<Manifest>, u32), CheckpointError> {
        if let Some(found) = self.manifests.lock().get(id) {
            return Ok(found.clone());
        }
        // The chain down to a whole manifest, then its changes applied back up.
        let mut chain = Vec::new();
        let mut next = Some(id.to_owned());
        let mut base: Option<(Arc<Manifest>, u32)> = None;
        while let Some(current) = next.take() {
            if let Some(found) = self.manifests.lock().get(&current) {
                base = Some(found.clone());
                break;
            }
            let stored = self
                .store
                .manifest(&current)
                .await
                .map_err(CheckpointError::Store)?
                .ok_or_else(|| CheckpointError::Corrupt(format!("manifest {current} is missing")))?;
            let body: Body = serde_json::from_slice(&stored.body)
                .map_err(|e| CheckpointError::Corrupt(format!("manifest {current}: {e}")))?;
            if let Body::Delta { base, .. } = &body {
                next = Some(base.clone());
            }
            chain.push((current, body));
            if chain.len() > MAX_DELTA_DEPTH as usize + 1 {
                return Err(CheckpointError::Corrupt(format!("manifest {id} chains too deep")));
            }
        }
        while let Some((current, body)) = chain.pop() {
            let built = match body {
                Body::Full(m) => (Arc::new(m), 0),
                Body::Delta {
                    set,
                    removed,
                    not_covered,
                    ..
                } => {
                    let (parent, depth) = base
                        .take()
                        .ok_or_else(|| CheckpointError::Corrupt(format!("manifest {current} has no base")))?;
                    let mut m = (*parent).clone();
                    for path in removed {
                        m.entries.remove(&path);
                    }
                    m.entries.extend(set);
                    m.not_covered = not_covered;
                    (Arc::new(m), depth + 1)
                }
            };
            let mut cache = self.manifests.lock();
            if cache.len() > 64 {
                cache.clear();
            }
            cache.insert(current, built.clone());
            drop(cache);
            base = Some(built);
        }
        base.ok_or_else(|| CheckpointError::Corrupt(format!("manifest {id} is empty")))
    }

    /// Scans the folder: stats every path, reads what moved since the last
    /// snapshot of `session`, stores the contents read.
    pub(crate) async fn scan(&self, session: &str) -> Result<Scanned, CheckpointError> {
        let root = self.config.root.clone();
        let previous = self.previous(session).await?;
        let limits = WalkLimits {
            max_file_size: self.config.max_file_size,
            max_files: self.config.max_files,
            exclude: self.config.exclude.clone(),
        };
        let walk_root = root.clone();
        let (found, mut not_covered) = blocking(move || scan::walk(&walk_root, &limits)).await?;
        let (mut entries, to_read) = scan::reuse(&found, previous.as_ref().map(|(_, m, _)| m.as_ref()));
        self.read_changed(to_read, &found, &mut entries, &mut not_covered)
            .await?;
        not_covered.sort_by(|a, b| a.path.cmp(&b.path));
        let manifest = Manifest { entries, not_covered };
        if let Some((id, prev, depth)) = &previous
            && prev.as_ref() == &manifest
        {
            return Ok(Scanned {
                id: id.clone(),
                manifest: Arc::clone(prev),
                stored: None,
                depth: *depth,
            });
        }
        let (stored, depth) = stored_manifest(&manifest, previous.as_ref())?;
        Ok(Scanned {
            id: stored.id.clone(),
            manifest: Arc::new(manifest),
            stored: Some(stored),
            depth,
        })
    }

    /// Reads the files that moved, in batches of about `BATCH_BYTES`, and
    /// stores their contents: each read file joins `entries`, a file left
    /// out joins `not_covered`.
    async fn read_changed(
        &self,
        to_read: Vec<String>,
        found: &BTreeMap<String, scan::Found>,
        entries: &mut BTreeMap<String, ManifestEntry>,
        not_covered: &mut Vec<NotCovered>,
    ) -> Result<(), CheckpointError> {
        let max = self.config.max_file_size;
        let mut pending = to_read.into_iter().peekable();
        while pending.peek().is_some() {
            let mut batch = Vec::new();
            let mut bytes = 0usize;
            while let Some(path) = pending.next_if(|_| bytes < BATCH_BYTES) {
                bytes += found.get(&path).map_or(0, |f| f.size as usize);
                batch.push(path);
            }
            let read_root = self.config.root.clone();
            let read = blocking(move || {
                batch
                    .into_iter()
                    .map(|path| {
                        let r = scan::read_one(&read_root, &path, max);
                        (path, r)
                    })
                    .collect::<Vec<_>>()
            })
            .await?;
            let mut blobs = Vec::new();
            for (path, r) in read {
                match r {
                    Read::Kept(entry, content) => {
                        if let Some(hash) = &entry.hash {
                            blobs.push((hash.clone(), content));
                        }
                        entries.insert(path, entry);
                    }
                    Read::Left(left) => not_covered.push(left),
                    Read::Gone => {}
                }
            }
            self.store.put_blobs(blobs).await.map_err(CheckpointError::Store)?;
        }
        Ok(())
    }

    /// The manifest the next scan compares against: the last one saved for
    /// this session in this process, else the session's last snapshot of
    /// this folder in the store.
    async fn previous(&self, session: &str) -> Result<Option<(String, Arc<Manifest>, u32)>, CheckpointError> {
        let last = self.last.lock().await;
        if let Some(last) = last.as_ref().filter(|l| l.session == session) {
            return Ok(Some((last.id.clone(), Arc::clone(&last.manifest), last.depth)));
        }
        drop(last);
        let root = self.config.root.to_string_lossy().into_owned();
        let snapshots = self.store.snapshots(session).await.map_err(CheckpointError::Store)?;
        let Some(newest) = snapshots.into_iter().rev().find(|s| s.root == root) else {
            return Ok(None);
        };
        let (manifest, depth) = self.load_manifest(&newest.manifest).await?;
        Ok(Some((newest.manifest, manifest, depth)))
    }

    /// Saves a scan as a snapshot (the stored one when the run already took
    /// it at this step).
    pub(crate) async fn save(
        &self,
        scanned: Scanned,
        snapshot: NewSnapshot,
    ) -> Result<(Snapshot, StoredManifest), CheckpointError> {
        let session = snapshot.session_id.clone();
        let stored = scanned.stored.unwrap_or_else(|| StoredManifest {
            id: scanned.id.clone(),
            base: None,
            body: Vec::new(),
            blobs: Vec::new(),
        });
        let saved = self
            .store
            .save_snapshot(snapshot, stored.clone())
            .await
            .map_err(CheckpointError::Store)?;
        self.manifests
            .lock()
            .insert(scanned.id.clone(), (Arc::clone(&scanned.manifest), scanned.depth));
        *self.last.lock().await = Some(Last {
            session,
            id: scanned.id,
            manifest: scanned.manifest,
            depth: scanned.depth,
        });
        Ok((saved, stored))
    }

    /// Takes a snapshot now. With a run, the snapshot that run already took
    /// at `kind` and `step` is returned instead of taking a second (a
    /// resumed run does not checkpoint a step twice); on a replay-mode
    /// runtime the snapshot is a journaled step, so a replay answers it from
    /// the journal without walking the folder.
    pub async fn snapshot(
        &self,
        session: &str,
        run: Option<&str>,
        kind: SnapshotKind,
        step: u32,
        turn_index: u32,
        label: &str,
    ) -> Result<Snapshot, CheckpointError> {
        let journal = self.journal.lock().clone();
        let (Some(runtime), Some(run_id)) = (journal, run) else {
            return self
                .take(session, run, kind, step, turn_index, label)
                .await
                .map(|(snapshot, _)| snapshot);
        };
        let key = StepKey {
            run_id: run_id.to_owned(),
            turn: step,
            kind: StepKind::Checkpoint,
            name: kind.as_str().to_owned(),
        };
        let work = async {
            let (snapshot, manifest) = self
                .take(session, run, kind, step, turn_index, label)
                .await
                .map_err(|e| Arc::new(e) as SharedError)?;
            Ok(StepValue::Checkpoint(Box::new(JournaledSnapshot {
                snapshot,
                manifest_base: manifest.base,
                manifest_body: String::from_utf8(manifest.body).unwrap_or_default(),
                blobs: manifest.blobs,
            })))
        };
        let step = Step {
            key,
            durability: Durability::Safe,
        };
        match runtime.step(step, Box::pin(work)).await {
            Ok(StepValue::Checkpoint(journaled)) => {
                // A replayed snapshot joins the store's view as a live one did.
                let manifest = journaled.manifest().unwrap_or_else(|| StoredManifest {
                    id: journaled.snapshot.manifest.clone(),
                    base: None,
                    body: Vec::new(),
                    blobs: Vec::new(),
                });
                let s = journaled.snapshot;
                let record = NewSnapshot {
                    session_id: s.session_id,
                    run_id: s.run_id,
                    kind: s.kind,
                    step: s.step,
                    turn_index: s.turn_index,
                    label: s.label,
                    root: s.root,
                    created_at: s.created_at,
                    manifest: s.manifest,
                };
                self.store
                    .save_snapshot(record, manifest)
                    .await
                    .map_err(CheckpointError::Store)
            }
            Ok(_) => Err(CheckpointError::Corrupt(
                "a checkpoint step was answered with another step's value".into(),
            )),
            Err(e) => Err(CheckpointError::Journal(e.to_string())),
        }
    }

    /// Journals snapshots taken during runs as steps of `runtime` (a
    /// replay-mode runtime: a replayed invocation gets the snapshots it
    /// took instead of taking them again).
    pub(crate) fn journal_steps(&self, runtime: Arc<dyn DurableRuntime>) {
        *self.journal.lock() = Some(runtime);
    }

    /// The snapshot itself: found, or scanned and saved.
    async fn take(
        &self,
        session: &str,
        run: Option<&str>,
        kind: SnapshotKind,
        step: u32,
        turn_index: u32,
        label: &str,
    ) -> Result<(Snapshot, StoredManifest), CheckpointError> {
        if let Some(run) = run
            && let Some(found) = self
                .store
                .find_snapshot(session, run, kind, step)
                .await
                .map_err(CheckpointError::Store)?
        {
            let manifest = StoredManifest {
                id: found.manifest.clone(),
                base: None,
                body: Vec::new(),
                blobs: Vec::new(),
            };
            return Ok((found, manifest));
        }
        let scanned = self.scan(session).await?;
        for left in &scanned.manifest.not_covered {
            self.note(not_covered_note(left));
        }
        let snapshot = NewSnapshot {
            session_id: session.to_owned(),
            run_id: run.map(str::to_owned),
            kind,
            step,
            turn_index,
            label: label.to_owned(),
            root: self.config.root.to_string_lossy().into_owned(),
            created_at: zidane_provider::Timestamp::from_millis(now_ms()),
            manifest: scanned.id.clone(),
        };
        let saved = self.save(scanned, snapshot).await?;
        if kind.opens_checkpoint() {
            self.enforce_cap(session).await?;
        }
        Ok(saved)
    }

    /// Drops the oldest checkpoints past the cap (never the newest).
    async fn enforce_cap(&self, session: &str) -> Result<(), CheckpointError> {
        let snapshots = self.store.snapshots(session).await.map_err(CheckpointError::Store)?;
        let all = groups(snapshots);
        let cap = self.config.max_checkpoints.max(1);
        if all.len() <= cap {
            return Ok(());
        }
        let dropped = all.len() - cap;
        let ids: Vec<i64> = all[..dropped]
            .iter()
            .flat_map(|g| std::iter::once(g.start.id).chain(g.rest.iter().map(|s| s.id)))
            .collect();
        self.store.delete_snapshots(ids).await.map_err(CheckpointError::Store)?;
        // A kept manifest written as changes from a dropped one is written
        // whole, so the dropped states' contents can go.
        let kept: BTreeSet<&str> = all[dropped..]
            .iter()
            .flat_map(|g| std::iter::once(&g.start).chain(&g.rest))
            .map(|s| s.manifest.as_str())
            .collect();
        for id in &kept {
            let Some(stored) = self.store.manifest(id).await.map_err(CheckpointError::Store)? else {
                continue;
            };
            if stored.base.as_deref().is_some_and(|b| !kept.contains(b)) {
                let (manifest, _) = self.load_manifest(id).await?;
                let body = serde_json::to_vec(&WholeBody::Full(&manifest))
                    .map_err(|e| CheckpointError::Corrupt(e.to_string()))?;
                self.store
                    .rewrite_manifest(StoredManifest {
                        id: (*id).to_owned(),
                        base: None,
                        body,
                        blobs: manifest.entries.values().filter_map(|e| e.hash.clone()).collect(),
                    })
                    .await
                    .map_err(CheckpointError::Store)?;
            }
        }
        self.store.prune().await.map_err(CheckpointError::Store)?;
        self.note(format!(
            "dropped the {dropped} oldest checkpoint(s) of session {session} (keeping {cap})"
        ));
        Ok(())
    }

    /// Starts a run's checkpoints: the folder before the prompt.
    pub(crate) async fn begin(&self, session: &str, run: &str, turn_index: u32, prompt: &str) {
        *self.active.lock() = Some(Active {
            session: session.to_owned(),
            run: run.to_owned(),
        });
        if let Err(e) = self
            .snapshot(session, Some(run), SnapshotKind::Prompt, 0, turn_index, prompt)
            .await
        {
            self.failed(&e);
        }
    }

    /// Continues a resumed run's checkpoints.
    pub(crate) fn resume(&self, session: &str, run: &str) {
        *self.active.lock() = Some(Active {
            session: session.to_owned(),
            run: run.to_owned(),
        });
    }

    /// Ends a run's checkpoints: the folder as the run left it.
    pub(crate) async fn end(&self, turn_index: u32) {
        let Some(active) = self.active.lock().take() else {
            return;
        };
        if let Err(e) = self
            .snapshot(
                &active.session,
                Some(&active.run),
                SnapshotKind::End,
                // A suspended run resumed later ends again, further on.
                turn_index,
                turn_index,
                "",
            )
            .await
        {
            self.failed(&e);
        }
    }

    fn failed(&self, e: &CheckpointError) {
        tracing::warn!(target: "zidane", "a checkpoint could not be taken: {e}");
        self.note(format!("a checkpoint could not be taken: {e}"));
    }

    /// Whether a turn asks for tools that may change the folder.
    fn changes_folder(&self, content: &[ContentBlock]) -> bool {
        content.iter().any(|block| match block {
            ContentBlock::ToolUse { name, .. } => !self.config.read_only_tools.contains(name.as_str()),
            _ => false,
        })
    }

    /// Installs the handler that checkpoints the folder before each tool
    /// batch that may change it (`turn:after`, awaited before the batch
    /// runs); dropping the scope uninstalls it.
    pub(crate) fn install(self: &Arc<Self>, hooks: &HookBus) -> HookScope {
        let scope = hooks.scope();
        let this = Arc::clone(self);
        scope.on::<TurnAfter, _>(move |ev, _cx| {
            let this = Arc::clone(&this);
            let wanted = this.changes_folder(&ev.message().content);
            let active = this.active.lock().clone();
            let step = ev.turn();
            Box::pin(async move {
                if let (true, Some(active)) = (wanted, active)
                    && let Err(e) = this
                        .snapshot(&active.session, Some(&active.run), SnapshotKind::Tool, step, 0, "")
                        .await
                {
                    this.failed(&e);
                }
                Ok(())
            })
        });
        scope
    }
}

fn not_covered_note(left: &NotCovered) -> String {
    use zidane_core::checkpoint::NotCoveredReason;
    match &left.reason {
        NotCoveredReason::TooLarge { size, cap } => format!(
            "not in checkpoints: {} ({} bytes, over the {} byte cap)",
            left.path, size, cap
        ),
        NotCoveredReason::TooManyFiles { cap } => {
            format!("not in checkpoints: {} (past the {cap}-file cap)", left.path)
        }
        NotCoveredReason::Unreadable { message } => {
            format!("not in checkpoints: {} (unreadable: {message})", left.path)
        }
    }
}

/// How `manifest` is stored: as its changes from the previous manifest
/// (`previous`: id, manifest, delta depth) while the chain is shorter than
/// `MAX_DELTA_DEPTH`, else whole; with its depth.
fn stored_manifest(
    manifest: &Manifest,
    previous: Option<&(String, Arc<Manifest>, u32)>,
) -> Result<(StoredManifest, u32), CheckpointError> {
    let whole = serde_json::to_vec(&WholeBody::Full(manifest)).map_err(|e| CheckpointError::Corrupt(e.to_string()))?;
    let id = scan::hash(&whole);
    let Some((base, prev, depth)) = previous.filter(|(_, _, depth)| *depth < MAX_DELTA_DEPTH) else {
        let stored = StoredManifest {
            id,
            base: None,
            body: whole,
            blobs: manifest.entries.values().filter_map(|e| e.hash.clone()).collect(),
        };
        return Ok((stored, 0));
    };
    let set: BTreeMap<String, ManifestEntry> = manifest
        .entries
        .iter()
        .filter(|(path, entry)| prev.entries.get(*path) != Some(entry))
        .map(|(p, e)| (p.clone(), e.clone()))
        .collect();
    let removed: Vec<String> = prev
        .entries
        .keys()
        .filter(|p| !manifest.entries.contains_key(*p))
        .cloned()
        .collect();
    let blobs = set.values().filter_map(|e| e.hash.clone()).collect();
    let body = Body::Delta {
        base: base.clone(),
        set,
        removed,
        not_covered: manifest.not_covered.clone(),
    };
    let body = serde_json::to_vec(&body).map_err(|e| CheckpointError::Corrupt(e.to_string()))?;
    let stored = StoredManifest {
        id,
        base: Some(base.clone()),
        body,
        blobs,
    };
    Ok((stored, depth + 1))
}
