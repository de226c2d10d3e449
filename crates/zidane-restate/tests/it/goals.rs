//! A goal on Restate: the run goes on past the model's answer until the
//! goal's check passes, and a `kill -9` of the service during a check
//! loses nothing — the finished check is not run again on the replay, the
//! one cut off runs again once, and the counts are exact.

use std::time::Duration;

use serde_json::json;

use super::ONE_AT_A_TIME;
use super::harness::{self, Reply, Restate, Service, answer, model, results, shell_call};

/// The check: the first fails at once, the second waits on a FIFO (the
/// service is killed there), the third (the second run again) passes.
const CHECK: &str = "echo c >> checks.log; n=$(wc -l < checks.log); \
    if [ \"$n\" -ge 3 ]; then exit 0; fi; \
    if [ \"$n\" -eq 2 ]; then mkfifo check.fifo 2>/dev/null; echo started > check.fifo; sleep 30; fi; \
    echo 'not yet'; exit 1";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_goal_goes_on_until_its_check_passes_through_a_service_kill_mid_check() {
    let _one = ONE_AT_A_TIME.lock().await;
    // Each prompt or follow-up: one edit, then an answer.
    let (url, bodies, _arrived) = model(move |body, _| {
        let last_is_result = body
            .rsplit("\"role\"")
            .next()
            .is_some_and(|last| last.contains("tool_result"));
        if last_is_result {
            Reply::Stream(answer("Edited."))
        } else {
            Reply::Stream(shell_call(
                &format!("toolu_{}", results(body)),
                "echo edit >> edits.log",
            ))
        }
    })
    .await;
    let restate = Restate::start().await;
    let mut service = Service::start(&url).await;
    restate.register(&service.uri).await;
    std::fs::create_dir_all(service.folder("g1")).unwrap();

    let request = json!({
        "prompt": "Make the checks pass.",
        "goal": {
            "condition": "the checks pass",
            "check": {"kind": "command", "command": CHECK},
        },
    });
    let id = restate.send("g1", "run", &request, &[]).await;

    // In the second check: it has started once it writes to the FIFO.
    let fifo = service.folder("g1").join("check.fifo");
    let started = harness::started_at("the second check", fifo, Duration::from_secs(60)).await;
    assert_eq!(started, "started");
    service.kill().await;
    service.restart().await;

    let output = restate.output(&id).await;
    assert_eq!(output["stats"]["status"], "completed", "{output}");
    let goal = &output["goal"];
    assert_eq!(goal["status"], "met", "{output}");
    let verdicts = goal["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 2, "{goal}");
    assert_eq!(verdicts[0]["met"], false);
    assert!(verdicts[0]["reason"].as_str().unwrap().contains("not yet"), "{goal}");
    assert_eq!(verdicts[1]["met"], true);
    assert!(output["journal"]["replayed"].as_u64().unwrap() > 0, "{output}");

    // The first check ran once (its verdict came from the journal on the
    // replay), the one cut off ran again once; each edit ran once.
    assert_eq!(service.lines("g1", "checks.log"), 3);
    assert_eq!(service.lines("g1", "edits.log"), 2);
    assert_eq!(
        bodies.lock().unwrap().len(),
        4,
        "two edits and two answers, none asked again"
    );

    // A later run with the goal met has nothing to pursue: it ends at the
    // model's answer.
    let again = restate
        .call("g1", "run", Some(&json!({"prompt": "Anything else?"})))
        .await
        .json();
    assert_eq!(again["goal"]["status"], "met", "{again}");
    assert_eq!(service.lines("g1", "checks.log"), 3, "no check for a met goal");
}
