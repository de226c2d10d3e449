//! `shell`: run a command in the working folder.

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use serde_json::json;
use zidane_core::execution::ExecOptions;
use zidane_core::{FnTool, ToolOutput};

use crate::{Env, SandboxMode, cap_output, fail, workspace};

pub(crate) fn shell(env: Env) -> FnTool {
    FnTool::new(
        "shell",
        description(&env),
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command line."},
                "timeout_secs": {"type": "integer", "minimum": 1, "description": "Time limit in seconds (default 120)."},
                "cwd": {"type": "string", "description": "Folder to run in, relative to the working folder."},
                "run_in_background": {"type": "boolean", "description": "Start it and return at once (no time limit)."},
                "raw": {"type": "boolean", "description": "Return the output as it is, without reducing it."}
            },
            "required": ["command"]
        }),
        move |input, cx| {
            let env = env.clone();
            async move {
                let command = input["command"]
                    .as_str()
                    .ok_or_else(|| fail("`command` is required"))?
                    .to_owned();
                if input["run_in_background"].as_bool() == Some(true) {
                    let task = workspace(&cx)?
                        .exec_background(&command, input["cwd"].as_str().map(str::to_owned))
                        .await
                        .map_err(|e| fail(e.to_string()))?;
                    return Ok(ToolOutput::text(format!(
                        "Started background task {} (pid {}). Its output goes to {}. You will be told when it exits; \
                         read its new output with `wait_task` (it can also wait for the end) and stop it with \
                         `shell_kill`.",
                        task.task_id, task.pid, task.output_path
                    )));
                }
                let timeout = input["timeout_secs"]
                    .as_u64()
                    .map_or(env.options.shell_timeout, Duration::from_secs);
                let options = ExecOptions {
                    timeout: Some(timeout),
                    signal: cx.signal().clone(),
                    cwd: input["cwd"].as_str().map(str::to_owned),
                    // The whole output is kept (up to this), the model gets it
                    // reduced and capped.
                    max_output_bytes: Some(env.options.max_output_bytes.max(KEPT_OUTPUT_BYTES)),
                };
                let out = workspace(&cx)?
                    .exec(&command, options)
                    .await
                    .map_err(|e| fail(e.to_string()))?;
                if out.timed_out {
                    return Ok(ToolOutput::error(format!(
                        "The command timed out after {}s and was killed.",
                        timeout.as_secs()
                    )));
                }
                if out.aborted {
                    return Ok(ToolOutput::error("The command was cancelled and killed."));
                }
                let mut text = match out.exit_code {
                    Some(code) => format!("exit code: {code}\n"),
                    None => "exit code: none (killed by a signal)\n".to_owned(),
                };
                if !out.stdout.is_empty() {
                    text.push_str(&out.stdout);
                    if !out.stdout.ends_with('\n') {
                        text.push('\n');
                    }
                }
                if !out.stderr.is_empty() {
                    text.push_str("[stderr]\n");
                    text.push_str(&out.stderr);
                }
                if out.exit_code != Some(0)
                    && let Some(note) = sandbox_note(&env, input["cwd"].as_str(), &out.stdout, &out.stderr)
                {
                    if !text.ends_with('\n') {
                        text.push('\n');
                    }
                    text.push_str(&note);
                }
                let raw = input["raw"].as_bool() == Some(true) || !env.options.reduce_output;
                let whole = text.len();
                let text = shown(&cx, &command, text, raw, env.options.max_output_bytes).await;
                let mut output = ToolOutput::text(text);
                if output_len(&output) < whole {
                    // What the model did not get, for the host's tally.
                    output
                        .metadata
                        .insert("omittedBytes".into(), json!(whole - output_len(&output)));
                }
                output.is_error = out.exit_code != Some(0);
                Ok(output)
            }
        },
    )
}

/// What the model reads of `shell`, with the sandbox it runs in.
fn description(env: &Env) -> String {
    let confined = match env.confined {
        Some(sandbox) => format!(
            " Commands run in a sandbox ({sandbox}): a write elsewhere fails with \"Permission denied\" or \
             \"Read-only file system\"."
        ),
        None => String::new(),
    };
    format!(
        "Run a shell command (sh -c) in the working folder and return its exit code and output. Test runs keep their \
         failures and summary, builds their errors and warnings, long listings their head and tail; long output is \
         cut in the middle; the whole output is then kept in a file you can read (`raw: true` returns it as it is). \
         Use it to build, test, run programs and inspect the system. With `run_in_background: true` the \
         command keeps running on its own (a dev server, a long test run): the call returns at once with a task id \
         and the file its output goes to, you are told when it exits, `wait_task` reads its new output (or waits for \
         it) and `shell_kill` stops it.{confined}"
    )
}

