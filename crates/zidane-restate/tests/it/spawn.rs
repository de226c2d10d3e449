//! Sub-agents as their own invocations (`zidane-restate --ingress`): a
//! child in flight when the service dies resumes in its own invocation.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use serde_json::json;

use crate::ONE_AT_A_TIME;
use crate::harness::{Reply, Restate, Service, answer, call_with, model, results, shell_call};

/// The parent's model: a `spawn` of `task` (as call `toolu_spawn`), then
/// `done` once the child answered.
fn parent(body: &str, task: &str, done: &str) -> Reply {
    if results(body) == 0 {
        return Reply::Stream(call_with("toolu_spawn", "spawn", &json!({ "task": task })));
    }
    Reply::Stream(answer(done))
}

/// The child's session, as the parent's model read it in its spawn call's
/// result (`[sub-agent <session>: …]`).
fn child_key(body: &str) -> String {
    let at = body.find("[sub-agent ").expect("a spawn result") + "[sub-agent ".len();
    let rest = &body[at..];
    rest[..rest.find(": ").unwrap()].to_owned()
}

/// A session key as one path segment of the ingress's URL.
fn encoded(key: &str) -> String {
    key.replace('/', "%2F").replace('@', "%40")
}

/// A session's folder under the program's `--workspace`.
fn folder(key: &str) -> String {
    key.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A Restate server and the program serving on it, told the ingress (so
/// `spawn` starts each child as its own invocation).
async fn with_ingress(model: &str) -> (Restate, Service) {
    let restate = Restate::start().await;
    let service = Service::start_program(model, &["--ingress", &restate.ingress]).await;
    restate.register(&service.uri).await;
    (restate, service)
}

/// The parent spawns a child; the child runs a command, then the service
/// is killed (`kill -9`) in the child's next model call. After the restart
/// the parent's replay sends the same spawn (the same child invocation, by
/// its idempotency key), the child replays its command instead of running
/// it again, the model call in flight is asked again, and the parent gets
/// the child's answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_in_flight_at_a_crash_resumes_in_its_own_invocation() {
    let _one = ONE_AT_A_TIME.lock().await;
    static CHILD_CALLS: AtomicUsize = AtomicUsize::new(0);
    let (url, bodies, mut arrived) = model(move |body, _| {
        if body.contains("Child task: log and count.") && !body.contains("Delegate it.") {
            return match (results(body), CHILD_CALLS.fetch_add(1, Ordering::SeqCst)) {
                (0, _) => Reply::Stream(shell_call("toolu_c", "echo child >> child.log")),
                (_, 1) => Reply::Hang,
                _ => Reply::Stream(answer("one two three")),
            };
        }
        parent(body, "Child task: log and count.", "The child counted.")
    })
    .await;
    let (restate, mut service) = with_ingress(&url).await;

    let id = restate.send("p1", "run", &json!({"prompt": "Delegate it."}), &[]).await;
    // The parent's call, the child's two.
    for expected in 0..3 {
        assert_eq!(arrived.recv().await, Some(expected));
    }
    service.kill().await;
    service.restart().await;

    let output = restate.output(&id).await;
    assert_eq!(output["text"], "The child counted.", "{output}");
    let bodies = bodies.lock().unwrap().clone();
    let parent_calls = bodies.iter().filter(|b| b.contains("Delegate it.")).count();
    assert_eq!(parent_calls, 2, "the parent's first call is not asked again");
    assert_eq!(
        CHILD_CALLS.load(Ordering::SeqCst),
        3,
        "the child's calls: the command, the call in flight, its retry"
    );
    let last = bodies.last().unwrap();
    assert!(
        last.contains("one two three") && !last.contains("interrupted"),
        "{last}"
    );
    let key = child_key(last);
    assert!(key.starts_with("p1/spawn-toolu_spawn@"), "{key}");
    let logged = service.lines(&folder(&key), "child.log") + service.lines("p1", "child.log");
    assert_eq!(logged, 1, "the child's command ran once");
    let child = restate.call(&encoded(&key), "turns", None).await.json();
    assert_eq!(
        child.as_array().map(Vec::len),
        Some(4),
        "the child's own session: {child}"
    );
}

/// The service killed (`kill -9`) the moment a child asks its model for the
/// first time, with the parent's spawning call in flight: the parent's
/// replay does not ask its own model again (the answer that named the call
/// was journaled before the child started), sends the same spawn, finds the
/// same child, whose call in flight is asked again, and gets its answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parent_killed_as_its_child_starts_does_not_ask_its_model_again() {
    let _one = ONE_AT_A_TIME.lock().await;
    static CHILD_CALLS: AtomicUsize = AtomicUsize::new(0);
    static SERVICE: AtomicU32 = AtomicU32::new(0);
    let (url, bodies, mut arrived) = model(move |body, _| {
        if body.contains("Child task: answer.") && !body.contains("Delegate at once.") {
            return match CHILD_CALLS.fetch_add(1, Ordering::SeqCst) {
                0 => {
                    let pid = SERVICE.load(Ordering::SeqCst).to_string();
                    let killed = std::process::Command::new("kill").args(["-9", &pid]).status();
                    assert!(killed.is_ok_and(|s| s.success()), "kill -9 {pid}");
                    Reply::Hang
                }
                _ => Reply::Stream(answer("forty-two")),
            };
        }
        parent(body, "Child task: answer.", "The child answered.")
    })
    .await;
    let (restate, mut service) = with_ingress(&url).await;
    SERVICE.store(service.pid().unwrap(), Ordering::SeqCst);

    let id = restate
        .send("p2", "run", &json!({"prompt": "Delegate at once."}), &[])
        .await;
    // The parent's call, then the child's first, where the service died.
    assert_eq!(arrived.recv().await, Some(0));
    assert_eq!(arrived.recv().await, Some(1));
    service.kill().await;
    service.restart().await;

    let output = restate.output(&id).await;
    assert_eq!(output["text"], "The child answered.", "{output}");
    let bodies = bodies.lock().unwrap().clone();
    let parent_calls = bodies.iter().filter(|b| b.contains("Delegate at once.")).count();
    assert_eq!(
        parent_calls, 2,
        "the parent's first call is not asked again: {bodies:?}"
    );
    assert_eq!(
        CHILD_CALLS.load(Ordering::SeqCst),
        2,
        "the child's call in flight, asked again"
    );
}

