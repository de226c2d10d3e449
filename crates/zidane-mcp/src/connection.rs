//! Connecting servers: bootstrap in parallel with its hooks, the live
//! connection, reconnection after a server died.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use rmcp::model::ProgressNotificationParam;
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::Value;
use tokio::io::AsyncBufReadExt;
use tokio::sync::mpsc;
use zidane_core::events::{
    McpAuthReason, McpAuthRequired, McpBootstrapEnd, McpBootstrapOutcome, McpBootstrapResult, McpBootstrapSettled,
    McpBootstrapStart, McpClose, McpConnect, McpError as McpErrorEvent, McpToolSchema, McpToolsFilter, McpToolsList,
    McpWarn, SharedError,
};
use zidane_core::{Tool, join_all};
use zidane_hooks::{HookBus, HookEvent};
use zidane_provider::BoxFuture;

use crate::config::{McpServerConfig, McpTransportConfig};
use crate::tool::{McpTool, namespaced_name};
use zidane_core::events::{McpAuthError, McpAuthErrorInit, McpAuthSuccess, McpAuthSuccessInit};
use zidane_core::events::{
    McpAuthRequiredInit, McpBootstrapEndInit, McpBootstrapSettledInit, McpBootstrapStartInit, McpCloseInit,
    McpConnectInit, McpErrorInit, McpToolsFilterInit, McpToolsListInit, McpWarnInit,
};
#[cfg(feature = "http")]
use zidane_core::events::{McpAuthUrl, McpAuthUrlInit, OAuthRefresh, OAuthRefreshInit};

/// Why a server could not be used.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The transport is not available in this build.
    #[error("the {0} transport is not supported by this build")]
    Unsupported(&'static str),
    /// The server could not be started or reached.
    #[error("cannot start the server: {what}{}", suffix(source.as_ref()))]
    Spawn {
        /// What could not be done.
        what: String,
        /// The underlying error, when there is one (`source()` returns it).
        #[source]
        source: Option<SharedError>,
    },
    /// The handshake or a request failed.
    #[error("{what}{}", suffix(source.as_ref()))]
    Protocol {
        /// What failed.
        what: String,
        /// The underlying error, when there is one (`source()` returns it).
        #[source]
        source: Option<SharedError>,
    },
    /// The connection or handshake took too long.
    #[error("no answer within {0}s")]
    Timeout(u64),
    /// The server answered 401 with this `WWW-Authenticate` challenge.
    #[error("the server requires authorization ({0})")]
    AuthRequired(String),
    /// The server is configured for OAuth and no tokens are stored: log in
    /// first (`login_mcp_server`).
    #[error("the server needs an OAuth login first")]
    LoginRequired,
    /// An OAuth login failed.
    #[error("the OAuth login failed: {0}")]
    Login(#[source] Arc<crate::oauth::OAuthError>),
}

/// The source's message after the context, so the one line a person reads
/// says both (the source stays reachable through `source()`).
fn suffix(source: Option<&SharedError>) -> String {
    source.map(|e| format!(": {e}")).unwrap_or_default()
}

impl McpError {
    /// A start or reach failure: `what` could not be done, because of `source`.
    pub fn spawn(what: impl Into<String>, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        McpError::Spawn {
            what: what.into(),
            source: Some(Arc::new(source)),
        }
    }

    /// A start or reach failure with no underlying error.
    pub fn spawn_msg(what: impl Into<String>) -> Self {
        McpError::Spawn {
            what: what.into(),
            source: None,
        }
    }

    /// A protocol failure: `what` failed, because of `source`.
    pub fn protocol(what: impl Into<String>, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        McpError::Protocol {
            what: what.into(),
            source: Some(Arc::new(source)),
        }
    }

    /// A protocol failure with no underlying error.
    pub fn protocol_msg(what: impl Into<String>) -> Self {
        McpError::Protocol {
            what: what.into(),
            source: None,
        }
    }
}

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

type Progress = Arc<Mutex<HashMap<String, mpsc::UnboundedSender<ProgressNotificationParam>>>>;

/// Receives server notifications: progress goes to the call that asked.
#[derive(Clone)]
pub(crate) struct Handler {
    pub(crate) progress: Progress,
    pub(crate) server: String,
    pub(crate) elicitation: Option<crate::config::ElicitationHandler>,
}

/// What the client says of itself in `initialize`: a protocol version that
/// has the handshake (`2025-11-25`; rmcp's default names a version without
/// one), the capabilities it has (progress is a notification, not a
/// capability; roots, sampling and elicitation are not offered), and its own
/// name and version.
/// Form elicitation is offered when someone answers it.
pub(crate) fn client_info_with(elicitation: bool) -> rmcp::model::ClientConfig {
    let mut capabilities = rmcp::model::ClientCapabilities::default();
    if elicitation {
        let mut offered = rmcp::model::ElicitationCapability::new();
        offered.form = Some(rmcp::model::FormElicitationCapability::new());
        capabilities.elicitation = Some(offered);
    }
    rmcp::model::ClientConfig::new(
        capabilities,
        rmcp::model::Implementation::new("zidane", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(rmcp::model::ProtocolVersion::V_2025_11_25)
}

impl ClientHandler for Handler {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        client_info_with(self.elicitation.is_some())
    }

    fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<rmcp::model::ElicitResult, rmcp::ErrorData>> + Send + '_ {
        use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
        async move {
            let (
                Some(answer),
                ElicitRequestParams::FormElicitationParams {
                    message,
                    requested_schema,
                    ..
                },
            ) = (&self.elicitation, request)
            else {
                // Nobody to ask (or a URL to visit, which this client does not open).
                return Ok(ElicitResult::new(ElicitationAction::Decline));
            };
            let schema = serde_json::to_value(&requested_schema).unwrap_or(Value::Null);
            let asked = crate::config::ElicitationRequest {
                server: self.server.clone(),
                message,
                schema: schema.clone(),
            };
            Ok(match answer(asked).await {
                crate::config::ElicitationAnswer::Accept(mut content) => {
                    with_defaults(&mut content, &schema);
                    ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content))
                }
                crate::config::ElicitationAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
                crate::config::ElicitationAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
            })
        }
    }

    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        let token = match &params.progress_token.0 {
            rmcp::model::NumberOrString::String(s) => s.to_string(),
            rmcp::model::NumberOrString::Number(n) => n.to_string(),
        };
        if let Some(tx) = self.progress.lock().unwrap_or_else(PoisonError::into_inner).get(&token) {
            let _ = tx.send(params);
        }
        std::future::ready(())
    }
}

