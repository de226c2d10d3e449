//! The agent's background tasks: their events, notifications, watchdog
//! and the tasks an earlier process left.

use crate::agent::{Agent, Inner};
use crate::background::{
    Background, Note, Queue, Sink, TASKS_KEY, adopted, record_of, render_exit, render_lost, render_stall, task_of,
};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::mpsc;
use zidane_core::events::{
    BackgroundExit, BackgroundExitInit, BackgroundReassign, BackgroundReassignInit, BackgroundReconcile,
    BackgroundStall, BackgroundStallInit, BackgroundStart, BackgroundStartInit, ExecutionHandle, TaskExitInfo,
};
use zidane_core::execution::{BackgroundOwner, BackgroundTask};
use zidane_provider::ContentBlock;

impl Background {
    pub(crate) fn new() -> Self {
        // Unique in the process, where the tasks live.
        static AGENTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let (tx, rx) = mpsc::unbounded_channel();
        Background {
            owner: format!("agent-{}", AGENTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)),
            tx,
            rx: Mutex::new(Some(rx)),
            queue: Arc::default(),
        }
    }

    fn queue(&self) -> parking_lot::MutexGuard<'_, Queue> {
        self.queue.lock()
    }

    /// Who the agent's calls start tasks as.
    pub(crate) fn owner(&self) -> BackgroundOwner {
        BackgroundOwner {
            owner: self.owner.clone(),
            sink: Arc::new(Sink {
                tx: self.tx.clone(),
                queue: Arc::clone(&self.queue),
            }),
        }
    }

    /// Whether an exit waits to be delivered.
    pub(crate) fn has_pending(&self) -> bool {
        !self.queue().exits.is_empty()
    }

    /// Waits until every start and exit reported so far is on the bus.
    /// An agent whose task never started (it never bound its handle: a
    /// sub-agent answered from a run an earlier process finished) has
    /// nothing on its way to the bus, and no task to answer the flush.
    pub(crate) async fn flush(&self) {
        if self.rx.lock().is_some() {
            return;
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        if self.tx.send(Note::Flush(tx)).is_ok() {
            let _ = rx.await;
        }
    }

    /// Starts the agent's task (once): it emits what the sink queued and,
    /// with a watchdog period, looks for stalled tasks.
    pub(crate) fn start(&self, inner: Weak<Inner>, handle: ExecutionHandle, watchdog: Option<Duration>) {
        let Some(rx) = self.rx.lock().take() else {
            return;
        };
        tokio::spawn(watch(inner, handle, rx, watchdog));
    }
}

/// The agent's background task.
async fn watch(
    inner: Weak<Inner>,
    handle: ExecutionHandle,
    mut rx: mpsc::UnboundedReceiver<Note>,
    watchdog: Option<Duration>,
) {
    let mut quiet = Quiet::new();
    let period = watchdog.unwrap_or(Duration::from_secs(3600));
    let mut ticks = tokio::time::interval(watchdog.map_or(period, |p| (p / 4).max(Duration::from_millis(10))));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let note = tokio::select! {
            note = rx.recv() => match note {
                Some(note) => Some(note),
                None => return,
            },
            _ = ticks.tick(), if watchdog.is_some() => None,
        };
        let Some(inner) = inner.upgrade() else { return };
        let agent = Agent { inner };
        match note {
            Some(Note::Started(task)) => agent.task_started(&task).await,
            Some(Note::Exited(exited)) => {
                let (task, exit) = *exited;
                quiet.remove(&task.task_id);
                agent.task_exited(&task.task_id, exit).await;
            }
            Some(Note::Flush(done)) => {
                let _ = done.send(());
            }
            None => {
                if let Some(period) = watchdog {
                    agent.check_stalls(&handle, period, &mut quiet).await;
                }
            }
        }
    }
}

/// When each task last wrote, as the watchdog saw it: its bytes written,
/// since when, and whether its stall was reported.
type Quiet = HashMap<String, (u64, tokio::time::Instant, bool)>;

impl Agent {
    /// `background:start`, and the task kept in the session.
    async fn task_started(&self, task: &BackgroundTask) {
        let mut ev = BackgroundStart::new(BackgroundStartInit {
            command: task.command.clone(),
            cwd: task.cwd.clone(),
            output_path: task.output_path.clone(),
            pid: task.pid,
            started_at: task.started_at,
            task_id: task.task_id.clone(),
        });
        self.observe(&mut ev).await;
        self.remember_task(task).await;
    }

    /// `background:exit`, the task forgotten by the session, and its exit
    /// queued for the model (delivered now when a run is on).
    async fn task_exited(&self, task_id: &str, exit: TaskExitInfo) {
        let mut ev = BackgroundExit::new(BackgroundExitInit {
            command: exit.command.clone(),
            duration_ms: exit.duration.as_millis() as u64,
            exit_code: exit.exit_code,
            output_path: exit.output_path.clone(),
            signal: exit.signal.clone(),
            status: exit.status,
            task_id: exit.task_id.clone(),
        });
        self.observe(&mut ev).await;
        self.forget_task(task_id).await;
        let queued = {
            let mut queue = self.inner.background.queue();
            let fresh = !queue.seen.contains(&exit.task_id) && !queue.exits.iter().any(|e| e.task_id == exit.task_id);
            if fresh {
                queue.exits.push(exit);
            }
            fresh
        };
        if queued && self.is_running() {
            self.deliver_now();
        }
    }

