//! `zidane config`: the configuration in effect, each value with where it
//! comes from, secrets masked.

use serde_json::Value;
use zidane::providers::shown_url;

use super::Source;
use crate::settings::Settings;

fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

fn list(items: &[String]) -> String {
    format!("[{}]", items.iter().map(|s| quoted(s)).collect::<Vec<_>>().join(", "))
}

/// Whether a key or header name looks like it holds a secret.
fn secret(key: &str) -> bool {
    let upper = key.to_ascii_uppercase();
    zidane::tools::is_secret_name(key) || ["KEY", "AUTHORIZATION", "COOKIE"].iter().any(|s| upper.contains(s))
}

/// An MCP server's entry with the values of secret-looking environment
/// variables and headers masked.
fn masked(server: &Value) -> Value {
    let mut server = server.clone();
    for field in ["env", "headers"] {
        if let Some(map) = server.get_mut(field).and_then(Value::as_object_mut) {
            for (k, v) in map.iter_mut() {
                if secret(k) {
                    *v = Value::from("***");
                }
            }
        }
    }
    if let Some(url) = server.get_mut("url")
        && let Some(s) = url.as_str()
    {
        *url = Value::from(shown_url(s));
    }
    server
}

/// The interactive session's keys.
fn session_rows(settings: &Settings) -> Vec<(&'static str, Option<String>)> {
    let notifications = match settings.notifications {
        crate::Notifications::On => "on",
        crate::Notifications::Off => "off",
    };
    vec![
        ("notifications", Some(quoted(notifications))),
        ("theme", Some(quoted(settings.theme.name()))),
        (
            "status_line",
            settings
                .status_line
                .as_ref()
                .map(|s| format!("{{ command = {} }}", quoted(&s.command))),
        ),
    ]
}

/// The text `zidane config` prints.
pub fn show(settings: &Settings) -> String {
    let mut out = String::new();
    out.push_str("# The configuration in effect. Later wins: defaults, the user's file, the project's,\n");
    out.push_str("# the profile, the environment, the flags.\n");
    match settings.paths.user_config() {
        Some(path) => out.push_str(&format!("# user file:    {}{}\n", path.display(), absent(&path))),
        None => out.push_str("# user file:    none (no home folder)\n"),
    }
    let project = settings.paths.project_config();
    out.push_str(&format!("# project file: {}{}\n", project.display(), absent(&project)));
    for file in &settings.untrusted {
        out.push_str(&format!("# ignored (the folder is not trusted): {}\n", file.display()));
    }
    out.push('\n');
    let mut rows: Vec<(&str, Option<String>)> = vec![
        ("provider", settings.provider.map(|k| k.name().to_owned())),
        ("model", settings.model.as_deref().map(quoted)),
        ("fallback_models", Some(list(&settings.fallback_models))),
        ("base_url", settings.base_url.as_deref().map(|u| quoted(&shown_url(u)))),
        ("api_key_env", settings.api_key_env.as_deref().map(quoted)),
        ("system", settings.system.as_deref().map(quoted)),
        ("images", settings.images.map(|b| b.to_string())),
        ("text_tool_calls", Some(settings.text_tool_calls.to_string())),
        ("reduce_output", Some(settings.reduce_output.to_string())),
        ("defer_tools_above", Some(settings.defer_tools_above.to_string())),
        ("thinking", Some(settings.thinking.name().to_owned())),
        ("max_tokens", settings.max_tokens.map(|n| n.to_string())),
        ("context_window", settings.context_window.map(|n| n.to_string())),
        ("max_turns", settings.max_turns.map(|n| n.to_string())),
        ("max_cost", settings.max_cost.map(|n| n.to_string())),
        ("approve", Some(settings.approve.name().to_owned())),
        (
            "sandbox",
            Some(settings.sandbox.map_or("workspace-write", |s| s.name()).to_owned()),
        ),
        ("network", Some(settings.network.to_string())),
        ("idle_timeout", Some(settings.idle_timeout.unwrap_or(120).to_string())),
        ("lsp_wait", Some(settings.lsp_wait.unwrap_or(4).to_string())),
        ("retries", settings.retries.map(|n| n.to_string())),
        ("pass_env", Some(list(&settings.pass_env))),
        (
            "sandbox_read",
            Some(list(
                &settings
                    .sandbox_read
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>(),
            )),
        ),
        (
            "skills",
            Some(list(
                &settings
                    .skills
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>(),
            )),
        ),
        ("otlp", settings.otlp.as_deref().map(|u| quoted(&shown_url(u)))),
        ("otlp_payloads", Some(settings.otlp_payloads.to_string())),
        ("checkpoints", Some(settings.checkpoints.to_string())),
        (
            "max_checkpoints",
            Some(settings.max_checkpoints.unwrap_or(100).to_string()),
        ),
        ("trust", Some(settings.trusted.to_string())),
    ];
    rows.extend(session_rows(settings));
    for (key, value) in rows {
        let source = settings.sources.get(key).cloned().unwrap_or(Source::Default);
        let value = value.unwrap_or_else(|| "(unset)".into());
        out.push_str(&format!("{:<40} # {source}\n", format!("{key} = {value}")));
    }
    out.push_str("\n[permissions]\n");
    if settings.rules.is_empty() {
        out.push_str("# no rules: the approval mode decides\n");
    }
    for rule in &settings.rules {
        out.push_str(&format!(
            "{:<40} # {}\n",
            format!("{} = {}", rule.kind.name(), quoted(&rule.rule)),
            rule.origin
        ));
    }
    for (name, server, origin) in &settings.mcp {
        out.push_str(&format!("\n[mcp_servers.{name}]  # {origin}\n"));
        if let Some(map) = masked(server).as_object() {
            for (k, v) in map {
                out.push_str(&format!("{k} = {v}\n"));
            }
        }
    }
    lsp_tables(settings, &mut out);
    out
}

/// The language servers, each with where it came from and whether it is
/// found.
fn lsp_tables(settings: &crate::settings::Settings, out: &mut String) {
    for (server, origin) in &settings.lsp {
        let found = match (server.enabled, server.resolve()) {
            (false, _) => "off",
            (true, Some(_)) => "found",
            (true, None) => "not found",
        };
        out.push_str(&format!("\n[lsp.{}]  # {origin}; {found}\n", server.name));
        out.push_str(&format!("command = {}\n", quoted(&server.command)));
        let list = |items: &[String]| format!("[{}]", items.iter().map(|i| quoted(i)).collect::<Vec<_>>().join(", "));
        out.push_str(&format!("args = {}\n", list(&server.args)));
        out.push_str(&format!("languages = {}\n", list(&server.languages)));
        out.push_str(&format!("root_markers = {}\n", list(&server.root_markers)));
        out.push_str(&format!("enabled = {}\n", server.enabled));
    }
}

fn absent(path: &std::path::Path) -> &'static str {
    if path.exists() { "" } else { " (none)" }
}
