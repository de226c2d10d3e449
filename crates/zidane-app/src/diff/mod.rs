//! `/diff`: what the session's prompts changed, from the folder's
//! checkpoints (so a command's changes are there too, not only the file
//! tools'), file by file with the lines added and removed.

use serde::{Deserialize, Serialize};
use similar::{ChangeTag, TextDiff};
use zidane::checkpoints::FileChange;

/// One line of a file's diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "text", rename_all = "lowercase")]
pub enum DiffLine {
    /// `@@ -a,b +c,d @@`: where a hunk starts.
    Hunk(String),
    /// A line both sides have.
    Same(String),
    /// A line only the new side has.
    Added(String),
    /// A line only the old side has.
    Removed(String),
}

/// What happened to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileStatus {
    /// It did not exist before.
    Created,
    /// Its content changed.
    Modified,
    /// It is gone.
    Deleted,
}

/// One file's diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDiff {
    /// The path, relative to the folder.
    pub path: String,
    /// Created, modified or deleted.
    pub status: FileStatus,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
    /// Whether either side is not text (no lines then).
    pub binary: bool,
    /// The hunks, three lines of context around each change.
    pub lines: Vec<DiffLine>,
}

/// The diff of one changed file.
pub fn file_diff(change: &FileChange) -> FileDiff {
    let status = match (&change.before, &change.after) {
        (None, _) => FileStatus::Created,
        (_, None) => FileStatus::Deleted,
        _ => FileStatus::Modified,
    };
    let text = |b: &Option<Vec<u8>>| match b {
        None => Some(String::new()),
        Some(bytes) => String::from_utf8(bytes.clone()).ok().filter(|t| !t.contains('\0')),
    };
    let (Some(old), Some(new)) = (text(&change.before), text(&change.after)) else {
        return FileDiff {
            path: change.path.clone(),
            status,
            added: 0,
            removed: 0,
            binary: true,
            lines: Vec::new(),
        };
    };
    let diff = TextDiff::from_lines(&old, &new);
    let (mut added, mut removed, mut lines) = (0, 0, Vec::new());
    for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
        lines.push(DiffLine::Hunk(hunk.header().to_string()));
        for change in hunk.iter_changes() {
            let line = change.value().trim_end_matches(['\n', '\r']).to_owned();
            lines.push(match change.tag() {
                ChangeTag::Insert => {
                    added += 1;
                    DiffLine::Added(line)
                }
                ChangeTag::Delete => {
                    removed += 1;
                    DiffLine::Removed(line)
                }
                ChangeTag::Equal => DiffLine::Same(line),
            });
        }
    }
    FileDiff {
        path: change.path.clone(),
        status,
        added,
        removed,
        binary: false,
        lines,
    }
}

/// The files' diffs as one unified diff (for a front end without colours).
pub fn unified(files: &[FileDiff]) -> String {
    let mut out = String::new();
    for f in files {
        let (old, new) = match f.status {
            FileStatus::Created => ("/dev/null".to_owned(), format!("b/{}", f.path)),
            FileStatus::Deleted => (format!("a/{}", f.path), "/dev/null".to_owned()),
            FileStatus::Modified => (format!("a/{}", f.path), format!("b/{}", f.path)),
        };
        out.push_str(&format!("--- {old}\n+++ {new}\n"));
        if f.binary {
            out.push_str("Binary files differ\n");
        }
        for line in &f.lines {
            match line {
                DiffLine::Hunk(h) => out.push_str(&format!("{}\n", h.trim_end())),
                DiffLine::Same(l) => out.push_str(&format!(" {l}\n")),
                DiffLine::Added(l) => out.push_str(&format!("+{l}\n")),
                DiffLine::Removed(l) => out.push_str(&format!("-{l}\n")),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
