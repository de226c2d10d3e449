//! A rewind: what it will change (planned from manifests alone, shown
//! before anything is touched), and carrying it out path by path.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use zidane_core::checkpoint::{CheckpointStore, EntryKind, Manifest, ManifestEntry, Snapshot};

use super::{CheckpointError, Scanned, blocking, covers};

/// The suffix of the file a restore writes before renaming it into place
/// (walks skip it; a rewind run again replaces one a crash left).
pub(crate) const RESTORE_SUFFIX: &str = ".zidane-restore";

/// What a rewind does to one path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "kebab-case")]
pub enum RestoreAction {
    /// Writes the file (or link) back as it was.
    Write {
        /// File or link.
        kind: EntryKind,
        /// Its content's hash.
        hash: String,
        /// Its permission bits.
        mode: u32,
    },
    /// Removes a file or link the later prompts created.
    Remove,
    /// Creates a folder (or sets its mode).
    CreateDir {
        /// Its permission bits.
        mode: u32,
    },
    /// Removes a folder the later prompts created (when nothing else is in
    /// it).
    RemoveDir,
}

/// One path of a rewind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RestoreStep {
    /// The path, relative to the folder.
    pub path: String,
    /// What happens to it.
    #[serde(flatten)]
    pub action: RestoreAction,
}

/// A path a rewind leaves alone because it changed since the agent last
/// left it (its content matches neither side the checkpoints know).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Conflict {
    /// The path.
    pub path: String,
    /// What is there and what the checkpoints expected.
    pub reason: String,
}

/// What a rewind will do, before it does it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RewindPlan {
    /// The session.
    pub session: String,
    /// The checkpoint rewound to, from 1.
    pub index: usize,
    /// Its prompt.
    pub label: String,
    /// The folder.
    pub root: PathBuf,
    /// The paths restored, removed or recreated.
    pub steps: Vec<RestoreStep>,
    /// The paths left alone: changed since the agent last left them.
    pub conflicts: Vec<Conflict>,
    /// Paths a later prompt changed that a checkpoint does not cover (too
    /// large, past the file cap, unreadable): left as they are.
    pub not_covered: Vec<String>,
    #[serde(skip)]
    pub(crate) current_id: String,
    #[serde(skip)]
    pub(crate) current: Option<Scanned>,
}

impl RewindPlan {
    /// Whether it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    pub(crate) fn current_scan(&mut self) -> Scanned {
        self.current.take().unwrap_or_else(|| Scanned {
            id: self.current_id.clone(),
            manifest: Arc::default(),
            stored: None,
            depth: 0,
        })
    }
}

/// What a rewind did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RewindReport {
    /// Paths written back (and folders recreated).
    pub restored: Vec<String>,
    /// Paths removed.
    pub removed: Vec<String>,
    /// Paths left alone: conflicts, and folders that still hold other files.
    pub kept: Vec<Conflict>,
    /// Paths not covered by the checkpoints, left as they are.
    pub not_covered: Vec<String>,
    /// The snapshot of the folder taken before the rewind (a later rewind
    /// to it takes this one back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_snapshot: Option<i64>,
}

fn same(a: Option<&ManifestEntry>, b: Option<&ManifestEntry>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.same_content(b),
        _ => false,
    }
}

fn describe(entry: Option<&ManifestEntry>) -> &'static str {
    match entry.map(|e| e.kind) {
        None => "absent",
        Some(EntryKind::File) => "a file",
        Some(EntryKind::Link) => "a link",
        Some(EntryKind::Dir) => "a folder",
    }
}

