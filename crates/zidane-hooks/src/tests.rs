use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;

use crate::{Bubble, Child, DynHandler, HookBus, HookError, HookEvent, HookHandle, HookMap, HookScope, HookSpec};

#[derive(Debug, Default)]
struct Alpha {
    log: Vec<u32>,
}
impl HookEvent for Alpha {
    const NAME: &'static str = "test:alpha";
}
impl Bubble for Alpha {
    const CHILD_NAME: &'static str = "child:test:alpha";
}

#[derive(Debug, Default)]
struct Beta {
    log: Vec<u32>,
}
impl HookEvent for Beta {
    const NAME: &'static str = "test:beta";
}

/// Drives a future that never waits on anything outside itself.
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

fn push_sync<E: HookEvent>(bus: &HookBus, label: u32, log: fn(&mut E) -> &mut Vec<u32>) -> HookHandle {
    bus.on_sync::<E, _>(move |ev, _| {
        log(ev).push(label);
        Ok(())
    })
}

#[tokio::test]
async fn handlers_run_in_order_and_share_the_event() {
    let bus = HookBus::new();
    bus.on_sync::<Alpha, _>(|ev, _| {
        ev.log.push(1);
        Ok(())
    });
    bus.on::<Alpha, _>(|ev, _| {
        Box::pin(async move {
            tokio::task::yield_now().await;
            assert_eq!(ev.log, vec![1]);
            ev.log.push(2);
            Ok(())
        })
    });
    bus.on_sync::<Alpha, _>(|ev, _| {
        assert_eq!(ev.log, vec![1, 2]);
        ev.log.push(3);
        Ok(())
    });
    let mut ev = Alpha::default();
    bus.emit(&mut ev).await.unwrap();
    assert_eq!(ev.log, vec![1, 2, 3]);

    // Another event type is untouched.
    let mut other = Beta::default();
    bus.emit(&mut other).await.unwrap();
    assert!(other.log.is_empty());
    assert!(bus.has::<Alpha>());
    assert!(!bus.has::<Beta>());
    assert_eq!(bus.count::<Alpha>(), 3);
}

#[tokio::test]
async fn once_runs_once_and_off_removes() {
    let bus = HookBus::new();
    let once = bus.once_sync::<Alpha, _>(|ev, _| {
        ev.log.push(1);
        Ok(())
    });
    let h = push_sync::<Alpha>(&bus, 2, |e| &mut e.log);
    let mut ev = Alpha::default();
    bus.emit(&mut ev).await.unwrap();
    bus.emit(&mut ev).await.unwrap();
    assert_eq!(ev.log, vec![1, 2, 2]);
    assert!(!bus.off(once), "a once handler that ran is gone");
    assert!(bus.off(h));
    assert!(!bus.off(h), "removing twice reports false");
    assert!(!bus.has::<Alpha>());
    bus.emit(&mut ev).await.unwrap();
    assert_eq!(ev.log, vec![1, 2, 2]);
}

#[tokio::test]
async fn the_version_moves_with_every_change_of_the_handlers_and_only_then() {
    let bus = HookBus::new();
    let v0 = bus.version();
    let h = push_sync::<Alpha>(&bus, 1, |e| &mut e.log);
    let v1 = bus.version();
    assert_ne!(v1, v0, "registering");
    let mut ev = Alpha::default();
    bus.emit(&mut ev).await.unwrap();
    assert!(bus.has::<Alpha>());
    assert_eq!(bus.version(), v1, "emitting and asking change nothing");
    bus.once_sync::<Beta, _>(|_, _| Ok(()));
    let v2 = bus.version();
    assert_ne!(v2, v1);
    bus.emit(&mut Beta::default()).await.unwrap();
    let v3 = bus.version();
    assert_ne!(v3, v2, "a once handler that ran is gone");
    assert!(bus.clone().off(h));
    assert_ne!(bus.version(), v3, "removing, through a clone");
    assert!(!bus.has::<Alpha>() && !bus.has::<Beta>());
}

