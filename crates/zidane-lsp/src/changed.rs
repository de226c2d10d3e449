//! Diagnostics of files something other than an edit tool changed (a
//! `shell` command): the host says which files changed, each is sent to
//! its server, and the result ends with what the servers say.

use std::path::PathBuf;

use zidane_core::events::ToolTransform;
use zidane_provider::{ContentBlock, ToolResultContent};

use crate::hook::METADATA_KEY;
use crate::manager::Lsp;
use crate::report::EditReport;

/// The most changed files reported after one command.
pub const MAX_CHANGED_FILES: usize = 5;

/// A file a command changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedFile {
    /// Its path (absolute, or relative to the folder).
    pub path: PathBuf,
    /// Whether the command created it (it had no diagnostics before).
    pub created: bool,
}

impl Lsp {
    /// The diagnostics of `files` (those a server takes, at most
    /// [`MAX_CHANGED_FILES`], in the order given) as each is now, compared
    /// with what the server last said of it (a created file had nothing;
    /// a file never asked about is unknown, so nothing is marked new). A
    /// file its server says nothing of in time is left out; a clean file
    /// that stayed clean says nothing.
    pub async fn report_changed(&self, files: &[ChangedFile]) -> Vec<EditReport> {
        let mut reports = Vec::new();
        let taken = files
            .iter()
            .map(|f| (self.absolute(&f.path.to_string_lossy()), f.created))
            .filter(|(path, _)| self.handles(path))
            .take(MAX_CHANGED_FILES);
        for (path, created) in taken {
            let before = if created {
                Some(Vec::new())
            } else {
                self.shared.last_seen.lock().get(&path).cloned()
            };
            let Some(report) = self.compare_now(&path, before).await else {
                continue;
            };
            if report.is_empty() {
                continue;
            }
            let mut counts = self.shared.counts.lock();
            counts.reported += (report.errors + report.warnings) as u64;
            counts.fixed += report.fixed as u64;
            drop(counts);
            reports.push(report);
        }
        reports
    }
}

/// Appends `reports` to a tool's result (one `<diagnostics>` block per
/// file) and puts them, merged into one, in its metadata under
/// [`METADATA_KEY`].
pub fn append_reports(ev: &mut ToolTransform, reports: &[EditReport]) {
    let Some(merged) = merge(reports) else {
        return;
    };
    if let Ok(value) = serde_json::to_value(&merged) {
        ev.metadata.insert(METADATA_KEY.to_owned(), value);
    }
    let text: String = reports.iter().map(EditReport::render).collect();
    match &mut ev.result {
        ToolResultContent::Text(s) => s.push_str(&text),
        ToolResultContent::Parts(parts) => parts.push(ContentBlock::Text {
            text: text.trim_start().to_owned(),
        }),
    }
}

/// Several files' reports as one (its `path` lists them).
pub fn merge(reports: &[EditReport]) -> Option<EditReport> {
    let (first, rest) = reports.split_first()?;
    let mut merged = first.clone();
    for r in rest {
        if !merged.server.split(", ").any(|s| s == r.server) {
            merged.server = format!("{}, {}", merged.server, r.server);
        }
        merged.path = format!("{}, {}", merged.path, r.path);
        merged.errors += r.errors;
        merged.warnings += r.warnings;
        merged.new += r.new;
        merged.fixed += r.fixed;
        merged.findings.extend(r.findings.iter().cloned());
        merged.omitted += r.omitted;
    }
    Some(merged)
}
