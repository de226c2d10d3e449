//! Durable runs in checkpoint mode: a real child process is killed with
//! SIGKILL at each step boundary and a fresh agent (in this process)
//! resumes its run; leases between two holders; suspend; a history rewrite.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use zidane_core::durable::CheckpointBackend;

use serde_json::json;
use zidane_agent::checkpoints::RewindOptions;
use zidane_agent::{
    AgentError, AgentOptions, AgentRunOptions, AutoCompact, CheckpointOptions, CheckpointRuntime, DurableOptions,
    DurableResumeOptions, SuspendOptions, create_agent,
};
use zidane_core::clock::{Clock, FixedClock};
use zidane_core::events::{
    CompactStart, ResumeMismatch, RunStatus, StreamText, ToolAfter, ToolBatchResumed, TurnAfter,
};
use zidane_core::session::{MemoryStore, SessionRunStatus};
use zidane_core::{FnTool, ToolOutput, ToolSet};
use zidane_provider::scripted::{Script, ScriptedProvider};
use zidane_provider::{
    ContentBlock, FinishReason, Message, Provider, Role, StreamEvent, ToolResultContent, UsageReport,
};

use crate::support::provider;

const INTERRUPTED: &str = "Tool error: this call was interrupted";

fn effect(path: &Path, line: &str) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    writeln!(f, "{line}").unwrap();
}

