//! Folder checkpoints through the program: `--undo`, `--rewind`, `--fork`,
//! `--list-checkpoints`, conflicts, a kill in the middle of a run, session
//! deletion and pruning.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Value, json};
use zidane::checkpoints::CheckpointStore;

use super::{answer_sse, anthropic_sse, kill_once_started, server_with, spawn_zidane, started_fifo, text, zidane};

/// The tool calls each prompt's first turn makes (keyed by a tag in the
/// prompt), then a closing answer once results came back.
fn script(body: &str) -> String {
    let request: Value = serde_json::from_str(body).unwrap_or_default();
    let last = request["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or_default();
    let last_text = last.to_string();
    let calls: Vec<(&str, Value)> = if last_text.contains("tool_result") {
        Vec::new()
    } else if last_text.contains("[change]") {
        vec![
            (
                "write_file",
                json!({"path": "new.txt", "content": "created by the agent\n"}),
            ),
            (
                "shell",
                json!({"command": "sed -i 's/beta/gamma/' edit.txt && rm gone.txt && mkdir -p newdir/deeper && echo x > newdir/deeper/inner.txt && mv move.txt moved.txt && chmod 600 script.sh && echo more >> ignored.log && head -c 64 /dev/urandom >> bin.dat"}),
            ),
        ]
    } else if last_text.contains("[second]") {
        vec![(
            "shell",
            json!({"command": "echo second > second.txt && echo appended >> keep.txt"}),
        )]
    } else if last_text.contains("[many]") {
        vec![(
            "shell",
            json!({"command": "for f in f*.txt; do echo changed > $f; done"}),
        )]
    } else if last_text.contains("[long]") {
        vec![(
            "shell",
            json!({"command": "echo before-kill > killed.txt; echo started > started.fifo; sleep 30"}),
        )]
    } else {
        Vec::new()
    };
    if calls.is_empty() {
        return answer_sse("Done.", 3);
    }
    let mut events = vec![(
        "message_start",
        json!({"type": "message_start", "message": {"id": "m1", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 40, "output_tokens": 1}}}),
    )];
    for (i, (name, input)) in calls.iter().enumerate() {
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": format!("toolu_{i}_{name}"), "name": name, "input": {}}}),
        ));
        events.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
        ));
        events.push(("content_block_stop", json!({"type": "content_block_stop", "index": i})));
    }
    events.push((
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 20}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    anthropic_sse(&events)
}