/// The paths the spans changed (covered at both ends), each with the first
/// and the last span that changed it, and the paths a span did not cover.
#[allow(clippy::type_complexity)]
fn changed_paths(
    spans: &[(Arc<Manifest>, Arc<Manifest>)],
) -> (BTreeMap<&str, usize>, BTreeMap<&str, usize>, BTreeSet<String>) {
    let mut first: BTreeMap<&str, usize> = BTreeMap::new();
    let mut last: BTreeMap<&str, usize> = BTreeMap::new();
    let mut unknown: BTreeSet<String> = BTreeSet::new();
    for (i, (start, end)) in spans.iter().enumerate() {
        let paths: BTreeSet<&str> = start
            .entries
            .keys()
            .chain(end.entries.keys())
            .map(String::as_str)
            .collect();
        for path in paths {
            if same(start.entries.get(path), end.entries.get(path)) {
                continue;
            }
            if !covers(start, path) || !covers(end, path) {
                unknown.insert(path.to_owned());
                continue;
            }
            first.entry(path).or_insert(i);
            last.insert(path, i);
        }
    }
    (first, last, unknown)
}

/// What brings `path` from `now` back to `wanted`: a folder or a file in
/// the way goes first, then the path is removed, made or written.
fn restore_steps(path: String, now: Option<&ManifestEntry>, wanted: Option<&ManifestEntry>) -> Vec<RestoreStep> {
    let mut steps = Vec::new();
    match (now, wanted) {
        (Some(n), Some(w)) if n.kind == EntryKind::Dir && w.kind != EntryKind::Dir => {
            steps.push(RestoreStep {
                path: path.clone(),
                action: RestoreAction::RemoveDir,
            });
        }
        (Some(n), Some(w)) if n.kind != EntryKind::Dir && w.kind == EntryKind::Dir => {
            steps.push(RestoreStep {
                path: path.clone(),
                action: RestoreAction::Remove,
            });
        }
        _ => {}
    }
    let action = match wanted {
        None if now.is_some_and(|n| n.kind == EntryKind::Dir) => RestoreAction::RemoveDir,
        None => RestoreAction::Remove,
        Some(w) if w.kind == EntryKind::Dir => RestoreAction::CreateDir { mode: w.mode },
        Some(w) => RestoreAction::Write {
            kind: w.kind,
            hash: w.hash.clone().unwrap_or_default(),
            mode: w.mode,
        },
    };
    steps.push(RestoreStep { path, action });
    steps
}

/// Plans a rewind over `spans` (each later checkpoint's start and end, the
/// one rewound to first) against the folder as it is.
pub(crate) fn plan(
    session: &str,
    index: usize,
    target: &Snapshot,
    root: PathBuf,
    spans: &[(Arc<Manifest>, Arc<Manifest>)],
    current: Scanned,
) -> RewindPlan {
    let (first, last, mut unknown) = changed_paths(spans);
    let cur = &current.manifest;
    let mut steps = Vec::new();
    let mut conflicts = Vec::new();
    for (path, f) in &first {
        let wanted = spans[*f].0.entries.get(*path);
        let left = spans[last[path]].1.entries.get(*path);
        let now = cur.entries.get(*path);
        if !covers(cur, path) {
            unknown.insert((*path).to_owned());
            continue;
        }
        if same(now, wanted) {
            continue;
        }
        // A folder the agent left is still the agent's when only its mode
        // is compared (files added to it are paths of their own).
        let agents = same(now, left)
            || matches!((now, left), (Some(n), Some(l)) if n.kind == EntryKind::Dir && l.kind == EntryKind::Dir);
        if !agents {
            let reason = if now.map(|n| n.kind) == left.map(|l| l.kind) {
                "changed since the agent left it".to_owned()
            } else {
                format!(
                    "changed since the agent left it (now {}, the agent left {})",
                    describe(now),
                    describe(left)
                )
            };
            conflicts.push(Conflict {
                path: (*path).to_owned(),
                reason,
            });
            continue;
        }
        steps.extend(restore_steps((*path).to_owned(), now, wanted));
    }
    RewindPlan {
        session: session.to_owned(),
        index,
        label: target.label.clone(),
        root,
        steps,
        conflicts,
        not_covered: unknown.into_iter().collect(),
        current_id: current.id.clone(),
        current: Some(current),
    }
}

fn io(path: &Path, source: std::io::Error) -> CheckpointError {
    CheckpointError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// The file a restore writes beside `path` before the rename.
fn beside(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}{RESTORE_SUFFIX}"))
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) -> std::io::Result<()> {
    Ok(())
}

