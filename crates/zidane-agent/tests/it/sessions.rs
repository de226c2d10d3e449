//! Sessions on the SQLite store: continuing across agents, concurrent
//! agents on one file, and a process killed in the middle of a tool batch.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;

use serde_json::json;
use zidane_agent::{AgentOptions, AgentRunOptions, SqliteStore, create_agent};
use zidane_core::session::SessionStore;
use zidane_core::{FnTool, ToolOutput};
use zidane_provider::scripted::Script;
use zidane_provider::{ContentBlock, Role};

use crate::support::{echo_tools, options, provider, record};

/// The store of the suite's run on `dir`: a SQLite file, or with
/// `ZIDANE_TEST_BACKEND=postgres` a PostgreSQL schema named after the
/// folder.
async fn store(dir: &tempfile::TempDir) -> Arc<dyn SessionStore> {
    #[cfg(feature = "postgres")]
    if std::env::var_os("ZIDANE_TEST_BACKEND").is_some_and(|b| b == "postgres") {
        let options = zidane_agent::PostgresOptions {
            schema: Some(crate::support::postgres_schema(dir.path())),
            ..Default::default()
        };
        let url = crate::support::postgres_url();
        return Arc::new(zidane_agent::PostgresStore::connect(&url, &options).await.unwrap());
    }
    Arc::new(SqliteStore::open(dir.path().join("nested/sessions.db")).unwrap())
}

#[tokio::test]
async fn a_new_agent_on_the_same_file_continues_the_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let first = provider(vec![
        Script::call("c1", "echo", json!({"text": "one"})),
        Script::answer("first done"),
    ]);
    let agent = create_agent(AgentOptions {
        session_id: Some("work".into()),
        store: Some(store(&dir).await),
        ..options(&first)
    })
    .unwrap();
    agent.run(AgentRunOptions::prompt("Start.")).await.unwrap();
    agent.set_session_meta("title", json!("Work")).await.unwrap();
    drop(agent);

    let second = provider(vec![Script::answer("continued")]);
    // A new process: its own clock (the test clock would reuse the first run's id).
    let agent = create_agent(AgentOptions {
        session_id: Some("work".into()),
        store: Some(store(&dir).await),
        clock: None,
        ..options(&second)
    })
    .unwrap();
    agent.run(AgentRunOptions::prompt("Continue.")).await.unwrap();
    let request = &second.requests()[0];
    assert_eq!(request.messages.len(), 5, "four saved turns and the new prompt");
    assert_eq!(request.messages[4].content(), &[ContentBlock::text("Continue.")]);
    let session = agent.session().unwrap();
    assert_eq!(session.turns.len(), 6);
    assert_eq!(session.runs.len(), 2);
    assert_eq!(session.metadata["title"], json!("Work"));

    let listed = store(&dir).await.list().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].id.as_str(), listed[0].messages, listed[0].title.as_str()),
        ("work", 6, "Start.")
    );
}

#[tokio::test]
async fn a_second_agent_on_the_file_sees_the_first_ones_turns() {
    let dir = tempfile::tempdir().unwrap();
    let a = create_agent(AgentOptions {
        session_id: Some("shared".into()),
        store: Some(store(&dir).await),
        ..options(&provider(vec![Script::answer("from a")]))
    })
    .unwrap();
    let b_provider = provider(vec![Script::answer("from b")]);
    let b = create_agent(AgentOptions {
        session_id: Some("shared".into()),
        store: Some(store(&dir).await),
        ..options(&b_provider)
    })
    .unwrap();
    a.run(AgentRunOptions::prompt("A speaks.")).await.unwrap();
    b.run(AgentRunOptions::prompt("B answers.")).await.unwrap();
    assert_eq!(
        b_provider.requests()[0].messages.len(),
        3,
        "b loaded a's two turns on its first run"
    );
}