/// The line a failed command's output gets when the sandbox is why: a
/// write refused (`EACCES`, `EROFS`) on a path outside the places confined
/// commands may write (or on any path, when they may write nowhere).
pub(crate) fn sandbox_note(env: &Env, cwd: Option<&str>, stdout: &str, stderr: &str) -> Option<String> {
    let sandbox = env.confined?;
    let base = cwd.map_or_else(|| env.root.clone(), |c| env.root.join(c));
    let temp = std::env::temp_dir();
    let temp = temp.canonicalize().unwrap_or(temp);
    let writable = |path: &Path| match sandbox.mode {
        SandboxMode::WorkspaceWrite => path.starts_with(&env.root) || (sandbox.temp && path.starts_with(&temp)),
        SandboxMode::ReadOnly | SandboxMode::Off => false,
    };
    let refused = stdout.lines().chain(stderr.lines()).any(|line| {
        let denied = line.contains("Permission denied") || line.contains("Read-only file system");
        if !denied {
            return false;
        }
        let paths = paths_in(line);
        paths.is_empty() || paths.iter().any(|p| !writable(&normalize(&base.join(p))))
    });
    let places = match sandbox.mode {
        SandboxMode::ReadOnly => "commands may write nowhere".to_owned(),
        _ if sandbox.temp => format!("commands write only in {} and the temporary folder", env.root.display()),
        _ => format!("commands write only in {}", env.root.display()),
    };
    refused.then(|| format!("[sandbox] the write was refused by the sandbox: {places}.\n"))
}

/// The paths a line of error output names: quoted ones, and words with a
/// `/` in them.
fn paths_in(line: &str) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for quote in ['\'', '"', '`', '‘', '’'] {
        for (i, part) in line.split(quote).enumerate() {
            if i % 2 == 1 && part.contains('/') {
                paths.push(PathBuf::from(part));
            }
        }
    }
    if paths.is_empty() {
        for word in line.split_whitespace() {
            let word = word.trim_matches(|c: char| c == ':' || c == ',' || c == '\'' || c == '"');
            if word.contains('/') {
                paths.push(PathBuf::from(word));
            }
        }
    }
    paths
}

/// `path` with `.` and `..` resolved by name.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn output_len(output: &ToolOutput) -> usize {
    output.content.text_len()
}

/// The whole output a call keeps (in a file) when the model gets less.
const KEPT_OUTPUT_BYTES: usize = 4 << 20;

/// What the model reads of a command's output: reduced by what the command
/// is (unless `raw`), then capped; when either left something out, the
/// whole output is kept in a file and the note says where.
async fn shown(cx: &zidane_core::tool::ToolContext, command: &str, text: String, raw: bool, max: usize) -> String {
    let reduced = if raw {
        None
    } else {
        crate::reduce::reduce(command, &text)
    };
    let body = reduced.as_ref().map_or(text.as_str(), |r| r.text.as_str());
    let capped = cap_output(body, max);
    if reduced.is_none() && capped.len() == text.len() {
        return text;
    }
    let kept = match workspace(cx) {
        Ok(ws) => ws.keep_output(&format!("output-{}.txt", cx.call_id()), &text).await,
        Err(_) => None,
    };
    let whole = match kept {
        Some(path) => format!("full output: {path}"),
        None => "the whole output was not kept; run it again with `raw: true`".to_owned(),
    };
    let note = match &reduced {
        Some(r) => format!("[{} {} omitted; {whole}]", r.omitted, r.what),
        None => format!("[output cut; {whole}]"),
    };
    format!("{capped}{note}\n")
}

/// What `wait_task` returns of new output at most, per call.
const WAIT_TASK_CHUNK: usize = 32 * 1024;

fn state_key(task_id: &str) -> String {
    format!("background.offset.{task_id}")
}