#[cfg(test)]
#[test]
fn schema_defaults_fill_what_the_answer_left_out() {
    let schema = serde_json::json!({"type": "object", "properties": {
        "name": {"type": "string", "default": "Ada"},
        "age": {"type": "integer", "default": 36},
        "mail": {"type": "string"},
    }});
    let mut content = serde_json::Map::new();
    content.insert("age".into(), 40.into());
    with_defaults(&mut content, &schema);
    assert_eq!(Value::Object(content), serde_json::json!({"age": 40, "name": "Ada"}));
}

/// Fills each property the answer left out with its schema `default`.
fn with_defaults(content: &mut serde_json::Map<String, Value>, schema: &Value) {
    let Some(properties) = schema["properties"].as_object() else {
        return;
    };
    for (name, property) in properties {
        if let Some(default) = property.get("default")
            && !content.contains_key(name)
        {
            content.insert(name.clone(), default.clone());
        }
    }
}

pub(crate) type Client = RunningService<RoleClient, Handler>;

/// One configured server: its client (when connected) and its tools.
pub(crate) struct Server {
    pub(crate) config: McpServerConfig,
    pub(crate) hooks: HookBus,
    pub(crate) client: tokio::sync::Mutex<Option<Arc<Client>>>,
    pub(crate) progress: Progress,
    /// Where the HTTP transport leaves a 401's challenge.
    pub(crate) challenge: Mutex<Option<Arc<Mutex<Option<String>>>>>,
}

impl Server {
    /// The challenge of a 401 the server answered since connecting.
    fn challenge(&self) -> Option<String> {
        let slot = self.challenge.lock().unwrap_or_else(PoisonError::into_inner);
        slot.as_ref()
            .and_then(|c| c.lock().unwrap_or_else(PoisonError::into_inner).take())
    }
}

impl Server {
    /// The live client, connecting (again) when there is none.
    pub(crate) async fn client(&self) -> Result<Arc<Client>, McpError> {
        self.connect(true).await
    }

