//! Tools act through the agent's execution context: a host context that
//! serves files from memory sees every read, write, listing and command of
//! the basic tools, and no real file is touched.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::json;
use zidane_agent::{AgentOptions, AgentRunOptions, create_agent};
use zidane_core::events::{ExecutionHandle, MessageError, SharedError};
use zidane_core::execution::{DirEntry, EntryKind, ExecOptions, ExecOutput, ExecutionContext, FileStat};
use zidane_provider::scripted::Script;
use zidane_provider::{BoxFuture, ContentBlock, ToolResultContent};
use zidane_tools::{BasicOptions, basic};

use crate::support::{options, provider};

/// Files in memory; every call is logged as `op path-or-command`.
#[derive(Default)]
struct MemoryContext {
    files: Mutex<BTreeMap<String, Vec<u8>>>,
    log: Mutex<Vec<String>>,
    /// When set, `spawn` announces itself on the first and waits for the
    /// second.
    slow_spawn: Option<(Arc<tokio::sync::Notify>, Arc<tokio::sync::Notify>)>,
}

impl MemoryContext {
    fn note(&self, entry: String) {
        self.log.lock().unwrap().push(entry);
    }
}

fn missing(path: &str) -> SharedError {
    Arc::new(MessageError(format!("no file `{path}`")))
}

impl ExecutionContext for MemoryContext {
    fn kind(&self) -> &str {
        "memory"
    }

    fn spawn(&self) -> BoxFuture<'_, Result<ExecutionHandle, SharedError>> {
        self.note("spawn".into());
        let slow = self.slow_spawn.clone();
        Box::pin(async move {
            if let Some((spawning, go)) = slow {
                spawning.notify_one();
                go.notified().await;
            }
            Ok(ExecutionHandle {
                id: "mem-1".into(),
                kind: "memory".into(),
            })
        })
    }

    fn exec<'a>(
        &'a self,
        handle: &'a ExecutionHandle,
        command: &'a str,
        _options: ExecOptions,
    ) -> BoxFuture<'a, Result<ExecOutput, SharedError>> {
        self.note(format!("exec {command} on {}", handle.id));
        Box::pin(async move {
            Ok(ExecOutput {
                stdout: format!("ran `{command}` in memory\n"),
                exit_code: Some(0),
                ..Default::default()
            })
        })
    }

    fn read_file<'a>(&'a self, _h: &'a ExecutionHandle, path: &'a str) -> BoxFuture<'a, Result<Vec<u8>, SharedError>> {
        self.note(format!("read {path}"));
        let found = self.files.lock().unwrap().get(path).cloned();
        Box::pin(async move { found.ok_or_else(|| missing(path)) })
    }

    fn write_file<'a>(
        &'a self,
        _h: &'a ExecutionHandle,
        path: &'a str,
        bytes: &'a [u8],
    ) -> BoxFuture<'a, Result<(), SharedError>> {
        self.note(format!("write {path}"));
        self.files.lock().unwrap().insert(path.to_owned(), bytes.to_vec());
        Box::pin(async { Ok(()) })
    }

    fn list<'a>(&'a self, _h: &'a ExecutionHandle, path: &'a str) -> BoxFuture<'a, Result<Vec<DirEntry>, SharedError>> {
        self.note(format!("list {path}"));
        let prefix = if path.is_empty() {
            String::new()
        } else {
            format!("{path}/")
        };
        let mut entries: BTreeMap<String, DirEntry> = BTreeMap::new();
        for (name, bytes) in self.files.lock().unwrap().iter() {
            let Some(rest) = name.strip_prefix(&prefix) else {
                continue;
            };
            let (first, is_dir) = match rest.split_once('/') {
                Some((dir, _)) => (dir, true),
                None => (rest, false),
            };
            entries.insert(
                first.to_owned(),
                DirEntry {
                    name: first.to_owned(),
                    kind: if is_dir { EntryKind::Dir } else { EntryKind::File },
                    size: if is_dir { 0 } else { bytes.len() as u64 },
                },
            );
        }
        Box::pin(async move { Ok(entries.into_values().collect()) })
    }

    fn stat<'a>(
        &'a self,
        _h: &'a ExecutionHandle,
        path: &'a str,
    ) -> BoxFuture<'a, Result<Option<FileStat>, SharedError>> {
        self.note(format!("stat {path}"));
        let size = self.files.lock().unwrap().get(path).map(|b| b.len() as u64);
        Box::pin(async move {
            Ok(size.map(|size| FileStat {
                kind: EntryKind::File,
                size,
                mtime_ms: None,
            }))
        })
    }

    fn destroy<'a>(&'a self, _h: &'a ExecutionHandle) -> BoxFuture<'a, ()> {
        self.note("destroy".into());
        Box::pin(async {})
    }
}

