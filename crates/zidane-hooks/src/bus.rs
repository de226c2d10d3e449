//! The bus itself: registration, removal and sequential emission.

use parking_lot::{Mutex, RwLock};
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::hash::{BuildHasherDefault, Hasher};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};

use crate::error::{HandlerError, HookError};

/// An event that can travel on a [`HookBus`].
///
/// Each implementor is one hook of the vocabulary; [`HookEvent::NAME`] is the
/// hook's name exactly as the spec spells it (`"tool:gate"`).
pub trait HookEvent: Send + 'static {
    /// The hook's spec name.
    const NAME: &'static str;
}

/// A boxed, `Send` future, the return type of async handlers.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What every handler returns.
pub type HandlerResult = Result<(), HandlerError>;

/// Context handed to every handler next to the event.
#[derive(Clone, Copy)]
pub struct HookCx<'a> {
    bus: &'a HookBus,
    name: &'static str,
}

impl<'a> HookCx<'a> {
    /// The bus that is emitting; handlers may register or remove handlers
    /// through it (a handler registered now runs from the next emission on).
    pub fn bus(&self) -> &'a HookBus {
        self.bus
    }

    /// The spec name of the event being emitted.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// What the bus's owner made available to handlers (see
    /// [`HookBus::provide`]), when it is a `T`.
    pub fn context<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.bus.context::<T>()
    }
}

impl fmt::Debug for HookCx<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HookCx")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

type AsyncFn<E> = dyn for<'a> Fn(&'a mut E, HookCx<'a>) -> BoxFuture<'a, HandlerResult> + Send + Sync;
type SyncFn<E> = dyn Fn(&mut E, HookCx<'_>) -> HandlerResult + Send + Sync;

/// A handler, erased once at registration so emission is not generic over it.
pub(crate) enum Callback<E> {
    Async(Arc<AsyncFn<E>>),
    Sync(Arc<SyncFn<E>>),
}

impl<E> Clone for Callback<E> {
    fn clone(&self) -> Self {
        match self {
            Callback::Async(f) => Callback::Async(Arc::clone(f)),
            Callback::Sync(f) => Callback::Sync(Arc::clone(f)),
        }
    }
}

impl<E: HookEvent> Callback<E> {
    pub(crate) fn from_async<F>(f: F) -> Self
    where
        F: for<'a> Fn(&'a mut E, HookCx<'a>) -> BoxFuture<'a, HandlerResult> + Send + Sync + 'static,
    {
        Callback::Async(Arc::new(f))
    }

    pub(crate) fn from_sync<F>(f: F) -> Self
    where
        F: Fn(&mut E, HookCx<'_>) -> HandlerResult + Send + Sync + 'static,
    {
        Callback::Sync(Arc::new(f))
    }
}

struct Entry<E> {
    id: u64,
    once: bool,
    /// Cleared by `off` and by the one emission that claims a `once` handler;
    /// an emission already under way checks it before running the handler.
    live: AtomicBool,
    callback: Callback<E>,
}

/// Identifies one registration; pass it to [`HookBus::off`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HookHandle {
    type_id: TypeId,
    id: u64,
    name: &'static str,
}

impl HookHandle {
    /// The spec name of the event the handler listens to.
    pub fn name(&self) -> &'static str {
        self.name
    }
}

/// Handler ids are unique across every bus of the process, so a handle given
/// to the wrong bus can never remove somebody else's handler.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The per-event list, erased so the registry can hold every event type.
trait Slot: Send + Sync {
    fn as_any(&self) -> &dyn Any;
    fn remove(&mut self, id: u64) -> bool;
    fn len(&self) -> usize;
}

struct TypedSlot<E> {
    /// Copy-on-write: an emission clones this `Arc` and iterates without any
    /// lock, so registrations during an emission apply from the next one.
    entries: Arc<[Arc<Entry<E>>]>,
}

impl<E: HookEvent> Slot for TypedSlot<E> {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn remove(&mut self, id: u64) -> bool {
        let Some(pos) = self.entries.iter().position(|e| e.id == id) else {
            return false;
        };
        self.entries[pos].live.store(false, Ordering::Release);
        let mut next = self.entries.to_vec();
        next.remove(pos);
        self.entries = next.into();
        true
    }

    fn len(&self) -> usize {
        self.entries.len()
    }
}

/// `TypeId` is already a hash; feeding it through SipHash on every emission
/// would cost more than the lookup itself.
#[derive(Default)]
struct TypeIdHasher(u64);

impl Hasher for TypeIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }

    fn write_u128(&mut self, n: u128) {
        // Truncation is the point: the low half of a type id is well mixed.
        self.0 ^= n as u64;
    }
}

type Registry = HashMap<TypeId, Box<dyn Slot>, BuildHasherDefault<TypeIdHasher>>;

