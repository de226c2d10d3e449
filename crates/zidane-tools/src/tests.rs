use std::time::Duration;

use serde_json::{Value, json};
use std::sync::Arc;

use zidane_core::ToolOutput;
use zidane_core::Workspace;
use zidane_core::tool::{ReadStateMap, ToolContext};
use zidane_provider::{AbortController, AbortSignal, ToolResultContent};

use crate::{BasicOptions, Preset, basic, cap_output};

struct Rig {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    preset: Preset,
    reads: ReadStateMap,
    workspace: Workspace,
}

fn rig() -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/main.rs"), "fn main() {\n    println!(\"hi\");\n}\n").unwrap();
    std::fs::write(
        root.join("src/lib.rs"),
        "pub fn a() {}\npub fn b() {}\npub fn a2() {}\n",
    )
    .unwrap();
    std::fs::write(root.join("README.md"), "# demo\n").unwrap();
    let mut options = BasicOptions::in_folder(&root);
    options.max_output_bytes = 200;
    Rig {
        _dir: dir,
        workspace: Arc::new(crate::ProcessContext::new(&root)).workspace(),
        root,
        preset: basic(options),
        reads: ReadStateMap::default(),
    }
}

impl Rig {
    async fn call(&self, name: &str, input: Value) -> Result<ToolOutput, String> {
        let tool = self.preset.tools.get(name).unwrap_or_else(|| panic!("no tool {name}"));
        let cx = ToolContext::detached(name, "call", AbortSignal::never())
            .with_read_state(self.reads.clone())
            .with_workspace(self.workspace.clone());
        tool.execute(input, cx).await.map_err(|e| e.to_string())
    }
}

fn text(out: &ToolOutput) -> &str {
    match &out.content {
        ToolResultContent::Text(t) => t,
        ToolResultContent::Parts(_) => panic!("text expected"),
    }
}

#[test]
fn the_preset_has_the_basic_tools_with_object_schemas() {
    let rig = rig();
    let names: Vec<&str> = rig.preset.tools.names().collect();
    assert_eq!(
        names,
        vec![
            "shell",
            "wait_task",
            "shell_kill",
            "read_file",
            "write_file",
            "edit",
            "multi_edit",
            "list_files",
            "glob",
            "grep",
            "todowrite",
            "todoread",
            "spawn"
        ]
    );
    for spec in rig.preset.tools.specs() {
        assert_eq!(spec.input_schema["type"], json!("object"), "{}", spec.name);
        assert!(jsonschema_compiles(&spec.input_schema), "{}", spec.name);
    }
    assert!(rig.preset.system.contains(zidane_provider::SYSTEM_PROMPT_BOUNDARY));
}

fn jsonschema_compiles(schema: &Value) -> bool {
    zidane_loop::validate::InputValidator::new(schema)
        .schema_error()
        .is_none()
}

#[tokio::test]
async fn read_file_numbers_lines_reads_ranges_and_dedups() {
    let rig = rig();
    let out = rig.call("read_file", json!({"path": "src/main.rs"})).await.unwrap();
    assert_eq!(
        text(&out),
        "     1\tfn main() {\n     2\t    println!(\"hi\");\n     3\t}\n"
    );
    let again = rig.call("read_file", json!({"path": "./src//main.rs"})).await.unwrap();
    assert_eq!(
        text(&again),
        "`src/main.rs` is unchanged since you last read it; its content is in that earlier result."
    );
    let part = rig
        .call("read_file", json!({"path": "src/main.rs", "offset": 2, "limit": 1}))
        .await
        .unwrap();
    assert_eq!(text(&part), "     2\t    println!(\"hi\");\n");
    std::fs::write(rig.root.join("src/main.rs"), "fn main() {}\n").unwrap();
    let changed = rig
        .call("read_file", json!({"path": "src/main.rs", "offset": 2, "limit": 1}))
        .await
        .unwrap();
    assert_eq!(text(&changed), "`src/main.rs` has 1 lines; none in that range.");
}

