//! The object served from the test process (so its agents carry the test's
//! tools and hooks), against a real Restate server: `replay:done`, a
//! parallel batch with tool state, `steer`, `suspend` and `abort`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::Notify;
use zidane_agent::AgentOptions;
use zidane_core::events::{AgentDone, ReplayDone};
use zidane_core::tool::{FnTool, ToolOutput, ToolSet};
use zidane_hooks::HookMap;
use zidane_provider::{AnthropicConfig, AnthropicProvider, Provider};
use zidane_restate::ZidaneAgent;

use crate::ONE_AT_A_TIME;
use crate::harness::{Reply, Restate, model, results};

/// Counts of what the in-process agents did.
#[derive(Default)]
struct Counts {
    replay_done: AtomicUsize,
    notes: AtomicUsize,
    looks: AtomicUsize,
    /// Taken by the first run that ends: it says so on the first `Notify`,
    /// then waits for the second before it ends.
    hold_end: Mutex<Option<(Arc<Notify>, Arc<Notify>)>>,
}

/// Serves `ZidaneAgent` in this process: the model at `url`, an unsafe
/// `note` tool that writes tool state and a safe, parallel `look` tool.
async fn serve(url: &str, counts: Arc<Counts>) -> String {
    let provider: Arc<dyn Provider> =
        Arc::new(AnthropicProvider::new(AnthropicConfig::new("sk-test").with_base_url(url)).unwrap());
    let object = ZidaneAgent::new(move |_session| {
        let (c1, c2, c3, c4) = (
            Arc::clone(&counts),
            Arc::clone(&counts),
            Arc::clone(&counts),
            Arc::clone(&counts),
        );
        let tools = ToolSet::new()
            .with(
                FnTool::new("note", "Writes a note", json!({"type": "object"}), move |_input, cx| {
                    let counts = Arc::clone(&c1);
                    async move {
                        counts.notes.fetch_add(1, Ordering::SeqCst);
                        cx.state().set(format!("note:{}", cx.call_id()), json!(true));
                        Ok(ToolOutput::text("noted"))
                    }
                })
                .parallel(),
            )
            .with(
                FnTool::new("look", "Looks", json!({"type": "object"}), move |_input, _cx| {
                    let counts = Arc::clone(&c2);
                    async move {
                        counts.looks.fetch_add(1, Ordering::SeqCst);
                        Ok(ToolOutput::text("looked"))
                    }
                })
                .parallel()
                .safe(),
            );
        Ok(AgentOptions {
            provider: vec![Arc::clone(&provider)],
            model: vec!["claude-sonnet-4-5".into()],
            tools,
            hooks: HookMap::new()
                .on_sync::<ReplayDone, _>(move |_ev, _cx| {
                    c3.replay_done.fetch_add(1, Ordering::SeqCst);
                    Ok(())
                })
                .on::<AgentDone, _>(move |_ev, _cx| {
                    let hold = c4.hold_end.lock().unwrap().take();
                    Box::pin(async move {
                        if let Some((reached, release)) = hold {
                            reached.notify_one();
                            release.notified().await;
                        }
                        Ok(())
                    })
                }),
            ..Default::default()
        })
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let uri = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(zidane_restate::serve(object, listener, std::future::pending::<()>()));
    uri
}

fn calls(ids: &[(&str, &str)]) -> String {
    let mut events = vec![(
        "message_start".to_owned(),
        json!({"type": "message_start", "message": {"id": "m", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 30, "output_tokens": 1}}}),
    )];
    for (i, (id, name)) in ids.iter().enumerate() {
        events.push((
            "content_block_start".to_owned(),
            json!({"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
        ));
        events.push((
            "content_block_delta".to_owned(),
            json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": "{}"}}),
        ));
        events.push((
            "content_block_stop".to_owned(),
            json!({"type": "content_block_stop", "index": i}),
        ));
    }
    events.push((
        "message_delta".to_owned(),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 10}}),
    ));
    events.push(("message_stop".to_owned(), json!({"type": "message_stop"})));
    events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}

