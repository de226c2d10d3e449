//! The `AgentHooks` vocabulary: one type per hook of the spec.
//!
//! Each type's [`HookEvent::NAME`] is the spec's string (`"tool:gate"`).
//! Fields handlers may write are `pub`; everything else is read through a
//! getter. Sub-agent events bubbled to the parent are [`Child<E>`] of the
//! child's own event (`ChildStreamText = Child<StreamText>`), except the three
//! `child:spawn:*` events, which describe a grandchild and have their own
//! shapes.
//!
//! [`CATALOGUE`] lists every hook with its Rust type, emitting crate and
//! whether it is a decision (mutable) or an observation; `docs/hooks.md` is
//! generated from it.

use std::collections::BTreeMap;

use serde_json::Value;
use zidane_hooks::{Bubble, Child, HookEvent, HookSpec};
use zidane_provider::{ContentBlock, Message, SessionTurn, StreamOptions, ToolResultContent, TurnUsage};

mod gate;
#[cfg(test)]
mod sourcegen;
#[cfg(test)]
mod tests;
mod types;

pub use gate::{BLOCKED_DEFAULT_REASON, GateDecision};
pub use types::*;

/// Which crate emits a hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Emitter {
    /// The run loop.
    Loop,
    /// The agent (sessions, compaction, sub-agents, skills, background tasks).
    Agent,
    /// The MCP client.
    Mcp,
    /// The prompt-cache telemetry logger.
    CacheTelemetry,
    /// Adapters outside the core: tracing exporters, durable runtimes.
    Adapter,
}

impl Emitter {
    /// The emitting crate, or a description for adapters.
    pub fn crate_name(self) -> &'static str {
        match self {
            Emitter::Loop => "zidane-loop",
            Emitter::Agent => "zidane-agent",
            Emitter::Mcp => "zidane-mcp",
            Emitter::CacheTelemetry => "zidane-cache-telemetry",
            Emitter::Adapter => "observability and durable-runtime adapters",
        }
    }
}

/// One catalogue row.
#[derive(Debug, Clone, Copy)]
pub struct HookInfo {
    /// The spec name.
    pub name: &'static str,
    /// The Rust type in [`crate::events`].
    pub rust_type: &'static str,
    /// Who emits it.
    pub emitter: Emitter,
    /// Whether handlers' writes are read back (a decision or transform).
    pub mutable: bool,
    /// Whether anything emits it yet. A hook marked `false` is part of the
    /// vocabulary (its type exists, handlers may be registered) but no crate
    /// fires it; `cargo xtask codegen --check` fails when the mark is wrong
    /// either way.
    pub emitted: bool,
    /// One line on what it reports.
    pub summary: &'static str,
    /// How to register a name-keyed handler on it.
    pub spec: HookSpec,
}

/// The catalogue row of `name`.
pub fn hook_info(name: &str) -> Option<&'static HookInfo> {
    CATALOGUE.iter().find(|h| h.name == name)
}

// The event types, their `…Init` structs, the `child:*` aliases,
// `CATALOGUE` and `HOOK_SPECS`, rendered from `hooks.txt` and `fields.txt`.
include!("generated.rs");

impl CompactRestore {
    /// Adds a synthetic tool call and its result to the turns kept after the
    /// summary.
    pub fn add(&mut self, name: impl Into<String>, input: Value, output: impl Into<String>) {
        self.added.push(RestoredCall {
            name: name.into(),
            input,
            output: output.into(),
        });
    }

    /// The calls added so far, in order.
    pub fn added(&self) -> &[RestoredCall] {
        &self.added
    }

    /// Takes the added calls out of the event.
    pub fn take_added(&mut self) -> Vec<RestoredCall> {
        std::mem::take(&mut self.added)
    }
}

impl RunBeforeEnd {
    /// Keeps the run going with `message` as the next user turn. The first
    /// call wins; later ones return `false` and change nothing.
    pub fn follow_up(&mut self, message: impl Into<String>) -> bool {
        if self.follow_up.is_some() {
            return false;
        }
        self.follow_up = Some(message.into());
        true
    }

    /// The follow-up a handler asked for, if any.
    pub fn follow_up_message(&self) -> Option<&str> {
        self.follow_up.as_deref()
    }
}

impl TracingRedact {
    /// A redaction request: `redacted` starts equal to `value`.
    pub fn for_value(kind: RedactKind, value: impl Into<String>, meta: Option<serde_json::Map<String, Value>>) -> Self {
        let value = value.into();
        let mut ev = TracingRedact::new(TracingRedactInit {
            kind,
            meta,
            value: value.clone(),
        });
        ev.redacted = value;
        ev
    }
}

/// `spawn:complete` is the child's run statistics themselves, as the
/// spec's flat payload: `ev.child_id`, `ev.duration`, `ev.stats` read
/// through to [`ChildRunStats`].
impl std::ops::Deref for SpawnComplete {
    type Target = ChildRunStats;
    fn deref(&self) -> &ChildRunStats {
        self.stats()
    }
}

/// `child:spawn:complete` reads through to the grandchild's
/// [`ChildRunStats`] the same way (its identity, `parent_child_id` and
/// `depth`, beside them).
impl std::ops::Deref for ChildSpawnComplete {
    type Target = ChildRunStats;
    fn deref(&self) -> &ChildRunStats {
        self.stats()
    }
}
