//! Walking a folder into a manifest: the stat walk (honouring `.gitignore`,
//! `.ignore` and `.zidaneignore`), the shortcut for unchanged files, and
//! reading what changed.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use zidane_core::checkpoint::{EntryKind, Manifest, ManifestEntry, NotCovered, NotCoveredReason};

/// What a walk leaves out and how far it goes.
#[derive(Debug, Clone)]
pub(crate) struct WalkLimits {
    pub(crate) max_file_size: u64,
    pub(crate) max_files: usize,
    /// Absolute paths never walked (the sessions file's folder, when it is
    /// inside the folder).
    pub(crate) exclude: Vec<PathBuf>,
}

/// A path found by the walk, with what `lstat` said.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    pub(crate) kind: EntryKind,
    pub(crate) mode: u32,
    pub(crate) size: u64,
    pub(crate) mtime_ns: i64,
    pub(crate) ino: u64,
}

#[cfg(unix)]
fn stat_fields(meta: &std::fs::Metadata) -> (u32, i64, u64) {
    use std::os::unix::fs::MetadataExt;
    (
        meta.mode() & 0o7777,
        meta.mtime()
            .saturating_mul(1_000_000_000)
            .saturating_add(meta.mtime_nsec()),
        meta.ino(),
    )
}

#[cfg(not(unix))]
fn stat_fields(meta: &std::fs::Metadata) -> (u32, i64, u64) {
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64);
    (if meta.permissions().readonly() { 0o444 } else { 0o644 }, mtime, 0)
}

/// The path of `path` under `root`, `/`-separated (`None` for the root).
pub(crate) fn relative(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    if rel.as_os_str().is_empty() {
        return None;
    }
    if cfg!(unix) {
        return Some(rel.to_string_lossy().into_owned());
    }
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Some(parts.join("/"))
}

/// Walks `root`: every path not ignored, with its stat, and the paths left
/// out, named.
pub(crate) fn walk(root: &Path, limits: &WalkLimits) -> (BTreeMap<String, Found>, Vec<NotCovered>) {
    let exclude = limits.exclude.clone();
    // The file cap is applied as the walk goes (past it, folders are not
    // entered): what it leaves out is named by folder.
    let counted = Arc::new(Mutex::new(Capped::default()));
    let capping = Arc::clone(&counted);
    let (max_files, cap_root) = (limits.max_files, root.to_path_buf());
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .parents(true)
        .ignore(true)
        .git_ignore(true)
        .git_global(false)
        .git_exclude(true)
        .require_git(false)
        .follow_links(false)
        .add_custom_ignore_filename(".zidaneignore")
        .threads(2)
        .filter_entry(move |entry| {
            if entry.file_name() == ".git"
                || entry
                    .file_name()
                    .to_string_lossy()
                    .ends_with(super::plan::RESTORE_SUFFIX)
                || exclude.iter().any(|ex| entry.path().starts_with(ex))
            {
                return false;
            }
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            let mut capped = capping.lock();
            if capped.files < max_files {
                if !is_dir {
                    capped.files += 1;
                }
                return true;
            }
            let folder = if is_dir {
                Some(entry.path())
            } else {
                entry.path().parent()
            };
            if let Some(rel) = folder.and_then(|f| relative(&cap_root, f)) {
                if capped.folders.last() != Some(&rel) {
                    capped.folders.push(rel);
                }
            } else if !is_dir && let Some(rel) = relative(&cap_root, entry.path()) {
                capped.folders.push(rel);
            }
            false
        })
        .build_parallel();
    let seen: Mutex<(BTreeMap<String, Found>, Vec<NotCovered>)> = Mutex::default();
    walker.run(|| {
        Box::new(|entry| {
            if let Some(visited) = visit(root, limits.max_file_size, entry) {
                let mut seen = seen.lock();
                match visited {
                    Ok((rel, f)) => {
                        seen.0.insert(rel, f);
                    }
                    Err(left) => seen.1.push(left),
                }
            }
            ignore::WalkState::Continue
        })
    });
    let (found, mut not_covered) = seen.into_inner();
    let capped = std::mem::take(&mut *counted.lock());
    let mut folders = capped.folders;
    folders.sort();
    folders.dedup();
    not_covered.extend(folders.into_iter().map(|path| NotCovered {
        path,
        reason: NotCoveredReason::TooManyFiles { cap: limits.max_files },
    }));
    (found, not_covered)
}

/// One entry of the walk: its path and stat, or why it is left out (`None`
/// for the root and for what holds no content: sockets, pipes, devices).
fn visit(
    root: &Path,
    max_file_size: u64,
    entry: Result<ignore::DirEntry, ignore::Error>,
) -> Option<Result<(String, Found), NotCovered>> {
    let entry = match entry {
        Ok(entry) => entry,
        Err(e) => {
            let path = error_path(&e).and_then(|p| relative(root, &p)).unwrap_or_default();
            return Some(Err(NotCovered {
                path,
                reason: NotCoveredReason::Unreadable { message: e.to_string() },
            }));
        }
    };
    let rel = relative(root, entry.path())?;
    let meta = match entry.metadata() {
        Ok(meta) => meta,
        Err(e) => {
            return Some(Err(NotCovered {
                path: rel,
                reason: NotCoveredReason::Unreadable { message: e.to_string() },
            }));
        }
    };
    let file_type = meta.file_type();
    let kind = if file_type.is_dir() {
        EntryKind::Dir
    } else if file_type.is_symlink() {
        EntryKind::Link
    } else if file_type.is_file() {
        EntryKind::File
    } else {
        // Sockets, pipes and devices hold no content to keep.
        return None;
    };
    if kind == EntryKind::File && meta.len() > max_file_size {
        return Some(Err(NotCovered {
            path: rel,
            reason: NotCoveredReason::TooLarge {
                size: meta.len(),
                cap: max_file_size,
            },
        }));
    }
    let (mode, mtime_ns, ino) = stat_fields(&meta);
    Some(Ok((
        rel,
        Found {
            kind,
            mode,
            size: meta.len(),
            mtime_ns,
            ino,
        },
    )))
}

