//! `zidane-restate` against a real Restate server (installed pinned by
//! `cargo xtask restate-server`): runs through the ingress, `kill -9` of
//! the service and of the server mid-run, and runs of one session queued.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod background;
mod controls;
mod decisions;
mod example;
mod goals;
mod harness;
mod identity;
mod replicas;
mod schedules;
mod spawn;

use std::sync::Arc;
use std::time::Duration;

use harness::{Reply, Restate, Service, answer, call_with, http, model, results, shell_call};
use serde_json::{Value, json};
use tokio::sync::Notify;

/// One Restate server at a time: each test starts its own, and two at once
/// would only compete for the machine's two cores.
pub(crate) static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The turns `turns` answers with, as (role, first block's type).
fn shape(turns: &Value) -> Vec<(String, String)> {
    turns
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["role"].as_str().unwrap().to_owned(),
                t["content"][0]["type"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// The tool result for `id` in a request body.
fn result_of(body: &str, id: &str) -> Value {
    let sent: Value = serde_json::from_str(body).unwrap();
    sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|b| b["type"] == "tool_result" && b["tool_use_id"] == id)
        .unwrap_or_else(|| panic!("no result for {id} in {body}"))
}

/// A two-turn tool run completes through the ingress; while its second
/// model call is held, the shared `turns` handler reads the turns written
/// so far.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_run_completes_and_its_turns_are_readable_mid_run() {
    let _one = ONE_AT_A_TIME.lock().await;
    let gate = Arc::new(Notify::new());
    let held = Arc::clone(&gate);
    let (url, bodies, mut arrived) = model(move |body, _| match results(body) {
        0 => Reply::Stream(shell_call("toolu_a", "echo ran >> effects.log")),
        _ => Reply::After(Arc::clone(&held), answer("All done.")),
    })
    .await;
    let restate = Restate::start().await;
    let service = Service::start(&url).await;
    restate.register(&service.uri).await;
    // A model stream or a tool call writes nothing to the journal until it
    // ends: `run` is registered with a long inactivity timeout.
    let registered = http("GET", &format!("{}/services/ZidaneAgent", restate.admin), &[], None)
        .await
        .unwrap()
        .json();
    let run = registered["handlers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["name"] == "run")
        .unwrap();
    assert_eq!(run["inactivity_timeout"], "30m", "{run}");
    assert_eq!(registered["retry_policy"]["initial_interval"], "100ms", "{registered}");

    let id = restate.send("s1", "run", &json!({"prompt": "Log a line."}), &[]).await;
    assert_eq!(arrived.recv().await, Some(0));
    assert_eq!(arrived.recv().await, Some(1));
    // The turns of the run so far, read while it waits for the model (their
    // K/V writes reach Restate as the journal's driver awaits its inbox).
    // The model stays held until they are read.
    let so_far = [
        ("user".to_owned(), "text".to_owned()),
        ("assistant".to_owned(), "tool_use".to_owned()),
        ("user".to_owned(), "tool_result".to_owned()),
    ];
    harness::until("the turns written so far", Duration::from_secs(10), || {
        let (restate, so_far) = (&restate, &so_far);
        async move {
            let turns = restate.call("s1", "turns", None).await;
            assert_eq!(turns.status, 200, "{turns:?}");
            shape(&turns.json()) == *so_far
        }
    })
    .await;
    gate.notify_one();

    let output = restate.output(&id).await;
    assert_eq!(output["text"], "All done.");
    assert_eq!(output["stats"]["status"], "completed");
    assert_eq!(output["stats"]["toolCalls"], 1);
    assert_eq!(output["journal"]["replayed"], 0, "one attempt: nothing replayed");
    // The probe that finds the journal empty; the prompt's checkpoint with
    // its turn; the tool turn in two: the model's value with the folder
    // checkpoint and the command's dispatch marker, then the command's
    // value with the turns (readable above with no marker entry after
    // them); the answer's value with its turn; the end's decision and
    // checkpoint.
    assert_eq!(output["journal"]["written"], 6, "{output}");
    assert_eq!(bodies.lock().unwrap().len(), 2);
    assert_eq!(service.lines("s1", "effects.log"), 1);
    let turns = restate.call("s1", "turns", None).await.json();
    assert_eq!(turns.as_array().unwrap().len(), 4, "prompt, call, result, answer");
}

/// A real Restate server and the program (with `args`, against the model
/// at `url`) whose session `session` has `notes.txt` in its folder; the
/// output of a run asked to read it.
async fn run_reading_notes(url: &str, args: &[&str], session: &str) -> (Restate, Service, Value) {
    let restate = Restate::start().await;
    let service = Service::start_program(url, args).await;
    restate.register(&service.uri).await;
    std::fs::create_dir_all(service.folder(session)).unwrap();
    std::fs::write(service.folder(session).join("notes.txt"), "a note to read\n").unwrap();
    let id = restate
        .send(session, "run", &json!({"prompt": "Read the notes."}), &[])
        .await;
    let output = restate.output(&id).await;
    (restate, service, output)
}

/// A turn whose calls are safe to repeat is one journal entry: the model's
/// value waits through the call and travels with the call's value and the
/// turns (no entry of its own before the call, no marker after the turns).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_of_safe_calls_is_one_journal_entry() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (url, bodies, _arrived) = model(move |body, _| match results(body) {
        0 => Reply::Stream(call_with("toolu_r", "read_file", &json!({"path": "notes.txt"}))),
        _ => Reply::Stream(answer("Read.")),
    })
    .await;
    let (restate, _service, output) = run_reading_notes(&url, &[], "s9").await;
    assert_eq!(output["stats"]["status"], "completed", "{output}");
    assert_eq!(output["stats"]["toolCalls"], 1);
    // The probe; the prompt's checkpoint with its turn; the tool turn in one
    // (the model's value, the folder checkpoint, the call's value, the
    // turns); the answer's value with its turn; the end's decision and
    // checkpoint.
    assert_eq!(output["journal"]["written"], 5, "{output}");
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 2);
    let read = result_of(&bodies[1], "toolu_r");
    assert!(read.to_string().contains("a note to read"), "{read}");
    let turns = restate.call("s9", "turns", None).await.json();
    assert_eq!(turns.as_array().unwrap().len(), 4, "prompt, call, result, answer");
    assert!(turns[2].to_string().contains("a note to read"), "{turns}");
}

