//! The MCP servers of a build with the `mcp` feature: one bootstrap shared
//! by concurrent callers, failed servers retried, the connection closed on
//! destroy.

use std::sync::Arc;

use zidane_core::events::SharedError;
use zidane_hooks::HookBus;
use zidane_mcp::{DefaultConnector, McpConnection, McpConnector, McpServerConfig, McpToolWrap};

use super::McpRun;
use crate::error::AgentError;
use crate::options::AgentOptions;

/// The tools of a connection.
type Tools = Vec<Arc<dyn zidane_core::Tool>>;

/// How long a run waits for its MCP servers before it starts without the
/// ones still connecting (their tools join it at a later turn).
const START_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The agent's MCP servers and, once bootstrapped, their connection.
pub(crate) struct Mcp(Arc<Parts>);

pub(crate) struct Parts {
    servers: Vec<McpServerConfig>,
    connector: Arc<dyn McpConnector>,
    tool_wrap: Option<McpToolWrap>,
    connection: tokio::sync::Mutex<Option<McpConnection>>,
}

impl Parts {
    /// The live connection, as a view.
    pub(crate) async fn view(&self) -> Option<zidane_mcp::McpConnectionView> {
        self.connection.lock().await.as_ref().map(McpConnection::view)
    }

    /// The configured servers.
    pub(crate) fn servers(&self) -> &[McpServerConfig] {
        &self.servers
    }
}

impl std::ops::Deref for Mcp {
    type Target = Parts;
    fn deref(&self) -> &Parts {
        &self.0
    }
}

impl Mcp {
    /// Takes the MCP options out of `options`: every server gets the
    /// agent's OAuth store and elicitation handler unless it names its own.
    pub(crate) fn take(options: &mut AgentOptions) -> Mcp {
        let store = options
            .mcp_oauth_store
            .take()
            .unwrap_or_else(|| Arc::new(zidane_mcp::oauth::MemoryOAuthStore::default()));
        let elicitation = options.mcp_elicitation.take();
        // Stdio servers start inside the execution context's sandbox, as
        // its commands do (a server whose configuration says `sandbox:
        // false` does not); a context elsewhere than this machine (a
        // container, a remote sandbox) cannot start them, so they are
        // refused rather than started here unconfined.
        let launcher = options
            .execution
            .as_ref()
            .filter(|_| options.mcp_servers.iter().any(|s| !s.unconfined))
            .and_then(|execution| {
                let local = execution
                    .as_any()
                    .and_then(|any| any.downcast_ref::<zidane_tools::ProcessContext>());
                match local.map(zidane_tools::ProcessContext::launcher) {
                    Some(Ok(launcher)) => launcher,
                    Some(Err(e)) => {
                        // The context's own sandbox started, so this is
                        // rare: the servers then start as they would without
                        // one.
                        tracing::warn!(error = %e, "MCP servers start unconfined");
                        None
                    }
                    None => Some(refused(execution.kind())),
                }
            });
        let mut servers = std::mem::take(&mut options.mcp_servers);
        for server in &mut servers {
            if server.launcher.is_none() {
                server.launcher.clone_from(&launcher);
            }
            server.oauth_store.get_or_insert_with(|| Arc::clone(&store));
            if server.elicitation.is_none() {
                server.elicitation.clone_from(&elicitation);
            }
        }
        Mcp(Arc::new(Parts {
            servers,
            connector: options
                .mcp_connector
                .take()
                .unwrap_or_else(|| Arc::new(DefaultConnector)),
            tool_wrap: options.mcp_tool_wrap.take(),
            connection: tokio::sync::Mutex::new(None),
        }))
    }

    /// Whether no server is configured.
    pub(crate) fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// The servers' tools and instructions for a run, connecting them the
    /// first time and the ones that failed before again. A server that
    /// fails is reported on the bus and left out; the others are used. The
    /// run waits for them at most [`START_WAIT`]: when they are still
    /// connecting (a slow or hanging server), it starts without them, the
    /// person is told once (`mcp:warn`), and their tools join the run at
    /// the first turn after they are ready (their instructions, from the
    /// next run).
    pub(crate) async fn for_run(&self, hooks: &HookBus) -> McpRun {
        if self.servers.is_empty() {
            return McpRun::default();
        }
        let parts = Arc::clone(&self.0);
        let bus = hooks.clone();
        let mut connecting = tokio::spawn(async move { parts.bootstrap(&bus, false).await.0 });
        let connection = match tokio::time::timeout(START_WAIT, &mut connecting).await {
            Ok(connected) => connected.ok().flatten(),
            Err(_) => return self.starting(hooks, connecting).await,
        };
        connection.map_or_else(McpRun::default, |c| McpRun {
            tools: c.tools(),
            instructions: c.instructions(),
            late: None,
        })
    }