    /// The live client; `on_demand` says whether a connection made now
    /// was deferred to the first call (`mcp:connect`'s `lazy`) rather than
    /// made by the bootstrap.
    pub(crate) async fn connect(&self, on_demand: bool) -> Result<Arc<Client>, McpError> {
        let mut slot = self.client.lock().await;
        if let Some(client) = slot.as_ref().filter(|c| !c.is_transport_closed()) {
            return Ok(Arc::clone(client));
        }
        let challenge = Arc::new(Mutex::new(None));
        *self.challenge.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&challenge));
        let client = Arc::new(spawn(&self.config, &self.hooks, Arc::clone(&self.progress), challenge).await?);
        let lazy = on_demand;
        *slot = Some(Arc::clone(&client));
        drop(slot);
        let tools = client
            .list_all_tools()
            .await
            .map(|t| t.iter().map(|t| t.name.to_string()).collect())
            .unwrap_or_default();
        let mut ev = McpConnect::new(McpConnectInit {
            lazy,
            name: self.config.name.clone(),
            tools,
            transport: self.config.transport.kind(),
        });
        observe(&self.hooks, &mut ev).await;
        Ok(client)
    }

    /// Forgets a client whose server died, so the next call reconnects.
    pub(crate) async fn forget(&self) {
        *self.client.lock().await = None;
    }
}

trait TransportState {
    fn is_transport_closed(&self) -> bool;
}

impl TransportState for Client {
    fn is_transport_closed(&self) -> bool {
        self.is_closed()
    }
}

pub(crate) async fn observe<E: HookEvent>(hooks: &HookBus, event: &mut E) {
    let _ = hooks.emit(event).await;
}

async fn spawn(
    config: &McpServerConfig,
    hooks: &HookBus,
    progress: Progress,
    last_challenge: Arc<Mutex<Option<String>>>,
) -> Result<Client, McpError> {
    #[cfg(not(feature = "http"))]
    drop(last_challenge);
    let handler = Handler {
        progress,
        server: config.name.clone(),
        elicitation: config.elicitation.clone(),
    };
    match &config.transport {
        McpTransportConfig::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args).envs(env);
            if let Some(cwd) = cwd {
                cmd.current_dir(cwd);
            }
            let (output, input, garbage, stderr) =
                crate::stdio::spawn(cmd, &format!("`{command}`"), &config.name, hooks)?;
            if let Some(stderr) = stderr {
                // The server's diagnostics become `mcp:warn`.
                let (hooks, name) = (hooks.clone(), config.name.clone());
                tokio::spawn(async move {
                    let mut lines = tokio::io::BufReader::new(stderr).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        if !line.trim().is_empty() {
                            let mut ev = McpWarn::new(McpWarnInit {
                                message: line,
                                name: name.clone(),
                            });
                            observe(&hooks, &mut ev).await;
                        }
                    }
                });
            }
            handshake(config, handler.serve((output, input)))
                .await
                .map_err(|e| crate::stdio::explain(e, &garbage))
        }
        #[cfg(feature = "http")]
        McpTransportConfig::StreamableHttp { url, headers } => {
            // A machine client gets its tokens itself; a person logs in.
            if config.oauth.as_ref().is_some_and(|o| o.machine() || o.cross_app())
                && let Some(store) = &config.oauth_store
                && matches!(store.load(&config.name), Ok(None))
            {
                login(config, hooks).await?;
            }
            let oauth = oauth_session(config, url, hooks)?;
            let (transport, challenge) = crate::http::transport(
                url,
                headers,
                config.connect_timeout,
                config.call_timeout,
                oauth,
                Arc::clone(&last_challenge),
            )?;
            let served = handshake(config, handler.serve(transport)).await;
            // A 401 is the reason, whatever the SDK made of it.
            let challenge = challenge.lock().unwrap_or_else(PoisonError::into_inner).take();
            match (served, challenge) {
                (Err(_), Some(challenge)) => Err(McpError::AuthRequired(challenge)),
                (served, _) => served,
            }
        }
        #[cfg(not(feature = "http"))]
        McpTransportConfig::StreamableHttp { .. } => Err(McpError::Unsupported("streamable HTTP")),
        #[cfg(feature = "http")]
        McpTransportConfig::Sse { url, headers } => {
            let transport = crate::sse::connect(url, headers, config.connect_timeout, config.call_timeout).await?;
            handshake(config, handler.serve(transport)).await
        }
        #[cfg(not(feature = "http"))]
        McpTransportConfig::Sse { .. } => Err(McpError::Unsupported("legacy SSE")),
    }
}