/// The program summarizes older turns when a request nears the window
/// `--context-window` gives (a local model's is far below the provider's
/// table): after four reads, an answer reports 900 input tokens of a
/// 1,000-token window, so the next request is preceded by one summary
/// request, and the run goes on with the summary in its transcript.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_program_compacts_a_run_near_its_context_window() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (url, bodies, _arrived) = model(move |body, _| {
        let read = results(body);
        if body.contains(decisions::SUMMARY) {
            Reply::Stream(answer("SUMMARY-OF-THE-NOTES"))
        } else if read < 4 && !body.contains("SUMMARY-OF-THE-NOTES") {
            let call = call_with(&format!("toolu_{read}"), "read_file", &json!({"path": "notes.txt"}));
            Reply::Stream(harness::with_input(&call, if read == 3 { 900 } else { 100 }))
        } else {
            Reply::Stream(answer("Done."))
        }
    })
    .await;
    let (_restate, _service, output) = run_reading_notes(&url, &["--context-window", "1000"], "w1").await;
    assert_eq!(output["text"], "Done.", "{output}");
    let bodies = bodies.lock().unwrap().clone();
    let summaries = bodies.iter().filter(|b| b.contains(decisions::SUMMARY)).count();
    assert_eq!(summaries, 1, "one summary request: {bodies:#?}");
    let last = bodies.last().unwrap();
    assert!(
        last.contains("SUMMARY-OF-THE-NOTES"),
        "the run goes on from the summary: {last}"
    );
}

/// An OpenAI-format stream whose answer is `text`.
fn openai_answer(text: &str) -> String {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let events = [
        chunk(json!({"role": "assistant", "content": text}), Value::Null),
        chunk(json!({}), json!("stop")),
    ];
    events.iter().map(|e| format!("data: {e}\n\n")).collect::<String>() + "data: [DONE]\n\n"
}

