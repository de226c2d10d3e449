//! `--goal`: the program keeps a run going until the goal's check passes,
//! stops at its budget, and picks a goal up again after a `kill -9`.

use std::path::Path;

use serde_json::{Value, json};
use zidane::agent::SessionStore;

use super::{answer_sse, call_sse, server_with, spawn_zidane, started_fifo, text, zidane};

const KEY: [(&str, &str); 1] = [("ANTHROPIC_API_KEY", "sk-test")];

/// The last message of a request, as JSON text.
fn last_message(body: &str) -> String {
    let request: Value = serde_json::from_str(body).unwrap_or_default();
    request["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(Value::to_string)
        .unwrap_or_default()
}

/// The model appends a line to `edits` for each prompt or follow-up, then
/// ends its answer; the evaluator's question is answered "not met" until a
/// follow-up said so once.
fn script(body: &str) -> String {
    let last = last_message(body);
    if last.contains("Is the goal met now") {
        let probability = if last.contains("The goal is not met yet") {
            0.9
        } else {
            0.2
        };
        return answer_sse(&json!({ "probability": probability }).to_string(), 50);
    }
    if last.contains("tool_result") {
        return answer_sse("Edited.", 30);
    }
    call_sse("toolu_edit", "shell", &json!({"command": "echo edit >> edits"}), 30)
}

/// The sessions file's record of session `id`'s goal.
async fn goal_of(home: &Path, id: &str) -> Value {
    let store = zidane::agent::SqliteStore::open(home.join("sessions.db")).unwrap();
    let session = store.load(id).await.unwrap().unwrap();
    session.metadata.get("goal").cloned().unwrap_or_default()
}

#[tokio::test]
async fn a_goal_with_a_check_command_ends_when_it_passes() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (url, bodies) = server_with(None, script).await;
    let out = zidane(
        home.path(),
        work.path(),
        &KEY,
        &[
            "--base-url",
            &url,
            "--session",
            "g",
            "--json",
            "--goal",
            "three edits are made",
            "--goal-check",
            "echo \"edits: $(wc -l < edits)\"; test $(wc -l < edits) -ge 3",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines: Vec<Value> = text(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let goal = lines.iter().find(|l| l["type"] == "goal").expect("a goal line");
    assert_eq!(goal["goal"]["status"], "met");
    assert_eq!(goal["goal"]["verdicts"].as_array().unwrap().len(), 3, "{goal}");
    assert_eq!(
        std::fs::read_to_string(work.path().join("edits"))
            .unwrap()
            .lines()
            .count(),
        3
    );
    // With no prompt, the condition was the prompt; the failing check's
    // output reached the model.
    let bodies = bodies.lock().unwrap().clone();
    assert!(bodies[0].contains("three edits are made"));
    let follow_up = bodies
        .iter()
        .find(|b| b.contains("The goal is not met yet"))
        .expect("a follow-up");
    assert!(follow_up.contains("edits: 1"), "{follow_up}");
    assert_eq!(goal_of(home.path(), "g").await["status"], "met");
}

#[tokio::test]
async fn a_goal_that_never_passes_stops_at_its_budget_with_a_message() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (url, bodies) = server_with(None, script).await;
    let out = zidane(
        home.path(),
        work.path(),
        &KEY,
        &[
            "--base-url",
            &url,
            "--goal",
            "the moon is cheese",
            "--goal-check",
            "echo 'still rock'; exit 1",
            "--goal-max-checks",
            "2",
            "Make it so.",
        ],
    )
    .await;
    assert_ne!(out.status.code(), Some(0));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("the moon is cheese") && stderr.contains("2 checks are spent"),
        "{stderr}"
    );
    assert!(stderr.contains("still rock"), "{stderr}");
    // Two rounds of an edit and an answer, nothing after the budget.
    assert_eq!(bodies.lock().unwrap().len(), 4);
}

#[tokio::test]
async fn an_evaluator_goal_follows_the_scripted_verdict() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (url, bodies) = server_with(None, script).await;
    let out = zidane(
        home.path(),
        work.path(),
        &KEY,
        &[
            "--base-url",
            &url,
            "--session",
            "e",
            "--goal",
            "the work is reviewed",
            "Do the work.",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("goal met: the work is reviewed (2 of 10 checks)"),
        "{}",
        text(&out.stderr)
    );
    let questions = bodies
        .lock()
        .unwrap()
        .iter()
        .filter(|b| b.contains("Is the goal met now"))
        .count();
    assert_eq!(questions, 2);
    let goal = goal_of(home.path(), "e").await;
    assert_eq!(goal["verdicts"][0]["met"], false);
    assert!(goal["verdicts"][0]["tokens"].as_u64().unwrap() > 0);
}

/// `kill -9` while the second check runs, then `--resume`: the first check
/// is not run again, the interrupted one is run again once, and the count
/// of checks goes on from where it was.
#[tokio::test]
async fn a_goal_continues_after_a_kill_during_a_check() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let fifo = started_fifo(work.path());
    let (url, _) = server_with(None, script).await;
    // Each check counts itself in `checks`; the second time, it says it
    // started and hangs until it is killed.
    let check = "n=$(( $(cat checks 2>/dev/null || echo 0) + 1 )); echo $n > checks; \
                 if [ $n -eq 2 ]; then echo started > started.fifo; sleep 30; fi; \
                 test $(wc -l < edits) -ge 3";
    let mut child = spawn_zidane(
        home.path(),
        work.path(),
        &[
            "--base-url",
            &url,
            "--session",
            "k",
            "--goal",
            "three edits",
            "--goal-check",
            check,
        ],
    );
    let started = tokio::fs::read_to_string(&fifo).await.unwrap();
    assert_eq!(started.trim(), "started");
    let before = goal_of(home.path(), "k").await;
    assert_eq!(before["verdicts"].as_array().unwrap().len(), 1, "{before}");
    child.start_kill().unwrap();
    child.wait().await.unwrap();

    let resumed = zidane(
        home.path(),
        work.path(),
        &KEY,
        &["--base-url", &url, "--resume", "--session", "k"],
    )
    .await;
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed.stderr));
    assert!(
        text(&resumed.stderr).contains("goal met: three edits (3 of 10 checks)"),
        "{}",
        text(&resumed.stderr)
    );
    let goal = goal_of(home.path(), "k").await;
    assert_eq!(goal["status"], "met");
    assert_eq!(goal["verdicts"].as_array().unwrap().len(), 3, "{goal}");
    // Check 1 once, check 2 twice (killed, then again), check 3 once.
    assert_eq!(std::fs::read_to_string(work.path().join("checks")).unwrap().trim(), "4");
    assert_eq!(
        std::fs::read_to_string(work.path().join("edits"))
            .unwrap()
            .lines()
            .count(),
        3
    );
}

