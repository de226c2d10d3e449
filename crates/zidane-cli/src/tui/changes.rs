//! `/diff`: the session's changes, file by file, coloured, with the lines
//! added and removed.

use zidane_app::diff::{DiffLine, FileDiff, FileStatus};

use super::Session;
use super::screen::{Hue, Paint};

/// At most this many lines of one file's diff are shown.
const FILE_LINES: usize = 400;

impl Session {
    /// `/diff` (the whole session) and `/diff N` (prompt N's checkpoint).
    pub(super) async fn diff(&mut self, rest: &str) {
        let prompt = match rest {
            "" => None,
            n => match n.parse::<usize>() {
                Ok(n) => Some(n),
                Err(_) => return self.note("usage: /diff [N] (N: a prompt's checkpoint, as /rewind lists them)"),
            },
        };
        if !self.link.checkpoints() {
            return self.note("checkpoints are off (--no-checkpoints): there is nothing to diff from");
        }
        match self.link.changes(prompt).await {
            Ok(files) if files.is_empty() => self.note("no changes yet"),
            Ok(files) => {
                let lines = render(&self.paint, &files);
                self.say(lines);
            }
            Err(e) => self.note(&e),
        }
    }
}

/// The files' diffs: a summary line per file, then its hunks.
pub(super) fn render(p: &Paint, files: &[FileDiff]) -> Vec<String> {
    let (added, removed) = files.iter().fold((0, 0), |(a, r), f| (a + f.added, r + f.removed));
    let mut out = vec![p.bold(&format!(
        "{} file{} changed, {} {}",
        files.len(),
        if files.len() == 1 { "" } else { "s" },
        p.hue(Hue::Green, &format!("+{added}")),
        p.hue(Hue::Red, &format!("-{removed}"))
    ))];
    for f in files {
        let what = match f.status {
            FileStatus::Created => " (new)",
            FileStatus::Deleted => " (deleted)",
            FileStatus::Modified => "",
        };
        out.push(String::new());
        out.push(format!(
            "{}{} {} {}",
            p.bold(&f.path),
            p.dim(what),
            p.hue(Hue::Green, &format!("+{}", f.added)),
            p.hue(Hue::Red, &format!("-{}", f.removed))
        ));
        if f.binary {
            out.push(p.dim("  (binary)"));
            continue;
        }
        for line in f.lines.iter().take(FILE_LINES) {
            out.push(match line {
                DiffLine::Hunk(h) => p.hue(Hue::Cyan, h.trim_end()),
                DiffLine::Same(l) => p.dim(&format!(" {l}")),
                DiffLine::Added(l) => p.hue(Hue::Green, &format!("+{l}")),
                DiffLine::Removed(l) => p.hue(Hue::Red, &format!("-{l}")),
            });
        }
        if f.lines.len() > FILE_LINES {
            out.push(p.dim(&format!("  … {} more lines", f.lines.len() - FILE_LINES)));
        }
    }
    out
}