fn effects(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn ready() {
    let mut out = std::io::stdout();
    let _ = writeln!(out, "READY");
    let _ = out.flush();
}

/// Signals the child's `hang` tool that the other call of its batch is done.
static OTHER_DONE: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// The tools of every scenario. Each side effect is a line in `log`; with
/// `hang`, the hanging tools stop there (the child, about to be killed).
fn tools(log: PathBuf, hang: bool) -> ToolSet {
    let (l1, l2, l3, l4) = (log.clone(), log.clone(), log.clone(), log);
    ToolSet::new()
        .with(zidane_tools::spawn())
        .with(
            FnTool::new(
                "hang_par",
                "Runs long, beside others, safely",
                json!({"type": "object"}),
                move |_i, _cx| async move {
                    if hang {
                        std::future::pending::<()>().await;
                    }
                    Ok(ToolOutput::text("done"))
                },
            )
            .parallel()
            .safe(),
        )
        .with(
            FnTool::new(
                "write_note",
                "Writes a note",
                json!({"type": "object"}),
                move |_i, cx| {
                    let log = l1.clone();
                    async move {
                        effect(&log, &format!("write:{}", cx.call_id()));
                        cx.state().set(format!("note:{}", cx.call_id()), json!(true));
                        Ok(ToolOutput::text(format!("wrote {}", cx.call_id())))
                    }
                },
            )
            .parallel(),
        )
        .with(
            FnTool::new("look", "Looks", json!({"type": "object"}), move |_i, cx| {
                let log = l2.clone();
                async move {
                    effect(&log, &format!("look:{}", cx.call_id()));
                    Ok(ToolOutput::text("looked"))
                }
            })
            .parallel()
            .safe(),
        )
        .with(
            FnTool::new("hang", "Runs long", json!({"type": "object"}), move |_i, cx| {
                let log = l3.clone();
                async move {
                    cx.state().set("hang", json!("staged, never committed"));
                    if hang {
                        OTHER_DONE.notified().await;
                        ready();
                        std::future::pending::<()>().await;
                    }
                    effect(&log, &format!("hang:{}", cx.call_id()));
                    Ok(ToolOutput::text("hung"))
                }
            })
            .parallel(),
        )
        .with(
            FnTool::new(
                "hang_safe",
                "Runs long, safely",
                json!({"type": "object"}),
                move |_i, cx| {
                    let log = l4.clone();
                    async move {
                        effect(&log, &format!("hang_safe:{}", cx.call_id()));
                        if hang {
                            // In `safe_call_windowed` the child says READY
                            // once the records are on disk.
                            if std::env::var("ZIDANE_DURABLE_CASE").as_deref() != Ok("safe_call_windowed") {
                                ready();
                            }
                            std::future::pending::<()>().await;
                        }
                        Ok(ToolOutput::text("done"))
                    }
                },
            )
            .safe(),
        )
}

/// Whether this run of the suite records in PostgreSQL
/// (`ZIDANE_TEST_BACKEND=postgres`) rather than in SQLite.
fn on_postgres() -> bool {
    cfg!(feature = "postgres") && std::env::var_os("ZIDANE_TEST_BACKEND").is_some_and(|b| b == "postgres")
}

/// The backend of the suite's run, on the store of `db` (a SQLite file, or
/// the schema named after its folder).
async fn runtime(db: &Path) -> Arc<dyn CheckpointBackend> {
    #[cfg(feature = "postgres")]
    if on_postgres() {
        let options = zidane_agent::PostgresOptions {
            schema: Some(crate::support::postgres_schema(db.parent().unwrap())),
            ..Default::default()
        };
        let url = crate::support::postgres_url();
        return Arc::new(zidane_agent::PostgresRuntime::connect(&url, options).await.unwrap());
    }
    Arc::new(CheckpointRuntime::open(db).unwrap())
}

fn durable_options(p: &ScriptedProvider, rt: Arc<dyn CheckpointBackend>, log: PathBuf, hang: bool) -> AgentOptions {
    AgentOptions {
        provider: vec![Arc::new(p.clone()) as Arc<dyn Provider>],
        tools: tools(log, hang),
        session_id: Some("s".into()),
        durable: Some(DurableOptions::new(rt)),
        ..Default::default()
    }
}

fn calls(ids: &[(&str, &str)]) -> Script {
    let mut s = Script::new();
    for (i, (id, name)) in ids.iter().enumerate() {
        s = s.tool_call(i, *id, *name, json!({}));
    }
    s.usage(10, 5).end(FinishReason::ToolCalls)
}

fn with_input(script: Script, input: u64) -> Script {
    script.event(StreamEvent::Usage(UsageReport {
        input: Some(input),
        output: Some(10),
        ..Default::default()
    }))
}

fn hanging_stream() -> Script {
    Script::new().text("partial").delay(Duration::from_secs(3600))
}

/// Not a test of its own: the child process of the crash tests, which
/// re-run this binary filtered to this function with `ZIDANE_DURABLE_DB`
/// set. Without the variable it returns at once.
#[tokio::test]
async fn durable_child_helper() {
    let (Some(db), Some(case)) = (
        std::env::var_os("ZIDANE_DURABLE_DB"),
        std::env::var("ZIDANE_DURABLE_CASE").ok(),
    ) else {
        return;
    };
    let log = PathBuf::from(std::env::var_os("ZIDANE_DURABLE_EFFECTS").unwrap());
    let scripts = match case.as_str() {
        "stream" => vec![hanging_stream()],
        "after_model" => vec![calls(&[("c1", "write_note"), ("c2", "look")])],
        "mid_batch" | "hold" => vec![calls(&[("c1", "write_note"), ("c2", "hang")])],
        "safe_call" | "safe_call_windowed" | "approved" => vec![calls(&[("c1", "hang_safe")])],
        "decided" => vec![calls(&[("c1", "hang_safe")]), Script::answer(r#"{"probability": 0.9}"#)],
        "decided_two" => vec![
            calls(&[("c1", "hang_par"), ("c2", "hang_par")]),
            Script::answer(r#"{"probability": 0.2}"#),
            Script::answer(r#"{"probability": 0.7}"#),
        ],
        "between" => vec![calls(&[("c1", "write_note")]), hanging_stream()],
        "held" => vec![calls(&[("c1", "write_note")]), hanging_stream()],
        "read" => vec![
            Script::new()
                .tool_call(0, "c1", "read_file", json!({"path": "notes.txt"}))
                .usage(10, 5)
                .end(FinishReason::ToolCalls),
            hanging_stream(),
        ],
        "compaction" => vec![
            with_input(calls(&[("c1", "write_note")]), 100),
            with_input(calls(&[("c2", "write_note")]), 700),
            hanging_stream(),
        ],
        "summarized" => vec![
            with_input(calls(&[("c1", "write_note")]), 100),
            with_input(calls(&[("c2", "write_note")]), 700),
            Script::answer("SUMMARY FROM THE DEAD PROCESS"),
            hanging_stream(),
        ],
        "spawned" => vec![
            Script::new()
                .tool_call(0, "c1", "spawn", json!({"task": "Count the notes."}))
                .usage(10, 5)
                .end(FinishReason::ToolCalls),
            Script::answer("THE CHILD COUNTED THREE"),
        ],
        other => panic!("unknown case {other}"),
    };
    let p = provider(scripts);
    // These cases show what each step's record gives a resume, so each is
    // written as its step finishes; the others run with the default
    // grouping of writes.
    let rt: Arc<dyn CheckpointBackend> = if on_postgres() {
        // Every record is written as its step finishes there.
        runtime(Path::new(&db)).await
    } else if case == "after_model" || case == "safe_call" || case == "spawned" {
        Arc::new(
            CheckpointRuntime::open_with(
                Path::new(&db),
                CheckpointOptions {
                    group_commit: Duration::ZERO,
                    ..Default::default()
                },
            )
            .unwrap(),
        )
    } else if case == "safe_call_windowed" {
        // No heartbeat before the kill: only the grouping's timer writes.
        let options = CheckpointOptions {
            heartbeat: Duration::from_secs(3600),
            lease_ttl: Duration::from_secs(7200),
            ..Default::default()
        };
        Arc::new(CheckpointRuntime::open_with(Path::new(&db), options).unwrap())
    } else {
        runtime(Path::new(&db)).await
    };
    let mut options = durable_options(&p, rt.clone(), log.clone(), true);
    if case == "compaction" || case == "summarized" {
        options.auto_compact = Some(compacting());
    }
    if case == "held" {
        options.checkpoints = Some(folder_checkpoints(Path::new(&db)));
    }
    if case == "read" {
        let preset = zidane_tools::basic(zidane_tools::BasicOptions::in_folder(work_folder(Path::new(&db))));
        options.tools = preset.tools;
        options.execution = Some(preset.execution);
    }
    if case == "approved" {
        let (interceptors, approver) = asking(&log);
        options.interceptors = interceptors;
        options.approve_tool_call = Some(approver);
    }
    let agent = create_agent(options).unwrap();
    if case == "decided" {
        deciding(&agent, &log);
    }
    if case == "decided_two" {
        // c2's question first, then c1's; READY once both are answered.
        deciding_in_order(&agent, &log, "c2", true);
    }
    match case.as_str() {
        "stream" | "between" | "read" | "held" => {
            agent.hooks().on_sync::<StreamText, _>(|_, _| {
                ready();
                Ok(())
            });
        }
        "after_model" => {
            agent.hooks().on_sync::<TurnAfter, _>(|_, _| {
                ready();
                loop {
                    std::thread::park();
                }
            });
        }
        "compaction" => {
            agent.hooks().on_sync::<CompactStart, _>(|_, _| {
                ready();
                Ok(())
            });
        }
        "spawned" => {
            // The child finished (its run is recorded as completed); the
            // process dies before the parent's spawn call is recorded.
            agent.hooks().on_sync::<zidane_core::events::SpawnComplete, _>(|_, _| {
                ready();
                loop {
                    std::thread::park();
                }
            });
        }
        "summarized" => {
            // The summary is in; the process dies before the history is
            // replaced.
            agent.hooks().on_sync::<zidane_core::events::CompactRestore, _>(|_, _| {
                ready();
                loop {
                    std::thread::park();
                }
            });
        }
        _ => {}
    }
    agent.hooks().on_sync::<ToolAfter, _>(|_, _| {
        OTHER_DONE.notify_one();
        Ok(())
    });
    // What a gate handler keeps per call comes back on a resumed call.
    agent.hooks().on_sync::<zidane_core::events::ToolGate, _>(|ev, _| {
        let id = ev.call_id().to_owned();
        ev.resume_state.insert("approved".into(), json!(format!("yes, {id}")));
        Ok(())
    });
    if case == "safe_call_windowed" {
        // READY once the model's calling turn is on disk, written by the
        // grouping's timer while the safe call still runs.
        let watch = async {
            // Not a timing assertion: a bound so a missing write ends the
            // child (and fails the test) instead of hanging it.
            for _ in 0..2_000 {
                let runs = rt
                    .session_store()
                    .load("s")
                    .await
                    .unwrap()
                    .map(|s| s.runs)
                    .unwrap_or_default();
                if let Some(run) = runs.first()
                    && !rt.records(&run.id).await.unwrap().is_empty()
                {
                    ready();
                    return;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            std::process::exit(1);
        };
        let _ = tokio::join!(agent.run(AgentRunOptions::prompt("Work.")), watch);
        return;
    }
    let _ = agent.run(AgentRunOptions::prompt("Work.")).await;
}

/// Folder checkpoints of the work folder beside the store, kept in a
/// SQLite file of their own (on either backend).
fn folder_checkpoints(db: &Path) -> Arc<zidane_agent::checkpoints::Checkpoints> {
    let store = zidane_agent::SqliteStore::open(db.parent().unwrap().join("checkpoints.db")).unwrap();
    Arc::new(zidane_agent::checkpoints::Checkpoints::new(
        Arc::new(store) as Arc<dyn zidane_core::checkpoint::CheckpointStore>,
        zidane_agent::checkpoints::CheckpointsConfig::new(work_folder(db)),
    ))
}

/// While another process holds the session (its run waits for the model),
/// a rewind, a file-restoring fork and a metadata key from this process
/// are refused and change nothing: the holder's conversation is not cut
/// and its run is not marked aborted under it. Once the holder is gone the
/// rewind goes through, in one write: the branch holds the whole
/// conversation, the session the turns before the checkpoint.
#[tokio::test]
async fn a_rewind_from_a_second_process_waits_for_the_lease() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sessions.db");
    let log = dir.path().join("effects.log");
    let mut holder = start_child("held", &db, &log);

    let p = provider(vec![]);
    let rt = runtime(&db).await;
    let agent = create_agent(AgentOptions {
        checkpoints: Some(folder_checkpoints(&db)),
        ..durable_options(&p, rt.clone(), log.clone(), false)
    })
    .unwrap();
    let conversation = RewindOptions {
        code: false,
        ..Default::default()
    };
    let refused = agent.rewind(1, conversation).await;
    assert!(matches!(refused, Err(AgentError::RunLeaseHeld(_))), "{refused:?}");
    let refused = agent.fork(Some(1), "s-with-files", true).await;
    assert!(matches!(refused, Err(AgentError::RunLeaseHeld(_))), "{refused:?}");
    let refused = agent.set_session_meta("note", json!("mine")).await;
    assert!(matches!(refused, Err(AgentError::RunLeaseHeld(_))), "{refused:?}");
    let session = rt.session_store().load("s").await.unwrap().unwrap();
    assert_eq!(session.turns.len(), 3, "the holder's conversation is whole");
    assert_eq!(
        session.runs.iter().map(|r| (r.status, r.resumable)).collect::<Vec<_>>(),
        [(SessionRunStatus::Running, true)],
        "the holder's run is still its own"
    );
    assert!(!session.metadata.contains_key("note"));
    // A fork of the conversation alone takes nothing from the holder.
    let forked = agent.fork(None, "s-copy", false).await.unwrap();
    assert_eq!(forked.turns, 3);

    holder.kill().unwrap(); // SIGKILL
    holder.wait().unwrap();
    let outcome = agent.rewind(1, conversation).await.unwrap();
    assert_eq!(outcome.turns_kept, Some(0));
    let branch = outcome.branch.unwrap();
    let store = rt.session_store();
    assert_eq!(store.load(&branch).await.unwrap().unwrap().turns.len(), 3);
    let session = store.load("s").await.unwrap().unwrap();
    assert!(session.turns.is_empty());
    assert_eq!(session.metadata.get("rewoundBranch"), Some(&json!(branch)));
    assert_eq!(
        session.runs.iter().map(|r| (r.status, r.resumable)).collect::<Vec<_>>(),
        [(SessionRunStatus::Aborted, false)],
        "the dead holder's run past the cut is over"
    );
    agent.set_session_meta("note", json!("mine")).await.unwrap();
}

/// The folder the file tools of the `read` case work in, beside the store.
fn work_folder(db: &Path) -> PathBuf {
    let folder = db.parent().unwrap().join("work");
    std::fs::create_dir_all(&folder).unwrap();
    folder
}

/// Killed after the model read a file (in the next model call): the
/// resumed run, in a new process, knows the file was read, so the model's
/// `edit` of it is not refused as a change to a file it never read.
#[tokio::test]
async fn after_a_resume_a_file_read_before_the_crash_can_be_edited() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sessions.db");
    let log = dir.path().join("effects.log");
    let work = work_folder(&db);
    std::fs::write(work.join("notes.txt"), "first line\n").unwrap();
    let mut child = start_child("read", &db, &log);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let p = provider(vec![
        Script::new()
            .tool_call(
                0,
                "c2",
                "edit",
                json!({"path": "notes.txt", "old_string": "first", "new_string": "edited"}),
            )
            .usage(10, 5)
            .end(FinishReason::ToolCalls),
        Script::answer("edited"),
    ]);
    let rt = runtime(&db).await;
    let preset = zidane_tools::basic(zidane_tools::BasicOptions::in_folder(&work));
    let agent = create_agent(AgentOptions {
        tools: preset.tools,
        execution: Some(preset.execution),
        ..durable_options(&p, rt, log, false)
    })
    .unwrap();
    let output = agent
        .resume(DurableResumeOptions::default())
        .await
        .unwrap()
        .expect("there is a run to resume");
    assert_eq!(output.text, "edited");
    let requests = p.requests();
    let edited = results(requests[1].messages.last().unwrap().content());
    assert_eq!(edited.len(), 1);
    assert!(!edited[0].2, "the edit was not refused: {edited:?}");
    assert_eq!(
        std::fs::read_to_string(work.join("notes.txt")).unwrap(),
        "edited line\n"
    );
}

/// An interceptor that asks about every call, and an approver that says yes
/// and notes each question in `log` (`asked:<call id>`).
#[allow(clippy::type_complexity)]
fn asking(
    log: &Path,
) -> (
    Vec<Arc<dyn zidane_agent::ToolCallInterceptor>>,
    Arc<dyn zidane_agent::ToolCallApprover>,
) {
    struct Yes(PathBuf);
    impl zidane_agent::ToolCallApprover for Yes {
        fn approve<'a>(
            &'a self,
            request: zidane_agent::ApprovalRequest<'a>,
        ) -> zidane_provider::BoxFuture<'a, zidane_agent::ApprovalDecision> {
            effect(&self.0, &format!("asked:{}", request.call.call_id));
            Box::pin(async { zidane_agent::ApprovalDecision::Approve })
        }
    }
    let ask =
        zidane_agent::FnInterceptor(|_: &zidane_agent::ToolCall| zidane_agent::ToolCallVerdict::Ask { reason: None });
    (vec![Arc::new(ask)], Arc::new(Yes(log.to_path_buf())))
}

/// Starts the child on `case` and waits until it reached its point.
fn start_child(case: &str, db: &Path, log: &Path) -> Child {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "durable::durable_child_helper",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("ZIDANE_DURABLE_DB", db)
        .env("ZIDANE_DURABLE_CASE", case)
        .envs(postgres_env())
        .env("ZIDANE_DURABLE_EFFECTS", log)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let ready = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .any(|line| line.contains("READY"));
    assert!(ready, "the child of `{case}` reached its point");
    child
}

/// What a child needs to record in the same PostgreSQL server.
fn postgres_env() -> Vec<(&'static str, String)> {
    #[cfg(feature = "postgres")]
    if on_postgres() {
        return vec![("ZIDANE_TEST_POSTGRES", crate::support::postgres_url())];
    }
    Vec::new()
}

/// Kills the child of `case` at its point; returns the store and the
/// effects log.
fn crash(case: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sessions.db");
    let log = dir.path().join("effects.log");
    let mut child = start_child(case, &db, &log);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    (dir, db, log)
}

/// Every call in `messages` is answered in the next message.
fn assert_paired(messages: &[Message]) {
    for (i, m) in messages.iter().enumerate() {
        for b in m.content() {
            if let ContentBlock::ToolUse { id, .. } = b {
                let answered = messages.get(i + 1).is_some_and(|next| {
                    next.content()
                        .iter()
                        .any(|r| matches!(r, ContentBlock::ToolResult { tool_use_id, .. } if tool_use_id == id))
                });
                assert!(answered, "call {id} is answered in the next message");
            }
        }
    }
}

/// The tool results of a message, by call id: (text, is_error).
fn results(content: &[ContentBlock]) -> Vec<(String, String, bool)> {
    content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolResult {
                tool_use_id,
                content: ToolResultContent::Text(text),
                is_error,
            } => Some((tool_use_id.clone(), text.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

/// A `tool-batch:resumed`: (done, resuming).
type Batch = (Vec<String>, Vec<String>);

struct Resumed {
    requests: Vec<zidane_provider::StreamOptions>,
    batches: Vec<Batch>,
    stats: zidane_core::events::AgentStats,
    turns: Vec<zidane_provider::SessionTurn>,
    state: std::collections::BTreeMap<String, serde_json::Value>,
    gates: Vec<(String, bool, serde_json::Value)>,
}

fn compacting() -> AutoCompact {
    AutoCompact {
        threshold: 0.5,
        keep_turns: 2,
        context_window: Some(1000),
        ..Default::default()
    }
}

/// A fresh agent on the crashed store resumes the run.
async fn resume(db: &Path, log: &Path, scripts: Vec<Script>) -> Resumed {
    resume_with(db, log, scripts, None).await
}

async fn resume_with(db: &Path, log: &Path, scripts: Vec<Script>, auto_compact: Option<AutoCompact>) -> Resumed {
    let p = provider(scripts);
    let rt = runtime(db).await;
    let agent = create_agent(AgentOptions {
        auto_compact,
        ..durable_options(&p, rt.clone(), log.to_path_buf(), false)
    })
    .unwrap();
    let gates: Arc<Mutex<Vec<(String, bool, serde_json::Value)>>> = Arc::default();
    let g = Arc::clone(&gates);
    agent.hooks().on_sync::<zidane_core::events::ToolGate, _>(move |ev, _| {
        g.lock().unwrap().push((
            ev.call_id().to_owned(),
            ev.resumed(),
            serde_json::Value::Object(ev.resume_state.clone()),
        ));
        Ok(())
    });
    let batches: Arc<Mutex<Vec<Batch>>> = Arc::default();
    let seen = Arc::clone(&batches);
    agent.hooks().on_sync::<ToolBatchResumed, _>(move |ev, _| {
        seen.lock().unwrap().push((ev.done().to_vec(), ev.resuming().to_vec()));
        Ok(())
    });
    let stats = agent
        .resume(DurableResumeOptions::default())
        .await
        .unwrap()
        .expect("there is a run to resume");
    let state = agent.tool_state();
    let gates = gates.lock().unwrap().clone();
    let session = rt.session_store().load("s").await.unwrap().unwrap();
    assert_eq!(
        session.runs.last().map(|r| (r.status, r.resumable)),
        Some((SessionRunStatus::Completed, false)),
        "the resumed run kept its record and ended it"
    );
    assert_eq!(session.runs.len(), 1, "the resumed run is the same run");
    let turns = session.turns;
    let mut ids: Vec<&str> = turns.iter().map(|t| t.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), turns.len(), "every turn is saved once");
    let requests = p.requests();
    if let Some(last) = requests.last() {
        assert_paired(&last.messages);
    }
    let batches = batches.lock().unwrap().clone();
    Resumed {
        requests,
        batches,
        stats: stats.into(),
        turns,
        state,
        gates,
    }
}

fn texts(turns: &[zidane_provider::SessionTurn]) -> Vec<(Role, String)> {
    turns
        .iter()
        .map(|t| {
            let text = t
                .content
                .iter()
                .map(|b| match b {
                    ContentBlock::Text { text } => text.clone(),
                    ContentBlock::ToolUse { id, .. } => format!("call {id}"),
                    ContentBlock::ToolResult { tool_use_id, .. } => format!("result {tool_use_id}"),
                    _ => String::new(),
                })
                .collect::<Vec<_>>()
                .join(" ");
            (t.role, text)
        })
        .collect()
}

#[tokio::test]
async fn killed_during_the_model_stream_the_request_is_sent_again() {
    let (_dir, db, log) = crash("stream");
    let r = resume(&db, &log, vec![Script::answer("recovered")]).await;
    assert_eq!(r.requests.len(), 1);
    assert_eq!(
        r.requests[0].messages.len(),
        1,
        "the same first request: the prompt alone"
    );
    assert_eq!(r.requests[0].messages[0].content(), [ContentBlock::text("Work.")]);
    assert_eq!(
        texts(&r.turns),
        vec![(Role::User, "Work.".into()), (Role::Assistant, "recovered".into())]
    );
    assert!(r.batches.is_empty());
    assert_eq!(r.stats.status, RunStatus::Completed);
}

#[tokio::test]
async fn killed_after_the_calling_turn_was_recorded_no_request_repeats_and_only_safe_calls_run() {
    let (_dir, db, log) = crash("after_model");
    assert!(effects(&log).is_empty(), "no tool ran before the crash");
    let r = resume(&db, &log, vec![Script::answer("ok")]).await;
    assert_eq!(r.requests.len(), 1, "the recorded model call is not asked again");
    let last = &r.requests[0].messages;
    assert_eq!(last.len(), 3, "prompt, the recorded calling turn, its results");
    let got = results(last[2].content());
    assert_eq!(got[0].0, "c1");
    assert!(
        got[0].1.starts_with(INTERRUPTED) && got[0].2,
        "the unsafe call is reported, not run"
    );
    assert_eq!(got[1], ("c2".into(), "looked".into(), false), "the safe call runs");
    assert_eq!(effects(&log), vec!["look:c2"]);
    assert_eq!(r.batches, vec![(vec![], vec!["c1".into(), "c2".into()])]);
}

#[tokio::test]
async fn killed_mid_batch_a_finished_unsafe_call_is_not_run_again() {
    let (_dir, db, log) = crash("mid_batch");
    assert_eq!(effects(&log), vec!["write:c1"]);
    let r = resume(&db, &log, vec![Script::answer("ok")]).await;
    assert_eq!(r.requests.len(), 1);
    let got = results(r.requests[0].messages[2].content());
    assert_eq!(
        got[0],
        ("c1".into(), "wrote c1".into(), false),
        "answered from its record"
    );
    assert_eq!(got[1].0, "c2");
    assert!(got[1].1.starts_with(INTERRUPTED) && got[1].2);
    assert_eq!(effects(&log), vec!["write:c1"], "exactly once");
    assert_eq!(r.batches, vec![(vec!["c1".into()], vec!["c2".into()])]);
    assert_eq!(
        r.state.keys().collect::<Vec<_>>(),
        vec!["note:c1"],
        "the finished call's state landed with its record; the cut-off call's staged write did not"
    );
    assert_eq!(
        r.gates,
        vec![("c1".to_owned(), true, json!({"approved": "yes, c1"}))],
        "the finished call's gate runs again, resumed, with what its handler kept; the interrupted one does not run"
    );
    assert_eq!(
        texts(&r.turns),
        vec![
            (Role::User, "Work.".into()),
            (Role::Assistant, "call c1 call c2".into()),
            (Role::User, "result c1 result c2".into()),
            (Role::Assistant, "ok".into()),
        ]
    );
}

#[tokio::test]
async fn killed_during_a_safe_call_it_runs_again() {
    let (_dir, db, log) = crash("safe_call");
    assert_eq!(effects(&log), vec!["hang_safe:c1"]);
    let r = resume(&db, &log, vec![Script::answer("ok")]).await;
    assert_eq!(r.requests.len(), 1);
    assert_eq!(
        results(r.requests[0].messages[2].content()),
        vec![("c1".into(), "done".into(), false)]
    );
    assert_eq!(
        effects(&log),
        vec!["hang_safe:c1", "hang_safe:c1"],
        "a safe call may run again"
    );
}

#[tokio::test]
async fn killed_during_a_long_safe_call_its_calling_turn_was_written_by_the_grouping_timer() {
    let (_dir, db, log) = crash("safe_call_windowed");
    let r = resume(&db, &log, vec![Script::answer("ok")]).await;
    assert_eq!(
        r.requests.len(),
        1,
        "the calling turn waited at most the window, not for the call to end"
    );
    assert_eq!(
        results(r.requests[0].messages[2].content()),
        vec![("c1".into(), "done".into(), false)]
    );
    assert_eq!(effects(&log), vec!["hang_safe:c1", "hang_safe:c1"]);
}

/// The commits of a run of `turns` tool turns each calling `tool`, then an
/// answer, on a runtime whose records wait `window` (no timer fires here
/// when it is long).
async fn commits_of(turns: usize, tool: &str, window: Duration) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let options = CheckpointOptions {
        group_commit: window,
        heartbeat: Duration::from_secs(3600),
        lease_ttl: Duration::from_secs(7200),
        ..Default::default()
    };
    let rt = Arc::new(CheckpointRuntime::open_with(dir.path().join("s.db"), options).unwrap());
    let ids = ["c1", "c2", "c3", "c4"];
    let mut scripts: Vec<Script> = ids[..turns].iter().map(|id| calls(&[(id, tool)])).collect();
    scripts.push(Script::answer("done"));
    let p = provider(scripts);
    let agent = create_agent(durable_options(&p, rt.clone(), dir.path().join("log"), false)).unwrap();
    assert!(agent.run(AgentRunOptions::prompt("Work.")).await.unwrap().completed());
    rt.commits()
}

#[tokio::test]
async fn a_tool_turn_costs_one_commit_and_an_unsafe_one_two() {
    let long = Duration::from_secs(3600);
    let per_turn = |tool: &'static str, window| async move {
        commits_of(3, tool, window).await - commits_of(2, tool, window).await
    };
    assert_eq!(per_turn("look", long).await, 1, "the turn's flush holds everything");
    assert_eq!(
        per_turn("write_note", long).await,
        2,
        "what led to the unsafe call is written before it starts, then the flush"
    );
    assert_eq!(
        per_turn("look", Duration::ZERO).await,
        3,
        "without grouping: the model's turn, the call, the flush"
    );
}

#[tokio::test]
async fn killed_between_the_results_and_the_next_request_only_that_request_is_sent() {
    let (_dir, db, log) = crash("between");
    let r = resume(&db, &log, vec![Script::answer("ok")]).await;
    assert_eq!(r.requests.len(), 1);
    assert_eq!(r.requests[0].messages.len(), 3, "prompt, call, result: the saved pair");
    assert_eq!(
        results(r.requests[0].messages[2].content()),
        vec![("c1".into(), "wrote c1".into(), false)]
    );
    assert_eq!(effects(&log), vec!["write:c1"]);
    assert!(r.batches.is_empty(), "no batch was left half done");
    assert_eq!(r.turns.len(), 4);
}

#[tokio::test]
async fn killed_during_a_compaction_the_compaction_runs_again() {
    let (_dir, db, log) = crash("compaction");
    let scripts = vec![Script::answer("SUMMARY OF WORK"), Script::answer("done")];
    let r = resume_with(&db, &log, scripts, Some(compacting())).await;
    assert_eq!(r.requests.len(), 2, "the summary request, then the next turn's");
    assert!(matches!(
        &r.requests[0].messages.last().unwrap().content()[0],
        ContentBlock::Text { text } if text.starts_with("Summarize the conversation")
    ));
    assert!(matches!(
        &r.requests[1].messages[0].content()[0],
        ContentBlock::Text { text } if text.contains("SUMMARY OF WORK")
    ));
    assert_eq!(effects(&log), vec!["write:c1", "write:c2"]);
    assert_eq!(texts(&r.turns).last().unwrap(), &(Role::Assistant, "done".to_owned()));
}

#[tokio::test]
async fn a_live_holder_keeps_the_session_and_a_killed_one_loses_it_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sessions.db");
    let log = dir.path().join("effects.log");
    let mut child = start_child("hold", &db, &log);

    let p = provider(vec![Script::answer("mine now")]);
    let rt = runtime(&db).await;
    let agent = create_agent(durable_options(&p, rt.clone(), log.clone(), false)).unwrap();
    let err = agent.run(AgentRunOptions::prompt("Hello?")).await.unwrap_err();
    let AgentError::RunLeaseHeld(held) = &err else {
        panic!("expected RunLeaseHeld, got {err:?}");
    };
    assert_eq!(held.pid, child.id());
    assert!(err.to_string().contains(&format!("in use by process {}", child.id())));
    assert!(p.requests().is_empty());

    child.kill().unwrap();
    child.wait().unwrap();
    // The holder is gone from this machine: no need to wait for expiry.
    let stats = agent.run(AgentRunOptions::prompt("Hello?")).await.unwrap();
    assert!(stats.completed());
    let session = rt.session_store().load("s").await.unwrap().unwrap();
    assert_eq!(
        texts(&session.turns),
        vec![
            (Role::User, "Work.".into()),
            (Role::Assistant, "call c1 call c2".into()),
            (Role::User, "result c1 result c2".into()),
            (Role::User, "Hello?".into()),
            (Role::Assistant, "mine now".into()),
        ],
        "the dead run was healed (its finished call kept, the other reported) before the prompt"
    );
    assert_eq!(session.runs[0].status, SessionRunStatus::Aborted);
    assert!(!session.runs[0].resumable);
    let healed = results(&session.turns[2].content);
    assert_eq!(healed[0], ("c1".into(), "wrote c1".into(), false));
    assert!(healed[1].1.starts_with(INTERRUPTED));
    assert_paired(&p.requests()[0].messages);
}

#[tokio::test]
async fn a_stale_holder_that_wakes_up_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sessions.db");
    let clock = Arc::new(FixedClock::new(1_000_000));
    let options = CheckpointOptions {
        lease_ttl: Duration::from_secs(30),
        // No heartbeat during the test: the holder looks asleep.
        heartbeat: Duration::from_secs(24 * 3600),
        ..Default::default()
    };
    let rt_a = Arc::new(
        CheckpointRuntime::open_with(&db, options.clone())
            .unwrap()
            .with_clock(clock.clone() as Arc<dyn Clock>),
    );
    let rt_b = Arc::new(
        CheckpointRuntime::open_with(&db, options)
            .unwrap()
            .with_clock(clock.clone() as Arc<dyn Clock>),
    );
    let wake = Arc::new(tokio::sync::Notify::new());
    let started = Arc::new(tokio::sync::Notify::new());
    let (w, s) = (Arc::clone(&wake), Arc::clone(&started));
    let sleepy = ToolSet::new().with(FnTool::new(
        "sleep",
        "Sleeps",
        json!({"type": "object"}),
        move |_i, _cx| {
            let (w, s) = (Arc::clone(&w), Arc::clone(&s));
            async move {
                s.notify_one();
                w.notified().await;
                Ok(ToolOutput::text("slept"))
            }
        },
    ));
    let pa = provider(vec![calls(&[("c1", "sleep")]), Script::answer("never")]);
    let a = create_agent(AgentOptions {
        tools: sleepy,
        ..durable_options(&pa, rt_a.clone(), dir.path().join("a.log"), false)
    })
    .unwrap();
    let run_a = tokio::spawn({
        let a = a.clone();
        async move { a.run(AgentRunOptions::prompt("A's task.")).await }
    });
    started.notified().await;

    // B cannot take the session while A's lease is fresh...
    let pb = provider(vec![Script::answer("B's answer")]);
    let b = create_agent(durable_options(&pb, rt_b.clone(), dir.path().join("b.log"), false)).unwrap();
    assert!(matches!(
        b.run(AgentRunOptions::prompt("B's task.")).await,
        Err(AgentError::RunLeaseHeld(_))
    ));
    // ...and takes it once A's heartbeat is older than the lease's life.
    clock.advance_ms(31_000);
    b.run(AgentRunOptions::prompt("B's task.")).await.unwrap();
    let before = rt_b.session_store().load("s").await.unwrap().unwrap();

    wake.notify_one();
    let err = run_a.await.unwrap().unwrap_err();
    let AgentError::StaleEpoch { error, .. } = &err else {
        panic!("expected StaleEpoch, got {err:?}");
    };
    assert_eq!((error.held, error.current), (1, 2));
    assert_eq!(pa.requests().len(), 1, "A asked nothing more after its lease was taken");
    let after = rt_b.session_store().load("s").await.unwrap().unwrap();
    assert_eq!(after, before, "A wrote nothing: no turn, no run record, no step");
    // A's next run tries to take the session back, and B still holds it.
    assert!(matches!(
        a.run(AgentRunOptions::prompt("Again.")).await,
        Err(AgentError::RunLeaseHeld(_))
    ));
}

#[tokio::test]
async fn a_suspended_run_resumes_from_its_records() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sessions.db");
    let log = dir.path().join("effects.log");
    let rt = runtime(&db).await;
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let started = Arc::new(tokio::sync::Notify::new());
    let (g, s, l) = (Arc::clone(&gate), Arc::clone(&started), log.clone());
    let slow = tools(log.clone(), false).with(FnTool::new("slow", "Slow", json!({"type": "object"}), move |_i, cx| {
        let (g, s, l) = (Arc::clone(&g), Arc::clone(&s), l.clone());
        async move {
            s.notify_one();
            let _permit = g.acquire().await;
            effect(&l, &format!("slow:{}", cx.call_id()));
            Ok(ToolOutput::text("slow done"))
        }
    }));
    let p = provider(vec![calls(&[("c1", "slow")]), Script::answer("after resume")]);
    let agent = create_agent(AgentOptions {
        tools: slow,
        ..durable_options(&p, rt.clone(), log.clone(), false)
    })
    .unwrap();
    let run = tokio::spawn({
        let agent = agent.clone();
        async move { agent.run(AgentRunOptions::prompt("Go.")).await }
    });
    started.notified().await;
    let suspending = tokio::spawn({
        let agent = agent.clone();
        async move { agent.suspend(SuspendOptions::default()).await }
    });
    tokio::task::yield_now().await;
    gate.add_permits(1); // the running call finishes within the (unset) grace
    suspending.await.unwrap();
    let stats = run.await.unwrap().unwrap();
    assert!(stats.suspended);
    assert_eq!(stats.status, RunStatus::Suspended);
    let saved = rt.session_store().load("s").await.unwrap().unwrap();
    assert_eq!(
        saved.turns.len(),
        1,
        "only the prompt: the batch stays pending in its records"
    );
    assert_eq!(
        (saved.runs[0].status, saved.runs[0].resumable),
        (SessionRunStatus::Suspended, true)
    );
    assert_eq!(p.requests().len(), 1);

    let resumed = agent.resume(DurableResumeOptions::default()).await.unwrap().unwrap();
    assert!(resumed.completed());
    let requests = p.requests();
    assert_eq!(requests.len(), 2, "no request for the recorded turn");
    assert_eq!(
        results(requests[1].messages[2].content()),
        vec![("c1".into(), "slow done".into(), false)]
    );
    assert_eq!(effects(&log), vec!["slow:c1"], "the finished call did not run again");
    assert_eq!(agent.resume(DurableResumeOptions::default()).await.unwrap(), None);
}