#[tokio::test]
async fn paths_outside_the_folder_are_refused() {
    let rig = rig();
    for path in ["../outside.txt", "/etc/passwd", "src/../../x"] {
        let err = rig.call("read_file", json!({"path": path})).await.unwrap_err();
        assert!(
            err.contains("outside the working folder") || err.contains("leaves the working folder"),
            "{path}: {err}"
        );
        let err = rig
            .call("write_file", json!({"path": path, "content": "x"}))
            .await
            .unwrap_err();
        assert!(err.contains("working folder"), "{path}: {err}");
    }
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("/etc", rig.root.join("escape")).unwrap();
        let err = rig
            .call("read_file", json!({"path": "escape/hostname"}))
            .await
            .unwrap_err();
        assert!(err.contains("outside the working folder"), "{err}");
    }
}

/// A dangling link inside the folder that points outside it must not let a
/// write create the target (to a file, or into a folder that does not exist).
#[cfg(unix)]
#[tokio::test]
async fn writes_through_dangling_links_are_refused() {
    let rig = rig();
    let outside = tempfile::tempdir().unwrap();
    let target_file = outside.path().join("created.txt");
    std::os::unix::fs::symlink(&target_file, rig.root.join("link.txt")).unwrap();
    let err = rig
        .call("write_file", json!({"path": "link.txt", "content": "x"}))
        .await
        .unwrap_err();
    assert!(err.contains("symbolic link that points nowhere"), "{err}");
    assert!(!target_file.exists(), "the write followed the link out of the folder");

    let target_dir = outside.path().join("missing-dir");
    std::os::unix::fs::symlink(&target_dir, rig.root.join("dirlink")).unwrap();
    let err = rig
        .call("write_file", json!({"path": "dirlink/new.txt", "content": "x"}))
        .await
        .unwrap_err();
    assert!(err.contains("symbolic link that points nowhere"), "{err}");
    assert!(!target_dir.exists());
}

/// Reading a FIFO would block forever: the file tools refuse anything that
/// is not a regular file, and name a folder as one.
#[cfg(unix)]
#[tokio::test]
async fn file_tools_refuse_folders_and_special_files() {
    let rig = rig();
    let fifo = rig.root.join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let err = rig.call("read_file", json!({"path": "pipe"})).await.unwrap_err();
    assert_eq!(err, "`pipe` is not a regular file");
    let err = rig.call("read_file", json!({"path": "src"})).await.unwrap_err();
    assert_eq!(err, "`src` is a folder; use list_files to see its entries");
    let err = rig.call("read_file", json!({"path": "nothing.txt"})).await.unwrap_err();
    assert_eq!(err, "`nothing.txt` does not exist");
}

#[tokio::test]
async fn a_tool_without_a_workspace_says_so() {
    let rig = rig();
    let tool = rig.preset.tools.get("read_file").unwrap();
    let cx = ToolContext::detached("read_file", "c", AbortSignal::never());
    let err = tool.execute(json!({"path": "README.md"}), cx).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "`read_file` needs an execution context, and this agent has none"
    );
}

#[tokio::test]
async fn edits_need_a_read_and_exactly_one_match() {
    let rig = rig();
    let err = rig
        .call(
            "edit",
            json!({"path": "src/lib.rs", "old_string": "pub fn b", "new_string": "pub fn c"}),
        )
        .await
        .unwrap_err();
    assert_eq!(err, "read `src/lib.rs` before changing it");
    rig.call("read_file", json!({"path": "src/lib.rs"})).await.unwrap();
    let err = rig
        .call(
            "edit",
            json!({"path": "src/lib.rs", "old_string": "nothing like it", "new_string": "x"}),
        )
        .await
        .unwrap_err();
    assert_eq!(err, "`old_string` was not found in `src/lib.rs`");
    let err = rig
        .call(
            "edit",
            json!({"path": "src/lib.rs", "old_string": "pub fn a", "new_string": "pub fn z"}),
        )
        .await
        .unwrap_err();
    assert!(
        err.starts_with("`old_string` matches 2 places in `src/lib.rs`"),
        "{err}"
    );
    let ok = rig
        .call(
            "edit",
            json!({"path": "src/lib.rs", "old_string": "pub fn b", "new_string": "pub fn c"}),
        )
        .await
        .unwrap();
    assert_eq!(text(&ok), "Edited `src/lib.rs`: 1 replacement(s).");
    // The tool's own write counts as a read; a change from outside does not.
    rig.call(
        "edit",
        json!({"path": "src/lib.rs", "old_string": "pub fn a", "new_string": "pub fn y", "replace_all": true}),
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(rig.root.join("src/lib.rs")).unwrap(),
        "pub fn y() {}\npub fn c() {}\npub fn y2() {}\n"
    );
    std::fs::write(rig.root.join("src/lib.rs"), "changed outside\n").unwrap();
    let err = rig
        .call(
            "edit",
            json!({"path": "src/lib.rs", "old_string": "changed", "new_string": "x"}),
        )
        .await
        .unwrap_err();
    assert!(err.contains("changed since you read it"), "{err}");
}