/// `--provider openai-compatible`: a server that cannot parse the tool call
/// its model wrote (llama.cpp's 500) gets the request again with the tools
/// described in the prompt; the call written in the text runs, and its
/// result reaches the model in the text too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_program_falls_back_to_tool_calls_in_the_text_when_a_compatible_server_cannot_parse_one() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (url, bodies, _arrived) = model(move |body, _| {
        if body.contains("\"tools\"") {
            Reply::Status(
                500,
                r#"{"error":{"code":500,"message":"The model produced output that does not match the expected peg-native format","type":"server_error"}}"#.into(),
            )
        } else if body.contains("a note to read") {
            Reply::Stream(openai_answer("Read."))
        } else {
            Reply::Stream(openai_answer(
                r#"<tool_call>{"name": "read_file", "arguments": {"path": "notes.txt"}}</tool_call>"#,
            ))
        }
    })
    .await;
    let (_restate, _service, output) =
        run_reading_notes(&url, &["--provider", "openai-compatible", "--model", "qwen"], "c1").await;
    assert_eq!(output["text"], "Read.", "{output}");
    assert_eq!(output["stats"]["toolCalls"], 1, "{output}");
    let bodies = bodies.lock().unwrap().clone();
    assert!(
        bodies[0].contains("\"tools\""),
        "the first request offers the tools: {}",
        bodies[0]
    );
    assert!(
        bodies[1..]
            .iter()
            .all(|b| !b.contains("\"tools\"") && b.contains("read_file")),
        "later ones describe them in the prompt: {bodies:#?}"
    );
}

/// `kill -9` of the service during a model call, then during a tool call:
/// each time the restarted service replays the journal. Finished steps do
/// not run again (the model sees no repeated request but the one in flight,
/// the first command ran once), and the command in flight is reported
/// interrupted instead of running twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_killed_mid_model_call_and_mid_tool_call_finishes_the_run() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (url, bodies, mut arrived) = model(move |body, index| match (results(body), index) {
        (0, _) => Reply::Stream(shell_call("toolu_a", "echo ran >> effects.log")),
        // The second model call: the first attempt hangs (the service is
        // killed in it), the retry answers with a long command.
        (1, 1) => Reply::Hang,
        (1, _) => Reply::Stream(shell_call(
            "toolu_b",
            "echo long >> long.log; mkfifo started.fifo 2>/dev/null; echo started > started.fifo; sleep 30",
        )),
        _ => Reply::Stream(answer("Finished after two crashes.")),
    })
    .await;
    let restate = Restate::start().await;
    let mut service = Service::start(&url).await;
    restate.register(&service.uri).await;
    std::fs::create_dir_all(service.folder("s2")).unwrap();

    let id = restate
        .send("s2", "run", &json!({"prompt": "Run both commands."}), &[])
        .await;
    assert_eq!(arrived.recv().await, Some(0));
    assert_eq!(arrived.recv().await, Some(1));
    // In the second model call.
    service.kill().await;
    service.restart().await;
    assert_eq!(arrived.recv().await, Some(2), "the model call in flight is asked again");

    // In the long command: it has started once it writes to the FIFO.
    let fifo = service.folder("s2").join("started.fifo");
    let started = harness::started_at("the long command", fifo, Duration::from_secs(30)).await;
    assert_eq!(started, "started");
    service.kill().await;
    service.restart().await;

    let output = restate.output(&id).await;
    assert_eq!(output["text"], "Finished after two crashes.", "{output}");
    assert_eq!(output["stats"]["status"], "completed");
    assert!(output["journal"]["replayed"].as_u64().unwrap() > 0, "{output}");

    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(
        bodies.len(),
        4,
        "first call, the call in flight at the first kill and its retry, the call after the interrupted command"
    );
    assert_eq!(bodies[1], bodies[2], "the retry asks the same question");
    assert_eq!(service.lines("s2", "effects.log"), 1, "the finished command ran once");
    assert_eq!(service.lines("s2", "long.log"), 1, "the command in flight ran once");
    let first = result_of(&bodies[3], "toolu_a");
    assert_ne!(first["is_error"], true, "{first}");
    let interrupted = result_of(&bodies[3], "toolu_b");
    assert_eq!(interrupted["is_error"], true, "{interrupted}");
    assert!(
        interrupted["content"].to_string().contains("interrupted"),
        "{interrupted}"
    );

    // The session as the replays wrote it: each answer's content comes from
    // its model step's entry (a turns entry refers to it).
    let turns = restate.call("s2", "turns", None).await.json();
    let pairs = |role: &str, kind: &str| (role.to_owned(), kind.to_owned());
    assert_eq!(
        shape(&turns),
        [
            pairs("user", "text"),
            pairs("assistant", "tool_use"),
            pairs("user", "tool_result"),
            pairs("assistant", "tool_use"),
            pairs("user", "tool_result"),
            pairs("assistant", "text"),
        ],
        "{turns}"
    );
    assert_eq!(turns[5]["content"][0]["text"], "Finished after two crashes.");

    // The folder checkpoints are journaled steps kept in the object's
    // state: the two replays took none of them again.
    let checkpoints = restate.call("s2", "checkpoints", None).await;
    assert_eq!(checkpoints.status, 200, "{checkpoints:?}");
    let snapshots = checkpoints.json();
    let taken: Vec<(String, u64)> = snapshots
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["kind"].as_str().unwrap().to_owned(), s["step"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        taken,
        [
            ("prompt".to_owned(), 0),
            ("tool".to_owned(), 1),
            ("tool".to_owned(), 2),
            ("end".to_owned(), 6),
        ],
        "{snapshots}"
    );
    // Each records the folder as it was: nothing, then the first command's
    // file, then both files.
    let manifests: Vec<&str> = snapshots
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["manifest"].as_str().unwrap())
        .collect();
    assert_eq!(manifests[0], manifests[1], "no file before the first batch");
    assert_ne!(manifests[1], manifests[2], "effects.log before the second batch");
    assert_ne!(manifests[2], manifests[3], "long.log by the end");
    let ids: Vec<u64> = snapshots
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [1, 2, 3, 4]);
}

