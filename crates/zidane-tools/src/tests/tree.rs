use super::*;

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X']))
    })
}

/// Waits, a bounded number of times, for `pid` to end.
fn ends(pid: u32) -> bool {
    for _ in 0..2000 {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    !alive(pid)
}

fn pid_in(path: &std::path::Path) -> u32 {
    for _ in 0..20_000 {
        if let Some(pid) = std::fs::read_to_string(path).ok().and_then(|t| t.trim().parse().ok()) {
            return pid;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    panic!("no pid in {}", path.display());
}

/// A call cut off (a cancelled or suspended run) stops what its command
/// started in a session of its own, which a kill of its process group
/// does not reach.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_call_stops_what_left_its_session() {
    let rig = rig();
    let tool = rig.preset.tools.get("shell").unwrap().clone();
    let cx = ToolContext::detached("shell", "c", AbortSignal::never()).with_workspace(rig.workspace.clone());
    let pid_file = rig.root.join("daemon.pid");
    let command = format!("setsid sh -c 'echo $$ > {}; exec sleep 300' & wait", pid_file.display());
    let call = tokio::spawn(async move { tool.execute(json!({"command": command}), cx).await.map(|_| ()) });
    let daemon = pid_in(&pid_file);
    call.abort();
    let _ = call.await;
    assert!(ends(daemon), "the daemon {daemon} outlived the dropped call");
}

/// A command that ended on its own may leave a server or a daemon
/// running; it ends with the context (the agent's `destroy`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_finished_command_left_running_ends_with_the_context() {
    let rig = rig();
    let pid_file = rig.root.join("daemon.pid");
    let out = rig
        .workspace
        .exec(
            &format!(
                "setsid sh -c 'sh -c \"echo \\$\\$ > {}; exec sleep 300\" &' < /dev/null > /dev/null 2>&1",
                pid_file.display()
            ),
            zidane_core::execution::ExecOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(0));
    let daemon = pid_in(&pid_file);
    assert!(alive(daemon), "the command's daemon runs on after it");
    rig.workspace.execution.destroy(&rig.workspace.handle).await;
    assert!(ends(daemon), "the daemon {daemon} outlived the context");
}

/// Not a test of its own: the process of
/// `a_subreaper_finds_a_daemon_that_cleared_its_environment`, which
/// becomes a subreaper (a setting of the whole process). Without
/// `ZIDANE_SUBREAPER_DIR` it returns at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subreaper_child_helper() {
    let Some(dir) = std::env::var_os("ZIDANE_SUBREAPER_DIR") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    if std::env::var_os("ZIDANE_SUBREAPER_ON").is_some() {
        crate::become_subreaper().unwrap();
    }
    let context = Arc::new(crate::ProcessContext::new(&dir));
    let ws = context.workspace();
    let pid_file = dir.join("daemon.pid");
    // `env -i`: no mark reaches the daemon.
    let out = ws
        .exec(
            &format!(
                "setsid env -i sh -c 'sh -c \"echo \\$\\$ > {}; exec sleep 300\" &' < /dev/null > /dev/null 2>&1",
                pid_file.display()
            ),
            zidane_core::execution::ExecOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(0));
    let daemon = pid_in(&pid_file);
    crate::stop_command_processes();
    println!("DAEMON {daemon} {}", if ends(daemon) { "stopped" } else { "running" });
}

#[test]
fn a_subreaper_finds_a_daemon_that_cleared_its_environment() {
    let run = |subreaper: bool| {
        let dir = tempfile::tempdir().unwrap();
        let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
        cmd.args([
            "--exact",
            "tests::tree::subreaper_child_helper",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("ZIDANE_SUBREAPER_DIR", dir.path());
        if subreaper {
            cmd.env("ZIDANE_SUBREAPER_ON", "1");
        }
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let line = stdout
            .lines()
            .find_map(|l| l.split("DAEMON ").nth(1))
            .unwrap_or_default()
            .to_owned();
        let (pid, state) = line.split_once(' ').unwrap_or_else(|| panic!("{stdout}"));
        let pid: u32 = pid.parse().unwrap();
        if alive(pid) {
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status();
        }
        state.to_owned()
    };
    assert_eq!(run(true), "stopped", "adopted by the subreaper, the daemon is found");
    assert_eq!(run(false), "running", "without one it went to init, out of reach");
}
