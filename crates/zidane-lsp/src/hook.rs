//! Diagnostics after edits, on the agent's hooks: `tool:before` opens the
//! file as it was (the baseline, while the edit runs), `tool:transform`
//! sends the new text and appends what the server says to the result.

use std::path::PathBuf;

use zidane_core::events::{ToolBefore, ToolTransform};
use zidane_hooks::{HookBus, HookHandle};
use zidane_provider::{ContentBlock, ToolResultContent};

use crate::manager::Lsp;
use crate::report::EditReport;

/// The key of an edit's report in its result's metadata.
pub const METADATA_KEY: &str = "diagnostics";

impl Lsp {
    /// Reports diagnostics after every edit tool's call on `bus`.
    pub fn install(&self, bus: &HookBus) -> Vec<HookHandle> {
        let before = {
            let lsp = self.clone();
            bus.on_sync::<ToolBefore, _>(move |ev, _| {
                lsp.before_edit(ev);
                Ok(())
            })
        };
        let after = {
            let lsp = self.clone();
            bus.on::<ToolTransform, _>(move |ev, _| {
                let lsp = lsp.clone();
                Box::pin(async move {
                    lsp.after_edit(ev).await;
                    Ok(())
                })
            })
        };
        vec![before, after]
    }

    fn edited(&self, tool: &str, input: &serde_json::Value) -> Option<PathBuf> {
        if !self.shared.options.edit_tools.iter().any(|t| t == tool) {
            return None;
        }
        let path = self.absolute(input.get("path")?.as_str()?);
        self.handles(&path).then_some(path)
    }

    /// Starts the baseline: the file's diagnostics before the edit.
    fn before_edit(&self, ev: &ToolBefore) {
        let Some(path) = self.edited(ev.name(), &ev.input) else {
            return;
        };
        let prior = ev
            .prior_content()
            .map(str::to_owned)
            .or_else(|| std::fs::read_to_string(&path).ok());
        let lsp = self.clone();
        let task = tokio::spawn(async move {
            match prior {
                // It runs beside the edit, and a first analysis (the
                // server's start, its standard library) is slow: it may
                // take as long as any request.
                Some(text) => {
                    let wait = lsp.shared.options.request_timeout;
                    match lsp.diagnostics_within(&path, &text, wait).await {
                        Ok((_, list)) => Some(list),
                        Err(e) => {
                            tracing::debug!(error = %e, "no diagnostics before the edit");
                            None
                        }
                    }
                }
                // A new file had nothing; the server starts meanwhile.
                None => {
                    if let Some(slot) = lsp.slot_for(&path) {
                        let _ = lsp.client(slot).await;
                    }
                    Some(Vec::new())
                }
            }
        });
        if let Some(old) = self.shared.baselines.lock().insert(ev.call_id().to_owned(), task) {
            old.abort();
        }
    }

    /// Appends the file's diagnostics to the result.
    async fn after_edit(&self, ev: &mut ToolTransform) {
        let baseline = self.shared.baselines.lock().remove(ev.call_id());
        let Some(path) = self.edited(ev.name(), ev.input()) else {
            if let Some(task) = baseline {
                task.abort();
            }
            return;
        };
        if ev.is_error() {
            if let Some(task) = baseline {
                task.abort();
            }
            return;
        }
        let Some(report) = self.report(&path, baseline).await else {
            return;
        };
        {
            let mut counts = self.shared.counts.lock();
            counts.reported += (report.errors + report.warnings) as u64;
            counts.fixed += report.fixed as u64;
        }
        if let Ok(value) = serde_json::to_value(&report) {
            ev.metadata.insert(METADATA_KEY.to_owned(), value);
        }
        if report.is_empty() {
            return;
        }
        let text = report.render();
        match &mut ev.result {
            ToolResultContent::Text(s) => s.push_str(&text),
            ToolResultContent::Parts(parts) => parts.push(ContentBlock::Text {
                text: text.trim_start().to_owned(),
            }),
        }
    }

    /// The report of `path` as it is now against its baseline; `None`
    /// when the server gave nothing in time.
    pub(crate) async fn report(
        &self,
        path: &std::path::Path,
        baseline: Option<tokio::task::JoinHandle<Option<Vec<lsp_types::Diagnostic>>>>,
    ) -> Option<EditReport> {
        // The baseline may include the server's start.
        let options = &self.shared.options;
        let wait = options.settle + options.request_timeout * 2;
        let before = match baseline {
            Some(mut task) => match tokio::time::timeout(wait, &mut task).await {
                Ok(Ok(list)) => list,
                _ => {
                    task.abort();
                    None
                }
            },
            None => None,
        };
        self.compare_now(path, before).await
    }

    /// The report of `path` as it is now against `before` (`None`:
    /// unknown).
    pub(crate) async fn compare_now(
        &self,
        path: &std::path::Path,
        before: Option<Vec<lsp_types::Diagnostic>>,
    ) -> Option<EditReport> {
        let text = std::fs::read_to_string(path).ok()?;
        let (server, after) = match self.diagnostics(path, &text).await {
            Ok(found) => found,
            Err(e) => {
                tracing::debug!(error = %e, "no diagnostics for this edit");
                return None;
            }
        };
        Some(EditReport::compare(
            &server,
            &self.shown(path),
            before.as_deref(),
            &after,
            &text,
            self.shared.options.max_diagnostics,
        ))
    }

    /// Diagnostics reported and fixed after edits so far.
    pub fn counts(&self) -> crate::report::Counts {
        *self.shared.counts.lock()
    }
}
