//! Carrying a sub-agent's events to its parent's bus as their `child:*`
//! forms.
//!
//! Forwarders are installed on the child's bus, one per bubbled event the
//! parent listens to when the child starts: an event nobody on the parent
//! observes costs the child nothing (not even a `has` answer that turns on
//! payload building). A grandchild's events arrive on the child's bus
//! already wrapped (`Child<E>` with the grandchild's id and depth) and are
//! passed on unchanged, so they reach the root with their own identity.

use std::sync::Arc;

use zidane_hooks::{Bubble, Child, HandlerError, HookBus, HookEvent, HookScope};

use crate::events::{
    ChildSpawnBefore, ChildSpawnBeforeInit, ChildSpawnComplete, ChildSpawnCompleteInit, ChildSpawnError,
    ChildSpawnErrorInit, ContentRefResolve, ContentRefResolveInit, SpawnBefore, SpawnComplete, SpawnError,
    SpawnHookContext, TurnBefore, forward_bubbled,
};

/// What a forwarder needs: where it registers, where it emits, and the
/// child's identity.
pub(crate) struct BubbleLink<'a> {
    scope: &'a HookScope,
    parent: &'a HookBus,
    child_id: &'a str,
    depth: u32,
}

fn boxed(e: zidane_hooks::HookError) -> HandlerError {
    Box::new(e)
}

impl BubbleLink<'_> {
    /// Forwards `E` (and a grandchild's `Child<E>`) when the parent listens
    /// to `Child<E>`. For a `mutable` event the parent's handlers write
    /// into the same fields the child's emitter then reads (a gate's
    /// verdict, a transform's result).
    pub(crate) fn forward<E: Bubble + Clone>(&self, mutable: bool) {
        if !self.parent.has::<Child<E>>() {
            return;
        }
        let (parent, id, depth) = (self.parent.clone(), self.child_id.to_owned(), self.depth);
        self.scope.on::<E, _>(move |ev, _cx| {
            let (parent, id) = (parent.clone(), id.clone());
            Box::pin(async move {
                let mut wrapped = Child::new(id, depth, ev.clone());
                parent.emit(&mut wrapped).await.map_err(boxed)?;
                if mutable {
                    *ev = wrapped.into_inner();
                }
                Ok(())
            })
        });
        let parent = self.parent.clone();
        self.scope.on::<Child<E>, _>(move |ev, _cx| {
            let parent = parent.clone();
            Box::pin(async move {
                let mut passed = ev.clone();
                parent.emit(&mut passed).await.map_err(boxed)?;
                if mutable {
                    *ev = passed;
                }
                Ok(())
            })
        });
    }

    /// A child's own `spawn:*` (its children) become `child:spawn:*` on the
    /// parent, naming the child as `parent_child_id`; the parent's
    /// `child:spawn:*` from deeper down are passed on as they are.
    fn spawn_events(&self) {
        self.relay::<SpawnBefore, ChildSpawnBefore>(|ev, parent_child_id| {
            ChildSpawnBefore::new(ChildSpawnBeforeInit {
                spawn: spawn_context(ev),
                parent_child_id: Some(parent_child_id),
                depth: ev.depth(),
            })
        });
        self.relay::<SpawnComplete, ChildSpawnComplete>(|ev, parent_child_id| {
            ChildSpawnComplete::new(ChildSpawnCompleteInit {
                stats: ev.stats().clone(),
                parent_child_id: Some(parent_child_id),
                depth: ev.stats().depth,
            })
        });
        self.relay::<SpawnError, ChildSpawnError>(|ev, parent_child_id| {
            let mut spawn = ev.spawn().clone();
            spawn.tracing_context.clear();
            ChildSpawnError::new(ChildSpawnErrorInit {
                depth: spawn.depth,
                spawn,
                parent_child_id: Some(parent_child_id),
                error: ev.error().clone(),
            })
        });
    }

    /// A child's `content-ref:resolve` that its own handlers left
    /// unanswered is asked of the parent's resolvers, naming the child
    /// (a grandchild's keeps its own name), and the parent's bytes go back.
    fn content_refs(&self) {
        if !self.parent.has::<ContentRefResolve>() {
            return;
        }
        let (parent, id, depth) = (self.parent.clone(), self.child_id.to_owned(), self.depth);
        self.scope.on::<ContentRefResolve, _>(move |ev, _cx| {
            let (parent, id) = (parent.clone(), id.clone());
            Box::pin(async move {
                if ev.data.is_some() {
                    return Ok(());
                }
                let mut asked = ContentRefResolve::new(ContentRefResolveInit {
                    block: ev.block().clone(),
                    child_id: Some(ev.child_id().map_or(id, str::to_owned)),
                    depth: Some(ev.child_id().and(ev.depth()).unwrap_or(depth)),
                });
                parent.emit(&mut asked).await.map_err(boxed)?;
                ev.data = asked.data;
                Ok(())
            })
        });
    }

    fn relay<E: HookEvent, C: HookEvent + Clone>(&self, wrap: fn(&E, String) -> C) {
        if !self.parent.has::<C>() {
            return;
        }
        let (parent, id) = (self.parent.clone(), self.child_id.to_owned());
        self.scope.on::<E, _>(move |ev, _cx| {
            let mut bubbled = wrap(ev, id.clone());
            let parent = parent.clone();
            Box::pin(async move { parent.emit(&mut bubbled).await.map_err(boxed) })
        });
        let parent = self.parent.clone();
        self.scope.on::<C, _>(move |ev, _cx| {
            let mut passed = ev.clone();
            let parent = parent.clone();
            Box::pin(async move { parent.emit(&mut passed).await.map_err(boxed) })
        });
    }
}

