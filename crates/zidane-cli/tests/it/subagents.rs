//! Sub-agents of the program: a child is never taken for another.

use std::time::Duration;

use serde_json::{Value, json};
use zidane_bench::loopback::answer_sse;

use super::{server_with, text};

/// The text of the last message's content.
fn last_text(body: &str) -> String {
    let request: Value = serde_json::from_str(body).unwrap();
    let last = request["messages"].as_array().unwrap().last().unwrap().clone();
    match &last["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A model that calls tools in its text: a parent's prompt `Delegate N.`
/// spawns a child with task `Child task N.`, which answers
/// `Child answer N.`; the parent then repeats what its child said.
fn respond(body: &str) -> String {
    let last = last_text(body);
    if let Some(response) = last.split("<tool_response>").nth(1) {
        let said = response.split("</tool_response>").next().unwrap_or("").trim();
        return answer_sse(&format!("The child said: {said}"), 100);
    }
    for n in ["1", "2"] {
        if last.contains(&format!("Child task {n}.")) {
            return answer_sse(&format!("Child answer {n}."), 100);
        }
        if last.contains(&format!("Delegate {n}.")) {
            let call = json!({"name": "spawn", "arguments": {"task": format!("Child task {n}.")}});
            return answer_sse(&format!("Asking a sub-agent.\n<tool_call>\n{call}\n</tool_call>"), 100);
        }
    }
    answer_sse("I do not know.", 100)
}

/// With tool calls in the text, a run after a resume (a new process)
/// spawns a child of its own: not the first run's, whose call had the
/// same place in its process.
#[tokio::test]
async fn a_spawn_after_a_resume_gets_a_child_of_its_own() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (url, bodies) = server_with(None, respond).await;
    let run = |args: Vec<String>| {
        let (home, work) = (home.path().to_owned(), work.path().to_owned());
        async move {
            let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_zidane"));
            cmd.env_remove("OPENAI_API_KEY")
                .env_remove("OPENROUTER_API_KEY")
                .env("ANTHROPIC_API_KEY", "sk-test")
                .env("ZIDANE_APPROVE", "yolo")
                .env("ZIDANE_HOME", &home)
                .current_dir(&work)
                .args(&args)
                .kill_on_drop(true);
            // A hang is a failure, not a test that never ends.
            tokio::time::timeout(Duration::from_secs(60), cmd.output())
                .await
                .expect("the program hung")
                .unwrap()
        }
    };
    let first = run(vec![
        "-p".into(),
        "--text-tool-calls".into(),
        "--base-url".into(),
        url.clone(),
        "Delegate 1.".into(),
    ])
    .await;
    assert!(first.status.success(), "{}", text(&first.stderr));
    assert!(
        text(&first.stdout).contains("The child said: Child answer 1."),
        "{}",
        text(&first.stdout)
    );

    let second = run(vec![
        "-p".into(),
        "--text-tool-calls".into(),
        "--base-url".into(),
        url.clone(),
        "--resume".into(),
        "Delegate 2.".into(),
    ])
    .await;
    assert!(second.status.success(), "{}", text(&second.stderr));
    let stdout = text(&second.stdout);
    assert!(stdout.contains("The child said: Child answer 2."), "{stdout}");
    let asked_two = bodies
        .lock()
        .unwrap()
        .iter()
        .filter(|b| last_text(b).contains("Child task 2."))
        .count();
    assert_eq!(asked_two, 1, "the second child asked its model once");
}
