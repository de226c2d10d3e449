//! An MCP client for the official conformance suite
//! (`@modelcontextprotocol/conformance client --command …`): the suite
//! appends the test server's URL, names the scenario in
//! `MCP_CONFORMANCE_SCENARIO` and passes extra data (pre-registered client
//! credentials) as JSON in `MCP_CONFORMANCE_CONTEXT`.
//!
//! It does what a host does: logs in when the server wants OAuth (the
//! suite's authorization server redirects at once, so "opening the
//! browser" is one GET whose redirect lands on our loopback listener),
//! connects, lists the tools and calls each one.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};
use zidane_core::events::McpAuthUrl;
use zidane_core::tool::ToolContext;
use zidane_hooks::HookBus;
use zidane_mcp::oauth::{MemoryOAuthStore, OAuthConfig};
use zidane_mcp::{
    ElicitationAnswer, ElicitationRequest, McpError, McpServerConfig, McpTransportConfig, connect_mcp_servers,
    login_mcp_server,
};
use zidane_provider::{AbortSignal, HttpClient, RequestBody, Timeouts};

/// Follows the authorization URL's redirects, as a browser would.
async fn browse(http: HttpClient, mut url: String) {
    for _ in 0..5 {
        let Ok(request) = http::Request::get(&url).body(RequestBody::default()) else {
            return;
        };
        let Ok(response) = http.send_raw("browser", request, &AbortSignal::never()).await else {
            return;
        };
        match response
            .headers()
            .get(http::header::LOCATION)
            .and_then(|l| l.to_str().ok())
        {
            Some(next) if response.status().is_redirection() => url = next.to_owned(),
            _ => return,
        }
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let Some(url) = std::env::args().next_back() else {
        eprintln!("usage: conformance_client <server url>");
        std::process::exit(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);

    let mut config = McpServerConfig::new(
        "conformance",
        McpTransportConfig::StreamableHttp {
            url: url.clone(),
            headers: BTreeMap::new(),
        },
    );
    let oauth = OAuthConfig {
        client_id: context["client_id"].as_str().map(str::to_owned),
        client_secret: context["client_secret"].as_str().map(str::to_owned),
        client_metadata_url: Some("https://conformance-test.local/client-metadata.json".into()),
        client_name: Some("zidane-conformance".into()),
        private_key_pem: context["private_key_pem"].as_str().map(str::to_owned),
        signing_algorithm: context["signing_algorithm"].as_str().map(str::to_owned),
        id_token: context["idp_id_token"].as_str().map(str::to_owned),
        idp_token_endpoint: context["idp_token_endpoint"].as_str().map(str::to_owned),
        idp_client_id: context["idp_client_id"].as_str().map(str::to_owned),
        ..Default::default()
    };
    config.oauth_store = Some(Arc::new(MemoryOAuthStore::default()));
    // A person who accepts every form as it comes: the schema's defaults
    // fill it in.
    config.elicitation = Some(Arc::new(|_request: ElicitationRequest| {
        Box::pin(async { ElicitationAnswer::Accept(serde_json::Map::new()) })
            as zidane_provider::BoxFuture<'static, ElicitationAnswer>
    }));

    let hooks = HookBus::new();
    let http = match HttpClient::new(Timeouts::default()) {
        Ok(http) => http,
        Err(e) => {
            eprintln!("no HTTP client: {e}");
            std::process::exit(1);
        }
    };
    hooks.on_sync::<McpAuthUrl, _>(move |ev, _| {
        tokio::spawn(browse(http.clone(), ev.url().to_owned()));
        Ok(())
    });
    note_auth_hooks(&hooks, &scenario);

    // Log in only when the server asks for it.
    let mut connection = connect_mcp_servers(std::slice::from_ref(&config), &hooks).await;
    let needs_login = connection.failures().iter().any(|(_, e)| {
        matches!(
            e.downcast_ref::<McpError>(),
            Some(McpError::LoginRequired | McpError::AuthRequired(_))
        )
    });
    if needs_login {
        config.oauth = Some(oauth);
        if let Err(e) = login_mcp_server(&config, &hooks).await {
            eprintln!("login failed: {e}");
            std::process::exit(1);
        }
        connection = connect_mcp_servers(std::slice::from_ref(&config), &hooks).await;
    }
    if let Some((_, error)) = connection.failures().first() {
        eprintln!("cannot connect: {error}");
        connection.close().await;
        std::process::exit(1);
    }
    let mut failed = false;
    for tool in connection.tools() {
        let cx = ToolContext::detached(tool.name(), "call-1", AbortSignal::never()).with_hooks(hooks.clone());
        let input = arguments(tool.input_schema());
        match tool.execute(input, cx).await {
            Ok(out) => println!(
                "{}: {}",
                tool.name(),
                serde_json::to_string(&out.content).unwrap_or_default()
            ),
            Err(e) => {
                eprintln!("{}: {e}", tool.name());
                // The retry-limit scenario refuses every call on purpose.
                failed |= scenario != "auth/scope-retry-limit";
            }
        }
    }
    connection.close().await;
    if failed {
        std::process::exit(1);
    }
}

/// Arguments a schema accepts: each required property with a plain value.
fn arguments(schema: &Value) -> Value {
    let mut args = serde_json::Map::new();
    for name in schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        let value = match schema["properties"][name]["type"].as_str() {
            Some("number" | "integer") => json!(1),
            Some("boolean") => json!(true),
            Some("array") => json!([]),
            Some("object") => json!({}),
            _ => json!("test"),
        };
        args.insert(name.to_owned(), value);
    }
    Value::Object(args)
}

/// With `ZIDANE_CONFORMANCE_HOOKS` naming a file, appends a line
/// `<scenario> <hook>` for each login hook the run emits (`cargo xtask
/// conformance` checks that the logins were reported).
fn note_auth_hooks(hooks: &HookBus, scenario: &str) {
    use zidane_core::events::{McpAuthSuccess, OAuthRefresh};
    let Some(path) = std::env::var_os("ZIDANE_CONFORMANCE_HOOKS") else {
        return;
    };
    let scenario = scenario.to_owned();
    let note = Arc::new(move |hook: &str| {
        use std::io::Write;
        if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(&path) {
            let _ = writeln!(file, "{scenario} {hook}");
        }
    });
    let n = Arc::clone(&note);
    hooks.on_sync::<McpAuthUrl, _>(move |_, _| {
        n("mcp:auth:url");
        Ok(())
    });
    let n = Arc::clone(&note);
    hooks.on_sync::<McpAuthSuccess, _>(move |_, _| {
        n("mcp:auth:success");
        Ok(())
    });
    hooks.on_sync::<OAuthRefresh, _>(move |_, _| {
        note("oauth:refresh");
        Ok(())
    });
}
