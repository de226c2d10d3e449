//! Folder checkpoints: what a working folder held at a moment, and the store
//! that keeps it.
//!
//! A [`Manifest`] maps each covered path of a folder to its kind, mode and
//! content hash; contents are kept once per hash, whoever refers to them.
//! A [`Snapshot`] is one manifest taken for a session at a named moment
//! (before a prompt, before a tool batch, at a run's end, before a rewind).
//! The engine that takes and restores snapshots lives in the agent; this is
//! the contract a store implements.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use zidane_provider::BoxFuture;

use crate::events::SharedError;

/// The error of a checkpoint store.
pub type CheckpointStoreError = SharedError;

/// What a manifest entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EntryKind {
    /// A regular file; its content is the blob of its hash.
    File,
    /// A symbolic link; its blob is the link's target.
    Link,
    /// A folder (kept so that an empty one is recreated or removed too).
    Dir,
}

/// One path of a manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManifestEntry {
    /// File, link or folder.
    pub kind: EntryKind,
    /// The content's SHA-256, hex (none for a folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    /// Permission bits (`st_mode & 0o7777`).
    pub mode: u32,
    /// Size in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the epoch (for the stat
    /// shortcut: a file whose size, time and inode did not move is not
    /// read again).
    pub mtime_ns: i64,
    /// Inode number.
    pub ino: u64,
}

impl ManifestEntry {
    /// Whether two entries hold the same thing (kind, content and mode),
    /// whatever their times.
    pub fn same_content(&self, other: &ManifestEntry) -> bool {
        self.kind == other.kind && self.hash == other.hash && self.mode == other.mode
    }
}

/// Why a path is not covered by a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum NotCoveredReason {
    /// The file is larger than the size cap.
    TooLarge {
        /// Its size.
        size: u64,
        /// The cap.
        cap: u64,
    },
    /// The folder's walk passed the file-count cap here; what is under it
    /// was not recorded.
    TooManyFiles {
        /// The cap.
        cap: usize,
    },
    /// It could not be read.
    Unreadable {
        /// What the system said.
        message: String,
    },
}

/// A path a snapshot does not cover, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotCovered {
    /// The path, relative to the folder, `/`-separated.
    pub path: String,
    /// Why.
    #[serde(flatten)]
    pub reason: NotCoveredReason,
}

/// What a folder held: covered paths (relative, `/`-separated) and those
/// left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// The covered paths.
    pub entries: BTreeMap<String, ManifestEntry>,
    /// The paths left out, named.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_covered: Vec<NotCovered>,
}

/// When a snapshot was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SnapshotKind {
    /// Before a prompt's run: the checkpoint a person rewinds to.
    Prompt,
    /// Before a tool batch that can change the folder.
    Tool,
    /// When a run ended.
    End,
    /// Before a rewind changed the folder: a rewind can be rewound.
    Rewind,
    /// After a rewind changed the folder.
    Rewound,
}

impl SnapshotKind {
    /// The name stored.
    pub fn as_str(self) -> &'static str {
        match self {
            SnapshotKind::Prompt => "prompt",
            SnapshotKind::Tool => "tool",
            SnapshotKind::End => "end",
            SnapshotKind::Rewind => "rewind",
            SnapshotKind::Rewound => "rewound",
        }
    }

    /// The kind of a stored name.
    pub fn parse(name: &str) -> Option<SnapshotKind> {
        Some(match name {
            "prompt" => SnapshotKind::Prompt,
            "tool" => SnapshotKind::Tool,
            "end" => SnapshotKind::End,
            "rewind" => SnapshotKind::Rewind,
            "rewound" => SnapshotKind::Rewound,
            _ => return None,
        })
    }

    /// Whether it opens a checkpoint a person can rewind to.
    pub fn opens_checkpoint(self) -> bool {
        matches!(self, SnapshotKind::Prompt | SnapshotKind::Rewind)
    }
}

/// A snapshot about to be stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSnapshot {
    /// The session it belongs to.
    pub session_id: String,
    /// The run it was taken in (none for a rewind).
    pub run_id: Option<String>,
    /// When in the run.
    pub kind: SnapshotKind,
    /// The loop turn a tool snapshot precedes (0 otherwise): with the run
    /// and the kind, the key that makes a resumed run find the snapshot it
    /// already took instead of taking a second.
    pub step: u32,
    /// The session's turn count when it was taken (where a conversation
    /// rewind truncates to).
    pub turn_index: u32,
    /// The prompt's text (or what the rewind was).
    pub label: String,
    /// The folder, absolute.
    pub root: String,
    /// When (epoch milliseconds in JSON).
    pub created_at: zidane_provider::Timestamp,
    /// The manifest's id.
    pub manifest: String,
}

impl NewSnapshot {
    /// The snapshot as stored under `id`.
    pub fn stored(self, id: i64) -> Snapshot {
        Snapshot {
            id,
            session_id: self.session_id,
            run_id: self.run_id,
            kind: self.kind,
            step: self.step,
            turn_index: self.turn_index,
            label: self.label,
            root: self.root,
            created_at: self.created_at,
            manifest: self.manifest,
        }
    }
}

