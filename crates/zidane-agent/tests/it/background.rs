//! Background tasks through the agent: starts and exits on the bus, the
//! exit notification for the model (at the next run, or mid-run), the stall
//! watchdog, teardown, adoption, reconcile and the hand-over from a
//! sub-agent.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use zidane_agent::{Agent, AgentOptions, AgentRunOptions, create_agent};
use zidane_core::events::{
    BackgroundAdopt, BackgroundExit, BackgroundReassign, BackgroundReconcile, BackgroundStall, BackgroundStart,
    ExecutionHandle, MessageError, SharedError, TaskExitInfo, TaskStatus,
};
use zidane_core::execution::{
    BackgroundOptions, BackgroundTask, DirEntry, ExecOptions, ExecOutput, ExecutionContext, FileStat,
};
use zidane_core::{FnTool, ToolOutput};
use zidane_loop::Behavior;
use zidane_provider::scripted::{Script, ScriptedProvider};
use zidane_provider::{BoxFuture, ContentBlock, Provider, Role};
use zidane_tools::{BasicOptions, ProcessContext, basic};

use crate::support::provider;

struct Rig {
    _dir: tempfile::TempDir,
    context: Arc<ProcessContext>,
}

fn rig() -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let context = Arc::new(ProcessContext::new(dir.path()).task_dir(dir.path().join(".tasks")));
    Rig { _dir: dir, context }
}

fn agent_on(rig: &Rig, model: &ScriptedProvider, handle: Option<ExecutionHandle>) -> Agent {
    let preset = basic(BasicOptions::in_folder(rig.context.root()));
    create_agent(AgentOptions {
        provider: vec![Arc::new(model.clone()) as Arc<dyn Provider>],
        tools: preset.tools,
        execution: Some(Arc::clone(&rig.context) as Arc<dyn ExecutionContext>),
        handle,
        ..Default::default()
    })
    .unwrap()
}

fn background(id: &str, command: &str) -> Script {
    Script::call(id, "shell", json!({"command": command, "run_in_background": true}))
}

/// Records the exits the bus reports and wakes a waiter on each.
fn exits(agent: &Agent) -> (Arc<Mutex<Vec<TaskExitInfo>>>, Arc<tokio::sync::Notify>) {
    let seen: Arc<Mutex<Vec<TaskExitInfo>>> = Arc::default();
    let woken = Arc::new(tokio::sync::Notify::new());
    let (s, w) = (Arc::clone(&seen), Arc::clone(&woken));
    agent.hooks().on_sync::<BackgroundExit, _>(move |ev, _| {
        s.lock().unwrap().push(TaskExitInfo {
            task_id: ev.task_id().to_owned(),
            command: ev.command().to_owned(),
            exit_code: ev.exit_code(),
            signal: ev.signal().map(str::to_owned),
            status: ev.status(),
            duration: std::time::Duration::from_millis(ev.duration_ms()),
            output_path: ev.output_path().to_owned(),
        });
        w.notify_one();
        Ok(())
    });
    (seen, woken)
}