fn describe(task: &zidane_core::execution::BackgroundTask) -> String {
    let seconds = |ms: u64| format!("{:.1}s", ms as f64 / 1000.0);
    match &task.exit {
        None => {
            let ran = now_ms().saturating_sub(task.started_at);
            format!(
                "task {} (`{}`) is running ({})",
                task.task_id,
                task.command,
                seconds(ran)
            )
        }
        Some(exit) => {
            let how = match (exit.status, &exit.signal) {
                (zidane_core::events::TaskStatus::Killed, _) => "was killed".to_owned(),
                (_, Some(signal)) => format!("ended by {signal}"),
                (_, None) => format!("exited with code {}", exit.exit_code),
            };
            format!(
                "task {} (`{}`) {how} after {}",
                task.task_id,
                task.command,
                seconds(exit.duration.as_millis() as u64)
            )
        }
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `wait_task`: a background task's new output since the last read, after
/// waiting (up to a bound) for it to end.
pub(crate) fn wait_task() -> FnTool {
    FnTool::new(
        "wait_task",
        "Read a background task's new output since the last read, and its status. With `timeout_secs`, wait up to \
         that long for the task to end first (it returns as soon as the task ends).",
        json!({
            "type": "object",
            "properties": {
                "task_id": {"type": "string", "description": "The task id `shell` returned."},
                "timeout_secs": {"type": "integer", "minimum": 0, "maximum": 600, "description": "How long to wait for the end (default 0: do not wait)."}
            },
            "required": ["task_id"]
        }),
        |input, cx| async move {
            let id = input["task_id"].as_str().ok_or_else(|| fail("`task_id` is required"))?.to_owned();
            let wait = Duration::from_secs(input["timeout_secs"].as_u64().unwrap_or(0).min(600));
            let ws = workspace(&cx)?;
            let deadline = tokio::time::Instant::now() + wait;
            let task = loop {
                let Some(task) = ws.list_background().await.into_iter().find(|t| t.task_id == id) else {
                    return Ok(ToolOutput::error(format!("there is no background task `{id}`")));
                };
                if !task.is_running() || tokio::time::Instant::now() >= deadline {
                    break task;
                }
                tokio::select! {
                    () = cx.signal().aborted() => return Ok(ToolOutput::error("The wait was cancelled.")),
                    () = tokio::time::sleep(Duration::from_millis(250)) => {}
                }
            };
            let offset = cx.state().get(&state_key(&id)).and_then(|v| v.as_u64()).unwrap_or(0);
            let chunk = ws
                .read_background(&id, offset, WAIT_TASK_CHUNK)
                .await
                .map_err(|e| fail(e.to_string()))?;
            let read = chunk.bytes.len() as u64;
            cx.state().set(state_key(&id), json!(offset + read));
            if !task.is_running() {
                ws.acknowledge_background(&id);
            }
            let mut text = format!("{}.\n", describe(&task));
            if read == 0 {
                text.push_str("No new output.\n");
            } else {
                text.push_str(&format!("[new output, {read} bytes]\n"));
                text.push_str(&String::from_utf8_lossy(&chunk.bytes));
                if !text.ends_with('\n') {
                    text.push('\n');
                }
            }
            let rest = chunk.total.saturating_sub(offset + read);
            if rest > 0 {
                text.push_str(&format!("[{rest} more bytes: call wait_task again, or read {}]\n", task.output_path));
            }
            Ok(ToolOutput::text(text))
        },
    )
    .parallel()
    .safe()
}

/// `shell_kill`: stops a background task and its whole process tree.
pub(crate) fn shell_kill() -> FnTool {
    FnTool::new(
        "shell_kill",
        "Stop a background task started with `shell` (`run_in_background`), with every process it started.",
        json!({
            "type": "object",
            "properties": {
                "task_id": {"type": "string", "description": "The task id `shell` returned."}
            },
            "required": ["task_id"]
        }),
        |input, cx| async move {
            let id = input["task_id"]
                .as_str()
                .ok_or_else(|| fail("`task_id` is required"))?
                .to_owned();
            let ws = workspace(&cx)?;
            let Some(before) = ws.list_background().await.into_iter().find(|t| t.task_id == id) else {
                return Ok(ToolOutput::error(format!("there is no background task `{id}`")));
            };
            // The model is told here; the exit needs no notification.
            ws.acknowledge_background(&id);
            if !before.is_running() {
                return Ok(ToolOutput::text(format!("{}; nothing to stop.", describe(&before))));
            }
            ws.kill_background(&id).await;
            let after = ws
                .list_background()
                .await
                .into_iter()
                .find(|t| t.task_id == id)
                .unwrap_or(before);
            Ok(ToolOutput::text(format!(
                "Stopped: {}. Its output is in {}.",
                describe(&after),
                after.output_path
            )))
        },
    )
    .safe()
}
