//! Faults a person meets: Ctrl-C while a command runs, a command that
//! leaves a daemon behind.

use std::path::Path;

use super::{server_with, shell_then_done, spawn_zidane, started_fifo};

/// Whether process `pid` is gone (or a zombie nobody waits for).
fn gone(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X']))
    })
}

/// Waits (a bounded number of times) for `pid` to be gone.
async fn ends(pid: u32) -> bool {
    for _ in 0..400 {
        if gone(pid) {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    gone(pid)
}

/// The pid the command wrote to the FIFO once it ran.
async fn pid_from(fifo: &Path) -> u32 {
    tokio::fs::read_to_string(fifo).await.unwrap().trim().parse().unwrap()
}

/// The model's long command: a `sleep 45` the shell started in a session
/// of its own (as `setsid`, a daemon or a terminal multiplexer do), then
/// waits for.
const LONG_COMMAND: &str = "setsid sh -c 'echo $$ > started.fifo; exec sleep 45' & wait";

/// Ctrl-C in a one-shot run while the model's `sleep 45` runs: the run is
/// suspended, the program exits 130, and nothing of the command outlives
/// it.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn ctrl_c_during_a_command_stops_the_command() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let fifo = started_fifo(work.path());
    let (url, _) = server_with(None, |body| shell_then_done(body, LONG_COMMAND)).await;
    let mut child = spawn_zidane(home.path(), work.path(), &["--base-url", &url, "-p", "Wait a while."]);
    let sleeping = pid_from(&fifo).await;
    assert!(!gone(sleeping));
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().unwrap().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = child.wait().await.unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(ends(sleeping).await, "`sleep 45` (pid {sleeping}) outlived the program");
}

/// A command that starts a daemon in a session of its own (`setsid`, a
/// double fork): the daemon is stopped when the program ends.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_daemon_a_command_started_ends_with_the_program() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    // The command returns once the daemon is up and has said its pid.
    let (url, _) = server_with(None, |body| {
        shell_then_done(
            body,
            "setsid sh -c 'sh -c \"echo \\$\\$ > daemon.pid; exec sleep 45\" &' > /dev/null 2>&1 < /dev/null; \
             while [ ! -s daemon.pid ]; do sleep 0.01; done; echo started",
        )
    })
    .await;
    let mut child = spawn_zidane(
        home.path(),
        work.path(),
        &["--base-url", &url, "-p", "Start the daemon."],
    );
    let status = child.wait().await.unwrap();
    assert_eq!(status.code(), Some(0));
    let daemon: u32 = std::fs::read_to_string(work.path().join("daemon.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(ends(daemon).await, "the daemon (pid {daemon}) outlived the program");
}

/// The same Ctrl-C typed in a terminal.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn ctrl_c_typed_in_a_terminal_stops_the_command() {
    use tokio::io::AsyncWriteExt;
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let fifo = started_fifo(work.path());
    let (url, _) = server_with(None, |body| shell_then_done(body, LONG_COMMAND)).await;
    let bin = env!("CARGO_BIN_EXE_zidane");
    let mut cmd = tokio::process::Command::new("script");
    cmd.args([
        "-qec",
        &format!("{bin} --base-url {url} -p 'Wait a while.'"),
        "/dev/null",
    ])
    .env_remove("OPENAI_API_KEY")
    .env_remove("OPENROUTER_API_KEY")
    .env("ANTHROPIC_API_KEY", "sk-test")
    .env("ZIDANE_APPROVE", "yolo")
    .env("ZIDANE_HOME", home.path())
    .current_dir(work.path())
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let sleeping = pid_from(&fifo).await;
    // Twice, as a person in a hurry does: the second one quits at once.
    stdin.write_all(b"\x03\x03").await.unwrap();
    stdin.flush().await.unwrap();
    let out = child.wait_with_output().await.unwrap();
    drop(stdin);
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(ends(sleeping).await, "`sleep 45` (pid {sleeping}) outlived the program");
}
