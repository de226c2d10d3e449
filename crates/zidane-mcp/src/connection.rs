//! Connecting servers: bootstrap in parallel with its hooks, the live
//! connection, reconnection after a server died.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::Value;
use zidane_core::events::{McpBootstrapOutcome, McpBootstrapSettled, McpClose, SharedError};
use zidane_core::{Tool, join_all};
use zidane_hooks::HookBus;
use zidane_provider::BoxFuture;

use crate::bootstrap::bootstrap;
use crate::config::McpServerConfig;
use crate::error::McpError;
use crate::handler::observe;
use crate::server::Server;
use crate::tool::{McpTool, namespaced_name};
use zidane_core::events::{McpBootstrapSettledInit, McpCloseInit};

/// Identity of a discovered tool, for [`McpToolWrap`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpToolMeta {
    /// The server's name.
    pub server: String,
    /// The server-side tool name.
    pub tool_name: String,
}

/// Re-shapes each discovered tool before it is registered (e.g. to journal
/// its calls).
pub type McpToolWrap = Arc<dyn Fn(Arc<dyn Tool>, &McpToolMeta) -> Arc<dyn Tool> + Send + Sync>;

/// Owns "connect these servers and hand back their tools"; supply one to use
/// a custom transport or authentication. [`connect_mcp_servers`] is the
/// default.
pub trait McpConnector: Send + Sync {
    /// Connects `configs`, emitting the `mcp:*` hooks on `hooks`.
    fn connect<'a>(&'a self, configs: &'a [McpServerConfig], hooks: &'a HookBus) -> BoxFuture<'a, McpConnection>;
}

/// Live servers and the tools they contribute.
#[derive(Clone, Default)]
pub struct McpConnection {
    servers: Vec<Arc<Server>>,
    tools: Vec<Arc<dyn Tool>>,
    /// Per tool (same order): the configured server name and the
    /// server-side tool name.
    metas: Vec<McpToolMeta>,
    /// Servers whose bootstrap failed, with why: a later bootstrap retries
    /// them.
    failed: Vec<(McpServerConfig, SharedError)>,
    instructions: Vec<String>,
}

impl std::fmt::Debug for McpConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpConnection")
            .field(
                "servers",
                &self.servers.iter().map(|s| s.config.name.as_str()).collect::<Vec<_>>(),
            )
            .field(
                "tools",
                &self.tools.iter().map(|t| t.name().to_owned()).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// A read-only view of an [`McpConnection`] someone else owns (an agent's,
/// from `Agent::mcp_connection`): its tools, servers, failures and
/// instructions, without the means to close it or change it. Closing
/// belongs to the owner.
#[derive(Clone, Debug)]
pub struct McpConnectionView(McpConnection);

impl McpConnectionView {
    /// The tools, namespaced `mcp_<server>_<tool>`.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.0.tools()
    }

    /// The servers whose bootstrap failed, by configured name, with the
    /// error.
    pub fn failures(&self) -> Vec<(String, SharedError)> {
        self.0.failures()
    }

    /// The configured servers' names (connected or lazy).
    pub fn servers(&self) -> Vec<String> {
        self.0.servers()
    }

    /// The servers' instructions, for the system prompt.
    pub fn instructions(&self) -> Option<String> {
        self.0.instructions()
    }
}

impl McpConnection {
    /// A read-only view, for callers that must not close the connection.
    pub fn view(&self) -> McpConnectionView {
        McpConnectionView(self.clone())
    }