/// A stored snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    /// The store's id, increasing in the order snapshots were taken.
    pub id: i64,
    /// The session.
    pub session_id: String,
    /// The run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// When in the run.
    pub kind: SnapshotKind,
    /// The loop turn a tool snapshot precedes.
    pub step: u32,
    /// The session's turn count when it was taken.
    pub turn_index: u32,
    /// The prompt's text (or what the rewind was).
    pub label: String,
    /// The folder.
    pub root: String,
    /// When (epoch milliseconds in JSON).
    pub created_at: zidane_provider::Timestamp,
    /// The manifest's id.
    pub manifest: String,
}

/// A manifest as a store keeps it: opaque bytes (the engine may write a
/// whole manifest or its changes from a base), the base it builds on, and
/// the contents it refers to beyond its base's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredManifest {
    /// Its id.
    pub id: String,
    /// The manifest it is written as changes from (kept while it is).
    pub base: Option<String>,
    /// Its bytes.
    pub body: Vec<u8>,
    /// The content hashes it refers to (kept while it is).
    pub blobs: Vec<String>,
}

/// A snapshot as a durable runtime journals it: the record, and the
/// manifest it names when that manifest was new (its body as text: the
/// engine writes manifests as JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JournaledSnapshot {
    /// The snapshot.
    pub snapshot: Snapshot,
    /// The manifest's base, when it was new.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_base: Option<String>,
    /// The manifest's body, when it was new (empty: stored before).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub manifest_body: String,
    /// The contents the new manifest refers to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blobs: Vec<String>,
}

impl JournaledSnapshot {
    /// The manifest it carries, if it carries one.
    pub fn manifest(&self) -> Option<StoredManifest> {
        (!self.manifest_body.is_empty()).then(|| StoredManifest {
            id: self.snapshot.manifest.clone(),
            base: self.manifest_base.clone(),
            body: self.manifest_body.clone().into_bytes(),
            blobs: self.blobs.clone(),
        })
    }
}

/// What a prune removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PruneReport {
    /// Manifests no snapshot referred to any more.
    pub manifests: u64,
    /// Contents no manifest referred to any more.
    pub blobs: u64,
    /// Their bytes.
    pub bytes: u64,
}

/// Where snapshots, manifests and contents are kept.
///
/// Contents are written first ([`put_blobs`](Self::put_blobs)), then the
/// snapshot with its manifest in one write
/// ([`save_snapshot`](Self::save_snapshot)): a crash between the two leaves
/// contents nothing refers to, which [`prune`](Self::prune) removes; never a
/// manifest whose contents are missing.
pub trait CheckpointStore: Send + Sync {
    /// Stores contents by their hash (one already stored is kept as is).
    fn put_blobs(&self, blobs: Vec<(String, Vec<u8>)>) -> BoxFuture<'_, Result<(), CheckpointStoreError>>;
    /// One content.
    fn blob<'a>(&'a self, hash: &'a str) -> BoxFuture<'a, Result<Option<Vec<u8>>, CheckpointStoreError>>;
    /// Stores a snapshot and its manifest (a manifest already stored under
    /// its id is kept). A snapshot with the same session, run, kind and step
    /// as a stored one is not stored again: the stored one is returned.
    fn save_snapshot(
        &self,
        snapshot: NewSnapshot,
        manifest: StoredManifest,
    ) -> BoxFuture<'_, Result<Snapshot, CheckpointStoreError>>;
    /// The snapshot a run took at `kind` and `step`, if it took one.
    fn find_snapshot<'a>(
        &'a self,
        session_id: &'a str,
        run_id: &'a str,
        kind: SnapshotKind,
        step: u32,
    ) -> BoxFuture<'a, Result<Option<Snapshot>, CheckpointStoreError>>;
    /// A session's snapshots, oldest first.
    fn snapshots<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<Vec<Snapshot>, CheckpointStoreError>>;
    /// A manifest by id.
    fn manifest<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<StoredManifest>, CheckpointStoreError>>;
    /// Writes a stored manifest again under its id (the same folder state,
    /// written another way: whole instead of as changes), with its base and
    /// the contents it refers to replaced.
    fn rewrite_manifest(&self, manifest: StoredManifest) -> BoxFuture<'_, Result<(), CheckpointStoreError>>;
    /// Removes snapshots by id (their manifests and contents stay until
    /// [`prune`](Self::prune)).
    fn delete_snapshots(&self, ids: Vec<i64>) -> BoxFuture<'_, Result<(), CheckpointStoreError>>;
    /// Removes every snapshot of a session.
    fn delete_session_snapshots<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<(), CheckpointStoreError>>;
    /// Removes the manifests no snapshot refers to and the contents no
    /// manifest refers to.
    fn prune(&self) -> BoxFuture<'_, Result<PruneReport, CheckpointStoreError>>;
    /// The bytes the checkpoints take (contents and manifests).
    fn storage_bytes(&self) -> BoxFuture<'_, Result<u64, CheckpointStoreError>>;
}