struct Inner {
    registry: RwLock<Registry>,
    /// What the owner hands handlers (an agent's decision maker).
    context: RwLock<Option<Arc<dyn Any + Send + Sync>>>,
    /// Handlers on the bus, all events together: lets `emit` and `has` skip
    /// the registry entirely on a bus nobody listens to.
    total: AtomicUsize,
    /// Moves on every change of the registry (see [`HookBus::version`]).
    version: AtomicU64,
}

/// The hook bus: a cheap-to-clone handle to one shared registry.
///
/// Handlers run sequentially in registration order, each awaited, all sharing
/// the one `&mut` event. No lock is held while a handler runs. A handler's
/// error stops the chain and is returned by [`HookBus::emit`]; a panicking
/// handler becomes [`HookError::Panicked`] and the bus stays usable.
#[derive(Clone)]
pub struct HookBus {
    inner: Arc<Inner>,
}

impl Default for HookBus {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for HookBus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HookBus")
            .field("handlers", &self.inner.total.load(Ordering::Relaxed))
            .finish()
    }
}

impl HookBus {
    /// An empty bus.
    pub fn new() -> Self {
        HookBus {
            inner: Arc::new(Inner {
                registry: RwLock::new(Registry::default()),
                context: RwLock::new(None),
                total: AtomicUsize::new(0),
                version: AtomicU64::new(0),
            }),
        }
    }

