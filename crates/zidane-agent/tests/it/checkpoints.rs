//! Folder checkpoints through the `Agent`: a tool that writes files, then
//! `checkpoints`, `rewind` (files and conversation) and `fork`.

use std::sync::Arc;

use serde_json::json;
use zidane_agent::checkpoints::{Checkpoints, CheckpointsConfig, RewindOptions};
use zidane_agent::{AgentOptions, AgentRunOptions, SqliteStore, create_agent};
use zidane_core::checkpoint::CheckpointStore;
use zidane_core::session::SessionStore;
use zidane_core::{FnTool, ToolOutput, ToolSet};
use zidane_provider::scripted::Script;

use crate::support::{options, provider};

/// A tool that writes `name` with `text` in the folder.
fn writer(root: std::path::PathBuf) -> ToolSet {
    ToolSet::new().with(FnTool::new(
        "put",
        "Write a file",
        json!({"type": "object"}),
        move |input, _cx| {
            let root = root.clone();
            async move {
                let name = input["name"].as_str().unwrap_or_default().to_owned();
                std::fs::write(root.join(name), input["text"].as_str().unwrap_or_default()).unwrap();
                Ok(ToolOutput::text("written"))
            }
        },
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_lists_rewinds_and_forks_its_checkpoints() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("a.txt"), "a0").unwrap();
    let store = SqliteStore::open(home.path().join("s.db")).unwrap();
    let scripted = provider(vec![
        Script::call("c1", "put", json!({"name": "a.txt", "text": "a1"})),
        Script::answer("one"),
        Script::call("c2", "put", json!({"name": "b.txt", "text": "b1"})),
        Script::answer("two"),
    ]);
    let checkpoints = Arc::new(Checkpoints::new(
        Arc::new(store.clone()) as Arc<dyn CheckpointStore>,
        CheckpointsConfig::new(work.path()),
    ));
    let agent = create_agent(AgentOptions {
        tools: writer(work.path().to_path_buf()),
        store: Some(Arc::new(store.clone()) as Arc<dyn SessionStore>),
        session_id: Some("s".into()),
        checkpoints: Some(Arc::clone(&checkpoints)),
        ..options(&scripted)
    })
    .unwrap();
    agent.run(AgentRunOptions::prompt("first")).await.unwrap();
    agent.run(AgentRunOptions::prompt("second")).await.unwrap();

    let list = agent.checkpoints().await.unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!((list[0].label.as_str(), list[0].turn_index), ("first", 0));
    assert_eq!(list[0].changes.modified, vec!["a.txt".to_owned()]);
    assert_eq!((list[1].label.as_str(), list[1].turn_index), ("second", 4));
    assert_eq!(list[1].changes.created, vec!["b.txt".to_owned()]);
    let kinds: Vec<&str> = store
        .snapshots("s")
        .await
        .unwrap()
        .iter()
        .map(|s| s.kind.as_str())
        .collect();
    assert_eq!(kinds, ["prompt", "tool", "end", "prompt", "tool", "end"]);

    let plan = agent.plan_rewind(2).await.unwrap();
    assert_eq!(plan.steps.len(), 1);
    assert!(work.path().join("b.txt").exists(), "a plan changes nothing");

    let outcome = agent.rewind(2, RewindOptions::default()).await.unwrap();
    assert!(!work.path().join("b.txt").exists());
    assert_eq!(std::fs::read_to_string(work.path().join("a.txt")).unwrap(), "a1");
    assert_eq!(outcome.turns_kept, Some(4));
    assert_eq!(agent.turns().len(), 4);
    let branch = outcome.branch.unwrap();
    assert_eq!(store.load(&branch).await.unwrap().unwrap().turns.len(), 8);
    assert_eq!(store.load("s").await.unwrap().unwrap().turns.len(), 4);

    let forked = agent.fork(Some(1), "s-fork", true).await.unwrap();
    assert_eq!(forked.turns, 0);
    assert_eq!(std::fs::read_to_string(work.path().join("a.txt")).unwrap(), "a0");
    assert!(store.load("s-fork").await.unwrap().is_some());
    assert!(matches!(
        agent.fork(None, "s-fork", false).await,
        Err(zidane_agent::AgentError::Checkpoint(
            zidane_agent::checkpoints::CheckpointError::SessionExists(_)
        ))
    ));
}
