//! The run-summary collector: installs on an agent's hook bus and builds one
//! `RunSummary` per run (per-model usage, blocks, budget events, errors,
//! pairing repairs, repeat-guard events, retries, validation rejects,
//! totals with time to first token, children).
//!
//! Architecture invariant: the collector observes the bus and emits nothing;
//! each `install()` starts fresh state, so one collector on several agents
//! never mixes their runs.
//!
//! Status: not written yet; this crate exports nothing.