/// The OAuth session of an HTTP server that has tokens (or is configured
/// for OAuth: without tokens, [`McpError::LoginRequired`]).
#[cfg(feature = "http")]
fn oauth_session(
    config: &McpServerConfig,
    url: &str,
    hooks: &HookBus,
) -> Result<Option<Arc<crate::http::OAuthSession>>, McpError> {
    let Some(store) = &config.oauth_store else {
        return if config.oauth.is_some() {
            Err(McpError::LoginRequired)
        } else {
            Ok(None)
        };
    };
    let stored = store
        .load(&config.name)
        .map_err(|e| McpError::spawn_msg(format!("the token store failed: {e}")))?;
    if stored.is_none() {
        return if config.oauth.is_some() {
            Err(McpError::LoginRequired)
        } else {
            Ok(None)
        };
    }
    let http = crate::http::http_client(config.connect_timeout, config.call_timeout)?;
    let flow = crate::oauth::OAuthFlow::new(
        config.name.clone(),
        url,
        config.oauth.clone().unwrap_or_default(),
        Arc::clone(store),
        http,
    );
    // A step-up login needs someone to show its URL.
    let open: Option<crate::http::Opener> = hooks.has::<McpAuthUrl>().then(|| {
        let (hooks, name) = (hooks.clone(), config.name.clone());
        Arc::new(move |url: String| {
            let (hooks, name) = (hooks.clone(), name.clone());
            Box::pin(async move {
                let mut ev = McpAuthUrl::new(McpAuthUrlInit { name, url });
                observe(&hooks, &mut ev).await;
            }) as futures::future::BoxFuture<'static, ()>
        }) as crate::http::Opener
    });
    let (hooks, name) = (hooks.clone(), config.name.clone());
    let on_refresh: crate::http::RefreshNote = Arc::new(move |expires_at| {
        let (hooks, name) = (hooks.clone(), name.clone());
        tokio::spawn(async move {
            let mut ev = OAuthRefresh::new(OAuthRefreshInit {
                provider: format!("mcp:{name}"),
                expires_at,
            });
            observe(&hooks, &mut ev).await;
        });
    });
    Ok(Some(Arc::new(crate::http::OAuthSession::new(
        flow,
        open,
        Some(on_refresh),
    ))))
}

/// Logs in to the OAuth-protected HTTP server `config` interactively:
/// `mcp:auth:url` carries the URL to open, the tokens are stored in
/// `config.oauth_store`, then `mcp:auth:success` (or `mcp:auth:error`)
/// fires.
pub async fn login_mcp_server(config: &McpServerConfig, hooks: &HookBus) -> Result<(), McpError> {
    let outcome = login(config, hooks).await;
    match &outcome {
        Ok(()) => {
            let mut ev = McpAuthSuccess::new(McpAuthSuccessInit {
                name: config.name.clone(),
            });
            observe(hooks, &mut ev).await;
        }
        Err(error) => {
            let mut ev = McpAuthError::new(McpAuthErrorInit {
                name: config.name.clone(),
                error: Arc::new(McpError::protocol_msg(error.to_string())),
            });
            observe(hooks, &mut ev).await;
        }
    }
    outcome
}

#[cfg(not(feature = "http"))]
async fn login(_config: &McpServerConfig, _hooks: &HookBus) -> Result<(), McpError> {
    Err(McpError::Unsupported("OAuth logins"))
}

