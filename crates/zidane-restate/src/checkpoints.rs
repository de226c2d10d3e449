//! Folder checkpoints of a session served on Restate: snapshots and
//! manifests in the object's state (one K/V entry per snapshot, written by
//! the driver from the journaled checkpoint step, like the turns), contents
//! in the host's own store on the service's disk.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

use zidane_core::checkpoint::{
    CheckpointStore, CheckpointStoreError, JournaledSnapshot, NewSnapshot, PruneReport, Snapshot, SnapshotKind,
    StoredManifest,
};
use zidane_provider::BoxFuture;

/// The K/V key of the number of snapshots a session holds.
pub const CHECKPOINT_COUNT_KEY: &str = "checkpoints";

/// The K/V key of snapshot `id` (from 1): a [`JournaledSnapshot`].
pub fn checkpoint_key(id: i64) -> String {
    format!("checkpoint:{id:08}")
}

/// Snapshot records and manifests as the object's state holds them (read at
/// the start of the invocation, then grown by the run), contents in
/// `contents`. What changes the state is the driver's: this view only
/// follows it, so dropping, pruning and rewriting keep the state as it is
/// (a session on Restate keeps every checkpoint).
pub(crate) struct StateCheckpoints {
    contents: Arc<dyn CheckpointStore>,
    snapshots: Mutex<Vec<Snapshot>>,
    manifests: Mutex<HashMap<String, StoredManifest>>,
}

impl StateCheckpoints {
    /// The view of `journaled` (the state's entries, in order) over
    /// `contents`.
    pub(crate) fn new(contents: Arc<dyn CheckpointStore>, journaled: Vec<JournaledSnapshot>) -> Self {
        let mut snapshots = Vec::with_capacity(journaled.len());
        let mut manifests = HashMap::new();
        for entry in journaled {
            if let Some(manifest) = entry.manifest() {
                manifests.insert(manifest.id.clone(), manifest);
            }
            snapshots.push(entry.snapshot);
        }
        StateCheckpoints {
            contents,
            snapshots: Mutex::new(snapshots),
            manifests: Mutex::new(manifests),
        }
    }

    fn snapshots(&self) -> parking_lot::MutexGuard<'_, Vec<Snapshot>> {
        self.snapshots.lock()
    }

    fn manifests(&self) -> parking_lot::MutexGuard<'_, HashMap<String, StoredManifest>> {
        self.manifests.lock()
    }
}

fn ready<T: Send + 'static>(value: T) -> BoxFuture<'static, T> {
    Box::pin(std::future::ready(value))
}

impl CheckpointStore for StateCheckpoints {
    fn put_blobs(&self, blobs: Vec<(String, Vec<u8>)>) -> BoxFuture<'_, Result<(), CheckpointStoreError>> {
        self.contents.put_blobs(blobs)
    }

    fn blob<'a>(&'a self, hash: &'a str) -> BoxFuture<'a, Result<Option<Vec<u8>>, CheckpointStoreError>> {
        self.contents.blob(hash)
    }

    fn save_snapshot(
        &self,
        snapshot: NewSnapshot,
        manifest: StoredManifest,
    ) -> BoxFuture<'_, Result<Snapshot, CheckpointStoreError>> {
        let mut snapshots = self.snapshots();
        let found = snapshot.run_id.as_ref().and_then(|run| {
            snapshots
                .iter()
                .find(|s| s.run_id.as_ref() == Some(run) && s.kind == snapshot.kind && s.step == snapshot.step)
                .cloned()
        });
        let saved = match found {
            Some(found) => found,
            None => {
                let id = snapshots.last().map_or(1, |s| s.id + 1);
                let saved = snapshot.stored(id);
                snapshots.push(saved.clone());
                saved
            }
        };
        drop(snapshots);
        if !manifest.body.is_empty() {
            self.manifests().entry(manifest.id.clone()).or_insert(manifest);
        }
        ready(Ok(saved))
    }

    fn find_snapshot<'a>(
        &'a self,
        session_id: &'a str,
        run_id: &'a str,
        kind: SnapshotKind,
        step: u32,
    ) -> BoxFuture<'a, Result<Option<Snapshot>, CheckpointStoreError>> {
        let found = self
            .snapshots()
            .iter()
            .find(|s| {
                s.session_id == session_id && s.run_id.as_deref() == Some(run_id) && s.kind == kind && s.step == step
            })
            .cloned();
        ready(Ok(found))
    }

    fn snapshots<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<Vec<Snapshot>, CheckpointStoreError>> {
        let all = self
            .snapshots()
            .iter()
            .filter(|s| s.session_id == session_id)
            .cloned()
            .collect();
        ready(Ok(all))
    }

    fn manifest<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<StoredManifest>, CheckpointStoreError>> {
        let found = self.manifests().get(id).cloned();
        ready(Ok(found))
    }

    fn rewrite_manifest(&self, _manifest: StoredManifest) -> BoxFuture<'_, Result<(), CheckpointStoreError>> {
        ready(Ok(()))
    }

    fn delete_snapshots(&self, _ids: Vec<i64>) -> BoxFuture<'_, Result<(), CheckpointStoreError>> {
        ready(Ok(()))
    }

    fn delete_session_snapshots<'a>(&'a self, _session_id: &'a str) -> BoxFuture<'a, Result<(), CheckpointStoreError>> {
        ready(Ok(()))
    }

    fn prune(&self) -> BoxFuture<'_, Result<PruneReport, CheckpointStoreError>> {
        // The contents store may be shared with sessions it cannot see the
        // manifests of: nothing is removed from here.
        ready(Ok(PruneReport::default()))
    }

    fn storage_bytes(&self) -> BoxFuture<'_, Result<u64, CheckpointStoreError>> {
        self.contents.storage_bytes()
    }
}
