//! Goals: a run keeps working until its check says the condition holds, or
//! its budget is spent.

use std::sync::Arc;

use serde_json::json;
use zidane_agent::{AgentOptions, AgentRunOptions, Goal, GoalStatus, create_agent};
use zidane_provider::scripted::{Script, ScriptedProvider};
use zidane_tools::{BasicOptions, basic};

use crate::support::{options, provider};

/// An agent working in `folder` with the basic preset's tools.
fn agent_in(folder: &std::path::Path, model: &ScriptedProvider) -> zidane_agent::Agent {
    let preset = basic(BasicOptions::in_folder(folder));
    create_agent(AgentOptions {
        tools: preset.tools,
        execution: Some(preset.execution),
        ..options(model)
    })
    .unwrap()
}

/// The model writes `n` into the counter file, then ends its answer.
fn edit_then_end(n: u32) -> [Script; 2] {
    [
        Script::call(
            format!("w{n}"),
            "write_file",
            json!({"path": "n", "content": n.to_string()}),
        ),
        Script::answer(format!("Edit {n} done.")),
    ]
}

/// The last user message the model was sent.
fn last_user_text(model: &ScriptedProvider) -> String {
    let requests = model.requests();
    let last = requests.last().unwrap();
    last.messages
        .iter()
        .rev()
        .find(|m| m.role() == zidane_provider::Role::User)
        .map(|m| m.text())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_goal_checked_by_a_command_ends_when_the_command_passes() {
    let work = tempfile::tempdir().unwrap();
    let model = provider((1..=3).flat_map(edit_then_end).collect());
    let agent = agent_in(work.path(), &model);
    let mut run = AgentRunOptions::prompt("Count to three.");
    run.goal =
        Some(Goal::new("the counter reads 3").check_command("echo \"counter at $(cat n)\"; test \"$(cat n)\" -ge 3"));
    let output = agent.run(run).await.unwrap();
    assert_eq!(output.text, "Edit 3 done.");
    let progress = agent.goal().unwrap();
    assert_eq!(progress.status, GoalStatus::Met);
    assert_eq!(progress.checks(), 3, "{progress:?}");
    assert!(!progress.verdicts[0].met && !progress.verdicts[1].met && progress.verdicts[2].met);
    // The failing check's output is what the model read next.
    assert!(
        progress.verdicts[1].reason.contains("counter at 2"),
        "{:?}",
        progress.verdicts[1]
    );
    let requests = model.requests();
    let after_first_check = requests[2]
        .messages
        .iter()
        .rev()
        .find(|m| m.role() == zidane_provider::Role::User)
        .unwrap()
        .text();
    assert!(
        after_first_check.contains("The goal is not met yet"),
        "{after_first_check}"
    );
    assert!(after_first_check.contains("counter at 1"), "{after_first_check}");
    assert_eq!(model.remaining(), 0);
}

#[tokio::test]
async fn a_goal_that_never_passes_stops_at_its_budget_and_says_what_is_unmet() {
    let work = tempfile::tempdir().unwrap();
    let model = provider(vec![
        Script::answer("Done, I think."),
        Script::answer("Done now."),
        Script::answer("Never reached."),
    ]);
    let agent = agent_in(work.path(), &model);
    let mut run = AgentRunOptions::prompt("Fix it.");
    run.goal = Some(
        Goal::new("the build is green")
            .check_command("echo 'error: 1 test failed'; exit 1")
            .max_checks(2),
    );
    let output = agent.run(run).await.unwrap();
    assert_eq!(output.text, "Done now.");
    let progress = agent.goal().unwrap();
    assert_eq!((progress.status, progress.checks()), (GoalStatus::Unmet, 2));
    let stopped = progress.stopped.as_deref().unwrap();
    assert!(
        stopped.contains("the build is green") && stopped.contains("2 checks are spent"),
        "{stopped}"
    );
    assert!(stopped.contains("1 test failed"), "{stopped}");
    assert_eq!(model.remaining(), 1, "no turn after the budget");
}

#[tokio::test]
async fn an_evaluator_goal_keeps_going_until_the_verdict_says_met() {
    let model = provider(vec![
        Script::answer("First try."),
        // The evaluator's verdicts.
        Script::answer(r#"{"probability": 0.1}"#),
        Script::answer("Second try, now with the summary."),
        Script::answer(r#"{"probability": 0.9}"#),
    ]);
    let agent = create_agent(options(&model)).unwrap();
    let mut run = AgentRunOptions::prompt("Write a summary.");
    run.goal = Some(Goal::new("the answer includes a summary"));
    let output = agent.run(run).await.unwrap();
    assert_eq!(output.text, "Second try, now with the summary.");
    let progress = agent.goal().unwrap();
    assert_eq!((progress.status, progress.checks()), (GoalStatus::Met, 2));
    assert!(
        progress.verdicts[0].reason.contains("not met"),
        "{:?}",
        progress.verdicts[0]
    );
    assert!(progress.verdicts[0].tokens > 0);
    // The evaluator read the condition and the model's answer.
    let question = model.requests()[1].messages.last().unwrap().text();
    assert!(
        question.contains("the answer includes a summary") && question.contains("First try."),
        "{question}"
    );
    assert!(last_user_text(&model).contains("Is the goal met"));
}

#[tokio::test]
async fn a_paused_goal_is_not_checked_and_the_same_goal_continues_its_budget() {
    let work = tempfile::tempdir().unwrap();
    let model = provider(vec![
        Script::answer("One."),
        Script::answer("Two."),
        Script::answer("Three."),
    ]);
    let agent = agent_in(work.path(), &model);
    let goal = Goal::new("a file named done exists")
        .check_command("test -f done")
        .max_checks(3);
    let mut run = AgentRunOptions::prompt("Go.");
    run.goal = Some(goal.clone());
    // The first check fails; pausing from the follow-up's turn stops the
    // second.
    let paused = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (a, p) = (agent.clone(), Arc::clone(&paused));
    agent.hooks().on::<zidane_core::events::TurnBefore, _>(move |_, _| {
        let (a, p) = (a.clone(), Arc::clone(&p));
        Box::pin(async move {
            if a.goal().is_some_and(|g| g.checks() == 1) && !p.load(std::sync::atomic::Ordering::SeqCst) {
                p.store(a.pause_goal().await, std::sync::atomic::Ordering::SeqCst);
            }
            Ok(())
        })
    });
    agent.run(run).await.unwrap();
    assert!(paused.load(std::sync::atomic::Ordering::SeqCst), "the goal was paused");
    let progress = agent.goal().unwrap();
    assert_eq!((progress.status, progress.checks()), (GoalStatus::Paused, 1));
    // Given again, the goal continues with what it spent.
    std::fs::write(work.path().join("done"), "").unwrap();
    let mut again = AgentRunOptions::prompt("Go on.");
    again.goal = Some(goal);
    agent.run(again).await.unwrap();
    let progress = agent.goal().unwrap();
    assert_eq!((progress.status, progress.checks()), (GoalStatus::Met, 2));
    assert!(agent.clear_goal().await);
    assert!(agent.goal().is_none());
}