#[tokio::test]
async fn a_history_rewrite_makes_the_run_unresumable() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sessions.db");
    let log = dir.path().join("effects.log");
    let rt = runtime(&db).await;
    let p = provider(vec![calls(&[("c1", "write_note")]), hanging_stream()]);
    let agent = create_agent(durable_options(&p, rt.clone(), log.clone(), false)).unwrap();
    let streaming = Arc::new(tokio::sync::Notify::new());
    let s = Arc::clone(&streaming);
    agent.hooks().on_sync::<StreamText, _>(move |_, _| {
        s.notify_one();
        Ok(())
    });
    let run = tokio::spawn({
        let agent = agent.clone();
        async move { agent.run(AgentRunOptions::prompt("Go.")).await }
    });
    streaming.notified().await;
    agent.suspend(SuspendOptions::default()).await;
    assert!(run.await.unwrap().unwrap().suspended);
    agent.destroy().await;

    // Someone rewrites the history: the last pair is dropped.
    let store = rt.session_store();
    let saved = store.load("s").await.unwrap().unwrap();
    store.replace_turns("s", &saved.turns[..1], 0).await.unwrap();

    let fresh = create_agent(durable_options(&provider(vec![]), rt.clone(), log, false)).unwrap();
    type Seen = (String, u32, Vec<u32>);
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let s = Arc::clone(&seen);
    fresh.hooks().on_sync::<ResumeMismatch, _>(move |ev, _| {
        s.lock()
            .unwrap()
            .push((ev.reason().to_owned(), ev.resume_turn(), ev.stored_turns().to_vec()));
        Ok(())
    });
    assert_eq!(fresh.resume(DurableResumeOptions::default()).await.unwrap(), None);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert!(seen[0].0.contains("no longer end"), "{}", seen[0].0);
    assert_eq!(seen[0].1, 2);
    let run = &store.load("s").await.unwrap().unwrap().runs[0];
    assert!(!run.resumable, "healed at once");
    assert_eq!(fresh.resume(DurableResumeOptions::default()).await.unwrap(), None);
}