#[tokio::test]
async fn multi_edit_is_all_or_nothing_and_write_file_guards_overwrites() {
    let rig = rig();
    rig.call("read_file", json!({"path": "src/lib.rs"})).await.unwrap();
    let err = rig
        .call(
            "multi_edit",
            json!({"path": "src/lib.rs", "edits": [
                {"old_string": "pub fn b", "new_string": "pub fn c"},
                {"old_string": "missing", "new_string": "x"}
            ]}),
        )
        .await
        .unwrap_err();
    assert_eq!(
        err,
        "edit 2 of 2: `old_string` was not found in `src/lib.rs`; no edit was applied"
    );
    assert!(
        std::fs::read_to_string(rig.root.join("src/lib.rs"))
            .unwrap()
            .contains("pub fn b")
    );
    rig.call(
        "multi_edit",
        json!({"path": "src/lib.rs", "edits": [
            {"old_string": "pub fn b", "new_string": "pub fn c"},
            {"old_string": "pub fn c", "new_string": "pub fn d"}
        ]}),
    )
    .await
    .unwrap();
    assert!(
        std::fs::read_to_string(rig.root.join("src/lib.rs"))
            .unwrap()
            .contains("pub fn d")
    );

    let err = rig
        .call("write_file", json!({"path": "README.md", "content": "new"}))
        .await
        .unwrap_err();
    assert_eq!(err, "read `README.md` before changing it");
    let ok = rig
        .call("write_file", json!({"path": "docs/new/file.txt", "content": "hello"}))
        .await
        .unwrap();
    assert_eq!(text(&ok), "Wrote 5 bytes to `docs/new/file.txt`.");
    assert_eq!(
        std::fs::read_to_string(rig.root.join("docs/new/file.txt")).unwrap(),
        "hello"
    );
}

#[tokio::test]
async fn listing_glob_and_grep() {
    let rig = rig();
    std::fs::create_dir_all(rig.root.join("target/debug")).unwrap();
    std::fs::write(rig.root.join("target/debug/junk.rs"), "pub fn a() {}").unwrap();
    let list = rig.call("list_files", json!({})).await.unwrap();
    assert_eq!(text(&list), "README.md\nsrc/\ntarget/");
    let found = rig.call("glob", json!({"pattern": "**/*.rs"})).await.unwrap();
    assert_eq!(text(&found), "src/lib.rs\nsrc/main.rs", "build folders are skipped");
    let found = rig.call("glob", json!({"pattern": "*.{md,txt}"})).await.unwrap();
    assert_eq!(text(&found), "README.md");
    let hits = rig
        .call("grep", json!({"pattern": "pub fn a\\d?", "glob": "src/*.rs"}))
        .await
        .unwrap();
    assert_eq!(text(&hits), "src/lib.rs:1: pub fn a() {}\nsrc/lib.rs:3: pub fn a2() {}");
    let none = rig
        .call("grep", json!({"pattern": "PRINTLN", "ignore_case": false}))
        .await
        .unwrap();
    assert_eq!(text(&none), "No match.");
    let err = rig.call("grep", json!({"pattern": "("})).await.unwrap_err();
    assert!(err.starts_with("bad regular expression"));
}

/// A test run's passing lines are left out (the note says how many and
/// where the whole output is); `raw: true` returns it as it is.
#[tokio::test]
async fn shell_reduces_a_test_run_unless_asked_for_the_raw_output() {
    let rig = rig();
    let script = "for i in $(seq 1 30); do echo \"test t$i ... ok\"; done; echo 'test broken ... FAILED'; echo 'test result: FAILED. 30 passed; 1 failed'";
    std::fs::write(rig.root.join("fake-tests.sh"), script).unwrap();
    let reduced = rig
        .call("shell", json!({"command": "cargo test 2>/dev/null; sh fake-tests.sh"}))
        .await
        .unwrap();
    let shown = text(&reduced);
    assert!(
        shown.contains("test broken ... FAILED\ntest result: FAILED. 30 passed; 1 failed\n"),
        "{shown}"
    );
    assert!(!shown.contains("test t1 ... ok"), "{shown}");
    assert!(
        shown.contains("[30 passing and progress lines omitted; full output: "),
        "{shown}"
    );
    let raw = rig
        .call(
            "shell",
            json!({"command": "cargo test 2>/dev/null; sh fake-tests.sh", "raw": true}),
        )
        .await
        .unwrap();
    assert!(text(&raw).contains("test t1 ... ok"));
    assert!(!text(&raw).contains("omitted"));
}