    /// An identity shared by this bus and its clones, and by no other live
    /// bus: observers that serve several buses key their state by it.
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.inner) as usize
    }

    /// Makes `value` available to every handler through
    /// [`HookCx::context`] (the owner of the bus, such as an agent, hands
    /// handlers a service of its own this way). Replaces what was there.
    pub fn provide(&self, value: Arc<dyn Any + Send + Sync>) {
        *self.inner.context.write() = Some(value);
    }

    /// What [`provide`](Self::provide) made available, when it is a `T`.
    pub fn context<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        let value = self.inner.context.read().clone()?;
        value.downcast::<T>().ok()
    }

    /// Registers an async handler for `E`.
    ///
    /// ```
    /// # use zidane_hooks::{HookBus, HookEvent};
    /// # struct Ping { n: u32 }
    /// # impl HookEvent for Ping { const NAME: &'static str = "ping"; }
    /// let bus = HookBus::new();
    /// bus.on::<Ping, _>(|ev, _cx| Box::pin(async move {
    ///     ev.n += 1;
    ///     Ok(())
    /// }));
    /// ```
    pub fn on<E, F>(&self, handler: F) -> HookHandle
    where
        E: HookEvent,
        F: for<'a> Fn(&'a mut E, HookCx<'a>) -> BoxFuture<'a, HandlerResult> + Send + Sync + 'static,
    {
        self.insert(Callback::from_async(handler), false)
    }

    /// Registers a synchronous handler for `E`; cheaper than [`HookBus::on`]
    /// because no future is boxed.
    pub fn on_sync<E, F>(&self, handler: F) -> HookHandle
    where
        E: HookEvent,
        F: Fn(&mut E, HookCx<'_>) -> HandlerResult + Send + Sync + 'static,
    {
        self.insert(Callback::from_sync(handler), false)
    }

    /// Registers an async handler that runs on the next emission of `E` only.
    pub fn once<E, F>(&self, handler: F) -> HookHandle
    where
        E: HookEvent,
        F: for<'a> Fn(&'a mut E, HookCx<'a>) -> BoxFuture<'a, HandlerResult> + Send + Sync + 'static,
    {
        self.insert(Callback::from_async(handler), true)
    }

    /// Registers a synchronous handler that runs on the next emission of `E` only.
    pub fn once_sync<E, F>(&self, handler: F) -> HookHandle
    where
        E: HookEvent,
        F: Fn(&mut E, HookCx<'_>) -> HandlerResult + Send + Sync + 'static,
    {
        self.insert(Callback::from_sync(handler), true)
    }

    pub(crate) fn insert<E: HookEvent>(&self, callback: Callback<E>, once: bool) -> HookHandle {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let entry = Arc::new(Entry {
            id,
            once,
            live: AtomicBool::new(true),
            callback,
        });
        let type_id = TypeId::of::<E>();
        let mut registry = self.write();
        let slot = registry.entry(type_id).or_insert_with(|| {
            Box::new(TypedSlot::<E> {
                entries: Arc::from(Vec::new()),
            })
        });
        if let Some(typed) = slot_as::<E>(slot.as_ref()) {
            let mut next = typed.entries.to_vec();
            next.push(entry);
            *slot = Box::new(TypedSlot::<E> { entries: next.into() });
            self.inner.total.fetch_add(1, Ordering::Release);
            self.inner.version.fetch_add(1, Ordering::Release);
        }
        HookHandle {
            type_id,
            id,
            name: E::NAME,
        }
    }

    /// Removes a handler. Returns `false` when it was already gone (removed,
    /// or a `once` handler that has run). A handler removed while an emission
    /// is under way does not run in the rest of that emission.
    pub fn off(&self, handle: HookHandle) -> bool {
        let mut registry = self.write();
        let Some(slot) = registry.get_mut(&handle.type_id) else {
            return false;
        };
        let removed = slot.remove(handle.id);
        if removed {
            self.inner.total.fetch_sub(1, Ordering::Release);
            self.inner.version.fetch_add(1, Ordering::Release);
            if slot.len() == 0 {
                registry.remove(&handle.type_id);
            }
        }
        removed
    }

    /// Whether any handler listens to `E`: lets emitters skip building a
    /// payload nobody observes.
    #[inline]
    pub fn has<E: HookEvent>(&self) -> bool {
        if self.inner.total.load(Ordering::Acquire) == 0 {
            return false;
        }
        self.read().contains_key(&TypeId::of::<E>())
    }

    /// A number that moves whenever a handler is added or removed. An
    /// emitter that would ask [`HookBus::has`] on every event of a stream
    /// keeps the answers and asks again only when this has moved.
    #[inline]
    pub fn version(&self) -> u64 {
        self.inner.version.load(Ordering::Acquire)
    }

    /// How many handlers listen to `E`.
    pub fn count<E: HookEvent>(&self) -> usize {
        self.read().get(&TypeId::of::<E>()).map_or(0, |slot| slot.len())
    }

    /// A guard that registers through this bus and removes everything it
    /// registered when dropped (per-run hooks; `install()` / uninstall).
    #[must_use = "dropping the scope at once uninstalls every handler registered through it"]
    pub fn scope(&self) -> HookScope {
        HookScope {
            bus: self.clone(),
            handles: Mutex::new(Vec::new()),
        }
    }

    /// Runs every handler of `E`, in registration order, on `event`.
    ///
    /// Stops at the first handler that fails or panics and returns that
    /// failure; the event keeps what the handlers before it wrote.
    pub async fn emit<E: HookEvent>(&self, event: &mut E) -> Result<(), HookError> {
        self.emit_inner(event).await
    }

    /// Emits an observer event: the handlers run as with [`emit`](Self::emit),
    /// and a failing (or panicking) one is logged through `tracing` (target
    /// `zidane`) instead of returned; what the emitter does next does not
    /// depend on it. The one place an observer's failure is handled.
    pub async fn observe<E: HookEvent>(&self, event: &mut E) {
        if let Err(e) = self.emit_inner(event).await {
            tracing::warn!(target: "zidane", "{} handler failed: {e}", E::NAME);
        }
    }

    async fn emit_inner<E: HookEvent>(&self, event: &mut E) -> Result<(), HookError> {
        let Some(entries) = self.snapshot::<E>() else {
            return Ok(());
        };
        let cx = HookCx {
            bus: self,
            name: E::NAME,
        };
        for entry in entries.iter() {
            if entry.once {
                // Exactly one emission claims a `once` handler, even when
                // several emissions of the event are in flight together.
                if !entry.live.swap(false, Ordering::AcqRel) {
                    continue;
                }
                self.forget(TypeId::of::<E>(), entry.id);
            } else if !entry.live.load(Ordering::Acquire) {
                continue;
            }
            run_one(&entry.callback, event, cx).await?;
        }
        Ok(())
    }

    fn snapshot<E: HookEvent>(&self) -> Option<Arc<[Arc<Entry<E>>]>> {
        if self.inner.total.load(Ordering::Acquire) == 0 {
            return None;
        }
        let registry = self.read();
        let slot = registry.get(&TypeId::of::<E>())?;
        slot_as::<E>(slot.as_ref()).map(|typed| Arc::clone(&typed.entries))
    }

    /// Drops a claimed `once` entry from the registry.
    fn forget(&self, type_id: TypeId, id: u64) {
        let mut registry = self.write();
        if let Some(slot) = registry.get_mut(&type_id)
            && slot.remove(id)
        {
            self.inner.total.fetch_sub(1, Ordering::Release);
            self.inner.version.fetch_add(1, Ordering::Release);
            if slot.len() == 0 {
                registry.remove(&type_id);
            }
        }
    }

    // No handler ever runs under these locks, so poisoning can only come from
    // a panic inside this module's own bookkeeping; the data stays consistent
    // either way, so recover the guard instead of propagating the poison.
    fn read(&self) -> parking_lot::RwLockReadGuard<'_, Registry> {
        self.inner.registry.read()
    }

    fn write(&self) -> parking_lot::RwLockWriteGuard<'_, Registry> {
        self.inner.registry.write()
    }
}