fn last_user_texts(model: &ScriptedProvider, request: usize) -> Vec<String> {
    let requests = model.requests();
    let last = requests[request].messages.last().unwrap();
    assert_eq!(last.role(), Role::User);
    last.content()
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn an_exit_is_told_to_the_model_at_the_next_run() {
    let rig = rig();
    let model = provider(vec![
        background("c1", "echo hi"),
        Script::answer("started"),
        Script::answer("noted"),
    ]);
    let agent = agent_on(&rig, &model, None);
    let starts: Arc<Mutex<Vec<(String, String, String)>>> = Arc::default();
    let s = Arc::clone(&starts);
    agent.hooks().on_sync::<BackgroundStart, _>(move |ev, _| {
        s.lock().unwrap().push((
            ev.task_id().to_owned(),
            ev.command().to_owned(),
            ev.output_path().to_owned(),
        ));
        Ok(())
    });
    let (seen, woken) = exits(&agent);
    // Durations are the wall clock's: the reconcile hook pins them, as a
    // durable host would pin a recorded copy.
    agent.hooks().on_sync::<BackgroundReconcile, _>(|ev, _| {
        for exit in &mut ev.exits {
            exit.duration = std::time::Duration::from_millis(1234);
        }
        Ok(())
    });
    agent.run(AgentRunOptions::prompt("Start it.")).await.unwrap();
    while seen.lock().unwrap().is_empty() {
        woken.notified().await;
    }
    assert!(agent.has_pending_task_notifications());
    let output = starts.lock().unwrap()[0].2.clone();
    assert_eq!(
        *starts.lock().unwrap(),
        vec![("t1".to_owned(), "echo hi".to_owned(), output.clone())]
    );
    // A prompt-less run delivers it.
    agent.run(AgentRunOptions::prompt("")).await.unwrap();
    assert!(!agent.has_pending_task_notifications());
    assert_eq!(
        last_user_texts(&model, 2),
        vec![format!(
            "<task-notification>\n<task-id>t1</task-id>\n<status>exited</status>\n<exit-code>0</exit-code>\n\
             <command>echo hi</command>\n<duration-ms>1234</duration-ms>\n<output-file>{output}</output-file>\n\
             <summary>Background task t1 exited with code 0 after 1.2s. Read its output with `wait_task` or \
             `read_file`.</summary>\n</task-notification>"
        )]
    );
    assert_eq!(std::fs::read_to_string(&output).unwrap(), "hi\n");
    agent.destroy().await;
}

#[tokio::test]
async fn an_exit_during_a_run_reaches_the_model_at_the_next_turn() {
    let rig = rig();
    let model = provider(vec![
        background("c1", "echo hi"),
        Script::call("c2", "until_exit", json!({})),
        Script::answer("it finished"),
    ]);
    let preset = basic(BasicOptions::in_folder(rig.context.root()));
    let exited = Arc::new(tokio::sync::Notify::new());
    let e = Arc::clone(&exited);
    // A tool that returns once the task has ended: the exit lands while
    // the run is in its tool batch.
    let until_exit = FnTool::new("until_exit", "Wait", json!({"type": "object"}), move |_, _| {
        let e = Arc::clone(&e);
        async move {
            e.notified().await;
            Ok(ToolOutput::text("waited"))
        }
    });
    let agent = create_agent(AgentOptions {
        provider: vec![Arc::new(model.clone()) as Arc<dyn Provider>],
        tools: preset.tools.with(until_exit),
        execution: Some(Arc::clone(&rig.context) as Arc<dyn ExecutionContext>),
        ..Default::default()
    })
    .unwrap();
    let e = Arc::clone(&exited);
    agent.hooks().on_sync::<BackgroundExit, _>(move |_, _| {
        e.notify_one();
        Ok(())
    });
    agent.run(AgentRunOptions::prompt("Start it and wait.")).await.unwrap();
    let texts = last_user_texts(&model, 2);
    assert_eq!(texts.len(), 1, "{texts:?}");
    assert!(texts[0].starts_with("<task-notification>\n<task-id>t1</task-id>\n<status>exited</status>"));
    assert!(!agent.has_pending_task_notifications());
    agent.destroy().await;
}

#[tokio::test]
async fn destroy_kills_the_agents_tasks_and_reports_them() {
    let rig = rig();
    let model = provider(vec![background("c1", "sleep 300"), Script::answer("running")]);
    let agent = agent_on(&rig, &model, None);
    let (seen, _) = exits(&agent);
    agent.run(AgentRunOptions::prompt("Start it.")).await.unwrap();
    assert!(seen.lock().unwrap().is_empty());
    let pid = rig.context.handle();
    let task = rig.context.list_background(&pid).await.remove(0);
    assert!(task.is_running());
    agent.destroy().await;
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].status, TaskStatus::Killed);
    assert!(
        !std::path::Path::new(&format!("/proc/{}", task.pid)).exists() || {
            let stat = std::fs::read_to_string(format!("/proc/{}/stat", task.pid)).unwrap_or_default();
            stat.rsplit_once(')')
                .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
        }
    );
}

