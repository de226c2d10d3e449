//! A session's checkpoints listed, and a rewind to one planned and
//! applied.

use super::*;

impl Checkpoints {
    /// The checkpoints of a session, oldest first, each with its changes.
    pub async fn list(&self, session: &str) -> Result<Vec<Checkpoint>, CheckpointError> {
        let snapshots = self.store.snapshots(session).await.map_err(CheckpointError::Store)?;
        let groups = groups(snapshots);
        let mut out = Vec::with_capacity(groups.len());
        for i in 0..groups.len() {
            out.push(self.checkpoint(&groups, i).await?);
        }
        Ok(out)
    }

    /// The session's newest checkpoint (what [`list`](Self::list) ends
    /// with, without reading the others' manifests).
    pub async fn latest(&self, session: &str) -> Result<Option<Checkpoint>, CheckpointError> {
        let snapshots = self.store.snapshots(session).await.map_err(CheckpointError::Store)?;
        let groups = groups(snapshots);
        match groups.len() {
            0 => Ok(None),
            n => self.checkpoint(&groups, n - 1).await.map(Some),
        }
    }

    /// Checkpoint `i` of `groups`, with its changes.
    async fn checkpoint(&self, groups: &[Group], i: usize) -> Result<Checkpoint, CheckpointError> {
        let group = &groups[i];
        let (start, _) = self.load_manifest(&group.start.manifest).await?;
        let end = self.end_of(groups, i, None).await?;
        let mut not_covered = start.not_covered.clone();
        for n in &end.not_covered {
            if !not_covered.contains(n) {
                not_covered.push(n.clone());
            }
        }
        Ok(Checkpoint {
            index: i + 1,
            kind: group.start.kind,
            label: group.start.label.clone(),
            created_at: group.start.created_at,
            run_id: group.start.run_id.clone(),
            turn_index: group.start.turn_index,
            root: group.start.root.clone(),
            changes: diff(&start, &end),
            not_covered,
            snapshot_id: group.start.id,
            rewind_to: (group.start.kind == SnapshotKind::Rewind).then_some(group.start.step as usize),
            finished: group.closing().is_some(),
        })
    }

    /// The folder as checkpoint `i` left it: its closing snapshot, else the
    /// next checkpoint's start, else `current` (or its last snapshot).
    async fn end_of(
        &self,
        groups: &[Group],
        i: usize,
        current: Option<&Arc<Manifest>>,
    ) -> Result<Arc<Manifest>, CheckpointError> {
        let group = &groups[i];
        if let Some(closing) = group.closing() {
            return Ok(self.load_manifest(&closing.manifest).await?.0);
        }
        if let Some(next) = groups.get(i + 1) {
            return Ok(self.load_manifest(&next.start.manifest).await?.0);
        }
        if let Some(current) = current {
            return Ok(Arc::clone(current));
        }
        let last = group.rest.last().unwrap_or(&group.start);
        Ok(self.load_manifest(&last.manifest).await?.0)
    }

    /// What rewinding the folder to checkpoint `index` (from 1) would do:
    /// every path a later prompt changed goes back to its content before
    /// the first of them that changed it; a path changed since the agent
    /// last left it is a conflict, left alone.
    pub async fn plan_rewind(&self, session: &str, index: usize) -> Result<RewindPlan, CheckpointError> {
        let snapshots = self.store.snapshots(session).await.map_err(CheckpointError::Store)?;
        let groups = groups(snapshots);
        if index == 0 || index > groups.len() {
            return Err(CheckpointError::NoSuchCheckpoint {
                session: session.to_owned(),
                index,
                count: groups.len(),
            });
        }
        let current = self.scan(session).await?;
        let mut spans = Vec::new();
        for i in index - 1..groups.len() {
            let (start, _) = self.load_manifest(&groups[i].start.manifest).await?;
            let end = self.end_of(&groups, i, Some(&current.manifest)).await?;
            spans.push((start, end));
        }
        let target = &groups[index - 1].start;
        Ok(plan::plan(
            session,
            index,
            target,
            PathBuf::from(&target.root),
            &spans,
            current,
        ))
    }