/// Every path under `root` (but `.git`) with its bytes (a link's target)
/// and mode; folders end with `/`.
fn tree(root: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (Vec<u8>, u32)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let rel = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o7777;
            if meta.is_dir() {
                out.insert(format!("{rel}/"), (Vec::new(), mode));
                walk(root, &path, out);
            } else if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(rel, (target.to_string_lossy().as_bytes().to_vec(), mode));
            } else {
                out.insert(rel, (std::fs::read(&path).unwrap(), mode));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// A folder with text, binary, executable, ignored and linked files.
fn seed(work: &Path) {
    let write = |name: &str, bytes: &[u8]| std::fs::write(work.join(name), bytes).unwrap();
    write("keep.txt", b"keep\n");
    write("edit.txt", b"alpha\nbeta\n");
    write("gone.txt", b"bye\n");
    write("move.txt", b"moving\n");
    write("script.sh", b"#!/bin/sh\necho hi\n");
    std::fs::set_permissions(work.join("script.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    write(".gitignore", b"ignored.log\n");
    write("ignored.log", b"old\n");
    write("bin.dat", &(0..=255u8).collect::<Vec<_>>());
    std::os::unix::fs::symlink("keep.txt", work.join("link.txt")).unwrap();
}

const KEY: [(&str, &str); 1] = [("ANTHROPIC_API_KEY", "sk-test")];

async fn run(home: &Path, work: &Path, url: &str, args: &[&str]) -> std::process::Output {
    let mut all = vec!["--base-url", url, "--sandbox", "off"];
    all.extend_from_slice(args);
    let out = zidane(home, work, &KEY, &all).await;
    assert_eq!(out.status.code(), Some(0), "{:?}: {}", args, text(&out.stderr));
    out
}

/// `write_file` and a shell command (`sed -i`, `rm`, `mkdir`, `mv`,
/// `chmod`, a binary append) change the folder; `zidane --undo` puts every
/// byte and mode back, removes what was created and recreates what was
/// deleted, and leaves the ignored file alone.
#[tokio::test]
async fn undo_takes_back_a_prompts_changes_exactly() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    seed(work.path());
    let before = tree(work.path());
    let (url, _) = server_with(None, script).await;
    let out = run(
        home.path(),
        work.path(),
        &url,
        &["--session", "s1", "Make the changes [change]"],
    )
    .await;
    let after = tree(work.path());
    assert!(after.contains_key("new.txt") && after.contains_key("moved.txt") && !after.contains_key("gone.txt"));
    assert!(
        text(&out.stderr).contains("↺ checkpoint 1:"),
        "the run says what it changed: {}",
        text(&out.stderr)
    );

    let listed = zidane(home.path(), work.path(), &KEY, &["--list-checkpoints", "--json"]).await;
    let lines: Vec<Value> = text(&listed.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{}", text(&listed.stdout));
    let cp = &lines[0];
    assert_eq!(cp["type"], "checkpoint");
    assert_eq!(cp["session"], "s1");
    assert_eq!(cp["index"], 1);
    assert_eq!(cp["label"], "Make the changes [change]");
    assert_eq!(
        cp["changes"],
        json!({
            "created": ["moved.txt", "new.txt", "newdir/", "newdir/deeper/", "newdir/deeper/inner.txt"],
            "modified": ["bin.dat", "edit.txt", "script.sh"],
            "deleted": ["gone.txt", "move.txt"],
        })
    );

    let undone = zidane(home.path(), work.path(), &KEY, &["--undo"]).await;
    assert_eq!(undone.status.code(), Some(0), "{}", text(&undone.stderr));
    let mut restored = tree(work.path());
    let ignored = restored.remove("ignored.log").unwrap();
    assert_eq!(ignored.0, b"old\nmore\n", "an ignored file is not touched");
    let mut expected = before.clone();
    expected.remove("ignored.log");
    assert_eq!(restored, expected, "every path back, byte for byte and mode for mode");

    // The undo is itself a checkpoint: undoing it brings the changes back.
    let redone = zidane(home.path(), work.path(), &KEY, &["--undo"]).await;
    assert_eq!(redone.status.code(), Some(0), "{}", text(&redone.stderr));
    let mut again = tree(work.path());
    let mut after = after;
    after.remove("ignored.log");
    again.remove("ignored.log");
    assert_eq!(again, after);
}

/// A file the person changed after the agent is a conflict: without a
/// terminal the undo stops and changes nothing; `--force` restores the
/// rest and leaves that file as the person left it.
#[tokio::test]
async fn a_file_changed_by_the_person_is_not_overwritten() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    seed(work.path());
    let (url, _) = server_with(None, script).await;
    run(
        home.path(),
        work.path(),
        &url,
        &["--session", "s1", "Make the changes [change]"],
    )
    .await;
    std::fs::write(work.path().join("edit.txt"), "the person's own edit\n").unwrap();

    let refused = zidane(home.path(), work.path(), &KEY, &["--undo"]).await;
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused.stderr));
    let stderr = text(&refused.stderr);
    assert!(stderr.contains("edit.txt") && stderr.contains("--force"), "{stderr}");
    assert!(work.path().join("new.txt").exists(), "nothing changed");

    let forced = zidane(home.path(), work.path(), &KEY, &["--undo", "--force", "--json"]).await;
    assert_eq!(forced.status.code(), Some(0), "{}", text(&forced.stderr));
    let line: Value = serde_json::from_str(text(&forced.stdout).trim()).unwrap();
    assert_eq!(line["type"], "rewind");
    assert_eq!(line["files"]["kept"][0]["path"], "edit.txt");
    assert!(!work.path().join("new.txt").exists());
    assert!(work.path().join("gone.txt").exists());
    assert_eq!(
        std::fs::read_to_string(work.path().join("edit.txt")).unwrap(),
        "the person's own edit\n"
    );
}

