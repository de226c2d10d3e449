//! Server configuration, and the common `mcpServers` JSON shape.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use zidane_core::events::{McpToolSchema, McpTransport};

/// How to reach a server.
#[derive(Debug, Clone, PartialEq)]
pub enum McpTransportConfig {
    /// A child process speaking MCP on stdin/stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables.
        env: BTreeMap<String, String>,
        /// Its working folder.
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP.
    StreamableHttp {
        /// The endpoint.
        url: String,
        /// Extra headers.
        headers: BTreeMap<String, String>,
    },
    /// Legacy HTTP + SSE.
    Sse {
        /// The SSE endpoint.
        url: String,
        /// Extra headers.
        headers: BTreeMap<String, String>,
    },
}

impl McpTransportConfig {
    /// The transport's hook name.
    pub fn kind(&self) -> McpTransport {
        match self {
            McpTransportConfig::Stdio { .. } => McpTransport::Stdio,
            McpTransportConfig::StreamableHttp { .. } => McpTransport::StreamableHttp,
            McpTransportConfig::Sse { .. } => McpTransport::Sse,
        }
    }
}

/// A server's request for input from the person (MCP elicitation, form
/// mode).
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationRequest {
    /// The server's configured name.
    pub server: String,
    /// What the server asks, for the person.
    pub message: String,
    /// The JSON schema of the answer: an object of primitive properties,
    /// each possibly with a `default`.
    pub schema: Value,
}

/// The person's answer to an [`ElicitationRequest`].
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationAnswer {
    /// The values given; a property left out takes its schema default.
    Accept(serde_json::Map<String, Value>),
    /// No answer, the operation goes on.
    Decline,
    /// The whole operation is cancelled.
    Cancel,
}

/// Answers elicitation requests (a host's dialog). Without one, every
/// request is declined.
pub type ElicitationHandler =
    Arc<dyn Fn(ElicitationRequest) -> zidane_provider::BoxFuture<'static, ElicitationAnswer> + Send + Sync>;

/// Starts a stdio server's process: the agent gives one that starts it
/// inside its execution context's sandbox. Without one, the process starts
/// as a plain child.
pub type Launcher = Arc<dyn Fn(tokio::process::Command) -> std::io::Result<tokio::process::Child> + Send + Sync>;

/// A predicate over a server's tools.
pub type ToolFilter = Arc<dyn Fn(&McpToolSchema) -> bool + Send + Sync>;

/// One server.
#[derive(Clone)]
pub struct McpServerConfig {
    /// The name (the `<server>` in `mcp_<server>_<tool>`).
    pub name: String,
    /// How to reach it.
    pub transport: McpTransportConfig,
    /// Only these tools (by server-side name), when set.
    pub enabled_tools: Option<Vec<String>>,
    /// Never these tools.
    pub disabled_tools: Vec<String>,
    /// A further predicate.
    pub tool_filter: Option<ToolFilter>,
    /// Tools known in advance: `tools/list` is skipped.
    pub cached_tools: Option<Vec<McpToolSchema>>,
    /// Register the cached tools without connecting until the first call
    /// (needs `cached_tools`).
    pub lazy_connect: bool,
    /// Text appended to the system prompt when the server is connected.
    pub instructions: Option<String>,
    /// Longest wait for the connection and handshake.
    pub connect_timeout: Duration,
    /// Longest wait for one tool call.
    pub call_timeout: Duration,
    /// OAuth (`"auth": "oauth"` or an `oauth` object in the JSON): the
    /// bootstrap needs stored tokens (else `mcp:auth:required`
    /// `no-tokens`), `login_mcp_server` gets them.
    pub oauth: Option<crate::oauth::OAuthConfig>,
    /// Where the server's tokens are kept (the agent sets its store).
    pub oauth_store: Option<Arc<dyn crate::oauth::OAuthStore>>,
    /// Who answers the server's elicitation requests (the client offers the
    /// capability only with one).
    pub elicitation: Option<ElicitationHandler>,
    /// How a stdio server's process starts (the agent sets its execution
    /// context's sandbox, unless `unconfined`).
    pub launcher: Option<Launcher>,
    /// Start this stdio server outside the sandbox the agent's commands run
    /// in (`"sandbox": false` in the JSON): for a server that must write
    /// outside the working folder.
    pub unconfined: bool,
}

