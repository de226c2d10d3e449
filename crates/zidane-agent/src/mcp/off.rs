//! The MCP servers of a build without the `mcp` feature: none.

use zidane_hooks::HookBus;

use super::McpRun;
use crate::error::AgentError;
use crate::options::AgentOptions;

/// No server: nothing to connect, nothing added to a run.
pub(crate) struct Mcp;

impl Mcp {
    pub(crate) fn take(_options: &mut AgentOptions) -> Mcp {
        Mcp
    }

    pub(crate) fn is_empty(&self) -> bool {
        true
    }

    pub(crate) async fn for_run(&self, _hooks: &HookBus) -> McpRun {
        McpRun::default()
    }

    pub(crate) async fn connect_ahead(&self, _hooks: &HookBus) {}

    pub(crate) async fn warmup(&self, _hooks: &HookBus) -> Result<(), AgentError> {
        Ok(())
    }

    pub(crate) async fn close(&self) {}
}

/// Without the feature, extensions add no server.
#[derive(Default)]
pub(crate) struct McpFold {
    _none: (),
}

impl McpFold {
    pub(crate) fn add(&mut self, _extension: &mut crate::extensions::Extension) {}

    pub(crate) fn finish(self, _options: &mut AgentOptions) {}
}