/// Two prompts; `--rewind 2` takes back only the second's files and
/// conversation (the later turns kept in a branch); `--restore
/// conversation` leaves files alone; `--fork S:2 --with-files` starts a new
/// session from the first prompt's turns.
#[tokio::test]
async fn rewind_and_fork() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    seed(work.path());
    let (url, bodies) = server_with(None, script).await;
    run(home.path(), work.path(), &url, &["--session", "s1", "First [change]"]).await;
    let after_first = tree(work.path());
    run(
        home.path(),
        work.path(),
        &url,
        &["--session", "s1", "--resume", "Second [second]"],
    )
    .await;
    assert!(work.path().join("second.txt").exists());

    let out = zidane(home.path(), work.path(), &KEY, &["--rewind", "2", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let line: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(line["checkpoint"], 2);
    assert_eq!(
        line["turnsKept"], 4,
        "prompt, calls, results, answer of the first prompt"
    );
    let branch = line["branch"].as_str().unwrap().to_owned();
    assert_eq!(
        tree(work.path()),
        after_first,
        "only the second prompt's changes are taken back"
    );

    let store = zidane::agent::SqliteStore::open(home.path().join("sessions.db")).unwrap();
    use zidane::agent::SessionStore;
    assert_eq!(store.load("s1").await.unwrap().unwrap().turns.len(), 4);
    assert_eq!(
        store.load(&branch).await.unwrap().unwrap().turns.len(),
        8,
        "the later turns stay stored"
    );

    // The next prompt continues from the rewound conversation.
    let requests_before = bodies.lock().unwrap().len();
    run(
        home.path(),
        work.path(),
        &url,
        &["--session", "s1", "--resume", "Third"],
    )
    .await;
    let sent: Value = serde_json::from_str(&bodies.lock().unwrap()[requests_before]).unwrap();
    let sent_text = sent["messages"].to_string();
    assert!(
        sent_text.contains("First [change]") && !sent_text.contains("Second [second]"),
        "{sent_text}"
    );

    // Conversation only: the files stay.
    std::fs::write(work.path().join("untracked-later.txt"), "x").unwrap();
    let out = zidane(
        home.path(),
        work.path(),
        &KEY,
        &["--rewind", "1", "--restore", "conversation", "--json"],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(work.path().join("new.txt").exists());
    assert_eq!(store.load("s1").await.unwrap().unwrap().turns.len(), 0);

    // A fork of the whole session (no checkpoint given).
    let out = zidane(
        home.path(),
        work.path(),
        &KEY,
        &["--fork", "s1", "--session", "s1-fork", "--json"],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let line: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(line["type"], "fork");
    assert_eq!(line["session"], "s1-fork");
    let missing = zidane(home.path(), work.path(), &KEY, &["--fork", "nope:1"]).await;
    assert_eq!(missing.status.code(), Some(2), "{}", text(&missing.stderr));
}

/// `--fork S:1 --with-files` restores the folder to before the first prompt
/// and starts the new session with no turns; a prompt given runs in it.
#[tokio::test]
async fn fork_with_files_runs_the_prompt_in_the_new_session() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    seed(work.path());
    let before = tree(work.path());
    let (url, _) = server_with(None, script).await;
    run(home.path(), work.path(), &url, &["--session", "s1", "First [change]"]).await;
    let out = run(
        home.path(),
        work.path(),
        &url,
        &["--fork", "s1:1", "--with-files", "--session", "try-2", "Another try"],
    )
    .await;
    assert!(
        text(&out.stderr).contains("forked session s1 at checkpoint 1 into try-2"),
        "{}",
        text(&out.stderr)
    );
    let mut now = tree(work.path());
    let mut expected = before;
    now.remove("ignored.log");
    expected.remove("ignored.log");
    assert_eq!(now, expected);
    let store = zidane::agent::SqliteStore::open(home.path().join("sessions.db")).unwrap();
    use zidane::agent::SessionStore;
    let forked = store.load("try-2").await.unwrap().unwrap();
    assert_eq!(forked.turns.len(), 2, "the prompt ran in the fork");
    assert_eq!(
        store.load("s1").await.unwrap().unwrap().turns.len(),
        4,
        "the source is untouched"
    );
}

/// `kill -9` while a command runs, then `--resume`: the run's prompt and
/// tool checkpoints are not taken twice, and the prompt's changes (the
/// command's file) are still known and undone.
#[tokio::test]
async fn a_resumed_run_takes_no_second_checkpoint() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("keep.txt"), "keep\n").unwrap();
    let fifo = started_fifo(work.path());
    let (url, _) = server_with(None, script).await;
    let mut child = spawn_zidane(
        home.path(),
        work.path(),
        &[
            "--base-url",
            &url,
            "--sandbox",
            "off",
            "--session",
            "k",
            "Run it [long]",
        ],
    );
    kill_once_started(&mut child, &fifo).await;
    let resumed = zidane(
        home.path(),
        work.path(),
        &KEY,
        &["--base-url", &url, "--sandbox", "off", "--resume", "--session", "k"],
    )
    .await;
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed.stderr));

    let store = zidane::agent::SqliteStore::open(home.path().join("sessions.db")).unwrap();
    let snapshots = store.snapshots("k").await.unwrap();
    let kinds: Vec<&str> = snapshots.iter().map(|s| s.kind.as_str()).collect();
    assert_eq!(kinds, ["prompt", "tool", "end"], "one of each: {snapshots:?}");
    let listed = zidane(
        home.path(),
        work.path(),
        &KEY,
        &["--list-checkpoints", "--json", "--session", "k"],
    )
    .await;
    let cp: Value = serde_json::from_str(text(&listed.stdout).trim()).unwrap();
    assert_eq!(cp["changes"]["created"], json!(["killed.txt"]));
    let undone = zidane(home.path(), work.path(), &KEY, &["--undo", "--session", "k"]).await;
    assert_eq!(undone.status.code(), Some(0), "{}", text(&undone.stderr));
    assert!(!work.path().join("killed.txt").exists());
}

