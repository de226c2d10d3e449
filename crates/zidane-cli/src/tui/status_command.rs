//! `status_line = { command = "…" }`: a command given the session's state
//! as JSON on standard input — Claude Code's `statusLine` contract (the
//! model, the folder, the cost, the context, the session id) plus the
//! prompt cache's life — whose first line of output is shown under the
//! status line. It runs at most once a second, one at a time, and is cut
//! off after its timeout.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc::UnboundedSender;
use zidane_app::StatusLine;

use super::Session;

/// The default time a status-line command may take.
const TIMEOUT: Duration = Duration::from_millis(1000);

/// The command's state in the session.
pub(super) struct StatusCommand {
    pub(super) config: StatusLine,
    /// What it last printed (its first line), or why it printed nothing.
    pub(super) shown: Option<String>,
    /// When it last started, and whether it still runs.
    started: Option<Instant>,
    running: bool,
    tx: UnboundedSender<String>,
}

impl StatusCommand {
    pub(super) fn new(config: StatusLine, tx: UnboundedSender<String>) -> StatusCommand {
        StatusCommand {
            config,
            shown: None,
            started: None,
            running: false,
            tx,
        }
    }

    /// Its answer arrived.
    pub(super) fn take(&mut self, line: String) {
        self.running = false;
        self.shown = Some(line);
    }
}

impl Session {
    /// Starts the status-line command when it is due (a second after its
    /// last start, and not while it runs).
    pub(super) fn refresh_status_command(&mut self) {
        let state = self.status_state();
        let Some(cmd) = &mut self.status_command else {
            return;
        };
        if cmd.running || cmd.started.is_some_and(|at| at.elapsed() < Duration::from_secs(1)) {
            return;
        }
        cmd.running = true;
        cmd.started = Some(Instant::now());
        let command = cmd.config.command.clone();
        let timeout = cmd.config.timeout_ms.map_or(TIMEOUT, Duration::from_millis);
        let tx = cmd.tx.clone();
        let cwd = self.link.cwd();
        tokio::spawn(async move {
            let line = run(&command, &cwd, &state, timeout).await;
            let _ = tx.send(line);
        });
    }

    /// The state the command reads.
    fn status_state(&self) -> Value {
        let cwd = self.link.cwd().display().to_string();
        let model = self.link.model();
        let window = self.link.window();
        let used = self.context_used;
        let now = zidane::providers::Timestamp::now();
        let cache = self.link.cache_expires_at().map(|at| {
            json!({
                "expires_at_ms": at.as_millis(),
                "seconds_left": if at > now { at.since(now).as_secs() } else { 0 },
            })
        });
        json!({
            "hook_event_name": "Status",
            "session_id": self.link.id(),
            "transcript_path": Value::Null,
            "cwd": cwd,
            "model": { "id": model, "display_name": model },
            "workspace": { "current_dir": cwd, "project_dir": cwd },
            "version": env!("CARGO_PKG_VERSION"),
            "output_style": { "name": "default" },
            "cost": {
                "total_cost_usd": if self.totals.priced { json!(self.totals.cost) } else { Value::Null },
                "total_duration_ms": self.opened.elapsed().as_millis() as u64,
                "total_input_tokens": self.totals.input,
                "total_output_tokens": self.totals.output,
            },
            "context_window": {
                "used_tokens": used,
                "context_window_size": window,
                "used_percentage": match (used, window) {
                    (Some(u), Some(w)) if w > 0 => json!(u * 100 / u64::from(w)),
                    _ => Value::Null,
                },
            },
            "approve": self.link.approve(),
            "planning": self.link.planning(),
            "cache": cache,
        })
    }
}

/// Runs `command` with `state` on its input: its first line, or why there
/// is none.
async fn run(command: &str, cwd: &std::path::Path, state: &Value, timeout: Duration) -> String {
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    // A group of its own: a timeout stops what it started too.
    #[cfg(unix)]
    cmd.process_group(0);
    let child = cmd.spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => return format!("status line command: {e}"),
    };
    let group = child.id();
    let input = state.to_string();
    let work = async move {
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(input.as_bytes()).await;
        }
        child.wait_with_output().await
    };
    match tokio::time::timeout(timeout, work).await {
        Ok(Ok(out)) => first_line(&String::from_utf8_lossy(&out.stdout)),
        Ok(Err(e)) => format!("status line command: {e}"),
        Err(_) => {
            #[cfg(unix)]
            if let Some(pid) = group.and_then(|id| rustix::process::Pid::from_raw(id as i32)) {
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            }
            #[cfg(not(unix))]
            let _ = group;
            format!("status line command timed out after {} ms", timeout.as_millis())
        }
    }
}

/// The first line, without control characters other than colours.
fn first_line(text: &str) -> String {
    text.lines()
        .next()
        .unwrap_or_default()
        .chars()
        .filter(|c| !c.is_control() || *c == '\x1b')
        .collect()
}