#[cfg(feature = "http")]
async fn login(config: &McpServerConfig, hooks: &HookBus) -> Result<(), McpError> {
    let McpTransportConfig::StreamableHttp { url, .. } = &config.transport else {
        return Err(McpError::spawn_msg("OAuth logins are for streamable HTTP servers"));
    };
    let Some(store) = &config.oauth_store else {
        return Err(McpError::spawn_msg("no token store to keep the login in"));
    };
    let http = crate::http::http_client(config.connect_timeout, config.call_timeout)?;
    let flow = crate::oauth::OAuthFlow::new(
        config.name.clone(),
        url.clone(),
        config.oauth.clone().unwrap_or_default(),
        Arc::clone(store),
        http,
    );
    let failed = |e: crate::oauth::OAuthError| McpError::Login(Arc::new(e));
    let challenge = flow.probe().await.map_err(failed)?.unwrap_or_default();
    if config.oauth.as_ref().is_some_and(crate::oauth::OAuthConfig::cross_app) {
        // The organisation's identity provider vouches: no person, no URL.
        flow.cross_app_access(&challenge).await.map_err(failed)?;
        return Ok(());
    }
    if flow.uses_client_credentials(&challenge).await.map_err(failed)? {
        // A machine client: no person, no URL.
        flow.client_credentials(&challenge).await.map_err(failed)?;
        return Ok(());
    }
    let pending = flow.begin(&challenge, None).await.map_err(failed)?;
    let mut ev = McpAuthUrl::new(McpAuthUrlInit {
        name: config.name.clone(),
        url: pending.url().to_owned(),
    });
    observe(hooks, &mut ev).await;
    pending.finish().await.map_err(failed)?;
    Ok(())
}

async fn handshake<E: std::error::Error + Send + Sync + 'static>(
    config: &McpServerConfig,
    serving: impl Future<Output = Result<Client, E>>,
) -> Result<Client, McpError> {
    match tokio::time::timeout(config.connect_timeout, serving).await {
        Err(_) => Err(McpError::Timeout(config.connect_timeout.as_secs())),
        Ok(Err(e)) => Err(McpError::protocol("the handshake failed", Plain::of(e))),
        Ok(Ok(client)) => Ok(client),
    }
}