/// Two runs of one session whose model names its spawn calls alike (as a
/// server numbering calls per process does), with the service restarted
/// between them: the second run's call starts a child of its own, with its
/// own task, instead of getting the first run's child's answer back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_run_with_the_same_call_id_gets_a_child_of_its_own() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (url, bodies, _arrived) = model(move |body, _| {
        for n in ["one", "two"] {
            let task = format!("Child task {n}.");
            if body.contains(&task) && !body.contains("Delegate") {
                return Reply::Stream(answer(&format!("Child answer {n}.")));
            }
        }
        // The parent: the last message is its prompt, or the spawn's result.
        let request: serde_json::Value = serde_json::from_str(body).unwrap();
        let last = request["messages"].as_array().unwrap().last().unwrap().to_string();
        for n in ["one", "two"] {
            if last.contains(&format!("Delegate {n}.")) {
                return Reply::Stream(call_with(
                    "toolu_same",
                    "spawn",
                    &json!({ "task": format!("Child task {n}.") }),
                ));
            }
        }
        let said = last
            .split("Child answer ")
            .nth(1)
            .and_then(|rest| rest.split('.').next())
            .unwrap_or("nothing");
        Reply::Stream(answer(&format!("The child said {said}.")))
    })
    .await;
    let (restate, mut service) = with_ingress(&url).await;

    let first = restate
        .send("p3", "run", &json!({"prompt": "Delegate one."}), &[])
        .await;
    let output = restate.output(&first).await;
    assert_eq!(output["text"], "The child said one.", "{output}");
    service.kill().await;
    service.restart().await;
    let second = restate
        .send("p3", "run", &json!({"prompt": "Delegate two."}), &[])
        .await;
    let output = restate.output(&second).await;
    assert_eq!(output["text"], "The child said two.", "{output}");

    let bodies = bodies.lock().unwrap().clone();
    let asked_two = bodies
        .iter()
        .filter(|b| b.contains("Child task two.") && !b.contains("Delegate"))
        .count();
    assert_eq!(asked_two, 1, "the second child asked its model");
    // Each run's child has a session of its own.
    let keys: std::collections::BTreeSet<String> = bodies
        .iter()
        .flat_map(|b| {
            b.split("[sub-agent ")
                .skip(1)
                .map(|rest| child_key(&format!("[sub-agent {rest}")))
        })
        .collect();
    assert_eq!(keys.len(), 2, "{keys:?}");
    for key in &keys {
        let turns = restate.call(&encoded(key), "turns", None).await.json();
        assert_eq!(turns.as_array().map(Vec::len), Some(2), "{key}: {turns}");
    }
}