#[tokio::test]
async fn tool_state_lives_in_the_session_file() {
    let dir = tempfile::tempdir().unwrap();
    let counter = || {
        echo_tools().with(FnTool::new(
            "count",
            "Count",
            json!({"type": "object"}),
            |_i, cx| async move {
                let n = cx.state().get("n").and_then(|v| v.as_u64()).unwrap_or(0) + 1;
                cx.state().set("n", json!(n));
                Ok(ToolOutput::text(n.to_string()))
            },
        ))
    };
    for expected in [1u64, 2] {
        let p = provider(vec![Script::call("c", "count", json!({})), Script::answer("ok")]);
        let agent = create_agent(AgentOptions {
            session_id: Some("tools".into()),
            store: Some(store(&dir).await),
            tools: counter(),
            ..options(&p)
        })
        .unwrap();
        agent.run(AgentRunOptions::prompt("Count.")).await.unwrap();
        assert_eq!(agent.tool_state().get("n"), Some(&json!(expected)));
    }
}

/// Not a test of its own: the child process of
/// `a_process_killed_mid_batch_leaves_no_orphan_call`, which re-runs this
/// binary filtered to this function with `ZIDANE_CRASH_DB` set. Without the
/// variable it returns at once.
#[tokio::test]
async fn crash_child_helper() {
    let Some(path) = std::env::var_os("ZIDANE_CRASH_DB") else {
        return;
    };
    let p = provider(vec![
        Script::call("c1", "echo", json!({"text": "done before the crash"})),
        Script::call("c2", "hang", json!({})),
    ]);
    let tools = echo_tools().with(FnTool::new(
        "hang",
        "Hangs",
        json!({"type": "object"}),
        |_i, _cx| async move {
            let mut out = std::io::stdout();
            let _ = writeln!(out, "READY");
            let _ = out.flush();
            std::future::pending::<()>().await;
            Ok(ToolOutput::text("never"))
        },
    ));
    let store = Arc::new(SqliteStore::open(path).unwrap());
    let agent = create_agent(AgentOptions {
        session_id: Some("crash".into()),
        store: Some(store),
        tools,
        ..options(&p)
    })
    .unwrap();
    let _ = agent.run(AgentRunOptions::prompt("Work.")).await;
}

#[tokio::test]
async fn a_process_killed_mid_batch_leaves_no_orphan_call() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crash.db");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "sessions::crash_child_helper",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("ZIDANE_CRASH_DB", &db)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let ready = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .any(|line| line.contains("READY"));
    assert!(ready, "the child reached the hanging tool");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let store = Arc::new(SqliteStore::open(&db).unwrap());
    let saved = store.load("crash").await.unwrap().unwrap();
    let shape: Vec<(Role, usize)> = saved.turns.iter().map(|t| (t.role, t.content.len())).collect();
    assert_eq!(
        shape,
        vec![(Role::User, 1), (Role::Assistant, 1), (Role::User, 1)],
        "the prompt and the finished pair, nothing else"
    );
    assert!(matches!(&saved.turns[2].content[0], ContentBlock::ToolResult { tool_use_id, .. } if tool_use_id == "c1"));

    // A new process continues from there with no repair needed.
    let p = provider(vec![Script::answer("recovered")]);
    let agent = create_agent(AgentOptions {
        session_id: Some("crash".into()),
        store: Some(store),
        ..options(&p)
    })
    .unwrap();
    let log = record(&agent);
    agent.run(AgentRunOptions::prompt("Go on.")).await.unwrap();
    assert!(!log.lock().unwrap().contains(&"pairing:repair"));
    assert_eq!(p.requests()[0].messages.len(), 4);
}

/// Several connections to one sessions file write at once (as several
/// `zidane` processes do): every write waits its turn instead of failing at
/// once with "database is locked", and every turn is kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_on_one_file_lose_no_turn() {
    use zidane_agent::SqliteStore;
    use zidane_core::session::SessionStore;
    use zidane_provider::{ContentBlock, Role, SessionTurn};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let store = SqliteStore::open(&path).unwrap();
            tokio::spawn(async move {
                let id = format!("s{w}");
                store.create(&id, 0).await.unwrap();
                for i in 0..25 {
                    let turn = |role, n: usize| SessionTurn {
                        id: format!("{id}-{n}"),
                        role,
                        content: vec![ContentBlock::text(format!("turn {n} of {id}"))].into(),
                        created_at: zidane_provider::Timestamp::EPOCH,
                        usage: None,
                    };
                    store
                        .append_turns(
                            &id,
                            &[turn(Role::Assistant, 2 * i), turn(Role::User, 2 * i + 1)],
                            i as u64,
                        )
                        .await
                        .unwrap_or_else(|e| panic!("writer {w}, append {i}: {e}"));
                }
            })
        })
        .collect();
    for writer in writers {
        writer.await.unwrap();
    }
    let store = SqliteStore::open(&path).unwrap();
    for w in 0..4 {
        let session = store.load(&format!("s{w}")).await.unwrap().unwrap();
        assert_eq!(session.turns.len(), 50, "session s{w}");
        let ids: Vec<String> = session.turns.iter().map(|t| t.id.clone()).collect();
        let want: Vec<String> = (0..50).map(|n| format!("s{w}-{n}")).collect();
        assert_eq!(ids, want);
    }
}

