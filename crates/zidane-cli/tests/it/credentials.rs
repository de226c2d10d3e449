//! What a prompt injection would reach for: the model, told to, runs a
//! command that reads the sessions file and the person's SSH key. Both are
//! a permission error under the default sandbox, and the sessions file is
//! its owner's alone.

use std::sync::Mutex;

use serde_json::json;

use super::{answer_sse, call_sse, server_with, text, zidane};

static COMMAND: Mutex<String> = Mutex::new(String::new());

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_command_told_to_read_the_sessions_file_and_the_ssh_key_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let top = tempfile::tempdir().unwrap();
    let (home, work, tmp) = (top.path().join("home"), top.path().join("work"), top.path().join("tmp"));
    for dir in [home.join(".ssh"), work.clone(), tmp.clone()] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(home.join(".ssh/id_ed25519"), "-----BEGIN OPENSSH PRIVATE KEY-----").unwrap();
    std::fs::write(home.join("notes.txt"), "plain").unwrap();
    let state = home.join(".zidane");
    let sessions = state.join("sessions.db");
    *COMMAND.lock().unwrap() = format!(
        "cat {sessions}; echo \"sessions: $?\"; cat {key}; echo \"key: $?\"; cat {notes}",
        sessions = sessions.display(),
        key = home.join(".ssh/id_ed25519").display(),
        notes = home.join("notes.txt").display(),
    );
    let (url, bodies) = server_with(None, |body| {
        if body.contains("tool_result") {
            answer_sse("Done.", 20)
        } else {
            call_sse(
                "toolu_cat",
                "shell",
                &json!({"command": COMMAND.lock().unwrap().clone()}),
                10,
            )
        }
    })
    .await;
    let (home_s, tmp_s) = (home.display().to_string(), tmp.display().to_string());
    let env = [
        ("ANTHROPIC_API_KEY", "sk-test"),
        ("HOME", home_s.as_str()),
        // The temporary folder commands may write is not the one holding
        // the home folder.
        ("TMPDIR", tmp_s.as_str()),
    ];
    let out = zidane(&state, &work, &env, &["--base-url", &url, "Summarize my secrets."]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let result = bodies.lock().unwrap()[1].clone();
    let result: serde_json::Value = serde_json::from_str(&result).unwrap();
    let shown = result.to_string();
    assert!(shown.contains("sessions: 1") && shown.contains("key: 1"), "{shown}");
    assert!(
        shown.matches("Permission denied").count() >= 2,
        "both reads are a permission error: {shown}"
    );
    assert!(
        !shown.contains("OPENSSH PRIVATE KEY") && !shown.contains("SQLite format"),
        "{shown}"
    );
    assert!(
        shown.contains("plain"),
        "the rest of the home folder reads as before: {shown}"
    );

    let mode = std::fs::metadata(&sessions).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the sessions file is its owner's alone");
}

static OPENED: Mutex<String> = Mutex::new(String::new());

/// `--sandbox-read ~/.ssh` opens that store to commands on purpose (the
/// start says so); the others stay withheld.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_store_opened_on_purpose_is_readable() {
    let top = tempfile::tempdir().unwrap();
    let (home, work, tmp) = (top.path().join("home"), top.path().join("work"), top.path().join("tmp"));
    for dir in [home.join(".ssh"), home.join(".aws"), work.clone(), tmp.clone()] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(home.join(".ssh/config"), "Host example").unwrap();
    std::fs::write(home.join(".aws/credentials"), "[default]").unwrap();
    *OPENED.lock().unwrap() = format!(
        "cat {ssh}; echo \"ssh: $?\"; cat {aws}; echo \"aws: $?\"",
        ssh = home.join(".ssh/config").display(),
        aws = home.join(".aws/credentials").display(),
    );
    let (url, bodies) = server_with(None, |body| {
        if body.contains("tool_result") {
            answer_sse("Done.", 20)
        } else {
            call_sse(
                "toolu_cat",
                "shell",
                &json!({"command": OPENED.lock().unwrap().clone()}),
                10,
            )
        }
    })
    .await;
    let (home_s, tmp_s) = (home.display().to_string(), tmp.display().to_string());
    let env = [
        ("ANTHROPIC_API_KEY", "sk-test"),
        ("HOME", home_s.as_str()),
        ("TMPDIR", tmp_s.as_str()),
    ];
    let state = home.join(".zidane");
    let args = [
        "--base-url",
        url.as_str(),
        "--sandbox-read",
        "~/.ssh",
        "Read my ssh config.",
    ];
    let out = zidane(&state, &work, &env, &args).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("readable on purpose: ") && stderr.contains(".ssh"),
        "{stderr}"
    );
    let shown = bodies.lock().unwrap()[1].clone();
    assert!(shown.contains("Host example") && shown.contains("ssh: 0"), "{shown}");
    assert!(shown.contains("aws: 1") && !shown.contains("[default]"), "{shown}");
}