    /// The watchdog's round: a running task of this agent that wrote
    /// nothing for `period` is reported once (`background:stall`, and a note
    /// for the model); fresh output re-arms it.
    async fn check_stalls(&self, handle: &ExecutionHandle, period: Duration, quiet: &mut Quiet) {
        let tasks = self.inner.exec.context().list_background(handle).await;
        let now = tokio::time::Instant::now();
        let owner = self.inner.background.owner.clone();
        for task in tasks.iter().filter(|t| t.is_running() && t.owner == owner) {
            let entry = quiet
                .entry(task.task_id.clone())
                .or_insert((task.bytes_written, now, false));
            if entry.0 != task.bytes_written {
                *entry = (task.bytes_written, now, false);
                continue;
            }
            let stalled = now.duration_since(entry.1);
            if entry.2 || stalled < period {
                continue;
            }
            entry.2 = true;
            let stalled_ms = u64::try_from(stalled.as_millis()).unwrap_or(u64::MAX);
            let mut ev = BackgroundStall::new(BackgroundStallInit {
                bytes_written: task.bytes_written,
                command: task.command.clone(),
                output_path: task.output_path.clone(),
                stalled_for_ms: stalled_ms,
                task_id: task.task_id.clone(),
            });
            self.observe(&mut ev).await;
            self.inner.background.queue().notes.push(render_stall(task, stalled_ms));
            if self.is_running() {
                self.deliver_now();
            }
        }
    }
}

impl Agent {
    /// The session's record of running tasks.
    fn task_records(&self) -> serde_json::Map<String, serde_json::Value> {
        self.inner
            .session
            .state()
            .as_ref()
            .and_then(|s| s.metadata.get(TASKS_KEY))
            .and_then(|v| v.as_object().cloned())
            .unwrap_or_default()
    }

    async fn keep_task_records(&self, records: serde_json::Map<String, serde_json::Value>) {
        if self.inner.session.state().is_none() {
            return;
        }
        if let Err(e) = self
            .set_session_meta(TASKS_KEY, serde_json::Value::Object(records))
            .await
        {
            // Only a later process's take-back depends on it.
            tracing::warn!(target: "zidane", "the running background tasks could not be recorded in the session: {e}");
        }
    }

    /// Records a running task in the session.
    pub(crate) async fn remember_task(&self, task: &BackgroundTask) {
        let mut records = self.task_records();
        records.insert(task.task_id.clone(), record_of(task));
        self.keep_task_records(records).await;
    }

    /// Drops an ended task from the session's record.
    pub(crate) async fn forget_task(&self, task_id: &str) {
        let mut records = self.task_records();
        if records.remove(task_id).is_some() {
            self.keep_task_records(records).await;
        }
    }

    /// Takes back the tasks the session records as running (an earlier
    /// process started them): one that still runs is this agent's again
    /// (`background:adopt`); one that is gone is reported lost to the
    /// model with the next run.
    pub(crate) async fn reattach_tasks(&self, handle: &ExecutionHandle) {
        let records = self.task_records();
        if records.is_empty() {
            return;
        }
        let known = self.inner.exec.context().list_background(handle).await;
        let owner = self.inner.background.owner();
        let mut kept = serde_json::Map::new();
        for (id, record) in &records {
            let Some(task) = task_of(id, record) else { continue };
            if known.iter().any(|t| t.task_id == task.task_id && t.pid == task.pid) {
                kept.insert(id.clone(), record.clone());
                continue;
            }
            match self
                .inner
                .exec
                .context()
                .attach_background(handle, &task, owner.clone())
                .await
            {
                Some(task) => {
                    kept.insert(id.clone(), record.clone());
                    self.observe(&mut adopted(&task)).await;
                }
                None => self.inner.background.queue().notes.push(render_lost(&task)),
            }
        }
        if kept.len() != records.len() {
            self.keep_task_records(kept).await;
        }
    }

    /// Takes back the background tasks `records` names (the session's
    /// `background.tasks` record as an earlier attempt of this run left it,
    /// which the host learned after the run started: a Restate attempt
    /// reads it from the journal it replays). Each task that still runs is
    /// this agent's again (`background:adopt`); each that is gone is told
    /// to the model as lost, with where its output is, at the next turn.
    pub async fn take_back_tasks(&self, records: serde_json::Value) {
        let Some(records) = records.as_object().filter(|r| !r.is_empty()) else {
            return;
        };
        let Some(handle) = self.inner.exec.current().await else {
            return;
        };
        if let Some(state) = self.inner.session.state().as_mut() {
            state
                .metadata
                .insert(TASKS_KEY.to_owned(), serde_json::Value::Object(records.clone()));
        }
        self.reattach_tasks(&handle).await;
        self.deliver_now();
    }

