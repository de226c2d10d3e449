//! `zidane schedule` and the schedules `zidane serve` fires: a due time
//! missed while no server ran fires once at the next start, two servers on
//! one sessions file fire it once, and bad input is refused.

use std::path::Path;

use serde_json::{Value, json};
use zidane::agent::SessionStore;
use zidane_app::schedule::{self, DEFINITION_KEY};

use super::serve::Served;
use super::session::Setup;
use super::{text, zidane};

/// The command each firing's run makes the scripted model call.
fn firing_prompt() -> String {
    format!("call shell {}", json!({"command": "echo fired >> fired.txt"}))
}

/// `zidane schedule ARGS` in the setup's home.
async fn schedule(setup: &Setup, args: &[&str]) -> std::process::Output {
    let mut all = vec!["schedule"];
    all.extend_from_slice(args);
    zidane(setup.home.path(), setup.work.path(), &[], &all).await
}

/// Adds a yearly schedule made three years ago: the server that starts
/// next finds it due (the Januaries it missed). How many due times passed.
async fn add_overdue(setup: &Setup, name: &str) -> u32 {
    let work = setup.work.path().to_str().unwrap();
    let out = schedule(
        setup,
        &["add", "0 0 1 1 *", "--folder", work, "--name", name, &firing_prompt()],
    )
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains(&format!("Added schedule `{name}`")),
        "{}",
        text(&out.stdout)
    );
    let store = zidane::agent::SqliteStore::open(setup.home.path().join("sessions.db")).unwrap();
    let id = schedule::record_id(name);
    let mut definition = store.load(&id).await.unwrap().unwrap().metadata[DEFINITION_KEY].clone();
    let made = zidane_app::now_ms() - 3 * 366 * 86_400_000;
    definition["created_ms"] = json!(made);
    store.set_meta(&id, DEFINITION_KEY, &definition).await.unwrap();
    let cron = schedule::parse_cron("0 0 1 1 *").unwrap();
    schedule::due_between(&cron, made, zidane_app::now_ms()).unwrap().1
}

/// `zidane schedule list --json`: the schedules' lines.
async fn listed(setup: &Setup) -> Vec<Value> {
    let out = schedule(setup, &["list", "--json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn fired(work: &Path) -> String {
    std::fs::read_to_string(work.join("fired.txt")).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_schedule_missed_while_no_server_ran_fires_once_at_the_next_start() {
    let setup = Setup::new().await;
    let due = add_overdue(&setup, "yearly").await;
    assert!(due >= 3, "{due}");

    let mut server = Served::start(&setup, &[("ZIDANE_APPROVE", "yolo")], &[]).await;
    server
        .logged(&format!(
            "schedule `yearly` was due {} more time(s) while no server ran; it runs once now",
            due - 1
        ))
        .await;
    let ended = server.logged("schedule `yearly` ended:").await;
    assert!(ended.ends_with("ended: completed"), "{ended}");
    assert_eq!(fired(setup.work.path()), "fired\n");

    let lines = listed(&setup).await;
    assert_eq!(lines.len(), 1, "{lines:?}");
    let firings = &lines[0]["state"]["firings"];
    assert_eq!(firings.as_array().unwrap().len(), 1, "{firings}");
    assert_eq!(firings[0]["missed"], json!(due - 1));
    assert_eq!(firings[0]["outcome"], "completed");
    let session = firings[0]["session"].as_str().unwrap().to_owned();
    // The firing's session is a served session like any other; the
    // schedule's own record is not listed among the sessions.
    let sessions = zidane(setup.home.path(), setup.work.path(), &[], &["sessions"]).await;
    let sessions = text(&sessions.stdout);
    assert!(sessions.contains(&session), "{sessions}");
    assert!(!sessions.contains("~schedule"), "{sessions}");

    // Started again, the server finds nothing due: the missed Januaries
    // fired once, not once each.
    server.kill9().await;
    let server = Served::start(&setup, &[("ZIDANE_APPROVE", "yolo")], &[]).await;
    server.logged("1 schedule(s) looked at").await;
    assert_eq!(fired(setup.work.path()), "fired\n");
    let text = text(&schedule(&setup, &["list"]).await.stdout);
    assert!(text.contains("yearly  \"0 0 1 1 *\""), "{text}");
    assert!(text.contains("completed (after"), "{text}");
    assert!(text.contains("missed with no server running"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn two_servers_on_one_sessions_file_fire_a_schedule_once() {
    let setup = Setup::new().await;
    add_overdue(&setup, "shared").await;
    let env = [("ZIDANE_APPROVE", "yolo")];
    let (one, two) = tokio::join!(Served::start(&setup, &env, &[]), Served::start(&setup, &env, &[]));
    // Each looked once the first time (and claimed, or found it claimed or
    // held).
    one.logged("1 schedule(s) looked at").await;
    two.logged("1 schedule(s) looked at").await;
    // The one that fired says so when its run ends.
    tokio::select! {
        _ = one.logged("schedule `shared` ended:") => {}
        _ = two.logged("schedule `shared` ended:") => {}
    }
    let lines = listed(&setup).await;
    let firings = lines[0]["state"]["firings"].as_array().unwrap().clone();
    assert_eq!(firings.len(), 1, "{firings:?}");
    assert_eq!(fired(setup.work.path()), "fired\n");
    assert_eq!(setup.bodies.lock().unwrap().len(), 2, "one run: a call and its answer");
}

#[tokio::test]
async fn bad_schedules_are_refused_and_removal_is_said() {
    let setup = Setup::new().await;
    let work = setup.work.path().to_str().unwrap();
    let out = schedule(&setup, &["add", "every day", "--folder", work, "hello"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("is not a cron expression"),
        "{}",
        text(&out.stderr)
    );

    let out = schedule(&setup, &["add", "@daily", "--folder", "/no/such/folder", "hello"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--folder /no/such/folder"),
        "{}",
        text(&out.stderr)
    );

    let out = schedule(&setup, &["add", "@daily", "--folder", work, "run the tests now please"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("`run-the-tests-now`"),
        "{}",
        text(&out.stdout)
    );
    let again = schedule(&setup, &["add", "@daily", "--folder", work, "run the tests now please"]).await;
    assert_eq!(again.status.code(), Some(2));
    assert!(text(&again.stderr).contains("exists"), "{}", text(&again.stderr));

    let list = text(&schedule(&setup, &["list"]).await.stdout);
    assert!(list.contains("run-the-tests-now  \"@daily\""), "{list}");
    assert!(list.contains("next: "), "{list}");

    let out = schedule(&setup, &["remove", "run-the-tests-now"]).await;
    assert!(text(&out.stdout).contains("Removed schedule `run-the-tests-now`."));
    let out = schedule(&setup, &["remove", "run-the-tests-now"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no schedule named"), "{}", text(&out.stderr));
    let list = text(&schedule(&setup, &["list"]).await.stdout);
    assert!(list.starts_with("No schedules yet"), "{list}");
}