/// Two agents (not durable) on one session of the file: the one that did not
/// see the other's turns is refused instead of interleaving its own.
#[tokio::test]
async fn a_writer_that_missed_anothers_turns_does_not_interleave_them() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let pa = provider(vec![Script::answer("A one"), Script::answer("A two")]);
    let a = create_agent(AgentOptions {
        session_id: Some("shared".into()),
        store: Some(store.clone()),
        ..options(&pa)
    })
    .unwrap();
    a.run(AgentRunOptions::prompt("A asks.")).await.unwrap();
    let pb = provider(vec![Script::answer("B one")]);
    let b = create_agent(AgentOptions {
        session_id: Some("shared".into()),
        store: Some(store.clone()),
        ..options(&pb)
    })
    .unwrap();
    b.run(AgentRunOptions::prompt("B asks.")).await.unwrap();

    let err = a.run(AgentRunOptions::prompt("A again.")).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("was changed by another writer (this agent expected 2 turns, the store holds 4)"),
        "{err}"
    );
    let saved = store.load("shared").await.unwrap().unwrap();
    let texts: Vec<String> = saved
        .turns
        .iter()
        .map(|t| match &t.content[0] {
            ContentBlock::Text { text } => text.clone(),
            _ => String::new(),
        })
        .collect();
    assert_eq!(
        texts,
        vec!["A asks.", "A one", "B asks.", "B one"],
        "B's turns, whole; none of A's after them"
    );
}

/// The files the basic preset writes and edits are kept as the session's
/// artifacts (one entry per file, the latest change), with one
/// `artifact:recorded` per declared artifact; the master switch turns it off.
#[tokio::test]
async fn the_files_a_run_changed_are_the_sessions_artifacts() {
    use std::sync::Mutex;
    use zidane_core::events::ArtifactRecorded;
    let dir = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let scripts = || {
        vec![
            Script::call("c1", "write_file", json!({"path": "a.txt", "content": "one\n"})),
            Script::call(
                "c2",
                "edit",
                json!({"path": "a.txt", "old_string": "one", "new_string": "two"}),
            ),
            Script::call("c3", "write_file", json!({"path": "b.txt", "content": "b\n"})),
            Script::answer("done"),
        ]
    };
    for on in [true, false] {
        let model = provider(scripts());
        let preset = zidane_tools::basic(zidane_tools::BasicOptions::in_folder(work.path()));
        let agent = create_agent(AgentOptions {
            tools: preset.tools,
            execution: Some(preset.execution),
            store: Some(store(&dir).await),
            session_id: Some(format!("files-{on}")),
            artifacts: Some(on),
            ..options(&model)
        })
        .unwrap();
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let s = Arc::clone(&seen);
        agent.hooks().on_sync::<ArtifactRecorded, _>(move |ev, _| {
            s.lock().unwrap().push(format!(
                "{} {} {}",
                ev.call_id(),
                ev.name(),
                ev.artifact().data["change"]
            ));
            Ok(())
        });
        agent.run(AgentRunOptions::prompt("Write files.")).await.unwrap();
        let kept: Vec<(String, String)> = agent
            .artifacts()
            .await
            .unwrap()
            .into_iter()
            .map(|a| (a.id, a.data["change"].as_str().unwrap_or_default().to_owned()))
            .collect();
        if on {
            assert_eq!(
                *seen.lock().unwrap(),
                vec!["c1 write_file \"write\"", "c2 edit \"edit\"", "c3 write_file \"write\""]
            );
            assert_eq!(
                kept,
                vec![
                    ("file:a.txt".to_owned(), "edit".to_owned()),
                    ("file:b.txt".to_owned(), "write".to_owned())
                ]
            );
        } else {
            assert!(seen.lock().unwrap().is_empty());
            assert!(kept.is_empty());
        }
    }
    // Kept in the file: another store on it lists them.
    let again = store(&dir).await;
    assert_eq!(again.artifacts("files-true").await.unwrap().len(), 2);
}