#[tokio::test]
async fn erroring_handler_stops_the_chain_and_reaches_the_emitter() {
    let bus = HookBus::new();
    push_sync::<Alpha>(&bus, 1, |e| &mut e.log);
    bus.on::<Alpha, _>(|_, _| Box::pin(async { Err("refused".into()) }));
    push_sync::<Alpha>(&bus, 3, |e| &mut e.log);
    let mut ev = Alpha::default();
    let err = bus.emit(&mut ev).await.unwrap_err();
    assert!(matches!(err, HookError::Handler { name: "test:alpha", .. }), "{err:?}");
    assert_eq!(std::error::Error::source(&err).unwrap().to_string(), "refused");
    assert_eq!(ev.log, vec![1], "the handler after the failing one did not run");
}

#[tokio::test]
async fn panicking_handlers_become_errors_and_the_bus_keeps_working() {
    let bus = HookBus::new();
    let sync = bus.on_sync::<Alpha, _>(|_, _| panic!("sync boom"));
    let mut ev = Alpha::default();
    match bus.emit(&mut ev).await {
        Err(HookError::Panicked { name, message }) => {
            assert_eq!(name, "test:alpha");
            assert_eq!(message, "sync boom");
        }
        other => panic!("expected a panic error, got {other:?}"),
    }
    bus.off(sync);

    // A panic inside the future's poll, after an await point.
    let async_h = bus.on::<Alpha, _>(|_, _| {
        Box::pin(async {
            tokio::task::yield_now().await;
            let n: u32 = "x".len().try_into().unwrap();
            panic!("async boom {n}")
        })
    });
    match bus.emit(&mut ev).await {
        Err(HookError::Panicked { message, .. }) => assert_eq!(message, "async boom 1"),
        other => panic!("expected a panic error, got {other:?}"),
    }
    bus.off(async_h);

    push_sync::<Alpha>(&bus, 7, |e| &mut e.log);
    bus.emit(&mut ev).await.unwrap();
    assert_eq!(ev.log, vec![7]);
}

#[tokio::test]
async fn handler_registered_during_emission_runs_from_the_next_one() {
    let bus = HookBus::new();
    let registered = Arc::new(AtomicUsize::new(0));
    let r = Arc::clone(&registered);
    bus.on_sync::<Alpha, _>(move |ev, cx| {
        ev.log.push(1);
        if r.fetch_add(1, Ordering::SeqCst) == 0 {
            cx.bus().on_sync::<Alpha, _>(|ev, _| {
                ev.log.push(2);
                Ok(())
            });
        }
        Ok(())
    });
    let mut ev = Alpha::default();
    bus.emit(&mut ev).await.unwrap();
    assert_eq!(ev.log, vec![1]);
    bus.emit(&mut ev).await.unwrap();
    assert_eq!(ev.log, vec![1, 1, 2]);
}

#[tokio::test]
async fn handler_removed_during_emission_does_not_run_later_in_it() {
    let bus = HookBus::new();
    let victim: Arc<std::sync::Mutex<Option<HookHandle>>> = Arc::default();
    let v = Arc::clone(&victim);
    bus.on_sync::<Alpha, _>(move |ev, cx| {
        ev.log.push(1);
        if let Some(h) = v.lock().unwrap().take() {
            assert!(cx.bus().off(h));
        }
        Ok(())
    });
    *victim.lock().unwrap() = Some(push_sync::<Alpha>(&bus, 2, |e| &mut e.log));
    let mut ev = Alpha::default();
    bus.emit(&mut ev).await.unwrap();
    assert_eq!(ev.log, vec![1]);
}