#[tokio::test]
async fn shell_reports_exit_codes_caps_output_and_obeys_timeout_and_abort() {
    let rig = rig();
    let ok = rig
        .call("shell", json!({"command": "echo hello; echo oops >&2"}))
        .await
        .unwrap();
    assert_eq!(text(&ok), "exit code: 0\nhello\n[stderr]\noops\n");
    assert!(!ok.is_error);
    let failed = rig.call("shell", json!({"command": "exit 3"})).await.unwrap();
    assert!(failed.is_error && text(&failed).starts_with("exit code: 3"));
    let long = rig.call("shell", json!({"command": "seq 1 2000"})).await.unwrap();
    assert!(text(&long).contains("bytes cut ...]"), "{}", text(&long));
    // The whole output is kept where `read_file` reads it.
    let (shown, path) = text(&long).rsplit_once("\n[output cut; full output: ").unwrap();
    assert!(shown.ends_with("\n2000"), "{shown}");
    let path = path.strip_suffix("]\n").unwrap();
    assert!(path.ends_with("/output-call.txt"), "{path}");
    let whole = rig
        .call("read_file", json!({"path": path, "limit": 1, "offset": 2001}))
        .await
        .unwrap();
    assert_eq!(text(&whole), "  2001\t2000\n");
    let controller = AbortController::new();
    let tool = rig.preset.tools.get("shell").unwrap().clone();
    let cx = ToolContext::detached("shell", "c", controller.signal()).with_workspace(rig.workspace.clone());
    let run = tokio::spawn(async move {
        tool.execute(json!({"command": "sleep 30"}), cx)
            .await
            .map_err(|e| e.to_string())
    });
    controller.abort(None);
    let out = run.await.unwrap().unwrap();
    assert_eq!(text(&out), "The command was cancelled and killed.");
}

/// On tokio's paused clock the time limit passes in virtual time, at once.
#[tokio::test(start_paused = true)]
async fn shell_kills_a_command_at_its_time_limit() {
    let rig = rig();
    let started = tokio::time::Instant::now();
    let slow = rig
        .call("shell", json!({"command": "sleep 30", "timeout_secs": 1}))
        .await
        .unwrap();
    assert_eq!(text(&slow), "The command timed out after 1s and was killed.");
    assert!(slow.is_error);
    assert_eq!(started.elapsed(), Duration::from_secs(1));
}

/// Killing a command's process group reaches nothing outside it.
#[tokio::test(start_paused = true)]
async fn a_killed_command_takes_no_other_process_with_it() {
    let mut bystander = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    let rig = rig();
    let slow = rig
        .call("shell", json!({"command": "sleep 30 & sleep 30", "timeout_secs": 1}))
        .await
        .unwrap();
    assert_eq!(text(&slow), "The command timed out after 1s and was killed.");
    let alive = bystander.try_wait().unwrap().is_none();
    bystander.kill().unwrap();
    bystander.wait().unwrap();
    assert!(alive, "a process outside the command's group was killed");
}

#[tokio::test]
async fn todos_live_in_tool_state() {
    let rig = rig();
    let tool = rig.preset.tools.get("todowrite").unwrap();
    let cx = ToolContext::detached("todowrite", "c", AbortSignal::never());
    let out = tool
        .execute(json!({"todos": [{"content": "read", "status": "completed"}, {"content": "edit", "status": "in_progress"}]}), cx.clone())
        .await
        .unwrap();
    assert_eq!(text(&out), "- [x] read\n- [~] edit");
    let read = rig
        .preset
        .tools
        .get("todoread")
        .unwrap()
        .execute(json!({}), cx)
        .await
        .unwrap();
    assert_eq!(text(&read), "- [x] read\n- [~] edit");
}

#[test]
fn cap_output_keeps_head_and_tail() {
    let text: String = "é".repeat(100);
    let capped = cap_output(&text, 20);
    assert_eq!(capped, "ééééé\n[... 180 bytes cut ...]\nééééé");
    assert_eq!(cap_output("short", 20), "short");
}