fn schema_of(tool: &rmcp::model::Tool) -> McpToolSchema {
    McpToolSchema {
        name: tool.name.to_string(),
        description: tool.description.as_ref().map(ToString::to_string),
        input_schema: Value::Object((*tool.input_schema).clone()),
        idempotent: tool
            .annotations
            .as_ref()
            .is_some_and(|a| a.read_only_hint == Some(true) || a.idempotent_hint == Some(true)),
    }
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

impl McpConnection {
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

type Bootstrapped = (McpBootstrapResult, Option<Arc<Server>>, Vec<McpToolSchema>);

async fn bootstrap(config: &McpServerConfig, hooks: &HookBus) -> Bootstrapped {
    let started = Instant::now();
    let transport = config.transport.kind();
    let mut ev = McpBootstrapStart::new(McpBootstrapStartInit {
        name: config.name.clone(),
        transport,
    });
    observe(hooks, &mut ev).await;
    let server = Arc::new(Server {
        config: config.clone(),
        hooks: hooks.clone(),
        client: tokio::sync::Mutex::new(None),
        progress: Arc::default(),
        challenge: Mutex::new(None),
    });
    let lazy = config.lazy_connect && config.cached_tools.is_some();
    let listed: Result<(Vec<McpToolSchema>, bool), McpError> = async {
        if let Some(cached) = &config.cached_tools {
            if !lazy {
                server.connect(false).await?;
            }
            return Ok((cached.clone(), true));
        }
        let client = server.connect(false).await?;
        let tools = client.list_all_tools().await.map_err(|e| match server.challenge() {
            // A 401 is the reason, whatever the SDK made of it.
            Some(challenge) => McpError::AuthRequired(challenge),
            None => McpError::protocol("tools/list failed", e),
        })?;
        Ok((tools.iter().map(schema_of).collect(), false))
    }
    .await;
    let duration_ms = started.elapsed().as_millis() as u64;
    match listed {
        Ok((raw, cached)) => {
            if !lazy {
                let mut list = McpToolsList::new(McpToolsListInit {
                    name: config.name.clone(),
                    tools: raw.clone(),
                    transport,
                });
                observe(hooks, &mut list).await;
            }
            let mut filter = McpToolsFilter::new(McpToolsFilterInit {
                server: config.name.clone(),
                transport,
            });
            filter.tools = raw.into_iter().filter(|t| config.keeps(t)).collect();
            observe(hooks, &mut filter).await;
            let tools = filter.tools;
            let outcome = McpBootstrapOutcome::Ok {
                tool_count: tools.len() as u32,
                lazy,
                cached,
                warnings: Vec::new(),
            };
            let mut end = McpBootstrapEnd::new(McpBootstrapEndInit {
                name: config.name.clone(),
                transport,
                duration_ms,
                outcome: outcome.clone(),
            });
            observe(hooks, &mut end).await;
            (
                McpBootstrapResult {
                    name: config.name.clone(),
                    transport,
                    duration_ms,
                    outcome,
                },
                Some(server),
                tools,
            )
        }
        Err(error) => {
            if matches!(error, McpError::LoginRequired) {
                let mut ev = McpAuthRequired::new(McpAuthRequiredInit {
                    name: config.name.clone(),
                    reason: McpAuthReason::NoTokens,
                    transport,
                });
                observe(hooks, &mut ev).await;
            } else if auto_promoted(config, &error) {
                let mut ev = McpAuthRequired::new(McpAuthRequiredInit {
                    name: config.name.clone(),
                    reason: McpAuthReason::AutoPromoted,
                    transport,
                });
                observe(hooks, &mut ev).await;
            }
            let shared: SharedError = Arc::new(error);
            let mut ev = McpErrorEvent::new(McpErrorInit {
                name: config.name.clone(),
                error: Arc::clone(&shared),
            });
            observe(hooks, &mut ev).await;
            let outcome = McpBootstrapOutcome::Failed {
                error: Some(shared),
                skipped: false,
            };
            let mut end = McpBootstrapEnd::new(McpBootstrapEndInit {
                name: config.name.clone(),
                transport,
                duration_ms,
                outcome: outcome.clone(),
            });
            observe(hooks, &mut end).await;
            (
                McpBootstrapResult {
                    name: config.name.clone(),
                    transport,
                    duration_ms,
                    outcome,
                },
                None,
                Vec::new(),
            )
        }
    }
}

/// A 401 carrying RFC 9728 protected-resource metadata from a server given
/// no static credentials: eligible for an OAuth login.
fn auto_promoted(config: &McpServerConfig, error: &McpError) -> bool {
    let McpError::AuthRequired(challenge) = error else {
        return false;
    };
    let static_credentials = match &config.transport {
        McpTransportConfig::StreamableHttp { headers, .. } | McpTransportConfig::Sse { headers, .. } => {
            headers.keys().any(|h| h.eq_ignore_ascii_case("authorization"))
        }
        McpTransportConfig::Stdio { .. } => true,
    };
    !static_credentials && challenge.contains("resource_metadata")
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

#[cfg(test)]
mod initialize_tests {
    #[test]
    fn initialize_names_a_handshake_version_and_this_client() {
        let info = serde_json::to_value(super::client_info_with(false)).unwrap_or_default();
        assert_eq!(
            info,
            serde_json::json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "zidane", "version": env!("CARGO_PKG_VERSION")}
            })
        );
    }
}

/// An error shown by its innermost cause in words: the SDK's own messages
/// name its Rust types, which say nothing to a person. The whole chain stays
/// reachable through `source()`.
#[derive(Debug)]
struct Plain {
    shown: String,
    inner: Box<dyn std::error::Error + Send + Sync>,
}

impl Plain {
    fn of(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        let mut shown = e.to_string();
        let mut cause: Option<&(dyn std::error::Error + 'static)> = e.source();
        while let Some(c) = cause {
            let text = c.to_string();
            if !text.contains("::") && !text.trim().is_empty() {
                shown = text;
            }
            cause = c.source();
        }
        if shown.contains("::") {
            // No cause in words: the message with its type names taken out.
            shown = strip_type_names(&shown);
        }
        Plain {
            shown,
            inner: Box::new(e),
        }
    }
}

impl std::fmt::Display for Plain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

impl std::error::Error for Plain {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.inner)
    }
}

/// `text` without bracketed Rust paths (`[a::b<c::d>]`).
fn strip_type_names(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut depth = 0usize;
    let mut held = String::new();
    for ch in text.chars() {
        match ch {
            '[' => {
                depth += 1;
                held.push(ch);
            }
            ']' if depth > 0 => {
                depth -= 1;
                held.push(ch);
                if depth == 0 {
                    if !held.contains("::") {
                        out.push_str(&held);
                    }
                    held.clear();
                }
            }
            _ if depth > 0 => held.push(ch),
            _ => out.push(ch),
        }
    }
    out.push_str(&held);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}
