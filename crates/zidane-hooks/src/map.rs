//! Handlers keyed by the spec's hook names, installed together.

use std::any::Any;
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use crate::bus::{BoxFuture, Callback, HandlerResult, HookBus, HookCx, HookEvent, HookHandle, HookScope};
use crate::error::HookError;
use crate::suggest::closest;

/// Any event, seen through its spec name; for handlers that do not know the
/// event's type at compile time (generic observers, hooks keyed by string).
pub struct DynEvent<'a> {
    name: &'static str,
    event: &'a mut (dyn Any + Send),
}

impl DynEvent<'_> {
    /// The event's spec name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The event as `E`, when it is one.
    pub fn downcast_ref<E: HookEvent>(&self) -> Option<&E> {
        self.event.downcast_ref()
    }

    /// The event as a mutable `E`, when it is one.
    pub fn downcast_mut<E: HookEvent>(&mut self) -> Option<&mut E> {
        self.event.downcast_mut()
    }
}

impl fmt::Debug for DynEvent<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynEvent")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

type DynAsyncFn = dyn for<'a> Fn(DynEvent<'a>, HookCx<'a>) -> BoxFuture<'a, HandlerResult> + Send + Sync;
type DynSyncFn = dyn Fn(DynEvent<'_>, HookCx<'_>) -> HandlerResult + Send + Sync;

/// A handler over [`DynEvent`], registrable under any hook name.
#[derive(Clone)]
pub enum DynHandler {
    /// Runs to completion without awaiting.
    Sync(Arc<DynSyncFn>),
    /// Returns a future the bus awaits.
    Async(Arc<DynAsyncFn>),
}

impl DynHandler {
    /// A synchronous handler.
    pub fn sync<F>(f: F) -> Self
    where
        F: Fn(DynEvent<'_>, HookCx<'_>) -> HandlerResult + Send + Sync + 'static,
    {
        DynHandler::Sync(Arc::new(f))
    }

    /// An async handler.
    pub fn future<F>(f: F) -> Self
    where
        F: for<'a> Fn(DynEvent<'a>, HookCx<'a>) -> BoxFuture<'a, HandlerResult> + Send + Sync + 'static,
    {
        DynHandler::Async(Arc::new(f))
    }
}

impl fmt::Debug for DynHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DynHandler::Sync(_) => "DynHandler::Sync",
            DynHandler::Async(_) => "DynHandler::Async",
        })
    }
}

/// One entry of a hook catalogue: a spec name and how to register a
/// [`DynHandler`] on the event type behind it.
#[derive(Clone, Copy)]
pub struct HookSpec {
    name: &'static str,
    register: fn(&HookBus, &DynHandler) -> HookHandle,
}

impl HookSpec {
    /// The spec entry of `E`.
    pub const fn of<E: HookEvent>() -> Self {
        HookSpec {
            name: E::NAME,
            register: register_dyn::<E>,
        }
    }

    /// The hook's spec name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Registers `handler` on this hook's event type.
    pub fn register(&self, bus: &HookBus, handler: &DynHandler) -> HookHandle {
        (self.register)(bus, handler)
    }
}

impl fmt::Debug for HookSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("HookSpec").field(&self.name).finish()
    }
}

fn register_dyn<E: HookEvent>(bus: &HookBus, handler: &DynHandler) -> HookHandle {
    let callback = match handler {
        DynHandler::Sync(f) => {
            let f = Arc::clone(f);
            Callback::<E>::from_sync(move |ev, cx| {
                f(
                    DynEvent {
                        name: E::NAME,
                        event: ev,
                    },
                    cx,
                )
            })
        }
        DynHandler::Async(f) => {
            let f = Arc::clone(f);
            Callback::<E>::from_async(move |ev, cx| {
                f(
                    DynEvent {
                        name: E::NAME,
                        event: ev,
                    },
                    cx,
                )
            })
        }
    };
    bus.insert(callback, false)
}

trait Registrar: Send + Sync {
    fn register(&self, bus: &HookBus) -> HookHandle;
}