/// A parallel batch writes tool state to K/V; a follow-up sent while the
/// next model call waits reaches the run, which answers it; `replay:done`
/// fires once, when the invocation's first step goes live.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follow_up_reaches_the_run_and_tool_state_lands_in_k_v() {
    let _one = ONE_AT_A_TIME.lock().await;
    let gate = Arc::new(Notify::new());
    let held = Arc::clone(&gate);
    let (url, bodies, mut arrived) = model(move |body, _| {
        if body.contains("Mention the weather too.") {
            Reply::Stream(crate::harness::answer("Noted, and it is sunny."))
        } else if results(body) == 0 {
            Reply::Stream(calls(&[("toolu_n", "note"), ("toolu_l", "look")]))
        } else {
            Reply::After(Arc::clone(&held), crate::harness::answer("Noted."))
        }
    })
    .await;
    let counts = Arc::new(Counts::default());
    let restate = Restate::start().await;
    let uri = serve(&url, Arc::clone(&counts)).await;
    restate.register(&uri).await;

    let id = restate.send("c1", "run", &json!({"prompt": "Take a note."}), &[]).await;
    assert_eq!(arrived.recv().await, Some(0));
    assert_eq!(arrived.recv().await, Some(1));
    let follow_up = restate
        .call("c1", "followUp", Some(&json!({"text": "Mention the weather too."})))
        .await;
    assert_eq!(follow_up.json(), json!({"delivered": true}));
    gate.notify_one();

    let output = restate.output(&id).await;
    assert_eq!(output["text"], "Noted, and it is sunny.", "{output}");
    assert_eq!(
        bodies.lock().unwrap().len(),
        3,
        "the follow-up asked the model once more"
    );
    assert_eq!(counts.notes.load(Ordering::SeqCst), 1);
    assert_eq!(counts.looks.load(Ordering::SeqCst), 1);
    assert_eq!(
        counts.replay_done.load(Ordering::SeqCst),
        1,
        "one invocation, live once"
    );
    let state = restate.call("c1", "toolState", None).await.json();
    assert_eq!(state, json!({"note:toolu_n": true}));
    // Nothing runs for a session without a run in flight.
    let late = restate.call("c1", "steer", Some(&json!({"text": "Hello?"}))).await;
    assert_eq!(late.json(), json!({"delivered": false}));
}

/// `suspend` stops the attempt without a trace in the journal: Restate runs
/// the invocation again, which replays the batch (no tool runs twice) and
/// asks the model call in flight again; `replay:done` fires once per
/// attempt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suspended_run_runs_again_from_its_journal() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (url, bodies, mut arrived) = model(move |body, index| match (results(body), index) {
        (0, _) => Reply::Stream(calls(&[("toolu_n", "note"), ("toolu_l", "look")])),
        (_, 1) => Reply::Hang,
        _ => Reply::Stream(crate::harness::answer("Done after the suspend.")),
    })
    .await;
    let counts = Arc::new(Counts::default());
    let restate = Restate::start().await;
    let uri = serve(&url, Arc::clone(&counts)).await;
    restate.register(&uri).await;

    let id = restate.send("c2", "run", &json!({"prompt": "Take a note."}), &[]).await;
    assert_eq!(arrived.recv().await, Some(0));
    assert_eq!(arrived.recv().await, Some(1));
    let suspended = restate.call("c2", "suspend", None).await;
    assert_eq!(suspended.json(), json!({"delivered": true}));

    let output = restate.output(&id).await;
    assert_eq!(output["text"], "Done after the suspend.", "{output}");
    assert!(output["journal"]["replayed"].as_u64().unwrap() > 0, "{output}");
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 3);
    assert_eq!(bodies[1], bodies[2], "the model call in flight is asked again");
    assert_eq!(
        counts.notes.load(Ordering::SeqCst),
        1,
        "the batch was replayed, not run"
    );
    assert_eq!(counts.looks.load(Ordering::SeqCst), 1);
    assert_eq!(counts.replay_done.load(Ordering::SeqCst), 2, "once per attempt");
    let turns = restate.call("c2", "turns", None).await.json();
    assert_eq!(turns.as_array().unwrap().len(), 4, "each turn once: {turns}");
}

/// `abort` ends the run in flight as aborted; the invocation completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_aborted_run_ends_as_aborted() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (url, _bodies, mut arrived) = model(move |_, _| Reply::Hang).await;
    let counts = Arc::new(Counts::default());
    let restate = Restate::start().await;
    let uri = serve(&url, Arc::clone(&counts)).await;
    restate.register(&uri).await;

    let id = restate
        .send("c3", "run", &json!({"prompt": "Think forever."}), &[])
        .await;
    assert_eq!(arrived.recv().await, Some(0));
    let aborted = restate
        .call("c3", "abort", Some(&json!({"reason": "the person stopped it"})))
        .await;
    assert_eq!(aborted.json(), json!({"delivered": true}));
    let output: Value = restate.output(&id).await;
    assert_eq!(output["stats"]["status"], "aborted", "{output}");
}

/// A control message is journaled: after a suspend, the new attempt is
/// handed the same follow-up at the same place and the run answers it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follow_up_survives_a_suspend() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (url, bodies, mut arrived) = model(move |body, index| {
        if body.contains("Say goodbye too.") {
            Reply::Stream(crate::harness::answer("Goodbye."))
        } else if results(body) == 0 {
            Reply::Stream(calls(&[("toolu_n", "note"), ("toolu_l", "look")]))
        } else if index == 1 {
            Reply::Hang
        } else {
            Reply::Stream(crate::harness::answer("Noted."))
        }
    })
    .await;
    let counts = Arc::new(Counts::default());
    let restate = Restate::start().await;
    let uri = serve(&url, Arc::clone(&counts)).await;
    restate.register(&uri).await;

    let id = restate.send("c4", "run", &json!({"prompt": "Take a note."}), &[]).await;
    assert_eq!(arrived.recv().await, Some(0));
    assert_eq!(arrived.recv().await, Some(1));
    let follow_up = restate
        .call("c4", "followUp", Some(&json!({"text": "Say goodbye too."})))
        .await;
    assert_eq!(follow_up.json(), json!({"delivered": true}));
    let suspended = restate.call("c4", "suspend", None).await;
    assert_eq!(suspended.json(), json!({"delivered": true}));

    let output = restate.output(&id).await;
    assert_eq!(output["text"], "Goodbye.", "{output}");
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 4, "the call in flight asked again, then the follow-up");
    assert!(bodies[3].contains("Say goodbye too."));
    assert_eq!(counts.notes.load(Ordering::SeqCst), 1);
}