#[tokio::test]
async fn resume_is_refused_without_a_checkpoint_runtime() {
    let p = provider(vec![]);
    let plain = create_agent(AgentOptions {
        provider: vec![Arc::new(p.clone()) as Arc<dyn Provider>],
        session_id: Some("s".into()),
        store: Some(Arc::new(MemoryStore::new())),
        ..Default::default()
    })
    .unwrap();
    assert!(matches!(
        plain.resume(DurableResumeOptions::default()).await,
        Err(AgentError::NotDurable)
    ));
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir.path().join("s.db")).await;
    let sessionless = create_agent(AgentOptions {
        provider: vec![Arc::new(p.clone()) as Arc<dyn Provider>],
        durable: Some(DurableOptions::from(Arc::clone(&rt))),
        ..Default::default()
    })
    .unwrap();
    // Given no session, a durable agent mints one: nothing to resume in it yet.
    assert!(sessionless.session_id().is_some());
    assert!(matches!(
        sessionless.resume(DurableResumeOptions::default()).await,
        Ok(None)
    ));
    let other = create_agent(AgentOptions {
        provider: vec![Arc::new(p) as Arc<dyn Provider>],
        durable: Some(DurableOptions::from(rt)),
        store: Some(Arc::new(MemoryStore::new())),
        session_id: Some("s".into()),
        ..Default::default()
    });
    assert!(matches!(other, Err(zidane_agent::BuildError::DurableStoreMismatch)));
}