impl fmt::Debug for McpServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServerConfig")
            .field("name", &self.name)
            .field("transport", &self.transport)
            .finish_non_exhaustive()
    }
}

impl McpServerConfig {
    /// A server of `transport`, everything else default.
    pub fn new(name: impl Into<String>, transport: McpTransportConfig) -> Self {
        McpServerConfig {
            name: name.into(),
            transport,
            enabled_tools: None,
            disabled_tools: Vec::new(),
            tool_filter: None,
            cached_tools: None,
            lazy_connect: false,
            instructions: None,
            connect_timeout: Duration::from_secs(30),
            call_timeout: Duration::from_secs(300),
            oauth: None,
            oauth_store: None,
            elicitation: None,
            launcher: None,
            unconfined: false,
        }
    }

    /// A stdio server: `command args...`.
    pub fn stdio(
        name: impl Into<String>,
        command: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        McpServerConfig::new(
            name,
            McpTransportConfig::Stdio {
                command: command.into(),
                args: args.into_iter().map(Into::into).collect(),
                env: BTreeMap::new(),
                cwd: None,
            },
        )
    }

    /// Whether the config filters keep `tool`.
    pub(crate) fn keeps(&self, tool: &McpToolSchema) -> bool {
        self.enabled_tools.as_ref().is_none_or(|e| e.contains(&tool.name))
            && !self.disabled_tools.contains(&tool.name)
            && self.tool_filter.as_ref().is_none_or(|f| f(tool))
    }
}

/// A configuration file the program could not use: what and where.
#[derive(Debug, thiserror::Error)]
#[error("{message}{}", location.map(|(l, c)| format!(" (line {l}, column {c})")).unwrap_or_default())]
pub struct McpConfigError {
    /// What is wrong.
    pub message: String,
    /// Line and column, when the JSON itself is malformed.
    pub location: Option<(usize, usize)>,
}

fn config_error(message: impl Into<String>) -> McpConfigError {
    McpConfigError {
        message: message.into(),
        location: None,
    }
}

fn strings(value: Option<&Value>, field: &str) -> Result<Vec<String>, McpConfigError> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| config_error(format!("`{field}` must hold only strings")))
            })
            .collect(),
        Some(_) => Err(config_error(format!("`{field}` must be an array of strings"))),
    }
}

fn string_map(value: Option<&Value>, field: &str) -> Result<BTreeMap<String, String>, McpConfigError> {
    match value {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| {
                v.as_str()
                    .map(|s| (k.clone(), s.to_owned()))
                    .ok_or_else(|| config_error(format!("`{field}.{k}` must be a string")))
            })
            .collect(),
        Some(_) => Err(config_error(format!("`{field}` must be an object of strings"))),
    }
}