struct Typed<E>(Callback<E>);

impl<E: HookEvent> Registrar for Typed<E> {
    fn register(&self, bus: &HookBus) -> HookHandle {
        bus.insert(self.0.clone(), false)
    }
}

#[derive(Clone)]
enum Handler {
    Typed(Arc<dyn Registrar>),
    Dyn(DynHandler),
}

#[derive(Clone)]
struct Entry {
    name: Cow<'static, str>,
    handler: Handler,
}

/// An ordered list of handlers keyed by the spec's hook names: what an agent
/// option or a preset carries, installed onto a bus in one step.
///
/// Merging appends, so composing two presets keeps both handlers for an event
/// in order. Names are checked at [`HookMap::install`]: an unknown name fails
/// the whole installation with [`HookError::UnknownHook`], never a silent no-op.
#[derive(Clone, Default)]
pub struct HookMap {
    entries: Vec<Entry>,
}

impl fmt::Debug for HookMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.entries.iter().map(|e| &e.name)).finish()
    }
}

impl HookMap {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an async handler for `E`.
    pub fn on<E, F>(mut self, handler: F) -> Self
    where
        E: HookEvent,
        F: for<'a> Fn(&'a mut E, HookCx<'a>) -> BoxFuture<'a, HandlerResult> + Send + Sync + 'static,
    {
        self.push_typed(Callback::from_async(handler));
        self
    }

    /// Adds a synchronous handler for `E`.
    pub fn on_sync<E, F>(mut self, handler: F) -> Self
    where
        E: HookEvent,
        F: Fn(&mut E, HookCx<'_>) -> HandlerResult + Send + Sync + 'static,
    {
        self.push_typed(Callback::from_sync(handler));
        self
    }

    /// Adds a handler under a spec name given as a string; the name is
    /// checked when the map is installed.
    pub fn on_named(mut self, name: impl Into<Cow<'static, str>>, handler: DynHandler) -> Self {
        self.entries.push(Entry {
            name: name.into(),
            handler: Handler::Dyn(handler),
        });
        self
    }

    /// Appends every handler of `other` after this map's.
    pub fn merge(mut self, other: HookMap) -> Self {
        self.entries.extend(other.entries);
        self
    }

    /// The hook names, in registration order (repeated per handler).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.name.as_ref())
    }

    /// How many handlers the map holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the map holds no handler.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Checks every name against `catalogue`, then registers every handler on
    /// `bus` in order. Nothing is registered when a name is unknown. The
    /// returned scope removes the handlers when dropped (call
    /// [`HookScope::detach`] to keep them for the bus's lifetime).
    #[must_use = "dropping the returned scope uninstalls the handlers at once"]
    pub fn install(&self, bus: &HookBus, catalogue: &[HookSpec]) -> Result<HookScope, HookError> {
        self.validate(catalogue)?;
        let scope = bus.scope();
        for entry in &self.entries {
            let handle = match &entry.handler {
                Handler::Typed(registrar) => registrar.register(bus),
                Handler::Dyn(handler) => {
                    let Some(spec) = catalogue.iter().find(|s| s.name == entry.name) else {
                        continue; // unreachable: validated above
                    };
                    spec.register(bus, handler)
                }
            };
            scope.track(handle);
        }
        Ok(scope)
    }

    /// Checks every name against `catalogue` without registering anything.
    pub fn validate(&self, catalogue: &[HookSpec]) -> Result<(), HookError> {
        for entry in &self.entries {
            if !catalogue.iter().any(|s| s.name == entry.name) {
                return Err(HookError::UnknownHook {
                    name: entry.name.clone().into_owned(),
                    suggestion: closest(&entry.name, catalogue.iter().map(|s| s.name)),
                });
            }
        }
        Ok(())
    }

    fn push_typed<E: HookEvent>(&mut self, callback: Callback<E>) {
        self.entries.push(Entry {
            name: Cow::Borrowed(E::NAME),
            handler: Handler::Typed(Arc::new(Typed(callback))),
        });
    }
}