/// A tool that takes `secs` of (paused) time and records that it finished.
fn timed(secs: u64, finished: Arc<std::sync::atomic::AtomicBool>, started: Arc<tokio::sync::Notify>) -> ToolSet {
    ToolSet::new().with(FnTool::new(
        "work",
        "Works",
        json!({"type": "object"}),
        move |_i, _cx| {
            let (finished, started) = (Arc::clone(&finished), Arc::clone(&started));
            async move {
                started.notify_one();
                tokio::time::sleep(Duration::from_secs(secs)).await;
                finished.store(true, std::sync::atomic::Ordering::SeqCst);
                Ok(ToolOutput::text("worked"))
            }
        },
    ))
}

async fn suspend_during_a_call(secs: u64, grace: Option<Duration>) -> (zidane_core::events::AgentStats, bool, usize) {
    let finished = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let started = Arc::new(tokio::sync::Notify::new());
    let p = provider(vec![calls(&[("c1", "work")]), Script::answer("never")]);
    let agent = create_agent(AgentOptions {
        provider: vec![Arc::new(p.clone()) as Arc<dyn Provider>],
        tools: timed(secs, Arc::clone(&finished), Arc::clone(&started)),
        ..Default::default()
    })
    .unwrap();
    let run = tokio::spawn({
        let agent = agent.clone();
        async move { agent.run(AgentRunOptions::prompt("Go.")).await }
    });
    started.notified().await;
    agent.suspend(SuspendOptions { grace }).await;
    let stats = run.await.unwrap().unwrap();
    (
        stats.into(),
        finished.load(std::sync::atomic::Ordering::SeqCst),
        p.requests().len(),
    )
}

