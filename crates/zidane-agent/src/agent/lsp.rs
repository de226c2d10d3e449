//! The agent's language servers: started in the commands' sandbox, the
//! `lsp` tool offered when one serves the folder.

use std::sync::Arc;

use super::Agent;
use crate::options::AgentOptions;

/// Gives the servers the execution context's launcher (its sandbox) and
/// adds the `lsp` tool when a server serves the folder.
pub(crate) fn prepare(options: &mut AgentOptions) {
    let Some(lsp) = &options.lsp else { return };
    let local = options
        .execution
        .as_ref()
        .filter(|_| !lsp.has_launcher())
        .and_then(|execution| execution.as_any())
        .and_then(|any| any.downcast_ref::<zidane_tools::ProcessContext>());
    match local.map(zidane_tools::ProcessContext::launcher) {
        Some(Ok(Some(launcher))) => lsp.set_launcher_if_unset(launcher),
        Some(Ok(None)) | None => {}
        Some(Err(e)) => tracing::warn!(error = %e, "language servers start unconfined"),
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
