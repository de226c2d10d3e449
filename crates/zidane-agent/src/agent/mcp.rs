//! The agent's MCP methods, in a build with the `mcp` feature: its live
//! connection, its servers, and an interactive OAuth login.

use std::sync::Arc;

use zidane_mcp::McpServerConfig;

use crate::agent::Agent;
use crate::error::AgentError;

impl Agent {
    /// The live MCP connection, as a view (`None` before the first run or
    /// warm-up and after destroy): the agent owns it and closes it on
    /// [`destroy`](Agent::destroy).
    pub async fn mcp_connection(&self) -> Option<zidane_mcp::McpConnectionView> {
        self.inner.mcp.view().await
    }

    /// The configured MCP servers.
    pub fn mcp_servers(&self) -> &[McpServerConfig] {
        self.inner.mcp.servers()
    }

    /// Logs in to the OAuth-protected HTTP server `name` interactively:
    /// `mcp:auth:url` carries the URL the person must open (a handler shows
    /// it or opens a browser), then the tokens go to the agent's OAuth
    /// store and `mcp:auth:success` fires (`mcp:auth:error` on failure).
    /// The next run or warm-up connects the server with them.
    pub async fn login_mcp_server(&self, name: &str) -> Result<(), AgentError> {
        let Some(config) = self.inner.mcp.servers().iter().find(|s| s.name == name) else {
            return Err(AgentError::UnknownMcpServer(name.to_owned()));
        };
        zidane_mcp::login_mcp_server(config, &self.inner.hooks)
            .await
            .map_err(|e| AgentError::McpLogin {
                server: name.to_owned(),
                error: Arc::new(e),
            })
    }
}
