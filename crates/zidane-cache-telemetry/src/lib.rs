//! Prompt-cache telemetry: what each request's cache key is made of, what
//! changed between two requests, and a logger that names the culprit when a
//! turn reads back less cached prefix than the one before established.
//!
//! - [`fnv1a32`] and [`hash_messages`]: the hashes (FNV-1a over UTF-16 code
//!   units, the same numbers a host in another language computes);
//! - [`snapshot_cache_dimensions`] and [`diff_cache_dimensions`]: pure
//!   functions over a request's [`StreamOptions`](zidane_provider::StreamOptions);
//! - [`install_cache_break_logger`]: `cache:drift` before a request that
//!   diverges, `cache:break` after a turn that read materially less cache.
//!
//! Architecture invariant: this crate only observes the hook bus and emits
//! the two cache events; it never changes a request and never depends on the
//! agent.

mod hash;
mod logger;
mod snapshot;
#[cfg(test)]
mod tests;

pub use hash::{fnv1a32, hash_message, hash_messages};
pub use logger::{CacheBreakLoggerOptions, ErrorSink, LogSink, install_cache_break_logger};
pub use snapshot::{
    CacheDimensionDiff, CacheDimensionSnapshot, CachePromptSections, diff_cache_dimensions, snapshot_cache_dimensions,
};
