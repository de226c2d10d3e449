//! `create_agent` and the `Agent`: sessions on an embedded store, compaction,
//! sub-agents, skills, decisions, durable runs.
//!
//! Architecture invariant: the agent composes the crates below it (loop,
//! providers, MCP, telemetry, run summary) and is the only one that does;
//! nothing below it names it.
//!
//! Status: not written yet; this crate exports nothing.