#[test]
fn credentials_are_recognised_by_name() {
    for secret in [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "GITHUB_TOKEN",
        "aws_secret",
        "DB_PASSWORD",
        "PASSWORD_FILE",
        "API_KEY",
    ] {
        assert!(zidane_core::execution::is_secret_env(secret), "{secret}");
    }
    for plain in ["PATH", "HOME", "TOKENIZER_THREADS", "KEYBOARD", "SECRETARY_NAME"] {
        assert!(!zidane_core::execution::is_secret_env(plain), "{plain}");
    }
}

/// A call the dispatcher drops (an aborted or cancelled run) takes its
/// command's whole process group with it, grandchildren included.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_dropped_call_kills_its_command_and_what_it_started() {
    let rig = rig();
    let tool = rig.preset.tools.get("shell").unwrap().clone();
    let cx = ToolContext::detached("shell", "c", AbortSignal::never()).with_workspace(rig.workspace.clone());
    let pid_file = rig.root.join("grandchild.pid");
    let command = format!("sleep 300 & echo $! > {}; wait", pid_file.display());
    let call = tokio::spawn(async move { tool.execute(json!({"command": command}), cx).await.map(|_| ()) });
    // The grandchild is running once its pid is on disk.
    let mut pid = None;
    for _ in 0..200_000 {
        if let Some(p) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
        {
            pid = Some(p);
            break;
        }
        tokio::task::yield_now().await;
    }
    let pid = pid.expect("the command started its background child");
    call.abort();
    let _ = call.await;
    // Killed: gone, or a zombie waiting to be reaped.
    let state = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).ok().and_then(|s| {
            s.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next().map(str::to_owned))
        })
    };
    let mut dead = false;
    for _ in 0..200_000 {
        if state(pid).is_none_or(|s| s == "Z" || s == "X") {
            dead = true;
            break;
        }
        std::thread::yield_now();
    }
    assert!(dead, "the grandchild {pid} outlived the dropped call: {:?}", state(pid));
}

