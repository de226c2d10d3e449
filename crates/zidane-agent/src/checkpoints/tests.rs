#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicUsize, Ordering};

use zidane_core::checkpoint::{NotCoveredReason, PruneReport};

use super::*;

/// A store that counts the contents written through it.
struct Counting {
    inner: crate::SqliteStore,
    blobs: AtomicUsize,
}

impl CheckpointStore for Counting {
    fn put_blobs(
        &self,
        blobs: Vec<(String, Vec<u8>)>,
    ) -> zidane_provider::BoxFuture<'_, Result<(), CheckpointStoreError>> {
        self.blobs.fetch_add(blobs.len(), Ordering::SeqCst);
        self.inner.put_blobs(blobs)
    }
    fn blob<'a>(
        &'a self,
        hash: &'a str,
    ) -> zidane_provider::BoxFuture<'a, Result<Option<Vec<u8>>, CheckpointStoreError>> {
        self.inner.blob(hash)
    }
    fn save_snapshot(
        &self,
        snapshot: NewSnapshot,
        manifest: StoredManifest,
    ) -> zidane_provider::BoxFuture<'_, Result<Snapshot, CheckpointStoreError>> {
        self.inner.save_snapshot(snapshot, manifest)
    }
    fn find_snapshot<'a>(
        &'a self,
        session_id: &'a str,
        run_id: &'a str,
        kind: SnapshotKind,
        step: u32,
    ) -> zidane_provider::BoxFuture<'a, Result<Option<Snapshot>, CheckpointStoreError>> {
        self.inner.find_snapshot(session_id, run_id, kind, step)
    }
    fn snapshots<'a>(
        &'a self,
        session_id: &'a str,
    ) -> zidane_provider::BoxFuture<'a, Result<Vec<Snapshot>, CheckpointStoreError>> {
        self.inner.snapshots(session_id)
    }
    fn manifest<'a>(
        &'a self,
        id: &'a str,
    ) -> zidane_provider::BoxFuture<'a, Result<Option<StoredManifest>, CheckpointStoreError>> {
        self.inner.manifest(id)
    }
    fn rewrite_manifest(
        &self,
        manifest: StoredManifest,
    ) -> zidane_provider::BoxFuture<'_, Result<(), CheckpointStoreError>> {
        self.inner.rewrite_manifest(manifest)
    }
    fn delete_snapshots(&self, ids: Vec<i64>) -> zidane_provider::BoxFuture<'_, Result<(), CheckpointStoreError>> {
        self.inner.delete_snapshots(ids)
    }
    fn delete_session_snapshots<'a>(
        &'a self,
        session_id: &'a str,
    ) -> zidane_provider::BoxFuture<'a, Result<(), CheckpointStoreError>> {
        self.inner.delete_session_snapshots(session_id)
    }
    fn prune(&self) -> zidane_provider::BoxFuture<'_, Result<PruneReport, CheckpointStoreError>> {
        self.inner.prune()
    }
    fn storage_bytes(&self) -> zidane_provider::BoxFuture<'_, Result<u64, CheckpointStoreError>> {
        self.inner.storage_bytes()
    }
}

struct Fixture {
    _home: tempfile::TempDir,
    work: tempfile::TempDir,
    store: Arc<Counting>,
}

fn fixture(files: usize) -> Fixture {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    for i in 0..files {
        let dir = work.path().join(format!("d{}", i % 3));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("f{i}.txt")), format!("file {i}\n")).unwrap();
    }
    let inner = crate::SqliteStore::open(home.path().join("s.db")).unwrap();
    Fixture {
        _home: home,
        work,
        store: Arc::new(Counting {
            inner,
            blobs: AtomicUsize::new(0),
        }),
    }
}

fn checkpoints(f: &Fixture, config: impl FnOnce(&mut CheckpointsConfig)) -> Checkpoints {
    let mut c = CheckpointsConfig::new(f.work.path());
    config(&mut c);
    Checkpoints::new(Arc::clone(&f.store) as Arc<dyn CheckpointStore>, c)
}

async fn take(c: &Checkpoints, kind: SnapshotKind) -> Snapshot {
    c.snapshot("s", None, kind, 0, 0, "p").await.unwrap()
}

/// An unchanged folder is a stat walk: nothing is read or stored again, and
/// the manifest is the same one; a changed file is the only one read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unchanged_folder_reads_nothing_again() {
    let f = fixture(30);
    let c = checkpoints(&f, |_| {});
    let first = take(&c, SnapshotKind::Prompt).await;
    assert_eq!(f.store.blobs.load(Ordering::SeqCst), 30);
    let second = take(&c, SnapshotKind::End).await;
    assert_eq!(f.store.blobs.load(Ordering::SeqCst), 30, "no file read again");
    assert_eq!(first.manifest, second.manifest);

    // A new process (a fresh engine) compares against the stored manifest.
    std::fs::write(f.work.path().join("d1/f1.txt"), "changed\n").unwrap();
    let fresh = checkpoints(&f, |_| {});
    let third = take(&fresh, SnapshotKind::Prompt).await;
    assert_eq!(
        f.store.blobs.load(Ordering::SeqCst),
        31,
        "only the changed file is read"
    );
    assert_ne!(third.manifest, second.manifest);

    // A manifest written as changes loads as the whole folder.
    let (loaded, depth) = checkpoints(&f, |_| {}).load_manifest(&third.manifest).await.unwrap();
    assert_eq!(depth, 1);
    assert_eq!(loaded.entries.len(), 30 + 3, "30 files and 3 folders");
    let list = fresh.list("s").await.unwrap();
    assert_eq!(list.len(), 2);
    assert!(
        list[0].changes.is_empty(),
        "a change made after the run ended is not the prompt's: {:?}",
        list[0].changes
    );
}

