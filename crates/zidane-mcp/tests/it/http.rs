//! Real MCP servers over HTTP on loopback: the npm `server-everything`
//! (streamable HTTP answering in event streams, and legacy SSE) and a server
//! on the PyPI `mcp` package (streamable HTTP answering in plain JSON bodies,
//! and legacy SSE).

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use zidane_core::events::{McpAuthRequired, McpConnect, McpTransport, ToolProgressEvent};
use zidane_core::tool::ToolContext;
use zidane_hooks::HookBus;
use zidane_mcp::{McpServerConfig, McpTransportConfig, connect_mcp_servers, parse_mcp_config};
use zidane_provider::AbortSignal;

use crate::servers::{bin, call, find, servers_dir, text};

/// Starts `cmd` (told to listen on a free loopback port) and waits until its
/// stderr says `ready`.
async fn start(mut cmd: Command, port: u16, ready: &str) -> Child {
    cmd.stderr(Stdio::piped()).stdout(Stdio::null()).kill_on_drop(true);
    let mut child = cmd.spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let seen = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.contains(ready) {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(seen, Ok(true), "the server on port {port} never said {ready:?}");
    // Keep draining so the server never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    child
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn remote(name: &str, port: u16, path: &str, headers: BTreeMap<String, String>) -> McpServerConfig {
    McpServerConfig::new(
        name,
        McpTransportConfig::StreamableHttp {
            url: format!("http://127.0.0.1:{port}{path}"),
            headers,
        },
    )
}

/// Lists and calls `server-everything` started with `mode`, progress included.
async fn everything_over(mode: &str, path: &str, transport: McpTransport) {
    let port = free_port();
    let mut cmd = Command::new(bin("mcp-server-everything"));
    cmd.arg(mode).env("PORT", port.to_string());
    let _server = start(cmd, port, " on port ").await;

    let bus = HookBus::new();
    let transports: Arc<Mutex<Vec<McpTransport>>> = Arc::default();
    let t = Arc::clone(&transports);
    bus.on_sync::<McpConnect, _>(move |ev, _| {
        t.lock().unwrap().push(ev.transport());
        Ok(())
    });
    let mut config = remote("everything", port, path, BTreeMap::new());
    if transport == McpTransport::Sse {
        let McpTransportConfig::StreamableHttp { url, headers } = config.transport else {
            unreachable!()
        };
        config.transport = McpTransportConfig::Sse { url, headers };
    }
    let connection = connect_mcp_servers(&[config], &bus).await;
    assert_eq!(*transports.lock().unwrap(), vec![transport]);
    let tools = connection.tools();
    let echo = find(&tools, "mcp_everything_echo");
    assert_eq!(
        text(&call(&echo, json!({"message": "over http"})).await.unwrap()),
        "Echo: over http"
    );
    let sum = find(&tools, "mcp_everything_get-sum");
    assert!(text(&call(&sum, json!({"a": 40, "b": 2})).await.unwrap()).contains("42"));

    // Progress arrives before the result.
    let long = find(&tools, "mcp_everything_trigger-long-running-operation");
    let progress = Arc::new(Mutex::new(0usize));
    let p = Arc::clone(&progress);
    let observer = HookBus::new();
    observer.on_sync::<ToolProgressEvent, _>(move |_, _| {
        *p.lock().unwrap() += 1;
        Ok(())
    });
    let ctx = ToolContext::detached(long.name(), "call-1", AbortSignal::never()).with_hooks(observer);
    let out = long.execute(json!({"duration": 1, "steps": 2}), ctx).await.unwrap();
    assert!(text(&out).contains("completed"), "{}", text(&out));
    assert!(
        *progress.lock().unwrap() >= 1,
        "progress notifications reached the call"
    );
    connection.close().await;
}

#[tokio::test]
async fn everything_over_streamable_http_calls_tools_with_progress() {
    everything_over("streamableHttp", "/mcp", McpTransport::StreamableHttp).await;
}

#[tokio::test]
async fn everything_over_legacy_sse_calls_tools_with_progress() {
    everything_over("sse", "/sse", McpTransport::Sse).await;
}

#[tokio::test]
async fn a_python_server_over_legacy_sse_sees_the_configured_headers() {
    let port = free_port();
    let mut cmd = Command::new("python3");
    cmd.arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/http_server.py"))
        .args([port.to_string().as_str(), "sse"])
        .env("PYTHONPATH", servers_dir().join("py"));
    let _server = start(cmd, port, "Uvicorn running").await;

    let document = json!({"mcpServers": {"py": {
        "type": "sse",
        "url": format!("http://127.0.0.1:{port}/sse"),
        "headers": {"X-Tenant": "acme"}
    }}});
    let configs = parse_mcp_config(&document.to_string()).unwrap();
    let bus = HookBus::new();
    let connection = connect_mcp_servers(&configs, &bus).await;
    let tools = connection.tools();
    let add = find(&tools, "mcp_py_add");
    assert_eq!(text(&call(&add, json!({"a": 2, "b": 3})).await.unwrap()), "5");
    let header = find(&tools, "mcp_py_header");
    assert_eq!(text(&call(&header, json!({"name": "x-tenant"})).await.unwrap()), "acme");
    connection.close().await;
}

#[tokio::test]
async fn json_answers_headers_bearer_tokens_and_error_results_over_http() {
    let port = free_port();
    let mut cmd = Command::new("python3");
    cmd.arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/http_server.py"))
        .arg(port.to_string())
        .env("PYTHONPATH", servers_dir().join("py"));
    let _server = start(cmd, port, "Uvicorn running").await;

    // Configured the way users write it: a JSON `mcpServers` document.
    let document = json!({"mcpServers": {"py": {
        "type": "http",
        "url": format!("http://127.0.0.1:{port}/mcp"),
        "headers": {"X-Tenant": "acme", "Authorization": "Bearer s3cret"}
    }}});
    let configs = parse_mcp_config(&document.to_string()).unwrap();
    let bus = HookBus::new();
    let connection = connect_mcp_servers(&configs, &bus).await;
    let tools = connection.tools();
    let add = find(&tools, "mcp_py_add");
    assert_eq!(text(&call(&add, json!({"a": 2, "b": 3})).await.unwrap()), "5");
    let header = find(&tools, "mcp_py_header");
    assert_eq!(text(&call(&header, json!({"name": "x-tenant"})).await.unwrap()), "acme");
    assert_eq!(
        text(&call(&header, json!({"name": "authorization"})).await.unwrap()),
        "Bearer s3cret"
    );
    let fail = find(&tools, "mcp_py_fail");
    let out = call(&fail, json!({})).await;
    let failed = match out {
        Err(e) => e,
        Ok(out) => {
            assert!(out.is_error, "a failing tool is an error result");
            text(&out)
        }
    };
    assert!(failed.contains("fail"), "{failed}");
    connection.close().await;
}

#[tokio::test]
async fn a_reserved_header_in_the_configuration_fails_the_bootstrap_clearly() {
    let bus = HookBus::new();
    let errors: Arc<Mutex<Vec<String>>> = Arc::default();
    let e = Arc::clone(&errors);
    bus.on_sync::<zidane_core::events::McpError, _>(move |ev, _| {
        e.lock().unwrap().push(ev.error().to_string());
        Ok(())
    });
    let headers = BTreeMap::from([("Mcp-Session-Id".to_owned(), "forged".to_owned())]);
    let connection = connect_mcp_servers(&[remote("bad", 9, "/mcp", headers)], &bus).await;
    assert!(connection.tools().is_empty());
    let errors = errors.lock().unwrap();
    assert!(
        errors
            .iter()
            .any(|e| e.contains("Mcp-Session-Id") && e.contains("set by the transport")),
        "{errors:?}"
    );
}

/// Answers every request with 401 and an RFC 9728 challenge.
async fn protected_server() -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let answer = format!(
                    "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer resource_metadata=\"http://127.0.0.1:{port}/.well-known/oauth-protected-resource\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                );
                let _ = socket.write_all(answer.as_bytes()).await;
            });
        }
    });
    port
}