/// A file over the size cap is named and never restored over; deleting the
/// session leaves no checkpoint content behind; `--prune-older-than` removes
/// old sessions.
#[tokio::test]
async fn storage_is_named_bounded_and_pruned() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    seed(work.path());
    let big = vec![7u8; 10 * 1024 * 1024 + 1];
    std::fs::write(work.path().join("big.bin"), &big).unwrap();
    let (url, _) = server_with(None, script).await;
    let out = run(home.path(), work.path(), &url, &["--session", "s1", "First [change]"]).await;
    assert!(
        text(&out.stderr).contains("not in checkpoints: big.bin"),
        "the file over the cap is named: {}",
        text(&out.stderr)
    );
    let listed = zidane(home.path(), work.path(), &KEY, &["--list-sessions"]).await;
    assert!(
        text(&listed.stderr).contains("Checkpoints take"),
        "{}",
        text(&listed.stderr)
    );

    let store = zidane::agent::SqliteStore::open(home.path().join("sessions.db")).unwrap();
    assert!(store.storage_bytes().await.unwrap() > 0);
    let deleted = zidane(home.path(), work.path(), &KEY, &["--delete-session", "s1"]).await;
    assert_eq!(deleted.status.code(), Some(0), "{}", text(&deleted.stderr));
    assert_eq!(store.storage_bytes().await.unwrap(), 0, "no orphan content");
    let gone = zidane(home.path(), work.path(), &KEY, &["--delete-session", "s1"]).await;
    assert_eq!(gone.status.code(), Some(2));

    run(home.path(), work.path(), &url, &["--session", "s2", "Second [second]"]).await;
    let kept = zidane(home.path(), work.path(), &KEY, &["--prune-older-than", "1d", "--json"]).await;
    let line: Value = serde_json::from_str(text(&kept.stdout).trim()).unwrap();
    assert_eq!(line["sessions"], json!([]));
    let pruned = zidane(home.path(), work.path(), &KEY, &["--prune-older-than", "0s", "--json"]).await;
    let line: Value = serde_json::from_str(text(&pruned.stdout).trim()).unwrap();
    assert_eq!(line["sessions"], json!(["s2"]));
    assert_eq!(store.storage_bytes().await.unwrap(), 0);
}

