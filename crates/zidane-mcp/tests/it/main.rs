//! MCP against real servers nobody here wrote (installed by `cargo xtask ci`
//! into `target/mcp-servers`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout, missing_docs)]

#[cfg(feature = "http")]
mod http;
mod servers;