#[test]
fn the_store_openers_return_a_typed_error_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, "not a folder").unwrap();
    let under_a_file = file.join("sessions.db");
    match SqliteStore::open(&under_a_file) {
        Err(zidane_agent::OpenError::Folder { path, .. }) => assert_eq!(path, file),
        other => panic!("expected a folder error, got {other:?}"),
    }
    let not_sqlite = dir.path().join("notes.db");
    std::fs::write(
        &not_sqlite,
        "this is not a database, just text long enough to be read as a header",
    )
    .unwrap();
    let error = zidane_agent::CheckpointRuntime::open(&not_sqlite).unwrap_err();
    assert!(
        matches!(
            error,
            zidane_agent::OpenError::Schema { .. } | zidane_agent::OpenError::Open { .. }
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("notes.db"), "{error}");
    assert!(
        error
            .to_string()
            .ends_with(": it is not a database (another kind of file, or an encrypted one)"),
        "the message names the cause: {error}"
    );
    // A damaged database says so.
    let damaged = dir.path().join("damaged.db");
    {
        let store = SqliteStore::open(&damaged).unwrap();
        drop(store);
    }
    let mut bytes = std::fs::read(&damaged).unwrap();
    bytes.resize(8192, 0);
    for b in &mut bytes[100..] {
        *b = 0xA5;
    }
    std::fs::write(&damaged, &bytes).unwrap();
    let _ = std::fs::remove_file(dir.path().join("damaged.db-wal"));
    let error = SqliteStore::open(&damaged).unwrap_err();
    assert!(error.to_string().contains(": the database is malformed"), "{error}");
    // SQLite's own words stay in the source, once.
    let cause = std::error::Error::source(&error).unwrap().to_string();
    assert!(!error.to_string().contains(&cause), "{error} / {cause}");
}

/// The sessions file holds conversations, tool output and OAuth tokens:
/// it is created for its owner alone (`0600`, the folder `0700`), and one
/// left open to others is narrowed when opened, which the store reports.
#[cfg(unix)]
#[tokio::test]
async fn the_sessions_file_is_its_owners_alone() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("data/zidane/sessions.db");
    let store = SqliteStore::open(&db).unwrap();
    store.create("s", 1).await.unwrap();
    assert!(store.tightened().is_empty());
    let wal = dir.path().join("data/zidane/sessions.db-wal");
    assert_eq!(
        (
            mode(&db),
            mode(&wal),
            mode(&dir.path().join("data/zidane")),
            mode(&dir.path().join("data"))
        ),
        (0o600, 0o600, 0o700, 0o700)
    );
    drop(store);

    // A file an earlier version left readable by everyone.
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    let store = SqliteStore::open(&db).unwrap();
    let narrowed: Vec<(std::path::PathBuf, u32, u32)> = store
        .tightened()
        .iter()
        .map(|t| (t.path.clone(), t.was, t.now))
        .collect();
    assert_eq!(narrowed, [(db.clone(), 0o644, 0o600)]);
    assert_eq!(mode(&db), 0o600);
    assert!(store.load("s").await.unwrap().is_some(), "the sessions are still there");

    // A folder the caller named that exists (a project folder) keeps its mode.
    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::set_permissions(&project, std::fs::Permissions::from_mode(0o755)).unwrap();
    let here = SqliteStore::open(project.join("sessions.db")).unwrap();
    assert_eq!((mode(&project), mode(here.path())), (0o755, 0o600));
}

