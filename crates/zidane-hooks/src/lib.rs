//! The typed async hook bus of zidane.
//!
//! Every event is a Rust type implementing [`HookEvent`]; its spec name
//! (`"tool:gate"`, `"turn:after"`, ...) is the associated [`HookEvent::NAME`].
//! Handlers are registered with [`HookBus::on`], [`HookBus::on_sync`] or
//! [`HookBus::once`], run one after another in registration order on
//! [`HookBus::emit`], and all see the same `&mut` event, so a later handler
//! observes what an earlier one wrote.
//!
//! ```
//! use zidane_hooks::{HookBus, HookEvent};
//!
//! struct Gate { block: bool }
//! impl HookEvent for Gate { const NAME: &'static str = "example:gate"; }
//!
//! # tokio_test_block_on(async {
//! let bus = HookBus::new();
//! bus.on_sync::<Gate, _>(|ev, _cx| { ev.block = true; Ok(()) });
//! let mut ev = Gate { block: false };
//! bus.emit(&mut ev).await.unwrap();
//! assert!(ev.block);
//! # });
//! # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     let mut f = std::pin::pin!(f);
//! #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
//! #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
//! # }
//! ```
//!
//! Architecture invariant: this crate knows no event payloads and no runtime.
//! It depends on neither tokio, hyper nor serde; the payload vocabulary lives in
//! `zidane-loop`, and any executor can drive [`HookBus::emit`].

mod bus;
mod child;
mod error;
mod map;
mod suggest;
#[cfg(test)]
mod tests;

pub use bus::{BoxFuture, HandlerResult, HookBus, HookCx, HookEvent, HookHandle, HookScope};
pub use child::{Bubble, Child};
pub use error::{HandlerError, HookError};
pub use map::{DynEvent, DynHandler, HookMap, HookSpec};
pub use suggest::closest;