/// A file over the size cap and what lies past the file cap are named, and
/// a rewind never writes over a path it does not cover.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caps_name_what_they_leave_out() {
    let f = fixture(9);
    std::fs::write(f.work.path().join("big.bin"), vec![1u8; 64]).unwrap();
    let c = checkpoints(&f, |c| {
        c.max_file_size = 32;
        c.max_files = 7;
    });
    let first = take(&c, SnapshotKind::Prompt).await;
    let (manifest, _) = c.load_manifest(&first.manifest).await.unwrap();
    assert!(
        manifest
            .not_covered
            .iter()
            .any(|n| n.path == "big.bin" && n.reason == NotCoveredReason::TooLarge { size: 64, cap: 32 }),
        "{:?}",
        manifest.not_covered
    );
    assert!(
        manifest
            .not_covered
            .iter()
            .any(|n| matches!(n.reason, NotCoveredReason::TooManyFiles { cap: 7 })),
        "{:?}",
        manifest.not_covered
    );
    let files = manifest.entries.values().filter(|e| e.kind != EntryKind::Dir).count();
    assert_eq!(
        files, 6,
        "seven files counted by the cap, one of them over the size cap"
    );
    let notes = c.take_notes();
    assert!(notes.iter().any(|n| n.contains("big.bin")), "{notes:?}");

    // The big file (small enough at first) grows during the prompt: a
    // rewind leaves it alone.
    let c = checkpoints(&f, |c| c.max_file_size = 70);
    take(&c, SnapshotKind::Prompt).await;
    std::fs::write(f.work.path().join("big.bin"), vec![2u8; 80]).unwrap();
    std::fs::write(f.work.path().join("new.txt"), "n").unwrap();
    take(&c, SnapshotKind::End).await;
    let count = c.list("s").await.unwrap().len();
    let plan = c.plan_rewind("s", count).await.unwrap();
    assert_eq!(plan.not_covered, vec!["big.bin".to_owned()]);
    assert!(plan.steps.iter().all(|s| s.path != "big.bin"));
    assert_eq!(plan.steps.len(), 1, "{:?}", plan.steps);
    c.apply_rewind(plan, 0, false).await.unwrap();
    assert!(!f.work.path().join("new.txt").exists());
    assert_eq!(std::fs::read(f.work.path().join("big.bin")).unwrap(), vec![2u8; 80]);
}

/// A rewind changes nothing when a path conflicts, unless forced; then the
/// conflict is left alone and listed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conflicts_stop_a_rewind_unless_forced() {
    let f = fixture(3);
    let c = checkpoints(&f, |_| {});
    take(&c, SnapshotKind::Prompt).await;
    std::fs::write(f.work.path().join("d0/f0.txt"), "agent\n").unwrap();
    std::fs::write(f.work.path().join("d1/f1.txt"), "agent\n").unwrap();
    take(&c, SnapshotKind::End).await;
    std::fs::write(f.work.path().join("d0/f0.txt"), "person\n").unwrap();
    let plan = c.plan_rewind("s", 1).await.unwrap();
    assert_eq!(plan.conflicts.len(), 1);
    assert_eq!(plan.conflicts[0].path, "d0/f0.txt");
    let err = c.apply_rewind(plan, 0, false).await.unwrap_err();
    assert!(
        matches!(err, CheckpointError::Conflicts(ref c) if c.len() == 1),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(f.work.path().join("d1/f1.txt")).unwrap(),
        "agent\n"
    );

    let plan = c.plan_rewind("s", 1).await.unwrap();
    let report = c.apply_rewind(plan, 0, true).await.unwrap();
    assert_eq!(report.restored, vec!["d1/f1.txt".to_owned()]);
    assert_eq!(report.kept[0].path, "d0/f0.txt");
    assert_eq!(
        std::fs::read_to_string(f.work.path().join("d1/f1.txt")).unwrap(),
        "file 1\n"
    );
    assert_eq!(
        std::fs::read_to_string(f.work.path().join("d0/f0.txt")).unwrap(),
        "person\n"
    );
}

/// The checkpoint cap drops the oldest checkpoints (never the newest), with
/// a note, and their contents go when nothing else refers to them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cap_drops_the_oldest_checkpoints() {
    let f = fixture(2);
    let c = checkpoints(&f, |c| c.max_checkpoints = 2);
    for i in 0..4 {
        std::fs::write(f.work.path().join("d0/f0.txt"), format!("version {i}\n")).unwrap();
        c.snapshot("s", None, SnapshotKind::Prompt, 0, i, &format!("prompt {i}"))
            .await
            .unwrap();
    }
    let list = c.list("s").await.unwrap();
    let labels: Vec<&str> = list.iter().map(|cp| cp.label.as_str()).collect();
    assert_eq!(labels, ["prompt 2", "prompt 3"]);
    assert!(c.take_notes().iter().any(|n| n.contains("dropped the 1 oldest")));
    assert!(f.store.inner.blob(&scan::hash(b"version 0\n")).await.unwrap().is_none());
    assert!(f.store.inner.blob(&scan::hash(b"version 3\n")).await.unwrap().is_some());
}
