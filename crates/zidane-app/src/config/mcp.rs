//! MCP servers from every place that names them, merged by name (later
//! wins): the configuration files' `[mcp_servers.NAME]` tables, the
//! repository's `.mcp.json` (once trusted), then `--mcp FILE`.

use serde_json::Value;

use super::{ConfigFile, FileSettings};
use crate::Error;
use crate::settings::Settings;

/// Every MCP server the layers, the trusted `.mcp.json` and `--mcp FILE`
/// name, into `settings.mcp`.
pub(super) fn collect(
    flag: Option<&std::path::Path>,
    layers: &[(&ConfigFile, &FileSettings, Option<String>)],
    settings: &mut Settings,
) -> Result<(), Error> {
    let (paths, trusted) = (&settings.paths, settings.trusted);
    let mut servers: Vec<(String, Value, String)> = Vec::new();
    let mut put = |name: String, value: Value, origin: String| {
        servers.retain(|(n, _, _)| *n != name);
        servers.push((name, value, origin));
    };
    for (file, settings, profile) in layers {
        for (name, server) in settings.mcp_servers.iter().flatten() {
            let prefix = profile.as_ref().map(|p| format!("profiles.{p}.")).unwrap_or_default();
            let key = format!("{prefix}mcp_servers.{name}");
            let mut value = serde_json::to_value(server).map_err(|e| file.error(&key, e))?;
            expand(&mut value, &key).map_err(|e| file.error(&key, e))?;
            let one = serde_json::json!({ "mcpServers": { name.as_str(): &value } }).to_string();
            zidane::mcp::parse_mcp_config(&one).map_err(|e| file.error(&key, e))?;
            put(
                name.clone(),
                value,
                format!("{}:{}", file.path.display(), file.line(&key)),
            );
        }
    }
    let mcp_json = paths.root.join(".mcp.json");
    if trusted && mcp_json.is_file() {
        let text = std::fs::read_to_string(&mcp_json)
            .map_err(|e| Error::usage(format!("cannot read {}: {e}", mcp_json.display())))?;
        for (name, value) in servers_of(&text, &mcp_json, true)? {
            put(name, value, mcp_json.display().to_string());
        }
    }
    if let Some(path) = flag {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::usage(format!("cannot read the MCP configuration {}: {e}", path.display())))?;
        for (name, value) in servers_of(&text, path, false)? {
            put(name, value, path.display().to_string());
        }
    }
    settings.mcp = servers;
    Ok(())
}

/// The `mcpServers` of a JSON file, `${VAR}` expanded when asked.
fn servers_of(text: &str, path: &std::path::Path, expanding: bool) -> Result<Vec<(String, Value)>, Error> {
    // The full check (and its line numbers) is the MCP crate's.
    zidane::mcp::parse_mcp_config(text).map_err(|e| Error::usage(format!("{}: {e}", path.display())))?;
    let root: Value = serde_json::from_str(text).map_err(|e| Error::usage(format!("{}: {e}", path.display())))?;
    let mut out = Vec::new();
    for (name, server) in root["mcpServers"].as_object().into_iter().flatten() {
        let mut server = server.clone();
        if expanding {
            expand(&mut server, &format!("mcpServers.{name}"))
                .map_err(|e| Error::usage(format!("{}: {e}", path.display())))?;
        }
        out.push((name.clone(), server));
    }
    Ok(out)
}

/// Expands `${VAR}` and `${VAR:-default}` in `command`, `args`, `env`, `url`
/// and `headers`. A variable that is not set and has no default is an
/// error naming it.
pub(crate) fn expand(server: &mut Value, at: &str) -> Result<(), String> {
    let Some(map) = server.as_object_mut() else {
        return Ok(());
    };
    for field in ["command", "args", "env", "url", "headers"] {
        if let Some(value) = map.get_mut(field) {
            expand_value(value, &format!("{at}.{field}"))?;
        }
    }
    Ok(())
}

fn expand_value(value: &mut Value, at: &str) -> Result<(), String> {
    match value {
        Value::String(s) => {
            *s = expand_text(s, |name| std::env::var(name).ok()).map_err(|v| {
                format!("`{at}` uses ${{{v}}}, which is not set (give it a default with ${{{v}:-value}})")
            })?
        }
        Value::Array(items) => {
            for item in items {
                expand_value(item, at)?;
            }
        }
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                expand_value(item, &format!("{at}.{key}"))?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// `text` with its `${NAME}` / `${NAME:-default}` replaced; `Err(NAME)` for
/// a variable without a value or a default.
pub fn expand_text(text: &str, var: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        match (var(name).filter(|v| !v.is_empty()), default) {
            (Some(v), _) => out.push_str(&v),
            (None, Some(d)) => out.push_str(d),
            (None, None) => return Err(name.to_owned()),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests;