#[tokio::test(start_paused = true)]
async fn without_grace_a_suspend_lets_running_calls_finish() {
    let (stats, finished, requests) = suspend_during_a_call(600, None).await;
    assert!(stats.suspended);
    assert_eq!(stats.status, RunStatus::Suspended);
    assert!(finished, "the call ran to its end");
    assert_eq!(requests, 1, "no request after the suspend");
}

#[tokio::test(start_paused = true)]
async fn a_call_still_running_when_the_grace_ends_is_cut_off() {
    let (stats, finished, requests) = suspend_during_a_call(600, Some(Duration::from_secs(5))).await;
    assert!(stats.suspended);
    assert!(!finished, "cut off after 5 s of a 600 s call");
    assert_eq!(requests, 1);
    let (stats, finished, _) = suspend_during_a_call(3, Some(Duration::from_secs(5))).await;
    assert!(
        stats.suspended && finished,
        "a call that ends within the grace finishes"
    );
}

#[tokio::test(start_paused = true)]
async fn a_suspend_stops_the_model_stream_at_once() {
    let p = provider(vec![hanging_stream()]);
    let agent = create_agent(AgentOptions {
        provider: vec![Arc::new(p.clone()) as Arc<dyn Provider>],
        ..Default::default()
    })
    .unwrap();
    let streaming = Arc::new(tokio::sync::Notify::new());
    let s = Arc::clone(&streaming);
    agent.hooks().on_sync::<StreamText, _>(move |_, _| {
        s.notify_one();
        Ok(())
    });
    let run = tokio::spawn({
        let agent = agent.clone();
        async move { agent.run(AgentRunOptions::prompt("Go.")).await }
    });
    streaming.notified().await;
    let before = tokio::time::Instant::now();
    agent.suspend(SuspendOptions { grace: None }).await;
    assert!(
        before.elapsed() < Duration::from_secs(1),
        "not after the hour the stream would take"
    );
    let stats = run.await.unwrap().unwrap();
    assert!(stats.suspended);
    assert_eq!(
        agent.turns().len(),
        1,
        "the partial answer is not kept: the request is sent again on resume"
    );
}