#[tokio::test]
async fn an_agent_on_a_host_owned_handle_adopts_its_running_tasks() {
    let rig = rig();
    let handle = rig.context.handle();
    let first = provider(vec![background("c1", "sleep 300"), Script::answer("running")]);
    let a = agent_on(&rig, &first, Some(handle.clone()));
    a.run(AgentRunOptions::prompt("Start it.")).await.unwrap();
    // The host owns the handle: tearing the agent down leaves the task.
    a.destroy().await;
    assert!(rig.context.list_background(&handle).await[0].is_running());

    let second = provider(vec![]);
    let b = agent_on(&rig, &second, Some(handle.clone()));
    let adopted: Arc<Mutex<Vec<String>>> = Arc::default();
    let ad = Arc::clone(&adopted);
    b.hooks().on_sync::<BackgroundAdopt, _>(move |ev, _| {
        ad.lock().unwrap().push(format!("{} {}", ev.task_id(), ev.command()));
        Ok(())
    });
    let (seen, woken) = exits(&b);
    b.ensure_execution().await.unwrap();
    assert_eq!(*adopted.lock().unwrap(), vec!["t1 sleep 300"]);
    assert!(b.kill_background_task("t1").await);
    while seen.lock().unwrap().is_empty() {
        woken.notified().await;
    }
    assert_eq!(seen.lock().unwrap()[0].status, TaskStatus::Killed);
    assert!(b.has_pending_task_notifications(), "a host kill is told to the model");
    assert!(!b.kill_background_task("t9").await);
}

#[tokio::test]
async fn a_sub_agents_running_task_is_handed_to_its_parent() {
    let rig = rig();
    // One child: the scripts play in order.
    let model = provider(vec![
        Script::call("s1", "spawn", json!({"task": "Start the server."})),
        background("c1", "sleep 300"),
        Script::answer("left it running"),
        Script::answer("the server runs"),
    ]);
    let agent = agent_on(&rig, &model, None);
    let moved: Arc<Mutex<Vec<String>>> = Arc::default();
    let m = Arc::clone(&moved);
    let handles_seen: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let handles = Arc::clone(&handles_seen);
    agent.hooks().on_sync::<BackgroundReassign, _>(move |ev, _| {
        m.lock()
            .unwrap()
            .push(format!("{} from {:?} ({})", ev.task_id(), ev.child_id(), ev.command()));
        handles
            .lock()
            .unwrap()
            .push((ev.from_handle_id().to_owned(), ev.to_handle_id().to_owned()));
        Ok(())
    });
    let bubbled: Arc<Mutex<Vec<String>>> = Arc::default();
    let b = Arc::clone(&bubbled);
    agent
        .hooks()
        .on_sync::<zidane_core::events::ChildBackgroundStart, _>(move |ev, _| {
            b.lock()
                .unwrap()
                .push(format!("{} {} {}", ev.child_id(), ev.depth(), ev.task_id()));
            Ok(())
        });
    let (seen, woken) = exits(&agent);
    agent.run(AgentRunOptions::prompt("Delegate.")).await.unwrap();
    assert_eq!(*moved.lock().unwrap(), vec!["t1 from Some(\"s1\") (sleep 300)"]);
    // From the child's ownership to this agent's.
    let (from, to) = handles_seen.lock().unwrap()[0].clone();
    assert_ne!(from, to, "the owners it moves between");
    assert!(!from.is_empty() && !to.is_empty());
    // The child's own start reached the parent as `child:background:start`.
    assert_eq!(*bubbled.lock().unwrap(), vec!["s1 1 t1"]);
    assert!(agent.kill_background_task("t1").await);
    while seen.lock().unwrap().is_empty() {
        woken.notified().await;
    }
    assert_eq!(seen.lock().unwrap()[0].task_id, "t1");
    agent.destroy().await;
}

/// A context whose tasks never report: their state is only pulled.
struct Silent {
    bytes: AtomicU64,
    exited: Mutex<bool>,
    owner: Mutex<String>,
}

fn unsupported() -> SharedError {
    Arc::new(MessageError("not in this test".into()))
}

impl ExecutionContext for Silent {
    fn kind(&self) -> &str {
        "silent"
    }