#[tokio::test]
async fn scope_removes_what_it_registered_on_drop() {
    let bus = HookBus::new();
    push_sync::<Alpha>(&bus, 1, |e| &mut e.log);
    let scope = bus.scope();
    scope.on_sync::<Alpha, _>(|ev, _| {
        ev.log.push(2);
        Ok(())
    });
    scope.once_sync::<Beta, _>(|ev, _| {
        ev.log.push(3);
        Ok(())
    });
    assert_eq!(scope.len(), 2);
    let mut ev = Alpha::default();
    bus.emit(&mut ev).await.unwrap();
    assert_eq!(ev.log, vec![1, 2]);
    drop(scope);
    bus.emit(&mut ev).await.unwrap();
    assert_eq!(ev.log, vec![1, 2, 1]);
    assert!(!bus.has::<Beta>());

    let kept = bus.scope();
    kept.on_sync::<Beta, _>(|_, _| Ok(()));
    let handles = kept.detach();
    assert_eq!(handles.len(), 1);
    assert!(bus.has::<Beta>(), "a detached scope leaves its handlers in place");
}

#[tokio::test]
async fn hook_map_installs_in_order_and_names_unknown_hooks() {
    let catalogue = [HookSpec::of::<Alpha>(), HookSpec::of::<Beta>()];
    let first = HookMap::new().on_sync::<Alpha, _>(|ev, _| {
        ev.log.push(1);
        Ok(())
    });
    let second = HookMap::new().on_named(
        "test:alpha",
        DynHandler::sync(|mut ev, cx| {
            assert_eq!(ev.name(), "test:alpha");
            assert_eq!(cx.name(), "test:alpha");
            ev.downcast_mut::<Alpha>().unwrap().log.push(2);
            Ok(())
        }),
    );
    let map = first.merge(second);
    assert_eq!(map.names().collect::<Vec<_>>(), vec!["test:alpha", "test:alpha"]);

    let bus = HookBus::new();
    let scope = map.install(&bus, &catalogue).unwrap();
    let mut ev = Alpha::default();
    bus.emit(&mut ev).await.unwrap();
    assert_eq!(ev.log, vec![1, 2]);
    drop(scope);
    assert!(!bus.has::<Alpha>());

    let typo = map.clone().on_named("test:alfa", DynHandler::sync(|_, _| Ok(())));
    let err = typo.install(&bus, &catalogue).unwrap_err();
    assert_eq!(err.to_string(), "unknown hook `test:alfa`; did you mean `test:alpha`?");
    assert!(!bus.has::<Alpha>(), "nothing is registered when a name is unknown");

    let far = HookMap::new().on_named("nothing-like-it", DynHandler::sync(|_, _| Ok(())));
    assert_eq!(
        far.validate(&catalogue).unwrap_err().to_string(),
        "unknown hook `nothing-like-it`"
    );
}

#[tokio::test]
async fn async_dyn_handlers_and_child_wrapper() {
    let catalogue = [HookSpec::of::<Child<Alpha>>()];
    assert_eq!(catalogue[0].name(), "child:test:alpha");
    let bus = HookBus::new();
    let _scope = HookMap::new()
        .on_named(
            "child:test:alpha",
            DynHandler::future(|mut ev, _| {
                Box::pin(async move {
                    let child = ev.downcast_mut::<Child<Alpha>>().unwrap();
                    assert_eq!((child.child_id(), child.depth()), ("c1", 2));
                    child.log.push(9);
                    Ok(())
                })
            }),
        )
        .install(&bus, &catalogue)
        .unwrap();
    let mut ev = Child::new("c1", 2, Alpha::default());
    bus.emit(&mut ev).await.unwrap();
    assert_eq!(ev.into_inner().log, vec![9], "parent writes reach the child's event");
}

#[test]
fn no_handler_emit_completes_without_waiting() {
    let bus = HookBus::new();
    let mut ev = Alpha::default();
    block_on(bus.emit(&mut ev)).unwrap();
    assert!(!bus.has::<Alpha>());
}

#[derive(Debug, Clone)]
enum Op {
    Register {
        beta: bool,
        once: bool,
        asynchronous: bool,
        scope: Option<usize>,
    },
    Off(usize),
    NewScope,
    DropScope(usize),
    Emit {
        beta: bool,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<bool>(), any::<bool>(), any::<bool>(), proptest::option::of(0usize..4))
            .prop_map(|(beta, once, asynchronous, scope)| Op::Register { beta, once, asynchronous, scope }),
        2 => (0usize..32).prop_map(Op::Off),
        1 => Just(Op::NewScope),
        1 => (0usize..4).prop_map(Op::DropScope),
        4 => any::<bool>().prop_map(|beta| Op::Emit { beta }),
    ]
}

