//! MCP servers as zidane tools: connect servers from their configuration,
//! list their tools and register each as `mcp_<server>_<tool>`, emitting
//! every `mcp:*` hook on the agent's bus.
//!
//! ```no_run
//! use zidane_hooks::HookBus;
//! use zidane_mcp::{McpServerConfig, connect_mcp_servers};
//!
//! # async fn demo() {
//! let bus = HookBus::new();
//! let servers = vec![McpServerConfig::stdio("files", "npx", ["-y", "@modelcontextprotocol/server-filesystem", "."])];
//! let connection = connect_mcp_servers(&servers, &bus).await;
//! for tool in connection.tools() {
//!     println!("{}", tool.name());
//! }
//! connection.close().await;
//! # }
//! ```
//!
//! Transports: stdio child processes today, through the official Rust MCP
//! SDK; streamable HTTP and legacy SSE configurations are accepted and fail
//! their bootstrap with a clear error (`McpError::Unsupported`) until their
//! clients land. OAuth is left to [`McpConnector`] implementations.
//!
//! Architecture invariant: this crate knows the loop's tool trait and events,
//! never the agent; it speaks MCP only through `rmcp`.

mod config;
mod connection;
mod tool;

pub use config::{McpConfigError, McpServerConfig, McpTransportConfig, ToolFilter, parse_mcp_config};
pub use connection::{
    DefaultConnector, McpConnection, McpConnector, McpError, McpToolMeta, McpToolWrap, connect_mcp_servers,
};
pub use tool::{McpTool, namespaced_name};
