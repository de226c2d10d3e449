//! MCP servers as zidane tools: connect stdio, streamable-HTTP and legacy SSE
//! servers, list their tools and register them as `mcp_<server>_<tool>`,
//! emitting every `mcp:*` hook.
//!
//! Architecture invariant: built on the official Rust MCP SDK for the
//! protocol, over the provider crate's HTTP stack (no second HTTP client);
//! it knows the loop's tool trait and events, never the agent.
//!
//! Status: not written yet; this crate exports nothing. The `mcp:*` payload
//! types are in `zidane_loop::events`.
