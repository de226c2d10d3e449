//! Background commands of a Restate run: a new attempt reports each task an
//! earlier attempt's process started, and that no longer runs, as lost.

use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;

use crate::ONE_AT_A_TIME;
use crate::harness::{Reply, Restate, Service, answer, model, results, shell_call, shell_call_with};

/// The first attempt starts `sleep 3777` in the background and dies
/// (`kill -9` of the service) in the next model call; the task dies with
/// it. The new attempt replays the call that started it (it does not start
/// it again) and tells the model the task is lost, naming its command and
/// its output file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_attempt_reports_the_dead_processs_background_task_lost() {
    let _one = ONE_AT_A_TIME.lock().await;
    static STARTS: AtomicBool = AtomicBool::new(false);
    let (url, bodies, mut arrived) = model(move |body, index| {
        if results(body) == 0 {
            STARTS.store(true, Ordering::SeqCst);
            return Reply::Stream(shell_call_with(
                "toolu_bg",
                &json!({"command": "sleep 3777", "run_in_background": true}),
            ));
        }
        if index == 1 {
            return Reply::Hang;
        }
        if body.contains("<status>lost</status>") {
            return Reply::Stream(answer("The task was lost."));
        }
        if index > 8 {
            return Reply::Stream(answer("Never heard of the task."));
        }
        Reply::Stream(shell_call(&format!("toolu_e{index}"), "echo waiting"))
    })
    .await;
    let restate = Restate::start().await;
    let mut service = Service::start(&url).await;
    restate.register(&service.uri).await;

    let id = restate
        .send("b1", "run", &json!({"prompt": "Start the long task."}), &[])
        .await;
    assert_eq!(arrived.recv().await, Some(0));
    assert_eq!(arrived.recv().await, Some(1));
    service.kill().await;
    // The task dies with the process that ran it (a reboot, another host).
    let _ = std::process::Command::new("pkill").args(["-f", "sleep 3777"]).status();
    service.restart().await;

    let output = restate.output(&id).await;
    assert_eq!(output["text"], "The task was lost.", "{output}");
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(
        bodies.iter().filter(|b| results(b) == 0).count(),
        1,
        "the call that started the task is not asked again"
    );
    let told = bodies.iter().find(|b| b.contains("<status>lost</status>")).unwrap();
    assert!(told.contains("sleep 3777"), "{told}");
    assert!(told.contains("<output-file>"), "{told}");
}
