//! Run control: whether a run (or a compaction) holds the agent, the abort
//! of what is in progress, a suspend asked for, and `destroy`.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use zidane_provider::{AbortController, AbortSignal};

use crate::error::AgentError;

/// The agent's run-control state. One run or compaction at a time holds
/// the agent (`claim`); its abort controller lives here until it ends.
pub(crate) struct RunControl {
    busy: AtomicBool,
    idle: tokio::sync::watch::Sender<bool>,
    /// Aborts a run that is still starting (loading the session, spawning
    /// the execution handle, connecting MCP servers) and, once it runs,
    /// the run itself.
    run_abort: Mutex<Option<AbortController>>,
    /// Aborts a manual compaction in progress.
    compact_abort: Mutex<Option<AbortController>>,
    /// Aborts the decisions pending (`decide`, `ctx.decide`), by id.
    decisions: Mutex<Vec<(u64, AbortController)>>,
    next_decision: std::sync::atomic::AtomicU64,
    suspend_requested: AtomicBool,
    destroyed: AtomicBool,
    /// `eager` was set where no runtime ran: the first run starts it.
    deferred_warm: AtomicBool,
}

impl RunControl {
    pub(crate) fn new() -> Self {
        let (idle, _) = tokio::sync::watch::channel(true);
        RunControl {
            busy: AtomicBool::new(false),
            idle,
            run_abort: Mutex::new(None),
            compact_abort: Mutex::new(None),
            decisions: Mutex::new(Vec::new()),
            next_decision: std::sync::atomic::AtomicU64::new(0),
            suspend_requested: AtomicBool::new(false),
            destroyed: AtomicBool::new(false),
            deferred_warm: AtomicBool::new(false),
        }
    }

    /// Holds the agent for one run or compaction; refused while another
    /// holds it.
    pub(crate) fn claim(&self) -> Result<BusyGuard<'_>, AgentError> {
        if self.busy.swap(true, Ordering::AcqRel) {
            return Err(AgentError::Busy);
        }
        self.idle.send_replace(false);
        Ok(BusyGuard(self))
    }

    pub(crate) fn is_running(&self) -> bool {
        self.busy.load(Ordering::Acquire)
    }

    /// Resolves when nothing holds the agent.
    pub(crate) async fn wait_for_idle(&self) {
        let mut rx = self.idle.subscribe();
        let _ = rx.wait_for(|idle| *idle).await;
    }

    /// A run starts: its abort controller is kept (until the returned
    /// guard drops), an earlier suspend request is forgotten and the agent
    /// is no longer destroyed.
    pub(crate) fn start_run(&self) -> AbortSignal {
        let controller = AbortController::new();
        let signal = controller.signal();
        *self.run_abort.lock() = Some(controller);
        self.suspend_requested.store(false, Ordering::Release);
        self.destroyed.store(false, Ordering::Release);
        signal
    }

    /// Forgets the run's abort controller when dropped.
    pub(crate) fn run_scope(&self) -> AbortScope<'_> {
        AbortScope(&self.run_abort)
    }

    /// Keeps a manual compaction's abort controller until the returned
    /// guard drops.
    pub(crate) fn compaction(&self, controller: AbortController) -> AbortScope<'_> {
        *self.compact_abort.lock() = Some(controller);
        AbortScope(&self.compact_abort)
    }

    /// Aborts a starting run, a manual compaction and the pending
    /// decisions.
    pub(crate) fn abort(&self, reason: Option<&str>) {
        for slot in [&self.compact_abort, &self.run_abort] {
            if let Some(controller) = slot.lock().as_ref() {
                controller.abort(reason);
            }
        }
        for (_, controller) in self.decisions.lock().iter() {
            controller.abort(reason);
        }
    }

    /// A pending decision's abort signal, kept until the guard drops.
    pub(crate) fn decision(&self) -> (AbortSignal, DecisionScope<'_>) {
        let controller = AbortController::new();
        let signal = controller.signal();
        let id = self.next_decision.fetch_add(1, Ordering::Relaxed);
        self.decisions.lock().push((id, controller));
        (signal, DecisionScope { control: self, id })
    }

    /// Notes that `eager` could not start its work yet.
    pub(crate) fn defer_warm(&self) {
        self.deferred_warm.store(true, Ordering::Release);
    }

    /// Whether `eager`'s work waits for a runtime (once: `true` at most
    /// one time).
    pub(crate) fn take_deferred_warm(&self) -> bool {
        self.deferred_warm.swap(false, Ordering::AcqRel)
    }

    /// Notes that `suspend` was called for the current run.
    pub(crate) fn request_suspend(&self) {
        self.suspend_requested.store(true, Ordering::Release);
    }

    /// Aborts a run that is still starting, as a suspend.
    pub(crate) fn suspend_start(&self) {
        if let Some(controller) = self.run_abort.lock().as_ref() {
            controller.abort(Some("suspended"));
        }
    }

    pub(crate) fn suspend_requested(&self) -> bool {
        self.suspend_requested.load(Ordering::Acquire)
    }

    /// Marks the agent destroyed; `false` when it already was.
    pub(crate) fn destroy(&self) -> bool {
        !self.destroyed.swap(true, Ordering::AcqRel)
    }

    pub(crate) fn is_destroyed(&self) -> bool {
        self.destroyed.load(Ordering::Acquire)
    }
}

/// Releases the busy flag (and wakes `wait_for_idle`) however a run ends.
pub(crate) struct BusyGuard<'a>(&'a RunControl);

impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        self.0.busy.store(false, Ordering::Release);
        self.0.idle.send_replace(true);
    }
}