/// A `tool:gate` handler that blocks a call keeps what it put in the
/// call's `metadata`: the artifact it declares is the session's.
#[tokio::test]
async fn a_blocked_calls_gate_metadata_is_kept() {
    use zidane_core::events::ToolGate;
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let model = provider(vec![
        Script::call("c1", "echo", json!({"text": "rm -rf /"})),
        Script::answer("refused"),
    ]);
    let agent = create_agent(AgentOptions {
        store: Some(Arc::clone(&store)),
        session_id: Some("gated".into()),
        ..options(&model)
    })
    .unwrap();
    agent.hooks().on_sync::<ToolGate, _>(|ev, _| {
        ev.block = true;
        ev.reason = "not here".into();
        ev.metadata.insert(
            "artifacts".into(),
            json!([{"id": "refusal:c1", "kind": "refusal", "title": "echo refused", "data": {"call": "c1"}}]),
        );
        Ok(())
    });
    agent.run(AgentRunOptions::prompt("Go.")).await.unwrap();
    let kept = store.artifacts("gated").await.unwrap();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!((kept[0].id.as_str(), kept[0].kind.as_str()), ("refusal:c1", "refusal"));
}

/// The process's peak resident set so far.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

const HUGE: usize = 64 << 20;

/// Not a test of its own: the child process of
/// `a_huge_turn_is_written_in_pieces_and_reads_back_whole`, which measures
/// the store's peak in a process that runs nothing else. Without
/// `ZIDANE_HUGE_TURN_DB` it returns at once.
#[tokio::test]
async fn huge_turn_child_helper() {
    let Some(path) = std::env::var_os("ZIDANE_HUGE_TURN_DB") else {
        return;
    };
    let store = SqliteStore::open(path).unwrap();
    store.create("huge", 1).await.unwrap();
    // Lines with a quote and a newline each, so the JSON differs from the text.
    let text: String = "say \"x\"\n".repeat(HUGE / 8);
    let turn = zidane_provider::SessionTurn {
        id: "t1".into(),
        role: Role::User,
        content: vec![ContentBlock::text(text)].into(),
        created_at: zidane_provider::Timestamp::from_millis(1),
        usage: None,
    };
    let before = peak_rss();
    store
        .append_turns("huge", std::slice::from_ref(&turn), 2)
        .await
        .unwrap();
    println!("GROWN {}", peak_rss().saturating_sub(before));
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_huge_turn_is_written_in_pieces_and_reads_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("huge.db");
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "sessions::huge_turn_child_helper",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("ZIDANE_HUGE_TURN_DB", &db)
        .stderr(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let grown: u64 = stdout
        .lines()
        .find_map(|l| l.split("GROWN ").nth(1))
        .unwrap_or_else(|| panic!("the child wrote the turn: {stdout}"))
        .parse()
        .unwrap();
    // Building the JSON and binding it would take two more copies (128 MiB).
    assert!(grown < 32 << 20, "writing a 64 MiB turn grew the peak by {grown} bytes");

    let store = SqliteStore::open(&db).unwrap();
    let saved = store.load("huge").await.unwrap().unwrap();
    let text = saved.turns[0].text();
    assert_eq!(text.len(), HUGE);
    assert!(text.starts_with("say \"x\"\nsay"));
    let listed = store.list().await.unwrap();
    let title = &listed[0].title;
    assert!(
        title.starts_with("say \"x\"\nsay") && title.ends_with('…'),
        "the title comes from the stored turn: {title:?}"
    );

    // Replaced turns take their pieces with them.
    let small = zidane_provider::SessionTurn {
        content: vec![ContentBlock::text("short")].into(),
        ..saved.turns[0].clone()
    };
    store
        .replace_turns("huge", std::slice::from_ref(&small), 3)
        .await
        .unwrap();
    assert_eq!(store.load("huge").await.unwrap().unwrap().turns[0].text(), "short");
    let pieces: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("SELECT COUNT(*) FROM turn_content", [], |r| r.get(0))
        .unwrap();
    assert_eq!(pieces, 0);
}

const BIG_FILE: usize = 49_000_000;

/// Not a test of its own: the child process of
/// `writing_a_49_mb_file_peaks_at_a_small_multiple_of_it`, which measures
/// a durable run's peak in a process that runs nothing else. Without
/// `ZIDANE_BIG_WRITE_DIR` it returns at once.
#[tokio::test]
async fn big_write_child_helper() {
    let Some(dir) = std::env::var_os("ZIDANE_BIG_WRITE_DIR") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let runtime = Arc::new(zidane_agent::CheckpointRuntime::open(dir.join("sessions.db")).unwrap());
    let line = format!("{}\n", "x".repeat(79));
    let p = provider(vec![
        Script::call(
            "w",
            "write_file",
            json!({"path": "big.txt", "content": line.repeat(BIG_FILE / line.len())}),
        ),
        Script::answer("written"),
    ]);
    let mut tools = zidane_tools::BasicOptions::in_folder(&dir);
    tools.sandbox = zidane_tools::Sandbox::off();
    let preset = zidane_tools::basic(tools);
    let agent = create_agent(AgentOptions {
        tools: preset.tools,
        execution: Some(preset.execution),
        session_id: Some("big".into()),
        durable: Some(zidane_agent::DurableOptions::from(
            runtime as Arc<dyn zidane_core::durable::CheckpointBackend>,
        )),
        ..options(&p)
    })
    .unwrap();
    let before = peak_rss();
    agent.run(AgentRunOptions::prompt("Write big.txt.")).await.unwrap();
    assert_eq!(std::fs::metadata(dir.join("big.txt")).unwrap().len() as usize, BIG_FILE);
    println!("GROWN {}", peak_rss().saturating_sub(before));
}

/// A 49 MB file written through `write_file` in a durable run: the call's
/// input is held by the turn and by the tool, and its record is written to
/// the sessions file in pieces, so the run's peak grows by a small
/// multiple of the file (it grew by some 7 times before: the dispatch, the
/// gate, the tool and its context each held a copy, and the record was
/// copied three times more on its way into SQLite).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn writing_a_49_mb_file_peaks_at_a_small_multiple_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "sessions::big_write_child_helper",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("ZIDANE_BIG_WRITE_DIR", dir.path())
        .stderr(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let grown: u64 = stdout
        .lines()
        .find_map(|l| l.split("GROWN ").nth(1))
        .unwrap_or_else(|| panic!("the child ran: {stdout}"))
        .parse()
        .unwrap();
    let times = grown as f64 / BIG_FILE as f64;
    assert!(
        times < 3.5,
        "writing a 49 MB file grew the peak by {grown} bytes ({times:.1} times the file)"
    );
}

/// A session that must exist: a mistyped id fails with the id and the
/// store named, and creates nothing; the right id continues the session.
#[tokio::test]
async fn a_required_session_that_the_store_lacks_is_an_error_naming_id_and_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&path).unwrap());
    let first = provider(vec![Script::answer("hello")]);
    let agent = create_agent(options(&first).store(Arc::clone(&store)).session_id("work")).unwrap();
    agent.run(AgentRunOptions::prompt("Start.")).await.unwrap();
    drop(agent);

    let typo = provider(vec![Script::answer("never")]);
    let agent = create_agent(options(&typo).store(Arc::clone(&store)).existing_session("wrok")).unwrap();
    let err = agent.run(AgentRunOptions::prompt("Continue.")).await.unwrap_err();
    assert!(
        matches!(&err, zidane_agent::AgentError::SessionNotFound { id, .. } if id == "wrok"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!("no session `wrok` in the session store `{}`", store.key().unwrap())
    );
    assert!(typo.requests().is_empty(), "nothing reached the model");
    assert!(store.load("wrok").await.unwrap().is_none(), "no empty session was made");
    // Without the requirement, the same id starts a new session.
    let listed = store.list().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].messages, 2);
    #[allow(deprecated)]
    let alias = listed[0].turns;
    assert_eq!(alias, 2, "the deprecated name reads the same count");

    let right = provider(vec![Script::answer("continued")]);
    let agent = create_agent(options(&right).store(Arc::clone(&store)).existing_session("work")).unwrap();
    agent.run(AgentRunOptions::prompt("Continue.")).await.unwrap();
    assert_eq!(right.requests()[0].messages.len(), 3, "the earlier turns were loaded");

    // Required, but no id to require.
    let err = create_agent(AgentOptions {
        require_session: true,
        ..options(&right).store(store)
    })
    .err()
    .unwrap();
    assert_eq!(
        err.to_string(),
        "`require_session` needs the id of the session to continue (`session_id`)"
    );
}
