//! Cancellation that works with any executor: a controller that aborts, and
//! signals that observe it (and can be chained, so a tool call's signal
//! follows its run's).

use parking_lot::Mutex;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll, Waker};

#[derive(Default)]
struct Inner {
    aborted: AtomicBool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    reason: Option<String>,
    wakers: Vec<Waker>,
    children: Vec<Weak<Inner>>,
}

impl Inner {
    fn lock(&self) -> parking_lot::MutexGuard<'_, State> {
        self.state.lock()
    }

    /// Aborts this node and its descendants; the first reason wins.
    fn abort(&self, reason: Option<&str>) -> bool {
        let (wakers, children) = {
            let mut state = self.lock();
            if self.aborted.swap(true, Ordering::AcqRel) {
                return false;
            }
            state.reason = reason.map(str::to_owned);
            (std::mem::take(&mut state.wakers), std::mem::take(&mut state.children))
        };
        for waker in wakers {
            waker.wake();
        }
        for child in children.iter().filter_map(Weak::upgrade) {
            child.abort(reason);
        }
        true
    }
}

/// Aborts the work its [`AbortSignal`]s are handed to.
#[derive(Clone, Default)]
pub struct AbortController {
    inner: Arc<Inner>,
}

impl fmt::Debug for AbortController {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AbortController")
            .field("aborted", &self.signal().is_aborted())
            .finish()
    }
}

impl AbortController {
    /// A controller that has not aborted.
    pub fn new() -> Self {
        Self::default()
    }

    /// A signal observing this controller.
    pub fn signal(&self) -> AbortSignal {
        AbortSignal {
            inner: Arc::clone(&self.inner),
        }
    }

    /// Aborts, with an optional reason. Returns `false` when it had already
    /// aborted (the first reason is kept).
    pub fn abort(&self, reason: Option<&str>) -> bool {
        self.inner.abort(reason)
    }
}

/// Observes an [`AbortController`]: query it, or await [`AbortSignal::aborted`].
#[derive(Clone)]
pub struct AbortSignal {
    inner: Arc<Inner>,
}

impl Default for AbortSignal {
    /// A signal that never aborts.
    fn default() -> Self {
        AbortController::new().signal()
    }
}

impl fmt::Debug for AbortSignal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AbortSignal")
            .field("aborted", &self.is_aborted())
            .field("reason", &self.reason())
            .finish()
    }
}

impl AbortSignal {
    /// A signal that never aborts.
    pub fn never() -> Self {
        Self::default()
    }

    /// Whether the controller has aborted.
    pub fn is_aborted(&self) -> bool {
        self.inner.aborted.load(Ordering::Acquire)
    }

    /// The reason given to the abort, if any.
    pub fn reason(&self) -> Option<String> {
        self.inner.lock().reason.clone()
    }

    /// A new controller that aborts when this signal does (and may also abort
    /// on its own without affecting this one).
    pub fn child(&self) -> AbortController {
        let child = AbortController::new();
        let mut state = self.inner.lock();
        if self.is_aborted() {
            let reason = state.reason.clone();
            drop(state);
            child.abort(reason.as_deref());
        } else {
            state.children.retain(|w| w.strong_count() > 0);
            state.children.push(Arc::downgrade(&child.inner));
        }
        child
    }

    /// Completes once the controller aborts.
    pub fn aborted(&self) -> Aborted {
        Aborted { signal: self.clone() }
    }

    /// Polls for the abort, registering `cx`'s waker when it has not happened.
    pub fn poll_aborted(&self, cx: &mut Context<'_>) -> Poll<()> {
        if self.is_aborted() {
            return Poll::Ready(());
        }
        let mut state = self.inner.lock();
        // Checked again under the lock: `abort` flips the flag before taking
        // the wakers, so a waker registered after this check is always woken.
        if self.is_aborted() {
            return Poll::Ready(());
        }
        if !state.wakers.iter().any(|w| w.will_wake(cx.waker())) {
            state.wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

/// Future of [`AbortSignal::aborted`].
#[derive(Debug)]
pub struct Aborted {
    signal: AbortSignal,
}

impl Future for Aborted {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.signal.poll_aborted(cx)
    }
}
