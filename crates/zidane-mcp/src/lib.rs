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
//! Transports, through the official Rust MCP SDK: stdio child processes and,
//! behind the `http` feature (on by default) and on zidane-provider's
//! hyper + rustls client, streamable HTTP (sessions, event streams and
//! resumption come from the SDK) and the legacy HTTP + SSE transport (which
//! the SDK dropped; this crate implements it as an SDK transport). An `Authorization` header
//! in the configuration is sent as the bearer token; a 401 fails the
//! bootstrap with `McpError::AuthRequired` (and `mcp:auth:required` when the
//! server offers an OAuth login and no credentials were configured). In a
//! build without `http`, HTTP configurations fail their bootstrap with
//! `McpError::Unsupported`.
//! OAuth (the [`oauth`] module): a server configured for it, or one logged
//! in to, gets its stored bearer token on every request, refreshed on
//! expiry or a 401; [`login_mcp_server`] runs the interactive login.
//!
//! Architecture invariant: this crate knows the loop's tool trait and events,
//! never the agent; it speaks MCP only through `rmcp`.

mod bootstrap;
mod config;
mod connection;
mod error;
mod handler;
#[cfg(feature = "http")]
mod http;
pub mod oauth;
mod server;
#[cfg(feature = "http")]
mod sse;
mod stdio;
mod tool;
mod transport;

pub use bootstrap::login_mcp_server;
pub use config::{
    ElicitationAnswer, ElicitationHandler, ElicitationRequest, Launcher, McpConfigError, McpServerConfig,
    McpTransportConfig, ToolFilter, parse_mcp_config,
};
pub use connection::{
    DefaultConnector, McpConnection, McpConnectionView, McpConnector, McpToolMeta, McpToolWrap, connect_mcp_servers,
};
pub use error::McpError;
pub use tool::{McpTool, namespaced_name};