fn result_texts(request: &zidane_provider::StreamOptions) -> Vec<String> {
    let last = request.messages.last().unwrap();
    last.content()
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolResult {
                content: ToolResultContent::Text(t),
                ..
            } => Some(t.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn every_basic_tool_goes_through_the_host_execution_context() {
    // A root that does not exist: were any tool to touch the real file
    // system, its call would fail or create files there.
    let root = std::env::temp_dir().join("zidane-no-such-root-for-this-test");
    let preset = basic(BasicOptions::in_folder(&root));
    let context = Arc::new(MemoryContext::default());
    context
        .files
        .lock()
        .unwrap()
        .insert("src/lib.rs".into(), b"pub fn old() {}\n".to_vec());
    let model = provider(vec![
        Script::call("c1", "read_file", json!({"path": "src/lib.rs"})),
        Script::call(
            "c2",
            "edit",
            json!({"path": "src/lib.rs", "old_string": "old", "new_string": "new"}),
        ),
        Script::call(
            "c3",
            "write_file",
            json!({"path": "notes/todo.md", "content": "done\n"}),
        ),
        Script::call("c4", "glob", json!({"pattern": "**/*.rs"})),
        Script::call("c5", "grep", json!({"pattern": "fn new"})),
        Script::call("c6", "shell", json!({"command": "cargo test"})),
        Script::answer("all done"),
    ]);
    let agent = create_agent(AgentOptions {
        tools: preset.tools,
        execution: Some(Arc::clone(&context) as Arc<dyn ExecutionContext>),
        ..options(&model)
    })
    .unwrap();
    let stats = agent.run(AgentRunOptions::prompt("Work in memory.")).await.unwrap();
    assert!(stats.completed());
    assert_eq!(stats.tool_calls, 6);

    let requests = model.requests();
    let results: Vec<Vec<String>> = requests[1..].iter().map(result_texts).collect();
    assert_eq!(
        results,
        vec![
            vec!["     1\tpub fn old() {}\n".to_owned()],
            vec!["Edited `src/lib.rs`: 1 replacement(s).".to_owned()],
            vec!["Wrote 5 bytes to `notes/todo.md`.".to_owned()],
            vec!["src/lib.rs".to_owned()],
            vec!["src/lib.rs:1: pub fn new() {}".to_owned()],
            vec!["exit code: 0\nran `cargo test` in memory\n".to_owned()],
        ]
    );
    assert_eq!(
        *context.log.lock().unwrap(),
        vec![
            "spawn",
            "stat src/lib.rs",
            "read src/lib.rs",
            "stat src/lib.rs",
            "read src/lib.rs",
            "write src/lib.rs",
            "stat notes/todo.md",
            "write notes/todo.md",
            "list ",
            "list notes",
            "list src",
            "list ",
            "list notes",
            "list src",
            "read notes/todo.md",
            "read src/lib.rs",
            "exec cargo test on mem-1",
        ]
    );
    let files = context.files.lock().unwrap().clone();
    assert_eq!(files["src/lib.rs"], b"pub fn new() {}\n");
    assert_eq!(files["notes/todo.md"], b"done\n");
    assert!(!root.exists(), "a tool touched the real file system");
}

#[tokio::test]
async fn a_run_suspended_before_it_started_does_not_start() {
    let (spawning, go) = (
        Arc::new(tokio::sync::Notify::new()),
        Arc::new(tokio::sync::Notify::new()),
    );
    let context = Arc::new(MemoryContext {
        slow_spawn: Some((Arc::clone(&spawning), Arc::clone(&go))),
        ..Default::default()
    });
    let p = provider(vec![Script::answer("never")]);
    let agent = create_agent(AgentOptions {
        execution: Some(context),
        ..options(&p)
    })
    .unwrap();
    let run = tokio::spawn({
        let agent = agent.clone();
        async move { agent.run(AgentRunOptions::prompt("Go.")).await }
    });
    spawning.notified().await;
    let suspending = tokio::spawn({
        let agent = agent.clone();
        async move { agent.suspend(zidane_agent::SuspendOptions::default()).await }
    });
    tokio::task::yield_now().await;
    go.notify_one();
    suspending.await.unwrap();
    let stats = run.await.unwrap().unwrap();
    assert!(stats.suspended);
    assert_eq!(stats.status, zidane_core::events::RunStatus::Suspended);
    assert_eq!(stats.turns, 0);
    assert!(p.requests().is_empty(), "the run did not start");
    assert!(agent.turns().is_empty(), "not even its prompt");
}

/// A sub-agent's tool calls go through its parent's execution context and
/// live handle: never spawned again, never destroyed by the child.
#[tokio::test(start_paused = true)]
async fn a_sub_agent_acts_through_the_parents_handle_and_leaves_it_alive() {
    let root = std::env::temp_dir().join("zidane-no-such-root-for-this-test");
    let preset = basic(BasicOptions::in_folder(&root));
    let context = Arc::new(MemoryContext::default());
    context
        .files
        .lock()
        .unwrap()
        .insert("notes.md".into(), b"three\n".to_vec());
    // One child at a time: the scripts are played in order.
    let model = provider(vec![
        Script::call("s1", "spawn", json!({"task": "Read notes.md."})),
        Script::call("c1", "read_file", json!({"path": "notes.md"})),
        Script::answer("it says three"),
        Script::answer("the notes say three"),
    ]);
    let agent = create_agent(AgentOptions {
        tools: preset.tools,
        execution: Some(Arc::clone(&context) as Arc<dyn ExecutionContext>),
        ..options(&model)
    })
    .unwrap();
    let stats = agent
        .run(AgentRunOptions::prompt("What do the notes say?"))
        .await
        .unwrap();
    assert!(stats.completed());
    assert_eq!(stats.children.len(), 1);
    let log = context.log.lock().unwrap().clone();
    assert_eq!(log.iter().filter(|l| *l == "spawn").count(), 1, "{log:?}");
    assert!(!log.contains(&"destroy".to_owned()), "{log:?}");
    assert!(log.iter().any(|l| l.contains("notes.md")), "{log:?}");
    assert_eq!(
        agent.handle().await.map(|h| h.id),
        Some("mem-1".to_owned()),
        "the parent's handle is still bound"
    );
    agent.destroy().await;
    assert_eq!(
        context.log.lock().unwrap().iter().filter(|l| *l == "destroy").count(),
        1
    );
}

/// `tool:before` hears what a write or an edit is about to replace: the
/// file's text before the call (nothing for a new file or a read).
#[tokio::test]
async fn tool_before_carries_the_prior_content_of_a_changed_file() {
    use zidane_core::events::ToolBefore;
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("a.txt"), "one\n").unwrap();
    let model = provider(vec![
        Script::call("c1", "read_file", json!({"path": "a.txt"})),
        Script::call(
            "c2",
            "edit",
            json!({"path": "a.txt", "old_string": "one", "new_string": "two"}),
        ),
        Script::call("c3", "write_file", json!({"path": "b.txt", "content": "new\n"})),
        Script::answer("done"),
    ]);
    let preset = basic(BasicOptions::in_folder(work.path()));
    let agent = create_agent(AgentOptions {
        tools: preset.tools,
        execution: Some(preset.execution),
        ..options(&model)
    })
    .unwrap();
    type Seen = Vec<(String, Option<String>)>;
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let s = Arc::clone(&seen);
    agent.hooks().on_sync::<ToolBefore, _>(move |ev, _| {
        s.lock()
            .unwrap()
            .push((ev.name().to_owned(), ev.prior_content().map(str::to_owned)));
        Ok(())
    });
    agent.run(AgentRunOptions::prompt("Change it.")).await.unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [
            ("read_file".to_owned(), None),
            ("edit".to_owned(), Some("one\n".to_owned())),
            ("write_file".to_owned(), None),
        ]
    );
    assert_eq!(std::fs::read_to_string(work.path().join("a.txt")).unwrap(), "two\n");
}
