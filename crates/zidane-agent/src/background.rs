//! The agent's background tasks: their starts and exits on the bus, exit
//! notifications for the model (`<task-notification>`), the stall watchdog
//! (`<task-stall>`), adoption of a host-owned handle's tasks and the
//! hand-over of a sub-agent's tasks to its parent.
//!
//! The execution context reports to the agent's [`BackgroundSink`], which
//! only queues; one task per agent, started when the handle binds, emits
//! the events in order and watches for stalls. A notification reaches the
//! model at the next turn boundary of a running run (as a queued message)
//! or at the start of the next `run()` (after `background:reconcile`).

use parking_lot::Mutex;
use std::collections::HashSet;
use std::sync::Arc;

use tokio::sync::mpsc;
use zidane_core::events::{BackgroundAdopt, BackgroundAdoptInit, TaskExitInfo, TaskStatus};
use zidane_core::execution::{BackgroundSink, BackgroundTask};

/// What the sink passes to the agent's task.
/// Boxed: the channel allocates its slots in blocks of 32 up front, for
/// every agent, and most agents never start a task.
pub(crate) enum Note {
    Started(Box<BackgroundTask>),
    Exited(Box<(BackgroundTask, TaskExitInfo)>),
    /// Answered once every note before it was handled.
    Flush(tokio::sync::oneshot::Sender<()>),
}

/// Queued for the model, by the sink and the watchdog.
#[derive(Default)]
pub(crate) struct Queue {
    /// Exits not delivered yet.
    pub(crate) exits: Vec<TaskExitInfo>,
    /// Rendered notes not delivered yet (`<task-stall>`, lost tasks).
    pub(crate) notes: Vec<String>,
    /// Tasks whose end the model saw (through a tool, or a notification).
    pub(crate) seen: HashSet<String>,
}

/// The agent's side of its background tasks.
pub(crate) struct Background {
    /// The owner name tasks carry (unique per agent).
    pub(crate) owner: String,
    pub(crate) tx: mpsc::UnboundedSender<Note>,
    pub(crate) rx: Mutex<Option<mpsc::UnboundedReceiver<Note>>>,
    pub(crate) queue: Arc<Mutex<Queue>>,
}

pub(crate) struct Sink {
    pub(crate) tx: mpsc::UnboundedSender<Note>,
    pub(crate) queue: Arc<Mutex<Queue>>,
}

impl BackgroundSink for Sink {
    fn started(&self, task: &BackgroundTask) {
        let _ = self.tx.send(Note::Started(Box::new(task.clone())));
    }

    fn exited(&self, task: &BackgroundTask, exit: &TaskExitInfo) {
        let _ = self.tx.send(Note::Exited(Box::new((task.clone(), exit.clone()))));
    }

    fn acknowledge(&self, task_id: &str) {
        let mut queue = self.queue.lock();
        queue.seen.insert(task_id.to_owned());
        queue.exits.retain(|e| e.task_id != task_id);
    }
}

fn seconds(ms: u64) -> String {
    format!("{:.1}s", ms as f64 / 1000.0)
}

/// One exit as the model reads it.
pub(crate) fn render_exit(exit: &TaskExitInfo) -> String {
    let how = match (exit.status, &exit.signal) {
        (TaskStatus::Killed, _) => "was killed".to_owned(),
        (TaskStatus::Exited, Some(signal)) => format!("was ended by {signal}"),
        (TaskStatus::Exited, None) if exit.exit_code < 0 => "ended (its exit code was not observable)".to_owned(),
        (TaskStatus::Exited, None) => format!("exited with code {}", exit.exit_code),
    };
    let mut out = format!(
        "<task-notification>\n<task-id>{}</task-id>\n<status>{}</status>\n<exit-code>{}</exit-code>\n",
        exit.task_id,
        match exit.status {
            TaskStatus::Exited => "exited",
            TaskStatus::Killed => "killed",
        },
        exit.exit_code
    );
    if let Some(signal) = &exit.signal {
        out.push_str(&format!("<signal>{signal}</signal>\n"));
    }
    out.push_str(&format!(
        "<command>{}</command>\n<duration-ms>{}</duration-ms>\n<output-file>{}</output-file>\n<summary>Background task {} \
         {how} after {}. Read its output with `wait_task` or `read_file`.</summary>\n</task-notification>",
        exit.command,
        exit.duration.as_millis(),
        exit.output_path,
        exit.task_id,
        seconds(exit.duration.as_millis() as u64)
    ));
    out
}

/// A stalled task as the model reads it.
pub(crate) fn render_stall(task: &BackgroundTask, stalled_ms: u64) -> String {
    format!(
        "<task-stall>\n<task-id>{}</task-id>\n<command>{}</command>\n<stalled-for-ms>{stalled_ms}</stalled-for-ms>\n\
         <bytes-written>{}</bytes-written>\n<output-file>{}</output-file>\n<summary>Background task {} has written \
         nothing for {}; it may be waiting for input or stuck. Look at it with `wait_task`, or stop it with \
         `shell_kill`.</summary>\n</task-stall>",
        task.task_id,
        task.command,
        task.bytes_written,
        task.output_path,
        task.task_id,
        seconds(stalled_ms)
    )
}

/// Where a session keeps the background tasks that run, so a later
/// process can take them back.
pub(crate) const TASKS_KEY: &str = "background.tasks";

/// The session metadata key of the background tasks that run (what
/// [`Agent::take_back_tasks`](crate::Agent::take_back_tasks) takes).
pub const BACKGROUND_TASKS_KEY: &str = TASKS_KEY;

pub(crate) fn record_of(task: &BackgroundTask) -> serde_json::Value {
    serde_json::json!({
        "command": task.command,
        "cwd": task.cwd,
        "outputPath": task.output_path,
        "pid": task.pid,
        "startedAt": task.started_at,
    })
}

pub(crate) fn task_of(task_id: &str, record: &serde_json::Value) -> Option<BackgroundTask> {
    Some(BackgroundTask {
        task_id: task_id.to_owned(),
        command: record["command"].as_str()?.to_owned(),
        cwd: record["cwd"].as_str().unwrap_or_default().to_owned(),
        output_path: record["outputPath"].as_str()?.to_owned(),
        pid: u32::try_from(record["pid"].as_u64()?).ok()?,
        started_at: record["startedAt"].as_u64().unwrap_or_default(),
        owner: String::new(),
        bytes_written: 0,
        exit: None,
    })
}

/// `background:adopt` for a task this agent now owns.
pub(crate) fn adopted(task: &BackgroundTask) -> BackgroundAdopt {
    BackgroundAdopt::new(BackgroundAdoptInit {
        command: task.command.clone(),
        cwd: task.cwd.clone(),
        output_path: task.output_path.clone(),
        pid: task.pid,
        started_at: task.started_at,
        task_id: task.task_id.clone(),
    })
}

/// What the model reads of a task an earlier process left, now gone.
pub(crate) fn render_lost(task: &BackgroundTask) -> String {
    format!(
        "<task-notification>\n<task-id>{}</task-id>\n<status>lost</status>\n<command>{}</command>\n<output-file>{}</output-file>\n\
         <summary>Background task {} was started before the program restarted and no longer runs; how it ended is \
         not known. Its output so far is in {}.</summary>\n</task-notification>",
        task.task_id, task.command, task.output_path, task.task_id, task.output_path
    )
}