/// As [`script`], but the edit command, the second time, says it started
/// and hangs (the process is killed there).
fn script_hanging_edit(body: &str) -> String {
    let last = last_message(body);
    if last.contains("tool_result") {
        return answer_sse("Edited.", 30);
    }
    let command = "echo edit >> edits; \
                   if [ $(wc -l < edits) -eq 2 ] && [ ! -e hung ]; then touch hung; echo started > started.fifo; sleep 30; fi";
    call_sse("toolu_edit", "shell", &json!({ "command": command }), 30)
}

/// `kill -9` during a turn of a goal (its second edit), then `--resume`:
/// the check already made is not made again, the interrupted edit is not
/// run again, and the goal goes on to be met with exact counts.
#[tokio::test]
async fn a_goal_continues_after_a_kill_during_a_turn() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let fifo = started_fifo(work.path());
    let (url, _) = server_with(None, script_hanging_edit).await;
    let check = "n=$(( $(cat checks 2>/dev/null || echo 0) + 1 )); echo $n > checks; test $(wc -l < edits) -ge 3";
    let mut child = spawn_zidane(
        home.path(),
        work.path(),
        &[
            "--base-url",
            &url,
            "--session",
            "t",
            "--goal",
            "three edits",
            "--goal-check",
            check,
        ],
    );
    let started = tokio::fs::read_to_string(&fifo).await.unwrap();
    assert_eq!(started.trim(), "started");
    let before = goal_of(home.path(), "t").await;
    assert_eq!(before["verdicts"].as_array().unwrap().len(), 1, "{before}");
    child.start_kill().unwrap();
    child.wait().await.unwrap();

    let resumed = zidane(
        home.path(),
        work.path(),
        &KEY,
        &["--base-url", &url, "--resume", "--session", "t"],
    )
    .await;
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed.stderr));
    let goal = goal_of(home.path(), "t").await;
    assert_eq!(goal["status"], "met", "{goal}");
    let verdicts = goal["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 3, "{goal}");
    assert_eq!(verdicts.iter().filter(|v| v["met"] == true).count(), 1, "{goal}");
    // One check per end of an answer: none made twice.
    assert_eq!(std::fs::read_to_string(work.path().join("checks")).unwrap().trim(), "3");
    // The interrupted edit was not run again (the model was told it was
    // cut off), and the goal's follow-up made the third.
    assert_eq!(
        std::fs::read_to_string(work.path().join("edits"))
            .unwrap()
            .lines()
            .count(),
        3
    );
}
