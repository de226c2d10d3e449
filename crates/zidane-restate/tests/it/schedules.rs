//! `ZidaneSchedule`: a schedule on Restate is a durable timer. Due while
//! the service is down, it fires once the service is back, and its run
//! reaches the session's `ZidaneAgent`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use chrono::{TimeZone, Timelike, Utc};
use serde_json::{Value, json};

use super::ONE_AT_A_TIME;
use super::harness::{self, Reply, Restate, Service, answer, http, model};

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

async fn schedule(restate: &Restate, name: &str, handler: &str, body: Option<&Value>) -> Value {
    let response = http(
        "POST",
        &format!("{}/ZidaneSchedule/{name}/{handler}", restate.ingress),
        &[],
        body,
    )
    .await
    .unwrap();
    assert_eq!(response.status, 200, "{response:?}");
    response.json()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schedule_due_while_the_service_is_down_fires_once_it_is_back() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (url, bodies, mut arrived) = model(|_, _| Reply::Stream(answer("Scheduled run done."))).await;
    let restate = Restate::start().await;
    let mut service = Service::start(&url).await;
    restate.register(&service.uri).await;

    // Due two seconds from now (UTC, with seconds), once a day.
    let due = Utc.timestamp_millis_opt((now_ms() / 1000 + 2) as i64 * 1000).unwrap();
    let cron = format!("{} {} {} * * *", due.second(), due.minute(), due.hour());
    let added = schedule(
        &restate,
        "nightly",
        "add",
        Some(&json!({"cron": cron, "run": {"prompt": "Check the build."}})),
    )
    .await;
    let due_ms = due.timestamp_millis() as u64;
    assert_eq!(added["nextMs"], json!(due_ms), "{added}");

    // Down over the due time: Restate keeps the timer.
    service.kill().await;
    harness::until("the due time to pass", Duration::from_secs(10), || async move {
        now_ms() > due_ms + 500
    })
    .await;
    assert!(bodies.lock().unwrap().is_empty());
    service.restart().await;

    assert_eq!(arrived.recv().await, Some(0), "the firing's run asks the model");
    let session = format!("nightly-{due_ms}");
    harness::until("the firing's run to end", Duration::from_secs(30), || {
        let (restate, session) = (&restate, session.clone());
        async move {
            let turns = restate.call(&session, "turns", None).await.json();
            turns.as_array().is_some_and(|t| t.len() == 2)
        }
    })
    .await;
    let info = schedule(&restate, "nightly", "get", None).await;
    let firings = info["firings"].as_array().unwrap();
    assert_eq!(firings.len(), 1, "{info}");
    assert_eq!(firings[0]["dueMs"], json!(due_ms));
    assert_eq!(firings[0]["session"], json!(session));
    assert_eq!(info["nextMs"], json!(due_ms + 86_400_000), "the next one, a day later");
    assert_eq!(bodies.lock().unwrap().len(), 1, "one run, once");

    // Removed, it is gone (its pending timer does nothing).
    assert_eq!(schedule(&restate, "nightly", "remove", None).await, json!(true));
    let info = schedule(&restate, "nightly", "get", None).await;
    assert_eq!(info["schedule"], Value::Null, "{info}");
}
