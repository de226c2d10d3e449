//! The agent's MCP servers: one bootstrap shared by concurrent callers,
//! failed servers retried, the connection closed on destroy.

use std::sync::Arc;

use zidane_core::events::SharedError;

use zidane_mcp::{McpConnection, McpConnector, McpServerConfig, McpToolWrap};

use crate::agent::Agent;

/// The agent's MCP servers and, once bootstrapped, their connection.
pub(crate) struct Mcp {
    pub(crate) servers: Vec<McpServerConfig>,
    pub(crate) connector: Arc<dyn McpConnector>,
    pub(crate) tool_wrap: Option<McpToolWrap>,
    pub(crate) connection: tokio::sync::Mutex<Option<McpConnection>>,
}

/// Whether a server's failure says it is dead (it never answered within its
/// bound): runs skip it from then on, `warmup` tries it again.
fn is_dead(error: &SharedError) -> bool {
    matches!(
        error.downcast_ref::<zidane_mcp::McpError>(),
        Some(zidane_mcp::McpError::Timeout(_))
    )
}

impl Agent {
    /// The MCP connection, connecting the servers the first time and the
    /// ones that failed before again; `None` without servers. A server that
    /// fails is reported on the bus and left out (its failure is returned),
    /// the others are used.
    pub(crate) async fn ensure_mcp(&self) -> (Option<McpConnection>, Vec<(String, SharedError)>) {
        self.bootstrap_mcp(false).await
    }

    /// [`ensure_mcp`](Self::ensure_mcp); with `revive`, servers that timed
    /// out before are tried again too (a run skips them, so each run does
    /// not wait out their bound again).
    pub(crate) async fn bootstrap_mcp(&self, revive: bool) -> (Option<McpConnection>, Vec<(String, SharedError)>) {
        let mcp = &self.inner.mcp;
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
                    let mut retried = mcp.connector.connect(&retry, &self.inner.hooks).await;
                    if let Some(wrap) = &mcp.tool_wrap {
                        retried.wrap_tools(wrap);
                    }
                    connection.absorb(retried);
                }
                connection
            }
            None => {
                let mut connection = mcp.connector.connect(&mcp.servers, &self.inner.hooks).await;
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

    /// The live MCP connection (`None` before the first run or warm-up and
    /// after destroy).
    pub async fn mcp_connection(&self) -> Option<McpConnection> {
        self.inner.mcp.connection.lock().await.clone()
    }

    /// The configured MCP servers.
    pub fn mcp_servers(&self) -> &[McpServerConfig] {
        &self.inner.mcp.servers
    }

    /// Logs in to the OAuth-protected HTTP server `name` interactively:
    /// `mcp:auth:url` carries the URL the person must open (a handler shows
    /// it or opens a browser), then the tokens go to the agent's OAuth
    /// store and `mcp:auth:success` fires (`mcp:auth:error` on failure).
    /// The next run or warm-up connects the server with them.
    pub async fn login_mcp_server(&self, name: &str) -> Result<(), crate::AgentError> {
        let Some(config) = self.inner.mcp.servers.iter().find(|s| s.name == name) else {
            return Err(crate::AgentError::UnknownMcpServer(name.to_owned()));
        };
        zidane_mcp::login_mcp_server(config, &self.inner.hooks)
            .await
            .map_err(|e| crate::AgentError::McpLogin {
                server: name.to_owned(),
                error: Arc::new(e),
            })
    }
}
