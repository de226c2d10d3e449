//! Integration tests of `zidane-agent`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout, missing_docs)]

mod agent;
mod approvals;
mod background;
#[cfg(feature = "sqlite")]
mod checkpoints;
mod compaction;
mod deviations;
#[cfg(feature = "sqlite")]
mod durable;
mod execution;
mod extensions;
mod goals;
#[cfg(feature = "mcp")]
mod mcp;
#[cfg(all(feature = "postgres", feature = "sqlite"))]
mod postgres;
#[cfg(feature = "sqlite")]
mod sessions;
mod skills;
mod subagents;
mod support;