/// `kill -9` of the Restate server during a model call: restarted on its
/// data, it invokes the service again, which replays the journal; the
/// finished command does not run again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restate_server_killed_mid_run_finishes_the_run() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (url, bodies, mut arrived) = model(move |body, index| match (results(body), index) {
        (0, _) => Reply::Stream(shell_call("toolu_a", "echo ran >> effects.log")),
        (1, 1) => Reply::Hang,
        _ => Reply::Stream(answer("Finished after the server came back.")),
    })
    .await;
    let mut restate = Restate::start().await;
    let service = Service::start(&url).await;
    restate.register(&service.uri).await;

    let id = restate.send("s3", "run", &json!({"prompt": "Log a line."}), &[]).await;
    assert_eq!(arrived.recv().await, Some(0));
    assert_eq!(arrived.recv().await, Some(1));
    let before = restate.pid();
    restate.kill().await;
    restate.restart().await;
    assert_ne!(restate.pid(), before, "a fresh server process, on the same data");

    let output = restate.output(&id).await;
    assert_eq!(
        output["text"],
        "Finished after the server came back.",
        "{output}\n{}",
        restate.log()
    );
    assert!(output["journal"]["replayed"].as_u64().unwrap() > 0, "{output}");
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 3, "the call in flight is asked again, nothing before it");
    assert_eq!(bodies[1], bodies[2]);
    assert_eq!(service.lines("s3", "effects.log"), 1, "the finished command ran once");
}