    /// A run that starts while the servers still connect: it is told so,
    /// and gets their tools once `connecting` ends.
    async fn starting(&self, hooks: &HookBus, connecting: tokio::task::JoinHandle<Option<McpConnection>>) -> McpRun {
        for server in &self.servers {
            let mut ev = zidane_core::events::McpWarn::new(zidane_core::events::McpWarnInit {
                message: format!(
                    "`{}` is still starting: the run goes on, and its tools join at a later turn once it is ready",
                    server.name
                ),
                name: server.name.clone(),
            });
            hooks.observe(&mut ev).await;
        }
        let ready: Arc<parking_lot::Mutex<Option<Tools>>> = Arc::default();
        let slot = Arc::clone(&ready);
        tokio::spawn(async move {
            if let Ok(Some(connection)) = connecting.await {
                *slot.lock() = Some(connection.tools());
            }
        });
        McpRun {
            tools: Vec::new(),
            instructions: None,
            late: Some(Arc::new(move || ready.lock().take().unwrap_or_default())),
        }
    }

    /// Connects the servers ahead of the first run (`eager`), waiting for
    /// all of them.
    pub(crate) async fn connect_ahead(&self, hooks: &HookBus) {
        self.bootstrap(hooks, false).await;
    }

    /// Connects every server, those that timed out before too; the
    /// failures that remain are [`AgentError::McpBootstrap`].
    pub(crate) async fn warmup(&self, hooks: &HookBus) -> Result<(), AgentError> {
        let (_, failures) = self.bootstrap(hooks, true).await;
        if failures.is_empty() {
            Ok(())
        } else {
            Err(AgentError::McpBootstrap { failures })
        }
    }

    /// Closes the connection (the next run connects again).
    pub(crate) async fn close(&self) {
        let connection = self.connection.lock().await.take();
        if let Some(connection) = connection {
            connection.close().await;
        }
    }
}

impl Parts {
    /// The connection, connecting the servers the first time and the ones
    /// that failed before again; `None` without servers. With `revive`,
    /// servers that timed out before are tried again too (a run skips them,
    /// so each run does not wait out their bound again).
    pub(crate) async fn bootstrap(
        &self,
        hooks: &HookBus,
        revive: bool,
    ) -> (Option<McpConnection>, Vec<(String, SharedError)>) {
        let mcp = self;
        if mcp.servers.is_empty() {
            return (None, Vec::new());
        }
        let mut slot = mcp.connection.lock().await;
        let connection = match slot.take() {
            Some(connection) if connection.failures().is_empty() => connection,
            Some(mut connection) => {
                let dead: Vec<String> = connection
                    .failures()
                    .into_iter()
                    .filter(|(_, e)| !revive && is_dead(e))
                    .map(|(name, _)| name)
                    .collect();
                let retry: Vec<McpServerConfig> = connection
                    .failed_configs()
                    .into_iter()
                    .filter(|c| !dead.contains(&c.name))
                    .collect();
                if !retry.is_empty() {
                    let mut retried = mcp.connector.connect(&retry, hooks).await;
                    if let Some(wrap) = &mcp.tool_wrap {
                        retried.wrap_tools(wrap);
                    }
                    connection.absorb(retried);
                }
                connection
            }
            None => {
                let mut connection = mcp.connector.connect(&mcp.servers, hooks).await;
                if let Some(wrap) = &mcp.tool_wrap {
                    connection.wrap_tools(wrap);
                }
                connection
            }
        };
        let failures = connection.failures();
        *slot = Some(connection.clone());
        (Some(connection), failures)
    }
}

/// A launcher that starts nothing: the agent's commands run in the `kind`
/// execution context, elsewhere than this machine.
fn refused(kind: &str) -> zidane_mcp::Launcher {
    let message = format!(
        "the agent's commands run in the `{kind}` execution context, not on this machine, so its stdio MCP servers \
         are not started here (a server configured with `\"sandbox\": false` starts on this machine, unconfined)"
    );
    Arc::new(move |_| {
        Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            message.clone(),
        ))
    })
}

/// Whether a server's failure says it is dead (it never answered within its
/// bound): runs skip it from then on, `warmup` tries it again.
fn is_dead(error: &SharedError) -> bool {
    matches!(
        error.downcast_ref::<zidane_mcp::McpError>(),
        Some(zidane_mcp::McpError::Timeout(_))
    )
}

/// The MCP servers the extensions add, in order (a later server of a name
/// replaces an earlier one), and their configuration transforms.
#[derive(Default)]
pub(crate) struct McpFold {
    servers: Vec<McpServerConfig>,
    transforms: Vec<crate::extensions::McpConfigTransform>,
}

impl McpFold {
    /// Takes one extension's servers and transforms.
    pub(crate) fn add(&mut self, extension: &mut crate::extensions::Extension) {
        for server in std::mem::take(&mut extension.mcp_servers) {
            self.servers.retain(|s| s.name != server.name);
            self.servers.push(server);
        }
        self.transforms.append(&mut extension.mcp_config_transforms);
    }

    /// The options' servers: the explicit ones win by name, then every
    /// transform runs over the whole list.
    pub(crate) fn finish(mut self, options: &mut AgentOptions) {
        for server in std::mem::take(&mut options.mcp_servers) {
            self.servers.retain(|s| s.name != server.name);
            self.servers.push(server);
        }
        for transform in &self.transforms {
            transform(&mut self.servers);
        }
        options.mcp_servers = self.servers;
    }
}
