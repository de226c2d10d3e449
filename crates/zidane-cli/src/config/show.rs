//! `zidane config`: the configuration in effect, each value with where it
//! comes from, secrets masked.

use clap::ValueEnum;
use serde_json::Value;

use super::{Loaded, Source};
use crate::setup::{Args, shown_url};

fn name<T: ValueEnum>(v: &T) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_owned())
        .unwrap_or_default()
}

fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

fn list(items: &[String]) -> String {
    format!("[{}]", items.iter().map(|s| quoted(s)).collect::<Vec<_>>().join(", "))
}

/// Whether a key or header name looks like it holds a secret.
fn secret(key: &str) -> bool {
    let upper = key.to_ascii_uppercase();
    zidane::tools::is_secret_env(key) || ["KEY", "AUTHORIZATION", "COOKIE"].iter().any(|s| upper.contains(s))
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

/// The text `zidane config` prints.
pub(crate) fn show(args: &Args, loaded: &Loaded) -> String {
    let mut out = String::new();
    out.push_str("# The configuration in effect. Later wins: defaults, the user's file, the project's,\n");
    out.push_str("# the profile, the environment, the flags.\n");
    match loaded.paths.user_config() {
        Some(path) => out.push_str(&format!("# user file:    {}{}\n", path.display(), absent(&path))),
        None => out.push_str("# user file:    none (no home folder)\n"),
    }
    let project = loaded.paths.project_config();
    out.push_str(&format!("# project file: {}{}\n", project.display(), absent(&project)));
    for file in &loaded.untrusted {
        out.push_str(&format!("# ignored (the folder is not trusted): {}\n", file.display()));
    }
    out.push('\n');
    let rows: Vec<(&str, Option<String>)> = vec![
        ("provider", args.provider.as_ref().map(name)),
        ("model", args.model.as_deref().map(quoted)),
        ("fallback_models", Some(list(&loaded.fallback_models))),
        ("base_url", args.base_url.as_deref().map(|u| quoted(&shown_url(u)))),
        ("api_key_env", loaded.api_key_env.as_deref().map(quoted)),
        ("system", args.system.as_deref().map(quoted)),
        ("images", loaded.images.map(|b| b.to_string())),
        ("text_tool_calls", Some(args.text_tool_calls.to_string())),
        ("reduce_output", Some(loaded.reduce_output.unwrap_or(true).to_string())),
        (
            "defer_tools_above",
            Some(
                loaded
                    .defer_tools_above
                    .unwrap_or(crate::deferred::DEFAULT_SHARE)
                    .to_string(),
            ),
        ),
        ("thinking", Some(name(&args.thinking))),
        ("max_tokens", args.max_tokens.map(|n| n.to_string())),
        ("context_window", args.context_window.map(|n| n.to_string())),
        ("max_turns", args.max_turns.map(|n| n.to_string())),
        ("max_cost", args.max_cost.map(|n| n.to_string())),
        ("approve", Some(name(&args.approve))),
        (
            "sandbox",
            Some(args.sandbox.as_ref().map_or("workspace-write".into(), name)),
        ),
        ("network", Some((!args.no_network).to_string())),
        ("idle_timeout", Some(args.idle_timeout.unwrap_or(120).to_string())),
        ("retries", args.retries.map(|n| n.to_string())),
        ("pass_env", Some(list(&args.pass_env))),
        (
            "skills",
            Some(list(
                &args.skills.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            )),
        ),
        ("otlp", args.otlp.as_deref().map(|u| quoted(&shown_url(u)))),
        ("otlp_payloads", Some(args.otlp_payloads.to_string())),
        ("checkpoints", Some((!args.no_checkpoints).to_string())),
        ("max_checkpoints", Some(args.max_checkpoints.unwrap_or(100).to_string())),
        ("trust", Some(loaded.trusted.to_string())),
    ];
    for (key, value) in rows {
        let source = loaded.sources.get(key).cloned().unwrap_or(Source::Default);
        let value = value.unwrap_or_else(|| "(unset)".into());
        out.push_str(&format!("{:<40} # {source}\n", format!("{key} = {value}")));
    }
    out.push_str("\n[permissions]\n");
    if loaded.rules.is_empty() {
        out.push_str("# no rules: the approval mode decides\n");
    }
    for rule in &loaded.rules {
        out.push_str(&format!(
            "{:<40} # {}\n",
            format!("{} = {}", rule.kind.name(), quoted(&rule.rule)),
            rule.origin
        ));
    }
    for (name, server, origin) in &loaded.mcp {
        out.push_str(&format!("\n[mcp_servers.{name}]  # {origin}\n"));
        if let Some(map) = masked(server).as_object() {
            for (k, v) in map {
                out.push_str(&format!("{k} = {v}\n"));
            }
        }
    }
    out
}

fn absent(path: &std::path::Path) -> &'static str {
    if path.exists() { "" } else { " (none)" }
}