/// `spawn:before`'s context without the tracing carrier: the bubbled copy
/// is observational, the spawner's own tracer owns propagation.
fn spawn_context(ev: &SpawnBefore) -> SpawnHookContext {
    SpawnHookContext {
        child_id: ev.child_id().to_owned(),
        agent_name: ev.agent_name().map(str::to_owned),
        prompt: ev.prompt().to_owned(),
        depth: ev.depth(),
        parent_run_id: ev.parent_run_id().map(str::to_owned),
        tracing_context: Default::default(),
    }
}

/// Connects a sub-agent's bus to its parent's: every event the parent
/// listens to in its `child:*` form is re-emitted there with `child_id`
/// and `depth`, and so, through the parent's own link, up to the root. A
/// content reference the child's own resolvers leave unanswered is asked
/// of the parent's (`content-ref:resolve` with `child_id` and `depth`).
/// Gate-style events (`child:tool:gate`, `child:mcp:tool:gate`,
/// `child:tool:transform`) are awaited: what the parent's handlers decide
/// goes back to the child's call.
///
/// The forwarders follow the parent's listeners: at each of the child's
/// turns (`turn:before`), when the parent's registrations have changed
/// since, they are laid again, so a `child:*` listener added while the
/// child runs reaches it from its next turn on.
///
/// Dropping the returned scope disconnects the buses.
#[must_use = "dropping the link disconnects the child's bus at once"]
pub fn install_bubbling(child: &HookBus, parent: &HookBus, child_id: &str, depth: u32) -> Bubbling {
    let watch = child.scope();
    let laid = Arc::new(parking_lot::Mutex::new((
        parent.version(),
        lay(child, parent, child_id, depth),
    )));
    // The handler holds the forwarders weakly: they are dropped with the
    // link, never from inside the bus's registry (which a scope's drop
    // locks again).
    let weak = Arc::downgrade(&laid);
    let (c, p, id) = (child.clone(), parent.clone(), child_id.to_owned());
    watch.on_sync::<TurnBefore, _>(move |_ev, _cx| {
        let Some(laid) = weak.upgrade() else { return Ok(()) };
        let mut laid = laid.lock();
        let version = p.version();
        if version != laid.0 {
            // The old forwarders go first: the new set replaces them whole.
            drop(std::mem::replace(&mut laid.1, c.scope()));
            laid.1 = lay(&c, &p, &id, depth);
            laid.0 = version;
        }
        Ok(())
    });
    Bubbling {
        _watch: watch,
        _laid: laid,
    }
}

/// A child's bus connected to its parent's ([`install_bubbling`]);
/// dropping it disconnects them.
#[must_use = "dropping the link disconnects the child's bus at once"]
pub struct Bubbling {
    // Dropped first: the watcher, then the forwarders it refreshed.
    _watch: HookScope,
    _laid: Arc<parking_lot::Mutex<(u64, HookScope)>>,
}

impl std::fmt::Debug for Bubbling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bubbling").finish_non_exhaustive()
    }
}

/// The forwarders of the events the parent listens to now, in a scope of
/// the child's bus.
fn lay(child: &HookBus, parent: &HookBus, child_id: &str, depth: u32) -> HookScope {
    let scope = child.scope();
    let link = BubbleLink {
        scope: &scope,
        parent,
        child_id,
        depth,
    };
    forward_bubbled(&link);
    link.spawn_events();
    link.content_refs();
    scope
}