/// `kill -9` in the middle of an undo that restores 1,500 files, then
/// `zidane --undo` again: the cut-off rewind is finished (not taken back),
/// and every file is whole, old or new, never half written.
#[tokio::test]
async fn an_undo_cut_off_by_kill_finishes_when_run_again() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let count = 1500;
    for i in 0..count {
        std::fs::write(work.path().join(format!("f{i:04}.txt")), format!("original {i}\n")).unwrap();
    }
    let (url, _) = server_with(None, script).await;
    run(
        home.path(),
        work.path(),
        &url,
        &["--session", "m", "Change them all [many]"],
    )
    .await;
    let first = work.path().join("f0000.txt");
    assert_eq!(std::fs::read_to_string(&first).unwrap(), "changed\n");

    let mut child = spawn_zidane(home.path(), work.path(), &["--undo", "--session", "m"]);
    // Killed once the first file is back (each restore is synced to disk,
    // so the rest takes a while).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::fs::read_to_string(&first).unwrap_or_default() != "original 0\n" {
        assert!(std::time::Instant::now() < deadline, "the undo never started");
        if child.try_wait().unwrap().is_some() {
            break;
        }
        tokio::task::yield_now().await;
    }
    let _ = child.start_kill();
    child.wait().await.unwrap();
    let restored = (0..count)
        .filter(|i| {
            let text = std::fs::read_to_string(work.path().join(format!("f{i:04}.txt"))).unwrap();
            assert!(
                text == "changed\n" || text == format!("original {i}\n"),
                "whole, old or new: {text:?}"
            );
            text != "changed\n"
        })
        .count();

    let again = zidane(home.path(), work.path(), &KEY, &["--undo", "--session", "m"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    if restored < count {
        assert!(
            text(&again.stderr).contains("was cut off; finishing it"),
            "{}",
            text(&again.stderr)
        );
    }
    for i in 0..count {
        assert_eq!(
            std::fs::read_to_string(work.path().join(format!("f{i:04}.txt"))).unwrap(),
            format!("original {i}\n")
        );
    }
    let leftovers: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".zidane-restore"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "a file half written when killed is replaced: {leftovers:?}"
    );
}

/// On a terminal (a pseudo-terminal from `script`), `--rewind` without a
/// number lists the checkpoints, asks which, shows what it will change and
/// asks before changing it; the answers typed are taken.
#[tokio::test]
async fn on_a_terminal_rewind_asks_which_and_whether() {
    use tokio::io::AsyncWriteExt;
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    seed(work.path());
    let (url, _) = server_with(None, script).await;
    run(home.path(), work.path(), &url, &["--session", "t", "First [change]"]).await;
    run(
        home.path(),
        work.path(),
        &url,
        &["--session", "t", "--resume", "Second [second]"],
    )
    .await;
    assert!(work.path().join("second.txt").exists());

    let command = format!("{} --rewind --session t", env!("CARGO_BIN_EXE_zidane"));
    let mut child = tokio::process::Command::new("script")
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .env("ZIDANE_HOME", home.path())
        .env("ANTHROPIC_API_KEY", "sk-test")
        .current_dir(work.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"2\ny\n").await.unwrap();
    let out = child.wait_with_output().await.unwrap();
    drop(stdin);
    let screen = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{screen}");
    assert!(screen.contains("Rewind to which checkpoint (1-2)?"), "{screen}");
    assert!(screen.contains("remove   second.txt"), "{screen}");
    assert!(screen.contains("restore  keep.txt"), "{screen}");
    assert!(screen.contains("Go ahead? [y/N]"), "{screen}");
    assert!(screen.contains("zidane: rewound"), "{screen}");
    assert!(!work.path().join("second.txt").exists());
    assert_eq!(std::fs::read_to_string(work.path().join("keep.txt")).unwrap(), "keep\n");
}