    /// Carries out a rewind plan: the folder as it is is recorded first (so
    /// the rewind can itself be rewound), then each path is restored
    /// atomically (written beside, then renamed). With conflicts and without
    /// `force`, nothing is changed; with `force`, the other paths are
    /// restored and the conflicts left alone. A rewind cut off half way can
    /// be run again and finishes.
    pub async fn apply_rewind(
        &self,
        mut plan: RewindPlan,
        turn_index: u32,
        force: bool,
    ) -> Result<RewindReport, CheckpointError> {
        if !plan.conflicts.is_empty() && !force {
            return Err(CheckpointError::Conflicts(plan.conflicts));
        }
        let label = format!("before rewinding to checkpoint {} ({})", plan.index, plan.label);
        let session = plan.session.clone();
        let root = plan.root.to_string_lossy().into_owned();
        let (before, _) = self
            .save(
                plan.current_scan(),
                NewSnapshot {
                    session_id: session.clone(),
                    run_id: None,
                    kind: SnapshotKind::Rewind,
                    // The checkpoint rewound to: a rewind cut off is run
                    // again to it.
                    step: plan.index as u32,
                    turn_index,
                    label,
                    root: root.clone(),
                    created_at: zidane_provider::Timestamp::from_millis(now_ms()),
                    manifest: plan.current_id.clone(),
                },
            )
            .await?;
        let mut report = plan::apply(&plan, &*self.store).await?;
        report.before_snapshot = Some(before.id);
        let scanned = self.scan(&session).await?;
        let manifest = scanned.id.clone();
        self.save(
            scanned,
            NewSnapshot {
                session_id: session.clone(),
                run_id: None,
                kind: SnapshotKind::Rewound,
                step: 0,
                turn_index,
                label: format!("rewound to checkpoint {}", plan.index),
                root,
                created_at: zidane_provider::Timestamp::from_millis(now_ms()),
                manifest,
            },
        )
        .await
        .map(|_| report)
    }
}

/// One path's content before and after a span of checkpoints (`None`:
/// absent on that side; a link's content is its target).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The path, relative to the folder, `/`-separated.
    pub path: String,
    /// Its content before.
    pub before: Option<Vec<u8>>,
    /// Its content after.
    pub after: Option<Vec<u8>>,
}

impl Checkpoints {
    /// What checkpoints `first` to `last` (from 1, inclusive) changed, file
    /// by file, with the contents on both sides: whatever changed them (a
    /// tool, a command, a background task), as the snapshots recorded it.
    /// Folders are left out (their files are listed).
    pub async fn contents(&self, session: &str, first: usize, last: usize) -> Result<Vec<FileChange>, CheckpointError> {
        let snapshots = self.store.snapshots(session).await.map_err(CheckpointError::Store)?;
        let groups = groups(snapshots);
        for index in [first, last] {
            if index == 0 || index > groups.len() {
                return Err(CheckpointError::NoSuchCheckpoint {
                    session: session.to_owned(),
                    index,
                    count: groups.len(),
                });
            }
        }
        let (start, _) = self.load_manifest(&groups[first - 1].start.manifest).await?;
        let end = self.end_of(&groups, last.max(first) - 1, None).await?;
        let changes = diff(&start, &end);
        let mut out = Vec::new();
        for path in changes.created.iter().chain(&changes.modified).chain(&changes.deleted) {
            if path.ends_with('/') {
                continue;
            }
            let before = self.content(start.entries.get(path)).await?;
            let after = self.content(end.entries.get(path)).await?;
            out.push(FileChange {
                path: path.clone(),
                before,
                after,
            });
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    async fn content(&self, entry: Option<&ManifestEntry>) -> Result<Option<Vec<u8>>, CheckpointError> {
        let Some(hash) = entry
            .filter(|e| e.kind != EntryKind::Dir)
            .and_then(|e| e.hash.as_deref())
        else {
            return Ok(None);
        };
        let blob = self.store.blob(hash).await.map_err(CheckpointError::Store)?;
        Ok(Some(blob.unwrap_or_default()))
    }
}