/// Forgets a decision's abort controller when the decision ends.
pub(crate) struct DecisionScope<'a> {
    control: &'a RunControl,
    id: u64,
}

impl Drop for DecisionScope<'_> {
    fn drop(&mut self) {
        self.control.decisions.lock().retain(|(id, _)| *id != self.id);
    }
}

/// Empties an abort slot when the work it guards ends.
pub(crate) struct AbortScope<'a>(&'a Mutex<Option<AbortController>>);

impl Drop for AbortScope<'_> {
    fn drop(&mut self) {
        *self.0.lock() = None;
    }
}

impl super::Agent {
    /// Stops the current run so [`Agent::resume`](super::Agent::resume)
    /// can continue it later: the model stream stops at once (its request
    /// is sent again on resume); running tool calls may finish within
    /// `options.grace` (unset: they all finish), and a call still running
    /// then is cut off and stays pending. Nothing is recorded as failed and
    /// the run stays resumable; its `run()` resolves with `suspended:
    /// true`. Without a checkpoint runtime the run stops the same way, but
    /// nothing can resume it. A run on a replay-mode runtime
    /// (`replay_runtime`) is aborted instead: it continues when its engine
    /// runs the invocation again. Before the run started, it does not
    /// start. Resolves once the run stopped; no-op when idle.
    pub async fn suspend(&self, options: crate::run_options::SuspendOptions) {
        if !self.is_running() {
            return;
        }
        // A replay-mode run continues by running its invocation again: the
        // engine replays it from its journal, so this one is only aborted.
        if self.inner.looped.config().runtime.mode() == zidane_core::durable::DurableMode::Replay {
            self.abort_with("suspended");
            self.wait_for_idle().await;
            return;
        }
        self.inner.control.request_suspend();
        if !self.inner.looped.suspend() {
            // Still starting (loading the session, connecting servers).
            self.inner.control.suspend_start();
        }
        if let Some(grace) = options.grace {
            tokio::select! {
                () = self.wait_for_idle() => return,
                () = tokio::time::sleep(grace) => self.inner.looped.abort(Some("suspended")),
            }
        }
        self.wait_for_idle().await;
    }

    /// Aborts the current run or manual compaction (no-op when idle).
    pub fn abort(&self) {
        self.abort_reason(None);
    }

    /// Aborts the current run with a reason (in `agent:abort`).
    pub fn abort_with(&self, reason: &str) {
        self.abort_reason(Some(reason));
    }

    fn abort_reason(&self, reason: Option<&str>) {
        self.inner.looped.abort(reason);
        self.inner.control.abort(reason);
    }

    /// Queues a mid-run message for the next turn boundary; `false` (and
    /// nothing queued) when no run is in flight, the run is aborted, or the
    /// prompt is empty. `prompt` is text or parts, as for a run; the
    /// options' `system_notes` follow it as text blocks and its `id` comes
    /// back in `steer:inject`.
    #[must_use = "`false` means nothing was queued"]
    pub fn steer(
        &self,
        prompt: impl Into<crate::run_options::Prompt>,
        options: crate::run_options::QueuedMessageOptions,
    ) -> bool {
        let (content, id) = crate::run_options::queued(prompt.into(), options);
        self.inner.looped.steer(content, id)
    }

    /// Queues a message for when the model would otherwise finish; same
    /// contract as [`Agent::steer`](super::Agent::steer).
    #[must_use = "`false` means nothing was queued"]
    pub fn follow_up(
        &self,
        prompt: impl Into<crate::run_options::Prompt>,
        options: crate::run_options::QueuedMessageOptions,
    ) -> bool {
        let (content, id) = crate::run_options::queued(prompt.into(), options);
        self.inner.looped.follow_up(content, id)
    }

    /// Cancels one in-flight tool call (see
    /// [`RunLoop::cancel_tool`](zidane_loop::RunLoop::cancel_tool)): one
    /// of this agent's, or of a running sub-agent's (a spawn call's id
    /// stops that whole child).
    #[must_use = "`false` means no such call was in flight"]
    pub fn cancel_tool(&self, call_id: &str, reason: Option<&str>) -> bool {
        if self.inner.looped.cancel_tool(call_id, reason) {
            return true;
        }
        let children: Vec<super::Agent> = self.inner.live_children.lock().iter().map(|(_, a)| a.clone()).collect();
        children.iter().any(|child| child.cancel_tool(call_id, reason))
    }

    /// Resolves when no run is in progress.
    pub async fn wait_for_idle(&self) {
        self.inner.control.wait_for_idle().await;
    }

    /// Clears the conversation; refused while a run is in progress.
    pub async fn reset(&self) -> Result<(), AgentError> {
        let _busy = self.claim()?;
        self.inner.looped.reset();
        self.deactivate_all_skills(zidane_core::events::DeactivationReason::Reset)
            .await;
        Ok(())
    }

    /// Summarizes the older turns now (`compact:*` hooks, `reason:
    /// manual`), keeping the last `options.keep_turns` turns. Refused while
    /// a run is active; [`Agent::abort`](super::Agent::abort) stops it (it
    /// then resolves with `compacted: false`).
    ///
    /// Cancel safety: dropping the future before the summary arrives
    /// leaves the conversation as it was; the older turns are replaced only
    /// once the summary is in.
    pub async fn compact(
        &self,
        options: crate::compact::CompactOptions,
    ) -> Result<crate::compact::CompactionResult, AgentError> {
        let _busy = self.claim()?;
        self.load_session().await?;
        // A durable session is written only under its lease.
        self.take_lease().await?;
        let compaction = std::sync::Arc::clone(&self.inner.compaction);
        compaction.manual(self, options).await
    }
}