/// An attempt whose journal holds every step replays to its end without
/// going live: no model request, no tool body, no `replay:done`; and it
/// reads the entries after the run's last step (a late control message)
/// before it answers, which Restate otherwise refuses.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_to_the_journals_end_never_goes_live() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (url, bodies, _arrived) = model(move |body, _| {
        if results(body) == 0 {
            Reply::Stream(calls(&[("toolu_l", "look")]))
        } else {
            Reply::Stream(crate::harness::answer("Looked."))
        }
    })
    .await;
    let counts = Arc::new(Counts::default());
    let (reached, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    *counts.hold_end.lock().unwrap() = Some((Arc::clone(&reached), Arc::clone(&release)));
    let restate = Restate::start().await;
    let uri = serve(&url, Arc::clone(&counts)).await;
    restate.register(&uri).await;

    let id = restate.send("c5", "run", &json!({"prompt": "Look."}), &[]).await;
    // Every step is journaled; the run is ending. A follow-up now is
    // journaled after the run's last step and refused (the run has no turn
    // left to read it in: it is not "delivered"), and a suspend makes
    // Restate run the invocation again from that journal: the new attempt
    // must read it to its end before it may answer.
    reached.notified().await;
    let late = restate
        .call("c5", "followUp", Some(&json!({"text": "Too late."})))
        .await;
    assert_eq!(late.json(), json!({"delivered": false}), "no turn will read it");
    let suspended = restate.call("c5", "suspend", None).await;
    assert_eq!(suspended.json(), json!({"delivered": true}));
    release.notify_one();

    let output = restate.output(&id).await;
    assert_eq!(output["text"], "Looked.", "{output}");
    assert_eq!(
        output["journal"]["written"], 1,
        "the second attempt wrote only the marker that found the journal's end: {output}"
    );
    assert_eq!(
        bodies.lock().unwrap().len(),
        2,
        "no model request on the second attempt"
    );
    assert_eq!(counts.looks.load(Ordering::SeqCst), 1);
    assert_eq!(
        counts.replay_done.load(Ordering::SeqCst),
        1,
        "the first attempt went live, the second never did"
    );
}

/// A steer sent twice with one id (a client retrying) is taken once: both
/// answers say it was delivered, the model reads it once; sent again after
/// the run ended, it is still answered as taken, while a new message is
/// not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_sent_again_with_its_id_is_taken_once() {
    let _one = ONE_AT_A_TIME.lock().await;
    let gate = Arc::new(Notify::new());
    let held = Arc::clone(&gate);
    let (url, bodies, mut arrived) = model(move |body, _| {
        if body.contains("Look closer.") {
            Reply::Stream(crate::harness::answer("Looked closer."))
        } else if results(body) == 0 {
            Reply::Stream(calls(&[("toolu_l", "look")]))
        } else {
            Reply::After(Arc::clone(&held), crate::harness::answer("Looked."))
        }
    })
    .await;
    let counts = Arc::new(Counts::default());
    let restate = Restate::start().await;
    let uri = serve(&url, Arc::clone(&counts)).await;
    restate.register(&uri).await;

    // The steers come while the model writes what would be its last answer:
    // the run goes on for them.
    let id = restate.send("c6", "run", &json!({"prompt": "Look."}), &[]).await;
    assert_eq!(arrived.recv().await, Some(0));
    assert_eq!(arrived.recv().await, Some(1));
    let steer = json!({"text": "Look closer.", "id": "steer-7"});
    let first = restate.call("c6", "steer", Some(&steer)).await;
    assert_eq!(first.json(), json!({"delivered": true}));
    let again = restate.call("c6", "steer", Some(&steer)).await;
    assert_eq!(
        again.json(),
        json!({"delivered": true}),
        "the retry is answered as the first"
    );
    gate.notify_one();
    let output = restate.output(&id).await;
    assert_eq!(output["text"], "Looked closer.", "{output}");
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 3);
    let last = bodies.last().unwrap();
    assert_eq!(last.matches("Look closer.").count(), 1, "read once: {last}");

    let after = restate.call("c6", "steer", Some(&steer)).await;
    assert_eq!(
        after.json(),
        json!({"delivered": true}),
        "still answered from the session"
    );
    let other = restate
        .call("c6", "steer", Some(&json!({"text": "And now?", "id": "steer-8"})))
        .await;
    assert_eq!(other.json(), json!({"delivered": false}));
}