#[tokio::test]
async fn a_fresh_durable_agent_compacts_its_session_under_the_lease() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sessions.db");
    let log = dir.path().join("effects.log");
    {
        let rt = runtime(&db).await;
        let p = provider(vec![
            calls(&[("c1", "write_note")]),
            Script::answer("first"),
            Script::answer("second"),
        ]);
        let agent = create_agent(durable_options(&p, rt.clone(), log.clone(), false)).unwrap();
        agent.run(AgentRunOptions::prompt("One.")).await.unwrap();
        agent.run(AgentRunOptions::prompt("Two.")).await.unwrap();
        agent.destroy().await;
    }
    let rt = runtime(&db).await;
    let p = provider(vec![Script::answer("SUMMARY")]);
    let agent = create_agent(durable_options(&p, rt.clone(), log, false)).unwrap();
    let done = agent
        .compact(zidane_agent::CompactOptions {
            keep_turns: Some(2),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(done.compacted);
    let saved = rt.session_store().load("s").await.unwrap().unwrap();
    assert_eq!(saved.turns.len(), 3, "the summary and the two kept turns");
}

#[tokio::test]
async fn on_interrupted_resume_continues_the_dead_run_before_the_prompt() {
    let (_dir, db, log) = crash("mid_batch");
    let p = provider(vec![
        Script::answer("the old task is done"),
        Script::answer("the new one too"),
    ]);
    let rt = runtime(&db).await;
    let agent = create_agent(AgentOptions {
        durable: Some(DurableOptions {
            runtime: rt.clone(),
            on_interrupted: zidane_core::durable::OnInterrupted::Resume,
        }),
        ..durable_options(&p, rt.clone(), log.clone(), false)
    })
    .unwrap();
    let stats = agent.run(AgentRunOptions::prompt("Next task.")).await.unwrap();
    assert!(stats.completed());
    let requests = p.requests();
    assert_eq!(requests.len(), 2, "the resumed turn's request, then the prompt's");
    assert_eq!(requests[0].messages.len(), 3, "the old run: prompt, calls, results");
    assert_eq!(
        requests[1].messages.last().unwrap().content(),
        [ContentBlock::text("Next task.")]
    );
    assert_eq!(effects(&log), vec!["write:c1"], "the finished call did not run again");
    let runs = rt.session_store().load("s").await.unwrap().unwrap().runs;
    assert_eq!(runs.len(), 2, "the resumed run kept its record; the prompt has its own");
    assert!(
        runs.iter()
            .all(|r| r.status == SessionRunStatus::Completed && !r.resumable)
    );
}

#[tokio::test]
async fn a_resume_runs_with_the_recorded_options_unless_told_otherwise() {
    for (overridden, want) in [(false, "kept-model"), (true, "other-model")] {
        let dir = tempfile::tempdir().unwrap();
        let rt = runtime(&dir.path().join("sessions.db")).await;
        let p = provider(vec![hanging_stream(), Script::answer("ok")]);
        let agent = create_agent(durable_options(&p, rt.clone(), dir.path().join("l"), false)).unwrap();
        let streaming = Arc::new(tokio::sync::Notify::new());
        let s = Arc::clone(&streaming);
        agent.hooks().on_sync::<StreamText, _>(move |_, _| {
            s.notify_one();
            Ok(())
        });
        let run = tokio::spawn({
            let agent = agent.clone();
            async move {
                let mut options = AgentRunOptions::prompt("Go.");
                options.model = vec!["kept-model".into()];
                agent.run(options).await
            }
        });
        streaming.notified().await;
        agent.suspend(SuspendOptions::default()).await;
        assert!(run.await.unwrap().unwrap().suspended);
        let run = overridden.then(|| AgentRunOptions {
            model: vec!["other-model".into()],
            ..Default::default()
        });
        agent.resume(DurableResumeOptions { run }).await.unwrap().unwrap();
        assert_eq!(p.requests()[1].model, want);
    }
}

#[tokio::test(start_paused = true)]
async fn the_heartbeat_keeps_a_live_holders_lease_past_its_lifetime() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sessions.db");
    let clock = Arc::new(FixedClock::new(1_000_000));
    let open = |heartbeat| {
        Arc::new(
            CheckpointRuntime::open_with(
                &db,
                CheckpointOptions {
                    lease_ttl: Duration::from_secs(30),
                    heartbeat,
                    ..Default::default()
                },
            )
            .unwrap()
            .with_clock(clock.clone() as Arc<dyn Clock>),
        )
    };
    let (rt_a, rt_b) = (open(Duration::from_secs(10)), open(Duration::from_secs(3600)));
    let pa = provider(vec![Script::answer("A")]);
    let a = create_agent(durable_options(&pa, rt_a.clone(), dir.path().join("a"), false)).unwrap();
    a.run(AgentRunOptions::prompt("A's.")).await.unwrap();
    // 29 s pass and A's heartbeat renews; 29 more: 58 s since A took the
    // lease, but only 29 since its heartbeat.
    clock.advance_ms(29_000);
    tokio::time::sleep(Duration::from_secs(11)).await;
    // The renewal is a store write on a blocking thread: wait for it to land.
    let mut polls = 0;
    while rt_a.lease("s").await.unwrap().unwrap().heartbeat_at_ms != 1_029_000 {
        polls += 1;
        assert!(polls < 100_000, "the heartbeat renewed the lease");
        tokio::task::yield_now().await;
    }
    clock.advance_ms(29_000);
    let pb = provider(vec![Script::answer("B")]);
    let b = create_agent(durable_options(&pb, rt_b.clone(), dir.path().join("b"), false)).unwrap();
    assert!(matches!(
        b.run(AgentRunOptions::prompt("B's.")).await,
        Err(AgentError::RunLeaseHeld(_))
    ));
}

/// A checkpoint runtime and a replay runtime cannot both run an agent's
/// steps: asking for both is refused, not resolved by one silently winning.
#[tokio::test]
async fn a_checkpoint_and_a_replay_runtime_are_refused_together() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir.path().join("sessions.db")).await;
    let p = provider(vec![]);
    let mut options = durable_options(&p, rt.clone(), dir.path().join("log"), false);
    options.replay_runtime = Some(Arc::new(zidane_core::seams::MemoryRuntime));
    let refused = zidane_agent::create_agent(options).err();
    assert!(
        matches!(refused, Some(zidane_agent::BuildError::TwoRuntimes)),
        "{refused:?}"
    );
}

#[tokio::test]
async fn a_durable_agent_without_a_session_id_records_its_run_in_a_minted_session() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir.path().join("s.db")).await;
    let p = provider(vec![Script::answer("recorded")]);
    let agent = create_agent(AgentOptions {
        provider: vec![Arc::new(p.clone()) as Arc<dyn Provider>],
        durable: Some(DurableOptions::from(Arc::clone(&rt))),
        ..Default::default()
    })
    .unwrap();
    let id = agent.session_id().expect("a durable agent always has a session");
    let output = agent.run(AgentRunOptions::prompt("Go.")).await.unwrap();
    assert_eq!(output.text, "recorded");
    let session = rt.session_store().load(&id).await.unwrap().expect("saved");
    assert_eq!(session.runs.len(), 1, "the run is recorded: {:?}", session.runs);
    assert_eq!(session.runs[0].status, SessionRunStatus::Completed);
    // `resume` has a session to look in (nothing is left to continue).
    assert!(agent.resume(DurableResumeOptions::default()).await.unwrap().is_none());
}

#[tokio::test]
async fn a_stream_dropped_halfway_leaves_a_run_that_resumes() {
    use zidane_agent::RunEvent;
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir.path().join("s.db")).await;
    let p = provider(vec![calls(&[("c1", "write_note")]), Script::answer("finished")]);
    let log = dir.path().join("log");
    let agent = create_agent(durable_options(&p, rt.clone(), log.clone(), false)).unwrap();
    let mut stream = agent.run_stream(AgentRunOptions::prompt("Go."));
    loop {
        match stream.next().await.unwrap().unwrap() {
            RunEvent::ToolCall { .. } => break,
            RunEvent::Done(_) => panic!("the run ended before its tool call"),
            _ => {}
        }
    }
    drop(stream);
    let session = rt.session_store().load("s").await.unwrap().unwrap();
    assert_eq!(
        session.runs.last().unwrap().status,
        SessionRunStatus::Running,
        "left for a resume"
    );

    let resumed = agent
        .resume(DurableResumeOptions::default())
        .await
        .unwrap()
        .expect("the dropped run is resumed");
    assert_eq!(resumed.text, "finished");
    assert_eq!(
        p.requests().len(),
        2,
        "the model call before the drop is not made again"
    );
}

