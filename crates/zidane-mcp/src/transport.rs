//! Connecting one client over its transport (stdio, streamable HTTP with
//! OAuth, legacy SSE) and the MCP handshake.

use parking_lot::Mutex;
use std::future::Future;
use std::sync::Arc;

use rmcp::ServiceExt;
use tokio::io::AsyncBufReadExt;
use zidane_core::events::McpWarn;
use zidane_hooks::HookBus;

use crate::config::{McpServerConfig, McpTransportConfig};
use crate::error::{McpError, Plain};
use crate::handler::{Client, Handler, Progress, observe};
use zidane_core::events::McpWarnInit;
#[cfg(feature = "http")]
use zidane_core::events::{McpAuthUrl, McpAuthUrlInit, OAuthRefresh, OAuthRefreshInit};

pub(crate) async fn spawn(
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
            cmd.args(args);
            // The same rule as the agent's commands: a server inherits no
            // provider key and nothing named like a credential, only what
            // its configuration names.
            for (name, value) in std::env::vars_os() {
                if let Some(name) = name.to_str()
                    && zidane_core::credentials::is_secret_var(name, &value.to_string_lossy())
                    && !env.contains_key(name)
                {
                    cmd.env_remove(name);
                }
            }
            cmd.envs(env);
            if let Some(cwd) = cwd {
                cmd.current_dir(cwd);
            }
            let launcher = config.launcher.as_ref().filter(|_| !config.unconfined);
            let (output, input, garbage, stderr) =
                crate::stdio::spawn(cmd, launcher, &format!("`{command}`"), &config.name, hooks)?;
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
            let challenge = challenge.lock().take();
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
pub(crate) fn oauth_session(
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

pub(crate) async fn handshake<E: std::error::Error + Send + Sync + 'static>(
    config: &McpServerConfig,
    serving: impl Future<Output = Result<Client, E>>,
) -> Result<Client, McpError> {
    match tokio::time::timeout(config.connect_timeout, serving).await {
        Err(_) => Err(McpError::Timeout(config.connect_timeout.as_secs())),
        Ok(Err(e)) => Err(McpError::protocol("the handshake failed", Plain::of(e))),
        Ok(Ok(client)) => Ok(client),
    }
}

#[cfg(not(feature = "http"))]
pub(crate) async fn login(_config: &McpServerConfig, _hooks: &HookBus) -> Result<(), McpError> {
    Err(McpError::Unsupported("OAuth logins"))
}

#[cfg(feature = "http")]
pub(crate) async fn login(config: &McpServerConfig, hooks: &HookBus) -> Result<(), McpError> {
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