    /// Whether a background task's exit waits to be told to the model (the
    /// host's cue for a prompt-less `run` that delivers it).
    pub fn has_pending_task_notifications(&self) -> bool {
        self.inner.background.has_pending()
    }

    /// Kills a background task from the host (the model hears of it as a
    /// notification). `false`: no such task, or no handle bound yet.
    pub async fn kill_background_task(&self, task_id: &str) -> bool {
        let Some(handle) = self.inner.exec.current().await else {
            return false;
        };
        self.inner.exec.context().kill_background(&handle, task_id).await
    }

    /// Hands what is queued to the running run as a message for its next
    /// turn; kept for the next run when the loop takes none.
    fn deliver_now(&self) {
        let (exits, stalls) = {
            let mut queue = self.inner.background.queue();
            (std::mem::take(&mut queue.exits), std::mem::take(&mut queue.notes))
        };
        if exits.is_empty() && stalls.is_empty() {
            return;
        }
        let blocks: Vec<ContentBlock> = exits
            .iter()
            .map(render_exit)
            .chain(stalls.iter().cloned())
            .map(ContentBlock::text)
            .collect();
        if self.inner.looped.steer(blocks, Some("background".to_owned())) {
            let mut queue = self.inner.background.queue();
            queue.seen.extend(exits.into_iter().map(|e| e.task_id));
        } else {
            let mut queue = self.inner.background.queue();
            queue.exits.splice(0..0, exits);
            queue.notes.splice(0..0, stalls);
        }
    }

    /// What a run starts with: the exits queued since the last run merged
    /// with those the context reports and nobody delivered (a push the
    /// context could not make), through `background:reconcile`, then the
    /// stall notes. Empty when there is nothing to tell.
    pub(crate) async fn take_task_notifications(&self, handle: &ExecutionHandle) -> Vec<ContentBlock> {
        self.inner.background.flush().await;
        let mut exits = std::mem::take(&mut self.inner.background.queue().exits);
        let owner = self.inner.background.owner.clone();
        let pulled = self.inner.exec.context().list_background(handle).await;
        {
            let queue = self.inner.background.queue();
            for task in pulled.iter().filter(|t| t.owner == owner) {
                if let Some(exit) = &task.exit
                    && !queue.seen.contains(&task.task_id)
                    && !exits.iter().any(|e| e.task_id == task.task_id)
                {
                    exits.push(exit.clone());
                }
            }
        }
        let stalls = std::mem::take(&mut self.inner.background.queue().notes);
        let mut blocks = Vec::new();
        if !exits.is_empty() {
            let mut ev = BackgroundReconcile::new();
            ev.exits = exits;
            self.observe(&mut ev).await;
            let mut queue = self.inner.background.queue();
            for exit in &ev.exits {
                queue.seen.insert(exit.task_id.clone());
                blocks.push(ContentBlock::text(render_exit(exit)));
            }
        }
        blocks.extend(stalls.into_iter().map(ContentBlock::text));
        blocks
    }

    /// A host-owned handle's running tasks become this agent's
    /// (`background:adopt` each): their exits are reported here.
    pub(crate) async fn adopt_tasks(&self, handle: &ExecutionHandle) {
        let owner = self.inner.background.owner();
        for task in self.inner.exec.context().list_background(handle).await {
            if !task.is_running() || task.owner == owner.owner {
                continue;
            }
            if let Some(task) = self
                .inner
                .exec
                .context()
                .claim_background(handle, &task.task_id, owner.clone())
                .await
            {
                self.remember_task(&task).await;
                self.observe(&mut adopted(&task)).await;
            }
        }
    }

    /// A finished sub-agent's still-running tasks become this agent's
    /// (`background:reassign` each, on this agent's bus), so they outlive
    /// the child and their exits reach a live owner.
    pub(crate) async fn take_over_tasks(&self, child: &Agent, child_id: &str) {
        let Some(handle) = child.inner.exec.current().await else {
            return;
        };
        child.inner.background.flush().await;
        // Exits the child never got to tell its model: the parent's now.
        let left = std::mem::take(&mut child.inner.background.queue().exits);
        self.inner.background.queue().exits.extend(left);
        let owner = self.inner.background.owner();
        let from = child.inner.background.owner.clone();
        for task in self.inner.exec.context().list_background(&handle).await {
            if !task.is_running() || task.owner != from {
                continue;
            }
            if let Some(task) = self
                .inner
                .exec
                .context()
                .claim_background(&handle, &task.task_id, owner.clone())
                .await
            {
                self.remember_task(&task).await;
                let mut ev = BackgroundReassign::new(BackgroundReassignInit {
                    child_id: Some(child_id.to_owned()),
                    command: task.command.clone(),
                    from_handle_id: from.clone(),
                    output_path: task.output_path.clone(),
                    pid: task.pid,
                    started_at: task.started_at,
                    task_id: task.task_id.clone(),
                    to_handle_id: owner.owner.clone(),
                });
                self.observe(&mut ev).await;
            }
        }
    }
}