    fn spawn(&self) -> BoxFuture<'_, Result<ExecutionHandle, SharedError>> {
        Box::pin(async {
            Ok(ExecutionHandle {
                id: "silent-1".into(),
                kind: "silent".into(),
            })
        })
    }

    fn exec<'a>(
        &'a self,
        _: &'a ExecutionHandle,
        _: &'a str,
        _: ExecOptions,
    ) -> BoxFuture<'a, Result<ExecOutput, SharedError>> {
        Box::pin(async { Err(unsupported()) })
    }

    fn read_file<'a>(&'a self, _: &'a ExecutionHandle, _: &'a str) -> BoxFuture<'a, Result<Vec<u8>, SharedError>> {
        Box::pin(async { Err(unsupported()) })
    }

    fn write_file<'a>(
        &'a self,
        _: &'a ExecutionHandle,
        _: &'a str,
        _: &'a [u8],
    ) -> BoxFuture<'a, Result<(), SharedError>> {
        Box::pin(async { Err(unsupported()) })
    }

    fn list<'a>(&'a self, _: &'a ExecutionHandle, _: &'a str) -> BoxFuture<'a, Result<Vec<DirEntry>, SharedError>> {
        Box::pin(async { Err(unsupported()) })
    }

    fn stat<'a>(&'a self, _: &'a ExecutionHandle, _: &'a str) -> BoxFuture<'a, Result<Option<FileStat>, SharedError>> {
        Box::pin(async { Ok(None) })
    }

    fn destroy<'a>(&'a self, _: &'a ExecutionHandle) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }

    fn exec_background<'a>(
        &'a self,
        _: &'a ExecutionHandle,
        _: &'a str,
        options: BackgroundOptions,
    ) -> BoxFuture<'a, Result<BackgroundTask, SharedError>> {
        *self.owner.lock().unwrap() = options.owner.map(|o| o.owner).unwrap_or_default();
        Box::pin(async move { Ok(self.task()) })
    }

    fn list_background<'a>(&'a self, _: &'a ExecutionHandle) -> BoxFuture<'a, Vec<BackgroundTask>> {
        Box::pin(async move { vec![self.task()] })
    }
}

impl Silent {
    fn new() -> Arc<Self> {
        Arc::new(Silent {
            bytes: AtomicU64::new(0),
            exited: Mutex::new(false),
            owner: Mutex::default(),
        })
    }

    fn task(&self) -> BackgroundTask {
        BackgroundTask {
            task_id: "t1".into(),
            command: "make watch".into(),
            cwd: "/work".into(),
            output_path: "/tasks/t1.log".into(),
            pid: 4242,
            started_at: 1_700_000_000_000,
            owner: self.owner.lock().unwrap().clone(),
            bytes_written: self.bytes.load(Ordering::SeqCst),
            exit: self.exited.lock().unwrap().then(|| TaskExitInfo {
                task_id: "t1".into(),
                command: "make watch".into(),
                exit_code: 2,
                signal: None,
                status: TaskStatus::Exited,
                duration: std::time::Duration::from_millis(5000),
                output_path: "/tasks/t1.log".into(),
            }),
        }
    }
}

fn silent_agent(context: &Arc<Silent>, model: &ScriptedProvider, behavior: Behavior) -> Agent {
    let preset = basic(BasicOptions::in_folder("/work"));
    create_agent(AgentOptions {
        provider: vec![Arc::new(model.clone()) as Arc<dyn Provider>],
        tools: preset.tools,
        execution: Some(Arc::clone(context) as Arc<dyn ExecutionContext>),
        behavior,
        ..Default::default()
    })
    .unwrap()
}

