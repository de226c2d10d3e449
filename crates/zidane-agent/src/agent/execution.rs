//! Where the agent's tools run: the execution context, the live handle it
//! spawned (or the host injected), `execution:ready`, warm-up and destroy.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use zidane_core::events::{ExecutionHandle, ExecutionReady, ExecutionReadyInit};
use zidane_core::execution::ExecutionContext;

use super::Agent;
use crate::error::AgentError;

/// The execution context and its live handle, spawned once.
pub(crate) struct ExecutionSlot {
    context: Arc<dyn ExecutionContext>,
    handle: tokio::sync::Mutex<Option<ExecutionHandle>>,
    /// The host gave the handle: the agent never destroys it.
    injected: bool,
    /// `execution:ready` fired.
    ready: AtomicBool,
}

impl ExecutionSlot {
    pub(crate) fn new(context: Arc<dyn ExecutionContext>, handle: Option<ExecutionHandle>) -> Self {
        ExecutionSlot {
            context,
            injected: handle.is_some(),
            handle: tokio::sync::Mutex::new(handle),
            ready: AtomicBool::new(false),
        }
    }

    pub(crate) fn context(&self) -> &Arc<dyn ExecutionContext> {
        &self.context
    }

    /// The live handle, once bound.
    pub(crate) async fn current(&self) -> Option<ExecutionHandle> {
        self.handle.lock().await.clone()
    }

    /// The handle, spawned if needed (concurrent callers share one spawn),
    /// and whether the agent spawned it. A handle spawned while the agent
    /// was destroyed (`destroyed` says so once the spawn ends) is destroyed
    /// at once and never bound.
    async fn bind(&self, destroyed: impl Fn() -> bool) -> Result<(ExecutionHandle, bool), AgentError> {
        let mut slot = self.handle.lock().await;
        if let Some(handle) = slot.as_ref() {
            return Ok((handle.clone(), !self.injected));
        }
        let handle = self.context.spawn().await.map_err(AgentError::Execution)?;
        if destroyed() {
            self.context.destroy(&handle).await;
            return Err(AgentError::Destroyed);
        }
        *slot = Some(handle.clone());
        Ok((handle, true))
    }

    /// Releases the handle: one the agent spawned is destroyed (`true`
    /// when there was one), one the host gave stays.
    async fn release(&self) -> bool {
        if self.injected {
            return false;
        }
        let Some(handle) = self.handle.lock().await.take() else {
            return false;
        };
        self.context.destroy(&handle).await;
        true
    }
}

impl Agent {
    /// Binds the execution handle (spawning it if needed); `execution:ready`
    /// fires the first time. Concurrent callers share one spawn.
    pub async fn ensure_execution(&self) -> Result<ExecutionHandle, AgentError> {
        let exec = &self.inner.exec;
        // `destroy` during the spawn: the new handle is not kept.
        let destroyed_before = self.is_destroyed();
        let (handle, spawned) = exec.bind(|| !destroyed_before && self.is_destroyed()).await?;
        if !exec.ready.swap(true, Ordering::AcqRel) {
            self.on_execution_ready(&handle, spawned).await;
        }
        Ok(handle)
    }

    /// The first binding: the background watchdog starts, `execution:ready`
    /// fires, and tasks left by an earlier agent or process are taken on.
    async fn on_execution_ready(&self, handle: &ExecutionHandle, spawned: bool) {
        let watchdog = self.inner.looped.config().behavior.background_stall_watchdog;
        self.inner
            .background
            .start(Arc::downgrade(&self.inner), handle.clone(), watchdog);
        let mut ev = ExecutionReady::new(ExecutionReadyInit {
            handle: handle.clone(),
            spawned,
        });
        self.observe(&mut ev).await;
        // A host-owned handle may still run an earlier agent's tasks (a
        // sub-agent's handle is its parent's: not adopted).
        if self.inner.exec.injected && self.inner.lineage.depth == 0 {
            self.adopt_tasks(handle).await;
        }
        // What an earlier process of this session left running.
        self.reattach_tasks(handle).await;
    }

    /// Loads the session, binds the execution handle and connects the MCP
    /// servers without running a turn; with no MCP server configured it
    /// only resolves the skills and returns. Idempotent and safe to call
    /// concurrently (callers share one bootstrap). Servers that failed an
    /// earlier bootstrap are tried again; when any server still fails, the
    /// others stay connected and this reports [`AgentError::McpBootstrap`].
    pub async fn warmup(&self) -> Result<(), AgentError> {
        if self.inner.mcp.is_empty() {
            // Nothing to connect: it resolves at once.
            self.inner.skills.resolve(&self.inner.hooks).await;
            return Ok(());
        }
        self.load_session().await?;
        self.ensure_execution().await?;
        self.inner.skills.resolve(&self.inner.hooks).await;
        self.inner.mcp.warmup(&self.inner.hooks).await
    }

    /// Aborts any run and releases the execution handle (unless the host
    /// injected it). Idempotent.
    pub async fn destroy(&self) {
        if !self.inner.control.destroy() {
            return;
        }
        self.inner.looped.abort(Some("destroyed"));
        self.release_lease();
        self.inner.mcp.close().await;
        if let Some(lsp) = &self.inner.lsp {
            lsp.shutdown().await;
        }
        // Its background tasks are killed with it; their exits reach the
        // bus before this returns.
        if self.inner.exec.release().await {
            self.inner.background.flush().await;
        }
    }
}
