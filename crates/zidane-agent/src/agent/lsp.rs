//! The agent's language servers: started in the commands' sandbox, the
//! `lsp` tool offered when one serves the folder.

use std::sync::Arc;

use super::Agent;
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