fn slot_as<E: HookEvent>(slot: &dyn Slot) -> Option<&TypedSlot<E>> {
    slot.as_any().downcast_ref::<TypedSlot<E>>()
}

async fn run_one<E: HookEvent>(callback: &Callback<E>, event: &mut E, cx: HookCx<'_>) -> Result<(), HookError> {
    let outcome = match callback {
        Callback::Sync(f) => catch_unwind(AssertUnwindSafe(move || f(event, cx))),
        Callback::Async(f) => match catch_unwind(AssertUnwindSafe(move || {
            let event = event;
            f(event, cx)
        })) {
            Ok(fut) => CatchUnwind { inner: fut }.await,
            Err(payload) => Err(payload),
        },
    };
    match outcome {
        Ok(Ok(())) => Ok(()),
        Ok(Err(source)) => Err(HookError::Handler { name: E::NAME, source }),
        Err(payload) => Err(HookError::Panicked {
            name: E::NAME,
            message: panic_message(payload.as_ref()),
        }),
    }
}

/// Polls a handler's future, turning a panic inside `poll` into a value.
struct CatchUnwind<'a> {
    inner: BoxFuture<'a, HandlerResult>,
}

impl Future for CatchUnwind<'_> {
    type Output = Result<HandlerResult, Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = &mut self.inner;
        match catch_unwind(AssertUnwindSafe(|| inner.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(result)) => Poll::Ready(Ok(result)),
            Err(payload) => Poll::Ready(Err(payload)),
        }
    }
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}

/// Registers through a bus and removes all of it when dropped.
///
/// ```
/// # use zidane_hooks::{HookBus, HookEvent};
/// # struct Ping;
/// # impl HookEvent for Ping { const NAME: &'static str = "ping"; }
/// let bus = HookBus::new();
/// {
///     let scope = bus.scope();
///     scope.on_sync::<Ping, _>(|_, _| Ok(()));
///     assert!(bus.has::<Ping>());
/// }
/// assert!(!bus.has::<Ping>());
/// ```
#[must_use = "dropping a HookScope uninstalls its handlers; keep it, or call `detach()`"]
pub struct HookScope {
    bus: HookBus,
    handles: Mutex<Vec<HookHandle>>,
}

impl fmt::Debug for HookScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HookScope")
            .field("handlers", &self.lock().len())
            .finish()
    }
}

impl HookScope {
    /// The bus this scope registers on.
    pub fn bus(&self) -> &HookBus {
        &self.bus
    }

    /// [`HookBus::on`], removed when the scope drops.
    pub fn on<E, F>(&self, handler: F) -> HookHandle
    where
        E: HookEvent,
        F: for<'a> Fn(&'a mut E, HookCx<'a>) -> BoxFuture<'a, HandlerResult> + Send + Sync + 'static,
    {
        self.track(self.bus.on(handler))
    }

    /// [`HookBus::on_sync`], removed when the scope drops.
    pub fn on_sync<E, F>(&self, handler: F) -> HookHandle
    where
        E: HookEvent,
        F: Fn(&mut E, HookCx<'_>) -> HandlerResult + Send + Sync + 'static,
    {
        self.track(self.bus.on_sync(handler))
    }

    /// [`HookBus::once`], removed when the scope drops if it has not run.
    pub fn once<E, F>(&self, handler: F) -> HookHandle
    where
        E: HookEvent,
        F: for<'a> Fn(&'a mut E, HookCx<'a>) -> BoxFuture<'a, HandlerResult> + Send + Sync + 'static,
    {
        self.track(self.bus.once(handler))
    }

    /// [`HookBus::once_sync`], removed when the scope drops if it has not run.
    pub fn once_sync<E, F>(&self, handler: F) -> HookHandle
    where
        E: HookEvent,
        F: Fn(&mut E, HookCx<'_>) -> HandlerResult + Send + Sync + 'static,
    {
        self.track(self.bus.once_sync(handler))
    }

    /// Adds a handle registered elsewhere to the ones this scope removes.
    pub fn track(&self, handle: HookHandle) -> HookHandle {
        self.lock().push(handle);
        handle
    }

    /// How many registrations the scope holds (including `once` handlers
    /// that already ran).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether the scope holds no registration.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Removes everything now; the same as dropping the scope.
    pub fn close(self) {}

    /// Keeps every registration on the bus for its whole lifetime and returns
    /// their handles (for [`HookBus::off`]).
    pub fn detach(self) -> Vec<HookHandle> {
        std::mem::take(&mut *self.lock())
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, Vec<HookHandle>> {
        self.handles.lock()
    }
}

impl Drop for HookScope {
    fn drop(&mut self) {
        let handles = std::mem::take(&mut *self.lock());
        for handle in handles {
            self.bus.off(handle);
        }
    }
}