fn auth_log(bus: &HookBus) -> Arc<Mutex<Vec<String>>> {
    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let l = Arc::clone(&log);
    bus.on_sync::<McpAuthRequired, _>(move |ev, _| {
        l.lock()
            .unwrap()
            .push(format!("auth:required {} {:?}", ev.name(), ev.reason()));
        Ok(())
    });
    let l = Arc::clone(&log);
    bus.on_sync::<zidane_core::events::McpError, _>(move |ev, _| {
        l.lock().unwrap().push(format!("error {}", ev.error()));
        Ok(())
    });
    log
}

#[tokio::test]
async fn a_401_with_resource_metadata_asks_for_a_login_unless_credentials_were_configured() {
    let port = protected_server().await;
    let bus = HookBus::new();
    let log = auth_log(&bus);
    let connection = connect_mcp_servers(&[remote("locked", port, "/mcp", BTreeMap::new())], &bus).await;
    assert!(connection.tools().is_empty());
    let seen = log.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0], "auth:required locked AutoPromoted");
    assert!(
        seen[1].contains("requires authorization") && seen[1].contains("resource_metadata"),
        "{seen:?}"
    );

    // A static token the server refused is not an invitation to log in.
    let bus = HookBus::new();
    let log = auth_log(&bus);
    let headers = BTreeMap::from([("Authorization".to_owned(), "Bearer wrong".to_owned())]);
    connect_mcp_servers(&[remote("locked", port, "/mcp", headers)], &bus).await;
    let seen = log.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(
        seen[0].starts_with("error the server requires authorization"),
        "{seen:?}"
    );
}

