//! The agent's MCP servers, one type in every build: with the `mcp` feature
//! the servers are connected on the first run or warm-up and their tools
//! join each run; without it, [`Mcp`] has no server and adds nothing.

use std::sync::Arc;

use zidane_core::Tool;

#[cfg(not(feature = "mcp"))]
mod off;
#[cfg(feature = "mcp")]
mod on;

#[cfg(not(feature = "mcp"))]
pub(crate) use off::{Mcp, McpFold};
#[cfg(feature = "mcp")]
pub(crate) use on::{Mcp, McpFold};

/// What the MCP servers add to a run: their tools and their instructions
/// (a system-prompt section).
#[derive(Default)]
pub(crate) struct McpRun {
    pub(crate) tools: Vec<Arc<dyn Tool>>,
    pub(crate) instructions: Option<String>,
    /// The tools of servers still connecting when the run started.
    pub(crate) late: Option<zidane_loop::LateTools>,
}
