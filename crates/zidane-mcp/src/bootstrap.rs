//! The bootstrap of one server (connect, list and filter its tools, with
//! the `mcp:*` hooks) and the interactive OAuth login.

use parking_lot::Mutex;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use zidane_core::events::{
    McpAuthReason, McpAuthRequired, McpBootstrapEnd, McpBootstrapOutcome, McpBootstrapResult, McpBootstrapStart,
    McpError as McpErrorEvent, McpToolSchema, McpToolsFilter, McpToolsList, SharedError,
};
use zidane_hooks::HookBus;

use crate::config::{McpServerConfig, McpTransportConfig};
use crate::error::McpError;
use crate::handler::observe;
use crate::server::Server;
use crate::transport::login;
use zidane_core::events::{McpAuthError, McpAuthErrorInit, McpAuthSuccess, McpAuthSuccessInit};
use zidane_core::events::{
    McpAuthRequiredInit, McpBootstrapEndInit, McpBootstrapStartInit, McpErrorInit, McpToolsFilterInit, McpToolsListInit,
};

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

pub(crate) fn schema_of(tool: &rmcp::model::Tool) -> McpToolSchema {
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

type Bootstrapped = (McpBootstrapResult, Option<Arc<Server>>, Vec<McpToolSchema>);

pub(crate) async fn bootstrap(config: &McpServerConfig, hooks: &HookBus) -> Bootstrapped {
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
    let listed = list(&server, lazy).await;
    let duration_ms = started.elapsed().as_millis() as u64;
    let (outcome, server, tools) = match listed {
        Ok((raw, cached)) => {
            let tools = listed_tools(config, hooks, raw, lazy).await;
            let outcome = McpBootstrapOutcome::Ok {
                tool_count: tools.len() as u32,
                lazy,
                cached,
                warnings: Vec::new(),
            };
            (outcome, Some(server), tools)
        }
        Err(error) => (failed(config, hooks, error).await, None, Vec::new()),
    };
    let mut end = McpBootstrapEnd::new(McpBootstrapEndInit {
        name: config.name.clone(),
        transport,
        duration_ms,
        outcome: outcome.clone(),
    });
    observe(hooks, &mut end).await;
    let result = McpBootstrapResult {
        name: config.name.clone(),
        transport,
        duration: std::time::Duration::from_millis(duration_ms),
        outcome,
    };
    (result, server, tools)
}

/// The server's tools (and whether they came from the cache): connected
/// first unless it is to connect lazily.
async fn list(server: &Server, lazy: bool) -> Result<(Vec<McpToolSchema>, bool), McpError> {
    if let Some(cached) = &server.config.cached_tools {
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

/// The tools listed, told (`mcp:tools:list`, unless lazy) and filtered
/// (`mcp:tools:filter`, after the config's own filter).
async fn listed_tools(
    config: &McpServerConfig,
    hooks: &HookBus,
    raw: Vec<McpToolSchema>,
    lazy: bool,
) -> Vec<McpToolSchema> {
    let transport = config.transport.kind();
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
    filter.tools
}

/// A server that did not start: a login it needs told (`mcp:auth:required`),
/// the error (`mcp:error`), and the outcome.
async fn failed(config: &McpServerConfig, hooks: &HookBus, error: McpError) -> McpBootstrapOutcome {
    let transport = config.transport.kind();
    let reason = if matches!(error, McpError::LoginRequired) {
        Some(McpAuthReason::NoTokens)
    } else if auto_promoted(config, &error) {
        Some(McpAuthReason::AutoPromoted)
    } else {
        None
    };
    if let Some(reason) = reason {
        let mut ev = McpAuthRequired::new(McpAuthRequiredInit {
            name: config.name.clone(),
            reason,
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
    McpBootstrapOutcome::Failed {
        error: Some(shared),
        skipped: false,
    }
}

/// A 401 carrying RFC 9728 protected-resource metadata from a server given
/// no static credentials: eligible for an OAuth login.
pub(crate) fn auto_promoted(config: &McpServerConfig, error: &McpError) -> bool {
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