/// Writes `content` at `path` atomically: beside it first, synced, then
/// renamed over it.
fn write_atomic(path: &Path, kind: EntryKind, content: &[u8], mode: u32) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let temp = beside(path);
    let _ = std::fs::remove_file(&temp);
    match kind {
        EntryKind::Link => {
            #[cfg(unix)]
            std::os::unix::fs::symlink(String::from_utf8_lossy(content).as_ref(), &temp)?;
            #[cfg(not(unix))]
            std::fs::write(&temp, content)?;
        }
        _ => {
            let mut file = std::fs::File::create(&temp)?;
            file.write_all(content)?;
            file.sync_all()?;
            drop(file);
            set_mode(&temp, mode)?;
        }
    }
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        std::fs::remove_dir(path)?;
    }
    std::fs::rename(&temp, path)
}

/// Carries out the plan's steps: removals first (files, then folders from
/// the deepest), then folders created (from the shallowest), then files
/// written back.
pub(crate) async fn apply(plan: &RewindPlan, store: &dyn CheckpointStore) -> Result<RewindReport, CheckpointError> {
    let mut report = RewindReport {
        kept: plan.conflicts.clone(),
        not_covered: plan.not_covered.clone(),
        ..Default::default()
    };
    let root = plan.root.clone();
    let mut removes: Vec<&RestoreStep> = Vec::new();
    let mut remove_dirs: Vec<&RestoreStep> = Vec::new();
    let mut create_dirs: Vec<&RestoreStep> = Vec::new();
    let mut writes: Vec<&RestoreStep> = Vec::new();
    for step in &plan.steps {
        match step.action {
            RestoreAction::Remove => removes.push(step),
            RestoreAction::RemoveDir => remove_dirs.push(step),
            RestoreAction::CreateDir { .. } => create_dirs.push(step),
            RestoreAction::Write { .. } => writes.push(step),
        }
    }
    remove_dirs.sort_by(|a, b| b.path.cmp(&a.path));
    create_dirs.sort_by(|a, b| a.path.cmp(&b.path));
    for step in removes {
        let path = root.join(&step.path);
        let removing = path.clone();
        match blocking(move || std::fs::remove_file(&removing)).await? {
            Ok(()) => report.removed.push(step.path.clone()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => report.removed.push(step.path.clone()),
            Err(e) => return Err(io(&path, e)),
        }
    }
    for step in remove_dirs {
        let path = root.join(&step.path);
        let removing = path.clone();
        match blocking(move || std::fs::remove_dir(&removing)).await? {
            Ok(()) => report.removed.push(format!("{}/", step.path)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => report.removed.push(format!("{}/", step.path)),
            Err(_) if path.is_dir() => report.kept.push(Conflict {
                path: format!("{}/", step.path),
                reason: "the folder holds files no checkpoint covers; kept".into(),
            }),
            Err(e) => return Err(io(&path, e)),
        }
    }
    for step in create_dirs {
        let RestoreAction::CreateDir { mode } = step.action else {
            continue;
        };
        let path = root.join(&step.path);
        let creating = path.clone();
        blocking(move || {
            std::fs::create_dir_all(&creating)?;
            set_mode(&creating, mode)
        })
        .await?
        .map_err(|e| io(&path, e))?;
        report.restored.push(format!("{}/", step.path));
    }
    for step in writes {
        let RestoreAction::Write { kind, hash, mode } = &step.action else {
            continue;
        };
        let content = store
            .blob(hash)
            .await
            .map_err(CheckpointError::Store)?
            .ok_or_else(|| CheckpointError::Corrupt(format!("the content of {} ({hash}) is missing", step.path)))?;
        let path = root.join(&step.path);
        let (writing, kind, mode) = (path.clone(), *kind, *mode);
        blocking(move || write_atomic(&writing, kind, &content, mode))
            .await?
            .map_err(|e| io(&path, e))?;
        report.restored.push(step.path.clone());
    }
    Ok(report)
}