struct Registered {
    label: u32,
    beta: bool,
    once: bool,
    alive: bool,
    handle: HookHandle,
    scope: Option<usize>,
}

fn register(
    target: &HookBus,
    scope: Option<&HookScope>,
    label: u32,
    beta: bool,
    once: bool,
    asynchronous: bool,
) -> HookHandle {
    macro_rules! reg {
        ($ev:ty) => {{
            let h = match (once, asynchronous) {
                (false, false) => target.on_sync::<$ev, _>(move |ev, _| {
                    ev.log.push(label);
                    Ok(())
                }),
                (true, false) => target.once_sync::<$ev, _>(move |ev, _| {
                    ev.log.push(label);
                    Ok(())
                }),
                (false, true) => target.on::<$ev, _>(move |ev, _| {
                    Box::pin(async move {
                        ev.log.push(label);
                        Ok(())
                    })
                }),
                (true, true) => target.once::<$ev, _>(move |ev, _| {
                    Box::pin(async move {
                        ev.log.push(label);
                        Ok(())
                    })
                }),
            };
            if let Some(scope) = scope {
                scope.track(h);
            }
            h
        }};
    }
    if beta { reg!(Beta) } else { reg!(Alpha) }
}

proptest! {
    /// For any sequence of registrations, removals, scope drops and emissions,
    /// each emission runs exactly the surviving handlers in registration
    /// order, each `once` handler at most once, every handler seeing what the
    /// earlier ones pushed.
    #[test]
    fn emissions_follow_the_model(ops in proptest::collection::vec(op(), 1..60)) {
        let bus = HookBus::new();
        let mut scopes: Vec<Option<HookScope>> = Vec::new();
        let mut model: Vec<Registered> = Vec::new();
        let mut next_label = 0u32;
        for op in ops {
            match op {
                Op::Register { beta, once, asynchronous, scope } => {
                    let scope = scope.filter(|&i| scopes.get(i).is_some_and(Option::is_some));
                    let scope_ref = scope.and_then(|i| scopes[i].as_ref());
                    let handle = register(&bus, scope_ref, next_label, beta, once, asynchronous);
                    model.push(Registered { label: next_label, beta, once, alive: true, handle, scope });
                    next_label += 1;
                }
                Op::Off(i) => {
                    if let Some(r) = model.get_mut(i) {
                        let removed = bus.off(r.handle);
                        prop_assert_eq!(removed, r.alive);
                        r.alive = false;
                    }
                }
                Op::NewScope => scopes.push(Some(bus.scope())),
                Op::DropScope(i) => {
                    if let Some(slot) = scopes.get_mut(i) && slot.take().is_some() {
                        for r in model.iter_mut().filter(|r| r.scope == Some(i)) {
                            r.alive = false;
                        }
                    }
                }
                Op::Emit { beta } => {
                    let expected: Vec<u32> = model.iter().filter(|r| r.alive && r.beta == beta).map(|r| r.label).collect();
                    for r in model.iter_mut().filter(|r| r.alive && r.beta == beta && r.once) {
                        r.alive = false;
                    }
                    let log = if beta {
                        let mut ev = Beta::default();
                        block_on(bus.emit(&mut ev)).unwrap();
                        ev.log
                    } else {
                        let mut ev = Alpha::default();
                        block_on(bus.emit(&mut ev)).unwrap();
                        ev.log
                    };
                    prop_assert_eq!(log, expected);
                }
            }
            let alive_alpha = model.iter().filter(|r| r.alive && !r.beta).count();
            prop_assert_eq!(bus.count::<Alpha>(), alive_alpha);
            prop_assert_eq!(bus.has::<Alpha>(), alive_alpha > 0);
        }
    }
}
