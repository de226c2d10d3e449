//! Two `zidane-restate` processes behind one deployment URL (a loopback
//! round-robin proxy), with Restate opening one connection per stream: the
//! control handlers reach the run whichever replica serves them, because
//! they go through Restate (the inbox object and a named signal on the
//! run's invocation), not through the process that runs it.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::ONE_AT_A_TIME;
use crate::harness::{Reply, Restate, RoundRobin, Service, answer, model, shell_call};

/// One stream per connection, so the proxy spreads invocations over both
/// replicas.
const ONE_STREAM_PER_CONNECTION: (&str, &str) = ("RESTATE_WORKER__INVOKER__HTTP2_STREAMS_PER_CONNECTION_LIMIT", "1");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controls_reach_the_run_from_either_replica() {
    let _one = ONE_AT_A_TIME.lock().await;
    let gate = Arc::new(Notify::new());
    let held = Arc::clone(&gate);
    let (url, bodies, mut arrived) = model(move |body, _| {
        if body.contains("Think forever.") {
            Reply::Hang
        } else if body.contains("Note 2") {
            Reply::Stream(answer("steered answer"))
        } else {
            Reply::After(Arc::clone(&held), shell_call("toolu_a", "echo hi"))
        }
    })
    .await;
    let restate = Restate::start_with(&[ONE_STREAM_PER_CONNECTION]).await;
    let a = Service::start(&url).await;
    let b = Service::start(&url).await;
    let proxy = RoundRobin::start(vec![a.uri.clone(), b.uri.clone()]).await;
    restate.register(&proxy.uri).await;

    // Steering, three times, while the first model call waits: the run
    // hands the three to the model after the call it answers with.
    let id = restate.send("r1", "run", &json!({"prompt": "Start."}), &[]).await;
    assert_eq!(arrived.recv().await, Some(0));
    for i in 0..3 {
        let steered = restate
            .call("r1", "steer", Some(&json!({"text": format!("Note {i}")})))
            .await;
        assert_eq!(steered.json(), json!({"delivered": true}), "steer {i}");
    }
    gate.notify_one();
    let output = restate.output(&id).await;
    assert_eq!(output["text"], "steered answer", "{output}");
    assert_eq!(arrived.recv().await, Some(1));
    let second: Value = serde_json::from_str(&bodies.lock().unwrap()[1]).unwrap();
    let sent = second["messages"].to_string();
    for i in 0..3 {
        assert!(
            sent.contains(&format!("Note {i}")),
            "steer {i} reached the model: {sent}"
        );
    }
    // A control for a session with no run in flight goes nowhere.
    let late = restate.call("r1", "followUp", Some(&json!({"text": "Hello?"}))).await;
    assert_eq!(late.json(), json!({"delivered": false}));

    // An abort ends a run wherever it runs.
    let id = restate
        .send("r2", "run", &json!({"prompt": "Think forever."}), &[])
        .await;
    assert_eq!(arrived.recv().await, Some(2));
    let aborted = restate
        .call("r2", "abort", Some(&json!({"reason": "the person stopped it"})))
        .await;
    assert_eq!(aborted.json(), json!({"delivered": true}));
    let output = restate.output(&id).await;
    assert_eq!(output["stats"]["status"], "aborted", "{output}");

    let given: Vec<usize> = proxy.given.iter().map(|n| n.load(Ordering::SeqCst)).collect();
    assert!(given.iter().all(|n| *n > 0), "both replicas served: {given:?}");
}

/// Restate's own cancellation of a run invocation ends the run as
/// aborted: the driver hears it through the signal it awaits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_invocation_ends_its_run_as_aborted() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (url, _bodies, mut arrived) = model(move |_, _| Reply::Hang).await;
    let restate = Restate::start().await;
    let service = Service::start(&url).await;
    restate.register(&service.uri).await;
    let id = restate
        .send("r3", "run", &json!({"prompt": "Think forever."}), &[])
        .await;
    assert_eq!(arrived.recv().await, Some(0));
    let cancelled = crate::harness::http(
        "PATCH",
        &format!("{}/invocations/{id}/cancel", restate.admin),
        &[],
        None,
    )
    .await
    .unwrap();
    assert!(cancelled.status < 300, "{cancelled:?}");
    let output = restate.output(&id).await;
    assert_eq!(output["stats"]["status"], "aborted", "{output}");
    // The run is over: nothing is in flight for the session.
    let late = restate.call("r3", "steer", Some(&json!({"text": "Hello?"}))).await;
    assert_eq!(late.json(), json!({"delivered": false}));
}

/// Steers that arrive while runs write their journals (a quick command
/// after another, in four sessions over two replicas) are taken: a signal
/// future kept across those writes used to miss them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steers_reach_runs_busy_with_commands() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (url, _bodies, mut arrived) = model(move |body, _| {
        let done = crate::harness::results(body);
        if body.contains("Steer now.") {
            Reply::Stream(answer("steered"))
        } else if done < 150 {
            Reply::Stream(shell_call(&format!("toolu_{done}"), "true"))
        } else {
            Reply::Stream(answer("never steered"))
        }
    })
    .await;
    let restate = Restate::start_with(&[ONE_STREAM_PER_CONNECTION]).await;
    let a = Service::start(&url).await;
    let b = Service::start(&url).await;
    let proxy = RoundRobin::start(vec![a.uri.clone(), b.uri.clone()]).await;
    restate.register(&proxy.uri).await;
    let mut ids = Vec::new();
    for s in 0..4 {
        ids.push(
            restate
                .send(&format!("b{s}"), "run", &json!({"prompt": "Keep going."}), &[])
                .await,
        );
    }
    for _ in 0..4 {
        assert!(arrived.recv().await.is_some());
    }
    for s in 0..4 {
        let steered = restate
            .call(&format!("b{s}"), "steer", Some(&json!({"text": "Steer now."})))
            .await;
        assert_eq!(steered.json(), json!({"delivered": true}), "b{s}");
    }
    for id in &ids {
        let output = restate.output(id).await;
        assert_eq!(output["text"], "steered", "{output}");
    }
}

/// `suspend` reaches the run from a replica that does not run it: the run
/// starts on one replica, the suspend is served by the other, and the run
/// stops there and runs again from its journal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suspend_reaches_the_run_from_the_other_replica() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (url, bodies, mut arrived) = model(move |_, index| {
        if index == 0 {
            Reply::Hang
        } else {
            Reply::Stream(answer("Answered after the suspend."))
        }
    })
    .await;
    let restate = Restate::start_with(&[ONE_STREAM_PER_CONNECTION]).await;
    let a = Service::start(&url).await;
    let b = Service::start(&url).await;
    let proxy = RoundRobin::start(vec![a.uri.clone(), b.uri.clone()]).await;
    restate.register(&proxy.uri).await;

    proxy.pin(Some(0));
    let id = restate.send("r5", "run", &json!({"prompt": "Think."}), &[]).await;
    assert_eq!(arrived.recv().await, Some(0));
    proxy.pin(Some(1));
    let suspended = restate.call("r5", "suspend", None).await;
    assert_eq!(suspended.json(), json!({"delivered": true}));
    let output = restate.output(&id).await;
    assert_eq!(output["text"], "Answered after the suspend.", "{output}");
    assert!(output["journal"]["replayed"].as_u64().unwrap() > 0, "{output}");
    assert_eq!(bodies.lock().unwrap().len(), 2, "the call in flight, asked again");
    assert!(proxy.given[1].load(Ordering::SeqCst) > 0);
}