#[tokio::test]
async fn an_unreachable_http_server_is_named_in_words() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = zidane_mcp::McpServerConfig::new(
        "web",
        zidane_mcp::McpTransportConfig::StreamableHttp {
            url: format!("http://127.0.0.1:{port}/mcp"),
            headers: Default::default(),
        },
    );
    let connection = zidane_mcp::connect_mcp_servers(&[config], &zidane_hooks::HookBus::new()).await;
    let shown = connection.failures()[0].1.to_string();
    assert!(!shown.contains("::"), "no Rust type names: {shown}");
    assert!(shown.contains("could not connect"), "{shown}");
}

/// A server configured for OAuth with nothing stored is skipped with
/// `mcp:auth:required` `no-tokens` before any request; a login that cannot
/// reach it reports `mcp:auth:error` and a typed error.
#[tokio::test]
async fn an_oauth_server_without_tokens_needs_a_login() {
    use zidane_core::events::{McpAuthError, McpAuthReason};
    use zidane_mcp::McpError;
    // Nothing listens here.
    let mut server = remote("docs", free_port(), "/mcp", BTreeMap::new());
    server.oauth = Some(zidane_mcp::oauth::OAuthConfig::default());
    server.oauth_store = Some(Arc::new(zidane_mcp::oauth::MemoryOAuthStore::default()));
    let hooks = HookBus::new();
    let reasons: Arc<Mutex<Vec<McpAuthReason>>> = Arc::default();
    let r = Arc::clone(&reasons);
    hooks.on_sync::<McpAuthRequired, _>(move |ev, _| {
        r.lock().unwrap().push(ev.reason());
        Ok(())
    });
    let errors: Arc<Mutex<Vec<String>>> = Arc::default();
    let e = Arc::clone(&errors);
    hooks.on_sync::<McpAuthError, _>(move |ev, _| {
        e.lock().unwrap().push(ev.name().to_owned());
        Ok(())
    });
    let connection = connect_mcp_servers(std::slice::from_ref(&server), &hooks).await;
    let failures = connection.failures();
    assert!(matches!(
        failures[0].1.downcast_ref::<McpError>(),
        Some(McpError::LoginRequired)
    ));
    assert_eq!(*reasons.lock().unwrap(), vec![McpAuthReason::NoTokens]);

    let login = zidane_mcp::login_mcp_server(&server, &hooks).await.unwrap_err();
    assert!(matches!(login, McpError::Login(_)), "{login}");
    assert_eq!(*errors.lock().unwrap(), vec!["docs".to_owned()]);
}

