//! The agent's language servers: started in the commands' sandbox, the
//! `lsp` tool offered when one serves the folder, diagnostics after a
//! command that changed files.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;
use zidane_core::events::{ToolBefore, ToolTransform};
use zidane_hooks::HookBus;

use super::Agent;
use crate::checkpoints::scan;
use crate::options::AgentOptions;

/// Gives the servers the execution context's launcher (its sandbox), made
/// when the first server starts, and adds the `lsp` tool when a server
/// serves the folder.
pub(crate) fn prepare(options: &mut AgentOptions) {
    let Some(lsp) = &options.lsp else { return };
    if let Some(execution) = options.execution.clone().filter(|_| !lsp.has_launcher()) {
        lsp.set_launcher_factory(Arc::new(move || {
            let local = execution
                .as_any()
                .and_then(|any| any.downcast_ref::<zidane_tools::ProcessContext>())?;
            match local.launcher() {
                Ok(launcher) => launcher,
                Err(e) => {
                    tracing::warn!(error = %e, "language servers start unconfined");
                    None
                }
            }
        }));
    }
    if lsp.available() && options.tools.get("lsp").is_none() {
        options.tools.insert(Arc::new(zidane_lsp::LspTool::new(lsp.clone())));
    }
}

impl Agent {
    /// The language servers, when [`AgentOptions::lsp`] set them.
    pub fn lsp(&self) -> Option<&zidane_lsp::Lsp> {
        self.inner.lsp.as_ref()
    }
}

/// The most files a stat walk around a command looks at.
const MAX_WALKED_FILES: usize = 50_000;

type Walks = Arc<Mutex<HashMap<String, BTreeMap<String, scan::Stat>>>>;

/// Diagnostics after a command that changed files (`shell`): the folder's
/// files are stat-walked (the checkpoints' walk) before the call and after
/// it, and the servers' files among those it created or changed are
/// reported at the end of its result. Only while a server serves the
/// folder.
pub(crate) fn install_commands(lsp: &zidane_lsp::Lsp, hooks: &HookBus, exclude: Vec<PathBuf>) {
    if lsp.options().command_tools.is_empty() {
        return;
    }
    let walks: Walks = Arc::default();
    {
        let (lsp, walks, exclude) = (lsp.clone(), Arc::clone(&walks), exclude.clone());
        hooks.on::<ToolBefore, _>(move |ev, _| {
            let wanted = lsp.options().command_tools.iter().any(|t| t == ev.name()) && lsp.available();
            let (lsp, walks, exclude, call) = (
                lsp.clone(),
                Arc::clone(&walks),
                exclude.clone(),
                ev.call_id().to_owned(),
            );
            Box::pin(async move {
                if wanted && let Some(stats) = stat_walk(&lsp, exclude).await {
                    let mut walks = walks.lock();
                    // Calls refused after this hook never come back for theirs.
                    if walks.len() > 64 {
                        walks.clear();
                    }
                    walks.insert(call, stats);
                }
                Ok(())
            })
        });
    }
    let lsp = lsp.clone();
    hooks.on::<ToolTransform, _>(move |ev, _| {
        let before = walks.lock().remove(ev.call_id());
        let (lsp, exclude) = (lsp.clone(), exclude.clone());
        Box::pin(async move {
            let Some(before) = before else { return Ok(()) };
            let Some(after) = stat_walk(&lsp, exclude).await else {
                return Ok(());
            };
            let changed: Vec<zidane_lsp::ChangedFile> = scan::changed_files(&before, &after)
                .into_iter()
                .map(|(path, created)| zidane_lsp::ChangedFile {
                    path: lsp.root().join(path),
                    created,
                })
                .collect();
            if changed.is_empty() {
                return Ok(());
            }
            let reports = lsp.report_changed(&changed).await;
            zidane_lsp::append_reports(ev, &reports);
            Ok(())
        })
    });
}

async fn stat_walk(lsp: &zidane_lsp::Lsp, exclude: Vec<PathBuf>) -> Option<BTreeMap<String, scan::Stat>> {
    let root = lsp.root().to_path_buf();
    let lsp = lsp.clone();
    tokio::task::spawn_blocking(move || {
        let mut stats = scan::file_stats(&root, MAX_WALKED_FILES, exclude);
        // Only the files a server takes matter.
        stats.retain(|path, _| lsp.handles(&root.join(path)));
        stats
    })
    .await
    .ok()
}