/// A gate handler that asks the agent's decision provider whether to run
/// each call, and notes the answer.
fn deciding(agent: &zidane_agent::Agent, log: &Path) {
    use zidane_agent::DecideHookContext;
    let log = log.to_path_buf();
    agent.hooks().on::<zidane_core::events::ToolGate, _>(move |ev, cx| {
        let log = log.clone();
        Box::pin(async move {
            let question = zidane_agent::DecisionRequest::Predicate {
                question: format!("Is `{}` safe to run?", ev.name()),
            };
            let answer = cx.try_decide(question).await;
            let shown = match answer {
                Ok(r) => r.answers.map(|a| a["probability"].to_string()).unwrap_or_default(),
                Err(e) => format!("error: {e}"),
            };
            effect(&log, &format!("decided:{}:{shown}", ev.call_id()));
            Ok(())
        })
    });
}

/// A gate handler that asks, for each `hang_par` call, whether it is safe:
/// the call `first` asks first, the other once `first` has its answer
/// (with `announce`, the child says READY then).
fn deciding_in_order(agent: &zidane_agent::Agent, log: &Path, first: &'static str, announce: bool) {
    use zidane_agent::DecideHookContext;
    let log = log.to_path_buf();
    let answered = Arc::new(tokio::sync::Notify::new());
    agent.hooks().on::<zidane_core::events::ToolGate, _>(move |ev, cx| {
        let (log, answered) = (log.clone(), Arc::clone(&answered));
        Box::pin(async move {
            if ev.name() != "hang_par" {
                return Ok(());
            }
            let id = ev.call_id().to_owned();
            if id != first {
                answered.notified().await;
            }
            let question = zidane_agent::DecisionRequest::Predicate {
                question: format!("Is call `{id}` safe to run?"),
            };
            let shown = match cx.try_decide(question).await {
                Ok(r) => r.answers.map(|a| a["probability"].to_string()).unwrap_or_default(),
                Err(e) => format!("error: {e}"),
            };
            effect(&log, &format!("decided:{id}:{shown}"));
            if id == first {
                answered.notify_one();
            } else if announce {
                ready();
            }
            Ok(())
        })
    });
}

/// Two decisions of one kind in one turn, asked in one order before the
/// crash and in the other after it: each question gets its own recorded
/// answer back, not the one recorded at its place in the order.
#[tokio::test]
async fn two_decisions_of_a_turn_keep_their_answers_in_another_order() {
    let (_dir, db, log) = crash("decided_two");
    assert_eq!(effects(&log), ["decided:c2:0.2", "decided:c1:0.7"]);
    // Asked again, a decision would take this answer (and fail).
    let p = provider(vec![Script::answer("done")]);
    let rt = runtime(&db).await;
    let agent = create_agent(durable_options(&p, rt.clone(), log.clone(), false)).unwrap();
    deciding_in_order(&agent, &log, "c1", false);
    let output = agent
        .resume(DurableResumeOptions::default())
        .await
        .unwrap()
        .expect("there is a run to resume");
    assert_eq!(output.text, "done");
    assert_eq!(
        effects(&log)[2..],
        ["decided:c1:0.7", "decided:c2:0.2"],
        "each question's own answer"
    );
    assert_eq!(p.requests().len(), 1, "only the model's next turn was asked");
}

/// A decision asked before the crash is answered from its record after
/// it: the decision provider is not asked again (it could answer
/// differently).
#[tokio::test]
async fn killed_after_a_decision_the_provider_is_not_asked_again() {
    let (_dir, db, log) = crash("decided");
    assert_eq!(
        effects(&log),
        ["decided:c1:0.9", "hang_safe:c1"],
        "decided once, then the call started"
    );
    // Asked again, the provider would answer this (and fail the decision).
    let p = provider(vec![Script::answer("done")]);
    let rt = runtime(&db).await;
    let agent = create_agent(durable_options(&p, rt.clone(), log.clone(), false)).unwrap();
    deciding(&agent, &log);
    let output = agent
        .resume(DurableResumeOptions::default())
        .await
        .unwrap()
        .expect("there is a run to resume");
    assert_eq!(output.text, "done");
    assert_eq!(
        effects(&log),
        ["decided:c1:0.9", "hang_safe:c1", "decided:c1:0.9", "hang_safe:c1"],
        "the recorded answer, not a new question"
    );
    assert_eq!(p.requests().len(), 1, "only the model's next turn was asked");
}

#[tokio::test]
async fn killed_after_an_approval_the_person_is_not_asked_again() {
    let (_dir, db, log) = crash("approved");
    assert_eq!(
        effects(&log),
        ["asked:c1", "hang_safe:c1"],
        "asked once, then the call started"
    );
    let p = provider(vec![Script::answer("done")]);
    let rt = runtime(&db).await;
    let (interceptors, approver) = asking(&log);
    let agent = create_agent(AgentOptions {
        interceptors,
        approve_tool_call: Some(approver),
        ..durable_options(&p, rt.clone(), log.clone(), false)
    })
    .unwrap();
    let output = agent
        .resume(DurableResumeOptions::default())
        .await
        .unwrap()
        .expect("there is a run to resume");
    assert_eq!(output.text, "done");
    assert_eq!(
        effects(&log),
        ["asked:c1", "hang_safe:c1", "hang_safe:c1"],
        "the safe call ran again on the recorded approval, without a second question"
    );
    assert_eq!(
        p.requests().len(),
        1,
        "the model was not asked again for the calling turn"
    );
}

#[tokio::test]
async fn killed_after_the_summary_the_resumed_run_keeps_that_summary() {
    let (_dir, db, log) = crash("summarized");
    // No summary is scripted: asking for one again would take the answer.
    let r = resume_with(&db, &log, vec![Script::answer("done")], Some(compacting())).await;
    assert_eq!(
        r.requests.len(),
        1,
        "the summary came from its record; only the next turn was asked"
    );
    assert!(matches!(
        &r.requests[0].messages[0].content()[0],
        ContentBlock::Text { text } if text.contains("SUMMARY FROM THE DEAD PROCESS")
    ));
    assert_eq!(effects(&log), vec!["write:c1", "write:c2"]);
    assert_eq!(texts(&r.turns).last().unwrap(), &(Role::Assistant, "done".to_owned()));
}

/// Killed after a sub-agent finished but before the parent's spawn call was
/// recorded: the resumed parent (a new process) starts the same child,
/// which answers from its finished run at once, without asking its model
/// again; the parent reads that answer.
#[tokio::test]
async fn killed_after_a_child_finished_the_resumed_parent_gets_its_answer() {
    let (_dir, db, log) = crash("spawned");
    let rt = runtime(&db).await;
    let sessions: Vec<String> = rt
        .session_store()
        .list()
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    let run = rt.session_store().load("s").await.unwrap().unwrap().runs[0].id.clone();
    let child = zidane_agent::child_session_id("s", "c1", &run);
    assert!(
        sessions.contains(&child),
        "the child's session is named after the call and the run: {sessions:?}"
    );
    assert_eq!(zidane_agent::spawning_call_id(&child), Some("c1"));
    // Asked again, the child would take this answer (and the parent would
    // have none).
    let resumed = tokio::time::timeout(
        Duration::from_secs(60),
        resume(&db, &log, vec![Script::answer("The child counted three.")]),
    )
    .await
    .expect("the resumed parent hung");
    assert_eq!(resumed.requests.len(), 1, "only the parent's next turn was asked");
    let results = results(resumed.requests[0].messages.last().unwrap().content());
    assert_eq!(results.len(), 1);
    assert!(results[0].1.starts_with("THE CHILD COUNTED THREE"), "{results:?}");
    assert_eq!(texts(&resumed.turns).last().unwrap().1, "The child counted three.");
}