/// A token endpoint that answers every refresh with `fresh-token`; each
/// request body goes to the channel.
async fn token_endpoint() -> (u16, tokio::sync::mpsc::UnboundedReceiver<String>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                let body = loop {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                    let text = String::from_utf8_lossy(&request).into_owned();
                    let Some((head, body)) = text.split_once("\r\n\r\n") else {
                        continue;
                    };
                    let length = head
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                        })
                        .unwrap_or(0);
                    if body.len() >= length {
                        break body.to_owned();
                    }
                };
                let _ = tx.send(body);
                let answer = json!({"access_token": "fresh-token", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "refresh-2"}).to_string();
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                    answer.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    (port, rx)
}

/// Stored tokens that expired are refreshed before the first request:
/// `oauth:refresh` names the server and the new expiry, the refresh grant
/// carries the stored refresh token, and the server sees the new token.
#[tokio::test]
async fn an_expired_token_is_refreshed_and_oauth_refresh_says_so() {
    use zidane_core::events::OAuthRefresh;
    use zidane_mcp::oauth::{MemoryOAuthStore, OAuthClient, OAuthStore, OAuthTokens};
    let port = free_port();
    let mut cmd = Command::new("python3");
    cmd.arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/http_server.py"))
        .arg(port.to_string())
        .env("PYTHONPATH", servers_dir().join("py"));
    let _server = start(cmd, port, "Uvicorn running").await;
    let (token_port, mut grants) = token_endpoint().await;

    let url = format!("http://127.0.0.1:{port}/mcp");
    let store = Arc::new(MemoryOAuthStore::default());
    store
        .save(
            "py",
            &OAuthTokens {
                server_url: url.clone(),
                resource: url.clone(),
                token_endpoint: format!("http://127.0.0.1:{token_port}/token"),
                client: OAuthClient {
                    client_id: "client-1".into(),
                    client_secret: None,
                    auth_method: "none".into(),
                },
                access_token: "stale-token".into(),
                refresh_token: Some("refresh-1".into()),
                expires_at: Some(1),
                scope: None,
            },
        )
        .unwrap();
    let mut server = remote("py", port, "/mcp", BTreeMap::new());
    server.oauth_store = Some(store.clone() as Arc<dyn OAuthStore>);
    let bus = HookBus::new();
    let (refreshed_tx, mut refreshed) = tokio::sync::mpsc::unbounded_channel();
    bus.on_sync::<OAuthRefresh, _>(move |ev, _| {
        let _ = refreshed_tx.send((ev.provider().to_owned(), ev.expires_at()));
        Ok(())
    });
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let connection = connect_mcp_servers(std::slice::from_ref(&server), &bus).await;
    let header = find(&connection.tools(), "mcp_py_header");
    assert_eq!(
        text(&call(&header, json!({"name": "authorization"})).await.unwrap()),
        "Bearer fresh-token"
    );
    let grant = grants.recv().await.unwrap();
    assert!(
        grant.contains("grant_type=refresh_token") && grant.contains("refresh_token=refresh-1"),
        "{grant}"
    );
    let (provider, expires_at) = tokio::time::timeout(Duration::from_secs(30), refreshed.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(provider, "mcp:py");
    let expires_at = expires_at.unwrap();
    assert!(
        expires_at >= before + 3_600_000 && expires_at < before + 3_700_000,
        "{expires_at}"
    );
    assert_eq!(store.load("py").unwrap().unwrap().access_token, "fresh-token");
    connection.close().await;
}