#[tokio::test]
async fn command_output_is_kept_bounded_as_it_streams() {
    let rig = rig();
    let out = rig
        .workspace
        .exec(
            "head -c 50000000 /dev/zero | tr '\\0' a; echo; echo END",
            zidane_core::execution::ExecOptions {
                max_output_bytes: Some(100),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(0));
    assert!(out.stdout.len() < 200, "kept {} bytes", out.stdout.len());
    assert!(out.stdout.starts_with(&"a".repeat(50)), "{}", out.stdout);
    assert!(out.stdout.contains("[... 49999905 bytes cut ...]"), "{}", out.stdout);
    assert!(out.stdout.ends_with("END\n"), "{}", out.stdout);
}

#[tokio::test]
async fn read_file_stops_at_the_budget_and_says_how_to_read_on() {
    let rig = rig();
    let body: String = (1..=100).map(|i| format!("line {i:03}\n")).collect();
    std::fs::write(rig.root.join("long.txt"), body).unwrap();
    let out = rig.call("read_file", json!({"path": "long.txt"})).await.unwrap();
    let shown = text(&out);
    assert!(shown.contains("line 001") && !shown.contains("line 100"), "{shown}");
    let note = shown.lines().last().unwrap();
    assert!(
        note.starts_with("[... stopped at the 200-byte limit: lines 1-"),
        "{note}"
    );
    assert!(note.contains("of 100 shown; read on with offset "), "{note}");
}

#[tokio::test]
async fn a_file_too_large_to_read_whole_is_refused_before_it_is_read() {
    let rig = rig();
    let file = std::fs::File::create(rig.root.join("huge.bin")).unwrap();
    file.set_len(crate::files::MAX_FILE_BYTES + 1).unwrap(); // sparse: nothing is written
    let err = rig.call("read_file", json!({"path": "huge.bin"})).await.unwrap_err();
    assert!(err.contains("more than the 16 MiB the file tools read whole"), "{err}");
}

#[tokio::test]
async fn spawn_outside_an_agent_says_sub_agents_are_not_available() {
    let rig = rig();
    let out = rig.call("spawn", json!({"task": "look around"})).await.unwrap();
    assert!(out.is_error);
    assert_eq!(text(&out), "sub-agents are not available here; do the task yourself");
}

mod background;

#[cfg(target_os = "linux")]
mod sandbox;

#[tokio::test]
async fn the_preset_writes_background_output_to_its_task_folder() {
    let root = tempfile::tempdir().unwrap();
    let mut options = BasicOptions::in_folder(root.path());
    options.task_dir = Some(root.path().join("task-output"));
    let preset = basic(options);
    let ws = Workspace {
        execution: Arc::clone(&preset.execution),
        handle: preset.execution.spawn().await.unwrap(),
        background: None,
    };
    let task = ws.exec_background("echo hi", None).await.unwrap();
    let dir = root.path().join("task-output").canonicalize().unwrap();
    assert_eq!(std::path::Path::new(&task.output_path).parent(), Some(dir.as_path()));
}

/// A refused path and a failed read are errors a caller can tell apart.
#[tokio::test]
async fn a_refused_path_and_a_failed_read_are_typed() {
    use zidane_core::execution::{ExecutionContext, ExecutionError};
    let dir = tempfile::tempdir().unwrap();
    let context = crate::ProcessContext::new(dir.path());
    let handle = context.spawn().await.unwrap();
    let refused = context.read_file(&handle, "../outside.txt").await.unwrap_err();
    assert!(
        matches!(refused.downcast_ref::<ExecutionError>(), Some(ExecutionError::OutsideRoot { path, .. }) if path == "../outside.txt"),
        "{refused}"
    );
    let missing = context.read_file(&handle, "missing.txt").await.unwrap_err();
    match missing.downcast_ref::<ExecutionError>() {
        Some(ExecutionError::Io { source, .. }) => assert_eq!(source.kind(), std::io::ErrorKind::NotFound),
        other => panic!("{missing}: {other:?}"),
    }
    assert_eq!(missing.to_string().split(':').next(), Some("cannot read `missing.txt`"));
}

/// A folder outside both the working folder and the temporary folder
/// (which `workspace-write` leaves open): under the build's `target/`, or
/// the home folder when the checkout itself sits in the temporary folder.
fn outside_tmp() -> tempfile::TempDir {
    let temp = std::env::temp_dir().canonicalize().unwrap();
    let target = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target");
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let outside = [Some(target), home]
        .into_iter()
        .flatten()
        .filter_map(|dir| dir.canonicalize().ok())
        .find(|dir| !dir.starts_with(&temp))
        .expect("a folder outside the temporary folder");
    tempfile::tempdir_in(outside).unwrap()
}

async fn shell_in(preset: &Preset, command: &str) -> String {
    let ws = Workspace {
        execution: Arc::clone(&preset.execution),
        handle: preset.execution.spawn().await.unwrap(),
        background: None,
    };
    let cx = ToolContext::detached("shell", "call", AbortSignal::never()).with_workspace(ws);
    let tool = preset.tools.get("shell").unwrap();
    match tool.execute(json!({"command": command}), cx).await {
        Ok(out) => text(&out).to_owned(),
        Err(e) => e.to_string(),
    }
}

#[tokio::test]
async fn the_presets_shell_is_confined_to_its_folder_by_default() {
    let root = tempfile::tempdir().unwrap();
    let outside = outside_tmp();
    let target = outside.path().join("escaped.txt");
    let preset = basic(BasicOptions::in_folder(root.path()));
    assert!(
        matches!(preset.confinement, crate::Confinement::Confined(s) if s == crate::Sandbox::workspace_write()),
        "{:?}",
        preset.confinement
    );
    let refused = shell_in(&preset, &format!("echo x > {}", target.display())).await;
    assert!(refused.contains("Permission denied"), "{refused}");
    assert!(!target.exists(), "the library's shell wrote outside its folder");
    shell_in(&preset, "echo kept > inside.txt").await;
    assert!(
        root.path().join("inside.txt").exists(),
        "writes inside the folder still work"
    );

    // Turned off, the same command writes there.
    let mut options = BasicOptions::in_folder(root.path());
    options.sandbox = crate::Sandbox::off();
    let open = basic(options.clone());
    assert!(matches!(open.confinement, crate::Confinement::Off));
    shell_in(&open, &format!("echo x > {}", target.display())).await;
    assert!(target.exists());
    // `try_basic` gives the same preset where the sandbox holds.
    options.sandbox = crate::Sandbox::read_only();
    let strict = crate::try_basic(options).unwrap();
    assert!(strict.confinement.is_confined());
}

/// A read is staged in the call's durable tool state with its call: a
/// replayed call (whose body does not run) fills the map from it, and a
/// later process takes it back while the conversation holds the call.
#[tokio::test]
async fn a_read_is_kept_in_tool_state_with_its_call() {
    use zidane_core::read_state::{apply_read_writes, hydrate_read_state_from_tool_state};
    let rig = rig();
    let tool = rig.preset.tools.get("read_file").unwrap();
    let cx = ToolContext::detached("read_file", "call_7", AbortSignal::never())
        .with_read_state(rig.reads.clone())
        .with_workspace(rig.workspace.clone());
    tool.execute(json!({"path": "README.md"}), cx.clone()).await.unwrap();
    let read = rig.reads.lock().get("README.md").cloned().unwrap();
    let ops = cx.state().take_staged();
    assert_eq!(ops.len(), 1, "{ops:?}");

    let replayed = ReadStateMap::default();
    apply_read_writes(&replayed, &ops);
    assert_eq!(replayed.lock().get("README.md"), Some(&read));

    let mut state = std::collections::BTreeMap::new();
    zidane_core::tool::apply_ops(&mut state, &ops);
    let turn = |content: Vec<zidane_provider::ContentBlock>| zidane_provider::SessionTurn {
        id: "t".into(),
        role: zidane_provider::Role::Assistant,
        content: content.into(),
        created_at: zidane_provider::Timestamp::from_millis(0),
        usage: None,
    };
    let holding = turn(vec![zidane_provider::ContentBlock::ToolUse {
        id: "call_7".into(),
        name: "read_file".into(),
        input: json!({"path": "README.md"}),
    }]);
    let later = ReadStateMap::default();
    hydrate_read_state_from_tool_state(&later, &state, &[holding]);
    assert_eq!(later.lock().get("README.md"), Some(&read));
    // A conversation that no longer holds the read (rewound, summarized).
    let rewound = ReadStateMap::default();
    hydrate_read_state_from_tool_state(
        &rewound,
        &state,
        &[turn(vec![zidane_provider::ContentBlock::text("hi")])],
    );
    assert!(rewound.lock().is_empty());
}

#[cfg(target_os = "linux")]
mod tree;

/// Background commands' output is the owner's alone: the task folder is
/// made `0700` and each output file `0600`; a folder left open to others
/// is narrowed, and the context says so.
#[cfg(unix)]
#[tokio::test]
async fn the_task_folder_and_its_outputs_are_their_owners_alone() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let root = tempfile::tempdir().unwrap();
    let tasks = root.path().join("state/tasks/s1");
    let context = Arc::new(crate::ProcessContext::new(root.path()).task_dir(&tasks));
    let task = context.workspace().exec_background("echo hi", None).await.unwrap();
    assert_eq!(
        (
            mode(&tasks),
            mode(&root.path().join("state/tasks")),
            mode(std::path::Path::new(&task.output_path))
        ),
        (0o700, 0o700, 0o600)
    );
    assert!(context.tightened().is_empty());

    let open = root.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
    let context = Arc::new(crate::ProcessContext::new(root.path()).task_dir(&open));
    context.workspace().exec_background("true", None).await.unwrap();
    let narrowed: Vec<(u32, u32)> = context.tightened().iter().map(|t| (t.was, t.now)).collect();
    assert_eq!(narrowed, [(0o755, 0o700)]);
    assert_eq!(mode(&open), 0o700);
}