#[tokio::test(start_paused = true)]
async fn an_exit_no_one_pushed_is_pulled_at_the_next_run() {
    let context = Silent::new();
    let model = provider(vec![
        background("c1", "make watch"),
        Script::answer("started"),
        Script::answer("noted"),
    ]);
    let agent = silent_agent(&context, &model, Behavior::default());
    let reconciled: Arc<Mutex<Vec<String>>> = Arc::default();
    let r = Arc::clone(&reconciled);
    agent.hooks().on_sync::<BackgroundReconcile, _>(move |ev, _| {
        r.lock()
            .unwrap()
            .extend(ev.exits.iter().map(|e| format!("{} {}", e.task_id, e.exit_code)));
        Ok(())
    });
    agent.run(AgentRunOptions::prompt("Watch.")).await.unwrap();
    assert!(!agent.has_pending_task_notifications(), "nothing was pushed");
    *context.exited.lock().unwrap() = true;
    agent.run(AgentRunOptions::prompt("How is it?")).await.unwrap();
    assert_eq!(*reconciled.lock().unwrap(), vec!["t1 2"]);
    let texts = last_user_texts(&model, 2);
    assert!(texts[0].contains("<exit-code>2</exit-code>"), "{texts:?}");
    assert_eq!(texts[1], "How is it?");
    // Told once: the next run has nothing to reconcile.
    model.push(Script::answer("fine"));
    agent.run(AgentRunOptions::prompt("And now?")).await.unwrap();
    assert_eq!(reconciled.lock().unwrap().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn the_stall_watchdog_fires_once_per_quiet_period_and_rearms_on_output() {
    let context = Silent::new();
    let model = provider(vec![
        background("c1", "make watch"),
        Script::answer("started"),
        Script::answer("I will look"),
    ]);
    let behavior = Behavior {
        background_stall_watchdog: Some(Duration::from_secs(10)),
        ..Default::default()
    };
    let agent = silent_agent(&context, &model, behavior);
    let stalls: Arc<Mutex<Vec<(String, u64)>>> = Arc::default();
    let s = Arc::clone(&stalls);
    agent.hooks().on_sync::<BackgroundStall, _>(move |ev, _| {
        s.lock().unwrap().push((ev.task_id().to_owned(), ev.bytes_written()));
        Ok(())
    });
    agent.run(AgentRunOptions::prompt("Watch.")).await.unwrap();
    tokio::time::sleep(Duration::from_secs(15)).await;
    assert_eq!(*stalls.lock().unwrap(), vec![("t1".to_owned(), 0)]);
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert_eq!(stalls.lock().unwrap().len(), 1, "once per quiet period");
    context.bytes.store(120, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(stalls.lock().unwrap().len(), 1, "fresh output is no stall");
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert_eq!(
        *stalls.lock().unwrap(),
        vec![("t1".to_owned(), 0), ("t1".to_owned(), 120)]
    );
    // The notes reach the model with the next run, not as exits.
    assert!(!agent.has_pending_task_notifications());
    agent.run(AgentRunOptions::prompt("Status?")).await.unwrap();
    let texts = last_user_texts(&model, 2);
    assert_eq!(texts.len(), 3, "{texts:?}");
    assert!(texts[0].starts_with("<task-stall>\n<task-id>t1</task-id>\n<command>make watch</command>\n"));
    assert!(texts[1].contains("<bytes-written>120</bytes-written>"));
}

/// A session's running tasks outlive the process that started them: a new
/// process (a fresh context) takes back the one that still runs and tells
/// the model of the one that is gone.
#[tokio::test]
async fn a_later_process_takes_back_a_sessions_running_task_and_reports_a_lost_one() {
    use zidane_core::session::{MemoryStore, SessionStore};
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn SessionStore> = Arc::new(MemoryStore::default());
    let build = |model: &ScriptedProvider| {
        // Each "process" has its own context: nothing in memory carries over.
        let context = Arc::new(ProcessContext::new(dir.path()).task_dir(dir.path().join(".tasks")));
        let preset = basic(BasicOptions::in_folder(dir.path()));
        let agent = create_agent(AgentOptions {
            provider: vec![Arc::new(model.clone()) as Arc<dyn Provider>],
            tools: preset.tools,
            execution: Some(Arc::clone(&context) as Arc<dyn ExecutionContext>),
            store: Some(Arc::clone(&store)),
            session_id: Some("work".into()),
            ..Default::default()
        })
        .unwrap();
        (agent, context)
    };
    let first = provider(vec![background("c1", "sleep 300"), Script::answer("it runs")]);
    let (a, a_context) = build(&first);
    a.run(AgentRunOptions::prompt("Start it.")).await.unwrap();
    // Wait for the record, then "crash": the agent is never torn down, and
    // the session also names a task whose process is gone (an exited
    // command's pid).
    let records = loop {
        let session = store.load("work").await.unwrap().unwrap();
        if let Some(records) = session
            .metadata
            .get("background.tasks")
            .and_then(|v| v.as_object())
            .filter(|m| !m.is_empty())
        {
            break records.clone();
        }
        tokio::task::yield_now().await;
    };
    let gone = std::process::Command::new("true").spawn().unwrap();
    let gone_pid = gone.id();
    let mut gone = gone;
    gone.wait().unwrap();
    let mut records = records;
    records.insert(
        "t7".into(),
        json!({"command": "sleep 301", "cwd": "/", "outputPath": "/nowhere/t7.log", "pid": gone_pid, "startedAt": 1}),
    );
    store
        .set_meta("work", "background.tasks", &serde_json::Value::Object(records))
        .await
        .unwrap();
    let tasks = a_context.list_background(&a_context.handle()).await;
    assert!(tasks[0].is_running());
    std::mem::forget(a);

    let second = provider(vec![Script::answer("t1 still runs"), Script::answer("stopped")]);
    let (b, b_context) = build(&second);
    let adopted: Arc<Mutex<Vec<String>>> = Arc::default();
    let ad = Arc::clone(&adopted);
    b.hooks().on_sync::<BackgroundAdopt, _>(move |ev, _| {
        ad.lock()
            .unwrap()
            .push(format!("{} {} {}", ev.task_id(), ev.pid(), ev.command()));
        Ok(())
    });
    let (seen, woken) = exits(&b);
    b.run(AgentRunOptions::prompt("What runs?")).await.unwrap();
    assert_eq!(*adopted.lock().unwrap(), vec![format!("t1 {} sleep 300", tasks[0].pid)]);
    let texts = last_user_texts(&second, 0);
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(
        texts[0].starts_with(
            "<task-notification>\n<task-id>t7</task-id>\n<status>lost</status>\n<command>sleep 301</command>"
        ),
        "{texts:?}"
    );
    // The taken-back task is this process's to stop; its end is observed.
    assert!(b.kill_background_task("t1").await);
    while seen.lock().unwrap().is_empty() {
        woken.notified().await;
    }
    assert_eq!(seen.lock().unwrap()[0].status, TaskStatus::Killed);
    // A new task does not reuse a taken-back id.
    let next = b_context
        .exec_background(&b_context.handle(), "true", Default::default())
        .await
        .unwrap();
    assert_eq!(next.task_id, "t2");
    // The session records only what still runs: the lost task at once,
    // the killed one once its end is handled.
    let session = store.load("work").await.unwrap().unwrap();
    assert!(
        !session.metadata["background.tasks"]
            .as_object()
            .unwrap()
            .contains_key("t7")
    );
    loop {
        let session = store.load("work").await.unwrap().unwrap();
        if !session.metadata["background.tasks"]
            .as_object()
            .unwrap()
            .contains_key("t1")
        {
            break;
        }
        tokio::task::yield_now().await;
    }
}

/// A child's background task that exits while the child runs, a file the
/// child writes, and a grandchild's task the child takes over reach the
/// root as `child:background:exit`, `child:artifact:recorded` and
/// `child:background:reassign` (a durable parent: its children keep
/// sessions, where artifacts are recorded).
#[cfg(feature = "sqlite")]
#[tokio::test]
async fn a_childs_background_events_and_artifacts_bubble_to_the_root() {
    let rig = rig();
    let home = tempfile::tempdir().unwrap();
    let runtime = Arc::new(zidane_agent::CheckpointRuntime::open(home.path().join("sessions.db")).unwrap());
    // One conversation at a time: the scripts play in order.
    let model = provider(vec![
        Script::call("s1", "spawn", json!({"task": "Set things up."})),
        background("b1", "true"),
        Script::call("c2", "shell", json!({"command": "sleep 1"})),
        Script::call("c3", "write_file", json!({"path": "notes.txt", "content": "set up\n"})),
        Script::call("g1", "spawn", json!({"task": "Start the server."})),
        background("b2", "sleep 300"),
        Script::answer("left it running"),
        Script::answer("set up, the server runs"),
        Script::answer("done"),
    ]);
    let preset = basic(BasicOptions::in_folder(rig.context.root()));
    let agent = create_agent(AgentOptions {
        provider: vec![Arc::new(model.clone()) as Arc<dyn Provider>],
        tools: preset.tools.with(zidane_tools::spawn()),
        execution: Some(Arc::clone(&rig.context) as Arc<dyn ExecutionContext>),
        artifacts: Some(true),
        durable: Some(zidane_agent::DurableOptions::from(runtime)),
        session_id: Some("root".into()),
        spawn: zidane_agent::SpawnConfig {
            max_depth: 2,
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    let seen = crate::support::record_where(&agent, |name| name.starts_with("child:"));
    let taken: Arc<Mutex<Vec<String>>> = Arc::default();
    let t = Arc::clone(&taken);
    agent.hooks().on_sync::<BackgroundReassign, _>(move |ev, _| {
        t.lock().unwrap().push(ev.task_id().to_owned());
        Ok(())
    });
    agent.run(AgentRunOptions::prompt("Delegate.")).await.unwrap();
    let taken = taken.lock().unwrap().clone();
    for task in &taken {
        agent.kill_background_task(task).await;
    }
    assert_eq!(taken.len(), 1, "the server's task ends with the root");
    let seen = seen.lock().unwrap().clone();
    let missing: Vec<&str> = [
        "child:background:start",
        "child:background:exit",
        "child:artifact:recorded",
        "child:background:reassign",
    ]
    .into_iter()
    .filter(|name| !seen.contains(name))
    .collect();
    assert!(missing.is_empty(), "not bubbled: {missing:?}; seen: {seen:?}");
}
