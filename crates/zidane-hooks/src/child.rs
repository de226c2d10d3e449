//! Events bubbled from a sub-agent to its parent's bus.

use std::ops::{Deref, DerefMut};

use crate::bus::HookEvent;

/// An event that has a `child:*` twin on the parent's bus.
///
/// Implemented by the vocabulary crate for each event the spec bubbles, e.g.
/// `StreamText::CHILD_NAME == "child:stream:text"`.
pub trait Bubble: HookEvent {
    /// The spec name of the bubbled twin.
    const CHILD_NAME: &'static str;
}

/// A sub-agent's event re-emitted on its parent's bus, with the child's id
/// and depth.
///
/// The wrapped event is reachable through `Deref` / `DerefMut`, so a parent
/// handler reads the child's fields directly and, for gate-style events,
/// writes back the same decision fields the child's loop then reads: the
/// child emits `Child<ToolGate>` on the parent bus, awaits it, and takes the
/// event back with [`Child::into_inner`].
#[derive(Debug, Clone, PartialEq)]
pub struct Child<E> {
    child_id: String,
    depth: u32,
    event: E,
}

impl<E> Child<E> {
    /// Wraps `event` of the child `child_id` at `depth` (1 for a direct child).
    pub fn new(child_id: impl Into<String>, depth: u32, event: E) -> Self {
        Child {
            child_id: child_id.into(),
            depth,
            event,
        }
    }

    /// The id of the sub-agent that emitted the event.
    pub fn child_id(&self) -> &str {
        &self.child_id
    }

    /// How deep the sub-agent sits below the root agent (1 for a direct child).
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The event, with whatever parent handlers wrote into it.
    pub fn into_inner(self) -> E {
        self.event
    }
}

impl<E> Deref for Child<E> {
    type Target = E;

    fn deref(&self) -> &E {
        &self.event
    }
}

impl<E> DerefMut for Child<E> {
    fn deref_mut(&mut self) -> &mut E {
        &mut self.event
    }
}

impl<E: Bubble> HookEvent for Child<E> {
    const NAME: &'static str = E::CHILD_NAME;
}