/// The model is told where it may write: in the system prompt and the
/// `shell` tool's description, and in one line under a write the sandbox
/// refused outside the folder.
#[tokio::test]
async fn the_model_is_told_where_a_confined_command_may_write() {
    let root = tempfile::tempdir().unwrap();
    let outside = outside_tmp();
    let preset = basic(BasicOptions::in_folder(root.path()));
    assert!(preset.confinement.is_confined(), "{}", preset.confinement);
    let rule = "commands run confined (writes only in the working folder and the temporary folder; network on)";
    assert!(preset.system.contains(rule), "{}", preset.system);
    let shell = preset.tools.get("shell").unwrap();
    assert!(
        shell.description().contains(
            "Commands run in a sandbox (writes only in the working folder and the temporary folder; network on)"
        ),
        "{}",
        shell.description()
    );

    let target = outside.path().join("escaped.txt");
    let refused = shell_in(&preset, &format!("echo x > {}", target.display())).await;
    let note = format!(
        "[sandbox] the write was refused by the sandbox: commands write only in {} and the temporary folder.",
        root.path().canonicalize().unwrap().display()
    );
    assert!(refused.contains("Permission denied"), "{refused}");
    assert_eq!(refused.matches(&note).count(), 1, "{refused}");
    // `touch` quotes the path, relative to the folder.
    let relative = pathdiff(outside.path(), root.path());
    let touched = shell_in(&preset, &format!("touch '{}/t'", relative.display())).await;
    assert!(touched.contains(&note), "{touched}");
    // A failure that is not a refused write gets no note.
    let failed = shell_in(&preset, "ls /no/such/path").await;
    assert!(!failed.contains("[sandbox]"), "{failed}");

    // Unconfined, nothing is said of a sandbox.
    let mut options = BasicOptions::in_folder(root.path());
    options.sandbox = crate::Sandbox::off();
    let open = basic(options);
    assert!(!open.system.contains("Sandbox:"), "{}", open.system);
    assert!(!open.tools.get("shell").unwrap().description().contains("sandbox"));
    // Read-only: every write is the sandbox's refusal, and the prompt says so.
    let mut options = BasicOptions::in_folder(root.path());
    options.sandbox = crate::Sandbox::read_only();
    let strict = basic(options);
    assert!(strict.system.contains("every write fails"), "{}", strict.system);
    let inside = shell_in(&strict, "echo x > inside.txt").await;
    assert!(
        inside.contains("[sandbox] the write was refused by the sandbox: commands may write nowhere."),
        "{inside}"
    );
}