/// What the file cap has counted and left out.
#[derive(Default)]
struct Capped {
    files: usize,
    folders: Vec<String>,
}

fn error_path(e: &ignore::Error) -> Option<PathBuf> {
    match e {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => error_path(err),
        _ => None,
    }
}

/// Splits a walk into the entries whose stat did not move since `previous`
/// (kept as they were) and the paths to read.
pub(crate) fn reuse(
    found: &BTreeMap<String, Found>,
    previous: Option<&Manifest>,
) -> (BTreeMap<String, ManifestEntry>, Vec<String>) {
    let mut kept = BTreeMap::new();
    let mut to_read = Vec::new();
    for (path, f) in found {
        if f.kind == EntryKind::Dir {
            kept.insert(
                path.clone(),
                ManifestEntry {
                    kind: EntryKind::Dir,
                    hash: None,
                    mode: f.mode,
                    size: 0,
                    mtime_ns: 0,
                    ino: 0,
                },
            );
            continue;
        }
        let same = previous.and_then(|m| m.entries.get(path)).filter(|e| {
            e.kind == f.kind && e.size == f.size && e.mtime_ns == f.mtime_ns && e.ino == f.ino && e.mode == f.mode
        });
        match same {
            Some(entry) => {
                kept.insert(path.clone(), entry.clone());
            }
            None => to_read.push(path.clone()),
        }
    }
    (kept, to_read)
}

/// The SHA-256 of `bytes`, hex.
pub(crate) fn hash(bytes: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
    let mut out = String::with_capacity(64);
    for b in digest.as_ref() {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// One path read: its entry and its content (or why it could not be
/// kept).
pub(crate) enum Read {
    Kept(ManifestEntry, Vec<u8>),
    Left(NotCovered),
    /// It went away between the walk and the read.
    Gone,
}

/// Reads one file or link under `root`, with the stat of what was read.
pub(crate) fn read_one(root: &Path, rel: &str, max_file_size: u64) -> Read {
    let path = root.join(rel);
    let meta = match std::fs::symlink_metadata(&path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Read::Gone,
        Err(e) => return unreadable(rel, &e),
    };
    if meta.file_type().is_symlink() {
        let target = match std::fs::read_link(&path) {
            Ok(target) => target,
            Err(e) => return unreadable(rel, &e),
        };
        let bytes = target.to_string_lossy().into_owned().into_bytes();
        let (mode, mtime_ns, ino) = stat_fields(&meta);
        return Read::Kept(
            ManifestEntry {
                kind: EntryKind::Link,
                hash: Some(hash(&bytes)),
                mode,
                size: meta.len(),
                mtime_ns,
                ino,
            },
            bytes,
        );
    }
    let mut file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Read::Gone,
        Err(e) => return unreadable(rel, &e),
    };
    // The stat of the file as opened: a write after it moves the time, and
    // the next checkpoint reads the file again.
    let meta = match file.metadata() {
        Ok(meta) if meta.is_file() => meta,
        Ok(_) => return Read::Gone,
        Err(e) => return unreadable(rel, &e),
    };
    if meta.len() > max_file_size {
        return Read::Left(NotCovered {
            path: rel.to_owned(),
            reason: NotCoveredReason::TooLarge {
                size: meta.len(),
                cap: max_file_size,
            },
        });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    if let Err(e) = (&mut file).take(max_file_size + 1).read_to_end(&mut bytes) {
        return unreadable(rel, &e);
    }
    if bytes.len() as u64 > max_file_size {
        return Read::Left(NotCovered {
            path: rel.to_owned(),
            reason: NotCoveredReason::TooLarge {
                size: bytes.len() as u64,
                cap: max_file_size,
            },
        });
    }
    let (mode, mtime_ns, ino) = stat_fields(&meta);
    Read::Kept(
        ManifestEntry {
            kind: EntryKind::File,
            hash: Some(hash(&bytes)),
            mode,
            size: bytes.len() as u64,
            mtime_ns,
            ino,
        },
        bytes,
    )
}

fn unreadable(rel: &str, e: &std::io::Error) -> Read {
    Read::Left(NotCovered {
        path: rel.to_owned(),
        reason: NotCoveredReason::Unreadable { message: e.to_string() },
    })
}

/// A file's size, modification time and inode: what tells that a command
/// changed it.
pub(crate) type Stat = (u64, i64, u64);

/// The files of a stat walk of `root` (the checkpoints' walk: the same
/// ignore files, at most `max_files`), without reading any.
pub(crate) fn file_stats(root: &Path, max_files: usize, exclude: Vec<PathBuf>) -> BTreeMap<String, Stat> {
    let limits = WalkLimits {
        max_file_size: u64::MAX,
        max_files,
        exclude,
    };
    let (found, _) = walk(root, &limits);
    found
        .into_iter()
        .filter(|(_, f)| f.kind == EntryKind::File)
        .map(|(path, f)| (path, (f.size, f.mtime_ns, f.ino)))
        .collect()
}

/// The files created or changed from `before` to `after`, each with
/// whether it is new, in path order.
pub(crate) fn changed_files(before: &BTreeMap<String, Stat>, after: &BTreeMap<String, Stat>) -> Vec<(String, bool)> {
    after
        .iter()
        .filter_map(|(path, stat)| match before.get(path) {
            None => Some((path.clone(), true)),
            Some(old) if old != stat => Some((path.clone(), false)),
            Some(_) => None,
        })
        .collect()
}