/// Two runs sent to one session run one after the other, the second on the
/// first's turns; a run sent twice with one idempotency key runs once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_of_one_session_queue_and_an_idempotency_key_starts_one_run() {
    let _one = ONE_AT_A_TIME.lock().await;
    let gate = Arc::new(Notify::new());
    let held = Arc::clone(&gate);
    let (url, bodies, mut arrived) = model(move |body, _| {
        if body.contains("Third") {
            Reply::Stream(answer("third answer"))
        } else if body.contains("Second") {
            Reply::Stream(answer("second answer"))
        } else {
            Reply::After(Arc::clone(&held), answer("first answer"))
        }
    })
    .await;
    let restate = Restate::start().await;
    let service = Service::start(&url).await;
    restate.register(&service.uri).await;

    let first = restate
        .send("s4", "run", &json!({"prompt": "First question."}), &[])
        .await;
    assert_eq!(arrived.recv().await, Some(0));
    let second = restate
        .send("s4", "run", &json!({"prompt": "Second question."}), &[])
        .await;
    // The second waits behind the first (one exclusive handler per key): the
    // model hears nothing of it until the first is answered.
    gate.notify_one();
    assert_eq!(restate.output(&first).await["text"], "first answer");
    assert_eq!(restate.output(&second).await["text"], "second answer");
    let bodies_now = bodies.lock().unwrap().clone();
    assert_eq!(bodies_now.len(), 2);
    let sent: Value = serde_json::from_str(&bodies_now[1]).unwrap();
    let texts: Vec<String> = sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"][0]["text"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        texts,
        ["First question.", "first answer", "Second question."],
        "the second run continues the first's conversation"
    );

    let key = [("idempotency-key", "third-once")];
    let a = restate
        .send("s4", "run", &json!({"prompt": "Third question."}), &key)
        .await;
    let b = restate
        .send("s4", "run", &json!({"prompt": "Third question."}), &key)
        .await;
    assert_eq!(a, b, "one invocation for one idempotency key");
    assert_eq!(restate.output(&a).await["text"], "third answer");
    assert_eq!(bodies.lock().unwrap().len(), 3, "the third run ran once");
    let turns = restate.call("s4", "turns", None).await.json();
    assert_eq!(turns.as_array().unwrap().len(), 6);
}

/// A malformed request is refused naming the problem; a provider error no
/// retry can cure (a 400) ends the invocation with a terminal failure naming
/// it, instead of Restate retrying it forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_the_provider_refuses_fails_the_invocation_for_good() {
    let _one = ONE_AT_A_TIME.lock().await;
    let refusal = json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long"}});
    let (url, bodies, _arrived) = model(move |_, _| Reply::Status(400, refusal.to_string())).await;
    let restate = Restate::start().await;
    let service = Service::start(&url).await;
    restate.register(&service.uri).await;

    // A request that is not a run request is refused at once, naming why.
    let malformed = restate.call("s5", "run", Some(&json!({"promt": "Hello."}))).await;
    assert_eq!(malformed.status, 400, "{malformed:?}");
    assert!(malformed.body.contains("missing field `prompt`"), "{malformed:?}");
    let garbled = restate.call("s5", "steer", Some(&json!(42))).await;
    assert_eq!(garbled.status, 400, "{garbled:?}");
    assert!(bodies.lock().unwrap().is_empty(), "nothing reached the model");

    let id = restate.send("s5", "run", &json!({"prompt": "Hello."}), &[]).await;
    let ended = restate.ended(&id).await;
    assert_eq!(ended.status, 500, "{ended:?}");
    assert!(
        ended.body.contains("prompt is too long"),
        "the failure names the provider's reason: {ended:?}"
    );
    assert_eq!(
        bodies.lock().unwrap().len(),
        1,
        "asked once: no retry of the step, none of the invocation"
    );
}

/// The program's own errors: an unknown flag, and no provider key.
#[tokio::test]
async fn the_program_refuses_bad_flags_and_a_missing_key() {
    let unknown = tokio::process::Command::new(env!("CARGO_BIN_EXE_zidane-restate"))
        .arg("--bogus")
        .output()
        .await
        .unwrap();
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("unknown option `--bogus`"));
    let keyless = tokio::process::Command::new(env!("CARGO_BIN_EXE_zidane-restate"))
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .output()
        .await
        .unwrap();
    assert_eq!(keyless.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&keyless.stderr).contains("no provider is configured"));
    let bad_ingress = tokio::process::Command::new(env!("CARGO_BIN_EXE_zidane-restate"))
        .args(["--ingress", "localhost:8080"])
        .env("ANTHROPIC_API_KEY", "sk-test")
        .output()
        .await
        .unwrap();
    assert_eq!(bad_ingress.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad_ingress.stderr)
            .contains("--ingress: `localhost:8080` is not a URL like http://127.0.0.1:8080")
    );
}