/// `a` relative to `b` (both absolute), as `../..` steps and names.
fn pathdiff(a: &std::path::Path, b: &std::path::Path) -> std::path::PathBuf {
    let a = a.canonicalize().unwrap();
    let b = b.canonicalize().unwrap();
    let common = a.components().zip(b.components()).take_while(|(x, y)| x == y).count();
    let mut out = std::path::PathBuf::new();
    for _ in b.components().skip(common) {
        out.push("..");
    }
    for part in a.components().skip(common) {
        out.push(part);
    }
    out
}

/// A refused write on a path inside the folder is not the sandbox's doing
/// (under `workspace-write`): no note.
#[test]
fn a_refused_write_inside_the_folder_gets_no_sandbox_note() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let env = crate::Env {
        options: BasicOptions::in_folder(&root),
        confined: Some(crate::Sandbox::workspace_write()),
        root: root.clone(),
    };
    let inside = format!("sh: 1: cannot create {}/locked.txt: Permission denied", root.display());
    assert_eq!(crate::shell::sandbox_note(&env, None, "", &inside), None);
    assert_eq!(
        crate::shell::sandbox_note(&env, Some("src"), "", "touch: cannot touch '../x': Permission denied"),
        None
    );
    assert!(crate::shell::sandbox_note(&env, None, "", "touch: cannot touch '../../x': Permission denied").is_some());
    assert!(
        crate::shell::sandbox_note(
            &env,
            None,
            "",
            "mkdir: cannot create directory '/etc/x': Read-only file system"
        )
        .is_some()
    );
    let unconfined = crate::Env { confined: None, ..env };
    assert_eq!(
        crate::shell::sandbox_note(&unconfined, None, "", "cannot create /etc/x: Permission denied"),
        None
    );
}

/// Where the sandbox cannot be enforced, a program with no `tracing`
/// subscriber still hears it: once on standard error, however many presets
/// it makes. (Run in a child process: the test binary's own standard error
/// is captured.)
#[test]
fn an_unenforced_sandbox_is_said_once_on_stderr_without_a_subscriber() {
    const CHILD: &str = "ZIDANE_TOOLS_UNENFORCED_CHILD";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    if std::env::var_os(CHILD).is_some() {
        for _ in 0..3 {
            let mut options = BasicOptions::in_folder(dir.path());
            // A task folder that cannot be made: the sandbox cannot start.
            options.task_dir = Some(file.join("tasks"));
            let preset = basic(options);
            assert!(matches!(preset.confinement, crate::Confinement::Unenforced(_)));
        }
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "tests::an_unenforced_sandbox_is_said_once_on_stderr_without_a_subscriber",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stderr
            .matches("warning: commands of the basic preset run unconfined: this machine cannot confine commands: ")
            .count(),
        1,
        "{stderr}"
    );
}
