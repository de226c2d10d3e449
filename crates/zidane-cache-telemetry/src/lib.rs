//! Prompt-cache telemetry: per-request dimension hashes (`fnv1a32`,
//! `hash_messages`), snapshots and diffs, and the cache-break logger that
//! emits `cache:break` and `cache:drift` on the agent's hook bus.
//!
//! Architecture invariant: this crate only observes the bus (`turn:before`,
//! `turn:after`, `session:start`, `agent:start`) and emits the two cache
//! events; it never changes a request and never depends on the agent.
//!
//! Status: the payload types (`CacheBreakInfo`, `CacheDriftInfo`,
//! `CacheDimensionName`, `CacheSystemSection`) live in
//! `zidane_loop::events`; the hashing, diffing and the logger are not written
//! yet, so this crate exports nothing.
