//! Command hooks with Claude Code's contract, against the loopback model.

use std::path::Path;

use serde_json::Value;

use super::conventions::{KEY, scripted, write};
use super::{server_with, text, zidane};

/// `PreToolUse`: a team's script from `.claude/settings.json` blocks with
/// exit 2 (its stderr reaches the model), a JSON `updatedInput` rewrites a
/// command, a JSON `deny` gives the model its reason, a hook past its
/// timeout is stopped and the call goes on; `PostToolUse` adds context to
/// the result.
#[tokio::test]
async fn tool_hooks_block_rewrite_deny_time_out_and_add_context() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hooks/validate_bash.py");
    write(
        &work.path().join(".claude/hooks/validate_bash.py"),
        &std::fs::read_to_string(script).unwrap(),
    );
    write(
        &work.path().join(".claude/settings.json"),
        r#"{
  "model": "claude-sonnet-4-5",
  "permissions": {"deny": ["Bash(cat:*)"]},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/validate_bash.py"}]}
    ]
  }
}"#,
    );
    write(
        &home.path().join("config.toml"),
        r#"
[[hooks.PreToolUse]]
matcher = "Bash"
command = '''input=$(cat); case "$input" in *original*) printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"echo rewritten > out.txt"}}}';; esac'''

[[hooks.PreToolUse]]
matcher = "shell"
command = '''input=$(cat); case "$input" in *"rm -f"*) printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no deleting here"}}';; esac'''

[[hooks.PreToolUse]]
matcher = "Write|Edit"
command = "sleep 5"
timeout = 1

[[hooks.PostToolUse]]
matcher = "write_file"
command = '''cat > post.json; printf '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"Remember to run the formatter."}}' '''
"#,
    );
    let (url, bodies) = server_with(
        None,
        scripted(&[
            ("shell", r#"{"command": "grep -r foo ."}"#),
            ("shell", r#"{"command": "echo original > out.txt"}"#),
            ("shell", r#"{"command": "rm -f out.txt"}"#),
            ("write_file", r#"{"path": "notes.md", "content": "x"}"#),
            ("shell", r#"{"command": "cat notes.md"}"#),
        ]),
    )
    .await;
    let out = zidane(
        home.path(),
        work.path(),
        &[KEY],
        &["--trust", "--base-url", &url, "Work."],
    )
    .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let bodies = bodies.lock().unwrap().clone();
    assert!(
        bodies[1].contains("Blocked: • Use 'rg' (ripgrep) instead of 'grep' for better performance and features"),
        "{}",
        bodies[1]
    );
    assert_eq!(
        std::fs::read_to_string(work.path().join("out.txt")).unwrap(),
        "rewritten\n"
    );
    assert!(bodies[3].contains("Blocked: no deleting here"), "{}", bodies[3]);
    // The settings' permission rules hold too.
    assert!(
        bodies[5].contains(&format!(
            "Blocked: denied by the permission rule `Bash(cat:*)` ({})",
            work.path().join(".claude/settings.json").display()
        )),
        "{}",
        bodies[5]
    );
    assert!(work.path().join("out.txt").exists(), "the denied command did not run");
    assert!(
        stderr.contains("zidane: the PreToolUse hook `sleep 5` (")
            && stderr.contains(") timed out after 1 s and was stopped"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(work.path().join("notes.md")).unwrap(), "x");
    assert!(
        bodies[4].contains("<hook-context>\\nRemember to run the formatter.\\n</hook-context>"),
        "{}",
        bodies[4]
    );
    let post: Value = serde_json::from_str(&std::fs::read_to_string(work.path().join("post.json")).unwrap()).unwrap();
    assert_eq!(post["hook_event_name"], "PostToolUse");
    assert_eq!(post["tool_name"], "Write");
    assert_eq!(post["tool_input"]["file_path"], "notes.md");
    assert_eq!(post["permission_mode"], "bypassPermissions");
    assert_eq!(post["cwd"], work.path().display().to_string());
}

/// `SessionStart` and `UserPromptSubmit` add context to the prompt, `Stop`
/// sends the run back to work once, `SessionEnd` hears the end; a prompt
/// the `UserPromptSubmit` hook blocks never reaches the model.
#[tokio::test]
async fn session_prompt_and_stop_hooks() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    write(
        &home.path().join("config.toml"),
        r#"
[[hooks.SessionStart]]
command = "echo 'Session context: the build is green.'"

[[hooks.UserPromptSubmit]]
command = '''input=$(cat); case "$input" in *forbidden*) echo "no forbidden prompts" >&2; exit 2;; esac; echo "Prompt context: branch main."'''

[[hooks.Stop]]
command = '''input=$(cat); case "$input" in *'"stop_hook_active":false'*) echo '{"decision":"block","reason":"Run the tests before you stop."}';; esac'''

[[hooks.SessionEnd]]
command = '''cat >> "$ZIDANE_PROJECT_DIR/events.log"; echo >> "$ZIDANE_PROJECT_DIR/events.log"'''
"#,
    );
    let (url, bodies) = server_with(None, scripted(&[])).await;
    let out = zidane(home.path(), work.path(), &[KEY], &["--base-url", &url, "Fix the bug."]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 2, "the Stop hook sent the run back once");
    let first: Value = serde_json::from_str(&bodies[0]).unwrap();
    assert_eq!(
        first["messages"][0]["content"][0]["text"],
        "Fix the bug.\n\n<hook-context>\nPrompt context: branch main.\n</hook-context>\n\n<hook-context>\nSession context: the build is green.\n</hook-context>"
    );
    assert!(bodies[1].contains("Run the tests before you stop."), "{}", bodies[1]);
    let log = std::fs::read_to_string(work.path().join("events.log")).unwrap();
    let end: Value = serde_json::from_str(log.trim()).unwrap();
    assert_eq!(end["hook_event_name"], "SessionEnd");
    assert_eq!(end["reason"], "other");

    let (url, bodies) = server_with(None, scripted(&[])).await;
    let out = zidane(
        home.path(),
        work.path(),
        &[KEY],
        &["--base-url", &url, "Do the forbidden thing."],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr).lines().last().unwrap(),
        "zidane: a UserPromptSubmit hook blocked the prompt: no forbidden prompts"
    );
    assert!(bodies.lock().unwrap().is_empty());
}

/// An unknown event and a bad matcher are configuration errors with the
/// file and line.
#[tokio::test]
async fn bad_hooks_are_refused_before_anything_runs() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let config = home.path().join("config.toml");
    for (file, want) in [
        (
            "\n[[hooks.BeforeTool]]\ncommand = \"true\"\n",
            "2: `hooks.BeforeTool`: `BeforeTool` is not a hook event (one of PreToolUse, PostToolUse, UserPromptSubmit, Stop, SubagentStop, SessionStart, SessionEnd, PreCompact, Notification)",
        ),
        (
            "[[hooks.PreToolUse]]\nmatcher = \"(\"\ncommand = \"true\"\n",
            "1: `hooks.PreToolUse`: the matcher `(` is not a regex",
        ),
    ] {
        write(&config, file);
        let out = zidane(
            home.path(),
            work.path(),
            &[KEY],
            &["--base-url", "http://127.0.0.1:9", "Hi."],
        )
        .await;
        assert_eq!(out.status.code(), Some(2));
        let stderr = text(&out.stderr);
        assert!(
            stderr.starts_with(&format!("zidane: {}:{want}", config.display())),
            "{stderr}"
        );
    }
}

/// `Notification` hears each question for the person (here, with no
/// terminal, refused all the same); `SubagentStop` hears a sub-agent end.
#[tokio::test]
async fn notification_and_subagent_stop_hooks_are_told() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("notes.txt"), "a\nb\nc\n").unwrap();
    write(
        &home.path().join("config.toml"),
        r#"
[[hooks.Notification]]
command = '''cat >> "$ZIDANE_PROJECT_DIR/events.log"; echo >> "$ZIDANE_PROJECT_DIR/events.log"'''

[[hooks.SubagentStop]]
command = '''cat >> "$ZIDANE_PROJECT_DIR/events.log"; echo >> "$ZIDANE_PROJECT_DIR/events.log"'''
"#,
    );
    let events = || -> Vec<Value> {
        std::fs::read_to_string(work.path().join("events.log"))
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let (url, _) = server_with(None, scripted(&[("shell", r#"{"command": "touch x"}"#)])).await;
    let out = zidane(
        home.path(),
        work.path(),
        &[KEY, ("ZIDANE_APPROVE", "ask")],
        &["--base-url", &url, "Touch."],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let seen = events();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0]["hook_event_name"], "Notification");
    assert_eq!(seen[0]["message"], "zidane needs your permission to use shell");
    assert_eq!(seen[0]["notification_type"], "permission_prompt");
    std::fs::remove_file(work.path().join("events.log")).unwrap();

    let (url, _) = server_with(None, |body| super::parent_and_child(body, "wc -l < notes.txt")).await;
    let out = zidane(
        home.path(),
        work.path(),
        &[KEY],
        &["--base-url", &url, "Split the work."],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let seen = events();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0]["hook_event_name"], "SubagentStop");
    assert_eq!(seen[0]["stop_hook_active"], false);
}

/// The example people copy from Claude Code's hooks guide: a `PreToolUse`
/// hook appends each command to a log under the user's `~/.claude/`. Hooks
/// are the user's own programs: they run with the user's permissions, so
/// the log is written although commands are confined to the working folder
/// (and they still see no provider key).
#[tokio::test]
async fn a_hook_logs_commands_under_the_home_folder_outside_the_sandbox() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    // The user's home is outside the working folder and the temporary
    // folder, where confined commands cannot write.
    let user = tempfile::Builder::new()
        .prefix("home-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    write(
        &home.path().join("config.toml"),
        r#"
sandbox = "workspace-write"

[[hooks.PreToolUse]]
matcher = "Bash"
command = '''mkdir -p "$HOME/.claude" && python3 -c 'import json,sys; i=json.load(sys.stdin)["tool_input"]; print(i["command"], "-", i.get("description", "No description"))' >> "$HOME/.claude/bash-command-log.txt"; echo "key=${ANTHROPIC_API_KEY:-none}" >> "$HOME/.claude/bash-command-log.txt"'''
"#,
    );
    let (url, _bodies) = server_with(None, scripted(&[("shell", r#"{"command": "echo hello"}"#)])).await;
    let confined = zidane(
        home.path(),
        work.path(),
        &[KEY, ("HOME", &user.path().display().to_string())],
        &["--base-url", &url, "Say hello."],
    )
    .await;
    let stderr = text(&confined.stderr);
    assert_eq!(confined.status.code(), Some(0), "{stderr}");
    if !stderr.contains("sandbox workspace-write") {
        // A machine without Landlock runs commands unconfined: the log
        // would be written either way, so there is nothing to show here.
        assert!(stderr.contains("commands run unconfined"), "{stderr}");
        return;
    }
    let log = std::fs::read_to_string(user.path().join(".claude/bash-command-log.txt"))
        .unwrap_or_else(|e| panic!("the hook wrote no log ({e}):\n{stderr}"));
    assert_eq!(log, "echo hello - No description\nkey=none\n");
}