    /// The tools, namespaced `mcp_<server>_<tool>`.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.clone()
    }

    /// The servers whose bootstrap failed, by configured name, with the
    /// error. They are not part of this connection; [`absorb`](Self::absorb)
    /// a later bootstrap of [`failed_configs`](Self::failed_configs) to
    /// retry them.
    pub fn failures(&self) -> Vec<(String, SharedError)> {
        self.failed
            .iter()
            .map(|(config, error)| (config.name.clone(), Arc::clone(error)))
            .collect()
    }

    /// The configurations of the servers whose bootstrap failed.
    pub fn failed_configs(&self) -> Vec<McpServerConfig> {
        self.failed.iter().map(|(config, _)| config.clone()).collect()
    }

    /// Takes in `other` (a bootstrap of this connection's failed servers):
    /// its servers, tools (renamed when a name is already taken) and
    /// instructions join this connection, and its failures replace these
    /// failures of the servers it tried (the others stay).
    pub fn absorb(&mut self, other: McpConnection) {
        let tried: BTreeSet<String> = other
            .servers
            .iter()
            .map(|s| s.config.name.clone())
            .chain(other.failed.iter().map(|(c, _)| c.name.clone()))
            .collect();
        self.failed.retain(|(c, _)| !tried.contains(&c.name));
        let mut used: BTreeSet<String> = self.tools.iter().map(|t| t.name().to_owned()).collect();
        for (tool, meta) in other.tools.into_iter().zip(other.metas) {
            let tool = if used.contains(tool.name()) {
                let mut n = 2;
                let mut name = format!("{}_{n}", tool.name());
                while used.contains(&name) {
                    n += 1;
                    name = format!("{}_{n}", tool.name());
                }
                Arc::new(Renamed { name, inner: tool }) as Arc<dyn Tool>
            } else {
                tool
            };
            used.insert(tool.name().to_owned());
            self.tools.push(tool);
            self.metas.push(meta);
        }
        self.servers.extend(other.servers);
        self.instructions.extend(other.instructions);
        self.failed.extend(other.failed);
    }

    /// The configured servers' names (connected or lazy).
    pub fn servers(&self) -> Vec<String> {
        self.servers.iter().map(|s| s.config.name.clone()).collect()
    }

    /// The servers' instructions, for the system prompt.
    pub fn instructions(&self) -> Option<String> {
        (!self.instructions.is_empty()).then(|| self.instructions.join("\n\n"))
    }

    /// Applies `wrap` to every tool; it sees the configured server name and
    /// the server-side tool name (not the namespaced one).
    pub fn wrap_tools(&mut self, wrap: &McpToolWrap) {
        self.tools = self
            .tools
            .iter()
            .zip(&self.metas)
            .map(|(tool, meta)| wrap(Arc::clone(tool), meta))
            .collect();
    }

    /// Closes every connection (`mcp:close` for each).
    pub async fn close(&self) {
        for server in &self.servers {
            let client = server.client.lock().await.take();
            if let Some(client) = client {
                if let Ok(client) = Arc::try_unwrap(client) {
                    let _ = client.cancel().await;
                }
                let mut ev = McpClose::new(McpCloseInit {
                    name: server.config.name.clone(),
                });
                observe(&server.hooks, &mut ev).await;
            }
        }
    }
}

/// Connects `configs` in parallel. Each server gets `mcp:bootstrap:start` and
/// `mcp:bootstrap:end`; the batch ends with one `mcp:bootstrap:settled`,
/// sorted by name. A server that fails (`mcp:error`) never fails the others.
pub async fn connect_mcp_servers(configs: &[McpServerConfig], hooks: &HookBus) -> McpConnection {
    let attempts: Vec<_> = configs.iter().map(|config| bootstrap(config, hooks)).collect();
    let outcomes = join_all(attempts).await;
    let mut results = Vec::new();
    let mut connection = McpConnection::default();
    let mut used = BTreeSet::new();
    for (config, (result, server, schemas)) in configs.iter().zip(outcomes) {
        let Some(server) = server else {
            if let McpBootstrapOutcome::Failed { error, .. } = &result.outcome {
                let error = error
                    .clone()
                    .unwrap_or_else(|| Arc::new(McpError::protocol_msg("the bootstrap failed")) as SharedError);
                connection.failed.push((config.clone(), error));
            }
            results.push(result);
            continue;
        };
        results.push(result);
        for schema in schemas {
            let mut name = namespaced_name(&config.name, &schema.name);
            let mut n = 2;
            while !used.insert(name.clone()) {
                name = format!("{}_{n}", namespaced_name(&config.name, &schema.name));
                n += 1;
            }
            connection.metas.push(McpToolMeta {
                server: config.name.clone(),
                tool_name: schema.name.clone(),
            });
            connection
                .tools
                .push(Arc::new(McpTool::new(name, schema, Arc::clone(&server))));
        }
        if let Some(text) = &config.instructions {
            connection.instructions.push(format!("## {}\n{text}", config.name));
        }
        connection.servers.push(server);
    }
    results.sort_by(|a, b| a.name.cmp(&b.name));
    let mut settled = McpBootstrapSettled::new(McpBootstrapSettledInit { results });
    observe(hooks, &mut settled).await;
    connection
}

/// A tool under another name (a collision when a retried server joins).
struct Renamed {
    name: String,
    inner: Arc<dyn Tool>,
}

impl Tool for Renamed {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        self.inner.description()
    }
    fn input_schema(&self) -> &Value {
        self.inner.input_schema()
    }
    fn parallel_safe(&self) -> bool {
        self.inner.parallel_safe()
    }
    fn durability(&self) -> zidane_core::seams::Durability {
        self.inner.durability()
    }
    fn execute<'a>(
        &'a self,
        input: Value,
        cx: zidane_core::ToolContext,
    ) -> BoxFuture<'a, Result<zidane_core::ToolOutput, zidane_core::tool::ToolFailure>> {
        self.inner.execute(input, cx)
    }
}

/// The default connector: [`connect_mcp_servers`].
#[derive(Debug, Default, Clone, Copy)]
pub struct DefaultConnector;

impl McpConnector for DefaultConnector {
    fn connect<'a>(&'a self, configs: &'a [McpServerConfig], hooks: &'a HookBus) -> BoxFuture<'a, McpConnection> {
        Box::pin(connect_mcp_servers(configs, hooks))
    }
}