/// Parses the common `{"mcpServers": {"name": {...}}}` configuration:
/// `command` / `args` / `env` / `cwd` for stdio servers, `url` with an
/// optional `type` (`http`, `streamable-http`, `sse`) and `headers` for HTTP
/// ones, and optional `enabledTools`, `disabledTools`, `instructions`.
pub fn parse_mcp_config(text: &str) -> Result<Vec<McpServerConfig>, McpConfigError> {
    let root: Value = serde_json::from_str(text).map_err(|e| McpConfigError {
        message: format!("the MCP configuration is not valid JSON: {e}"),
        location: Some((e.line(), e.column())),
    })?;
    let servers = root
        .get("mcpServers")
        .ok_or_else(|| config_error("the MCP configuration has no `mcpServers` object"))?
        .as_object()
        .ok_or_else(|| config_error("`mcpServers` must be an object of servers by name"))?;
    let mut out = Vec::new();
    for (name, server) in servers {
        let field = |f: &str| format!("mcpServers.{name}.{f}");
        let Some(server) = server.as_object() else {
            return Err(config_error(format!("`mcpServers.{name}` must be an object")));
        };
        let transport = match (server.get("command"), server.get("url")) {
            (Some(command), None) => McpTransportConfig::Stdio {
                command: command
                    .as_str()
                    .ok_or_else(|| config_error(format!("`{}` must be a string", field("command"))))?
                    .to_owned(),
                args: strings(server.get("args"), &field("args"))?,
                env: string_map(server.get("env"), &field("env"))?,
                cwd: server.get("cwd").and_then(Value::as_str).map(PathBuf::from),
            },
            (None, Some(url)) => {
                let url = url
                    .as_str()
                    .ok_or_else(|| config_error(format!("`{}` must be a string", field("url"))))?
                    .to_owned();
                let headers = string_map(server.get("headers"), &field("headers"))?;
                match server.get("type").and_then(Value::as_str) {
                    Some("sse") => McpTransportConfig::Sse { url, headers },
                    None | Some("http" | "streamable-http" | "streamableHttp") => {
                        McpTransportConfig::StreamableHttp { url, headers }
                    }
                    Some(other) => {
                        return Err(config_error(format!(
                            "`{}` is `{other}`; expected `http` or `sse`",
                            field("type")
                        )));
                    }
                }
            }
            (Some(_), Some(_)) => {
                return Err(config_error(format!(
                    "`mcpServers.{name}` has both `command` and `url`"
                )));
            }
            (None, None) => {
                return Err(config_error(format!(
                    "`mcpServers.{name}` needs `command` (stdio) or `url` (HTTP)"
                )));
            }
        };
        let mut config = McpServerConfig::new(name.clone(), transport);
        if server.contains_key("enabledTools") {
            config.enabled_tools = Some(strings(server.get("enabledTools"), &field("enabledTools"))?);
        }
        config.disabled_tools = strings(server.get("disabledTools"), &field("disabledTools"))?;
        config.instructions = server.get("instructions").and_then(Value::as_str).map(str::to_owned);
        match server.get("sandbox") {
            None | Some(Value::Bool(true)) => {}
            Some(Value::Bool(false)) => config.unconfined = true,
            Some(_) => return Err(config_error(format!("`{}` must be true or false", field("sandbox")))),
        }
        let seconds = |key: &str| -> Result<Option<Duration>, McpConfigError> {
            match server.get(key) {
                None => Ok(None),
                Some(v) => v
                    .as_f64()
                    .filter(|s| s.is_finite() && *s > 0.0)
                    .map(|s| Some(Duration::from_secs_f64(s)))
                    .ok_or_else(|| config_error(format!("`{}` must be a positive number of seconds", field(key)))),
            }
        };
        if let Some(t) = seconds("startupTimeoutSec")? {
            config.connect_timeout = t;
        }
        if let Some(t) = seconds("callTimeoutSec")? {
            config.call_timeout = t;
        }
        // OAuth: `"auth": "oauth"` (Cursor's `"authMethod": "mcpOAuth"`),
        // an `oauth` object, or both.
        let asked = server.get("auth").and_then(Value::as_str) == Some("oauth")
            || server.get("authMethod").and_then(Value::as_str) == Some("mcpOAuth");
        match server.get("oauth") {
            Some(oauth) => {
                let parsed: crate::oauth::OAuthConfig = serde_json::from_value(oauth.clone())
                    .map_err(|e| config_error(format!("`{}`: {e}", field("oauth"))))?;
                config.oauth = Some(parsed);
            }
            None if asked => config.oauth = Some(crate::oauth::OAuthConfig::default()),
            None => {}
        }
        out.push(config);
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
