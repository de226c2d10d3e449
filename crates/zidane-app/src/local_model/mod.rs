//! A first run without a key: a model server on this machine, looked for
//! on the usual ports of 127.0.0.1 (Ollama 11434, LM Studio 1234, llama.cpp
//! 8080, vLLM 8000), each with a short timeout; nothing beyond loopback is
//! contacted. A front end offers what is found (and can save the choice in
//! the user's configuration) or names it in its error.
//! `ZIDANE_LOCAL_MODEL_PORTS` (ports separated by commas, or `off`)
//! replaces the list.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use zidane::providers::ProviderKind;

use crate::settings::Settings;

/// The usual ports and the server each belongs to.
pub const PORTS: [(u16, &str); 4] = [
    (11434, "Ollama"),
    (1234, "LM Studio"),
    (8080, "llama.cpp"),
    (8000, "vLLM"),
];

/// How long one port may take to answer.
const TIMEOUT: Duration = Duration::from_millis(400);

/// A model server found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// What it is (Ollama when it answers Ollama's API, else by its port).
    pub name: String,
    /// Its OpenAI-compatible root (`http://127.0.0.1:PORT/v1`).
    pub base_url: String,
    /// The models it serves.
    pub models: Vec<String>,
}

impl Found {
    /// The flags that use it with `model`.
    pub fn flags(&self, model: &str) -> String {
        format!(
            "--provider openai-compatible --base-url {} --model {model}",
            self.base_url
        )
    }
}

/// Whether these settings have no provider: none configured, no base URL,
/// no key in the environment.
pub fn needed(settings: &Settings) -> bool {
    settings.provider.is_none()
        && settings.base_url.is_none()
        && ProviderKind::from_env(None).is_err()
        && settings.api_key_env.is_none()
}

/// The ports looked at, with what usually listens there.
pub fn ports() -> Vec<(u16, String)> {
    match std::env::var("ZIDANE_LOCAL_MODEL_PORTS") {
        Ok(list) if list.trim() == "off" => Vec::new(),
        Ok(list) if !list.trim().is_empty() => list
            .split(',')
            .filter_map(|p| p.trim().parse::<u16>().ok())
            .map(|port| {
                let name = PORTS
                    .iter()
                    .find(|(p, _)| *p == port)
                    .map_or("a local server", |(_, n)| n);
                (port, name.to_owned())
            })
            .collect(),
        _ => PORTS.iter().map(|(p, n)| (*p, (*n).to_owned())).collect(),
    }
}

/// The servers answering on [`ports`], in their order (all looked at
/// together).
pub async fn find() -> Vec<Found> {
    let probes = ports().into_iter().map(|(port, name)| probe(port, name));
    futures_join(probes).await.into_iter().flatten().collect()
}

async fn futures_join<F: std::future::Future<Output = Option<Found>> + Send + 'static>(
    probes: impl Iterator<Item = F>,
) -> Vec<Option<Found>> {
    let handles: Vec<_> = probes.map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.ok().flatten());
    }
    out
}

/// One port: Ollama's model list, else the OpenAI-compatible one.
async fn probe(port: u16, name: String) -> Option<Found> {
    let base_url = format!("http://127.0.0.1:{port}/v1");
    if let Some(tags) = get(port, "/api/tags").await
        && let Some(models) = tags["models"].as_array()
    {
        let models = models
            .iter()
            .filter_map(|m| m["name"].as_str().or_else(|| m["model"].as_str()).map(str::to_owned))
            .collect();
        return Some(Found {
            name: "Ollama".to_owned(),
            base_url,
            models,
        });
    }
    let list = get(port, "/v1/models").await?;
    let models = list["data"]
        .as_array()?
        .iter()
        .filter_map(|m| m["id"].as_str().map(str::to_owned))
        .collect();
    Some(Found { name, base_url, models })
}

/// `GET path` on 127.0.0.1:`port`, its JSON body (within the timeout).
async fn get(port: u16, path: &str) -> Option<Value> {
    let work = async {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.ok()?;
        let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.ok()?;
        let mut raw = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            let n = stream.read(&mut buf).await.ok()?;
            if n == 0 || raw.len() > 1 << 20 {
                break;
            }
            raw.extend_from_slice(&buf[..n]);
            if let Some(body) = complete_body(&raw) {
                return serde_json::from_slice(&body).ok();
            }
        }
        serde_json::from_slice(&complete_body(&raw)?).ok()
    };
    tokio::time::timeout(TIMEOUT, work).await.ok().flatten()
}

/// A `200` response's body once it is all there (by its length, chunked,
/// or the whole rest).
fn complete_body(raw: &[u8]) -> Option<Vec<u8>> {
    let text = String::from_utf8_lossy(raw);
    let head_end = text.find("\r\n\r\n")?;
    let head = text[..head_end].to_ascii_lowercase();
    if !head.starts_with("http/1.1 200") && !head.starts_with("http/1.0 200") {
        return Some(Vec::new());
    }
    let body = &raw[head_end + 4..];
    if let Some(len) = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        return (body.len() >= len).then(|| body[..len].to_vec());
    }
    if head.contains("transfer-encoding: chunked") {
        let mut out = Vec::new();
        let mut rest = body;
        loop {
            let line_end = rest.windows(2).position(|w| w == b"\r\n")?;
            let size = usize::from_str_radix(String::from_utf8_lossy(&rest[..line_end]).trim(), 16).ok()?;
            if size == 0 {
                return Some(out);
            }
            let start = line_end + 2;
            out.extend_from_slice(rest.get(start..start + size)?);
            rest = rest.get(start + size + 2..)?;
        }
    }
    None
}

/// What the error says when no provider is configured and `found` answer.
pub fn hint(found: &[Found]) -> String {
    let mut out = String::from(
        "no provider is configured (no ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENROUTER_API_KEY), but a model \
         server answers on this machine:",
    );
    for f in found {
        let models = if f.models.is_empty() {
            "no models listed".to_owned()
        } else {
            f.models.join(", ")
        };
        out.push_str(&format!("\n  {} at {} ({models})", f.name, f.base_url));
        if let Some(model) = f.models.first() {
            out.push_str(&format!("\n    use it: zidane {} \"…\"", f.flags(model)));
        }
    }
    out
}

/// `settings` with `found`'s `model` as the provider.
pub fn apply(settings: &mut Settings, found: &Found, model: &str) {
    settings.provider = Some(ProviderKind::OpenaiCompatible);
    settings.base_url = Some(found.base_url.clone());
    settings.model = Some(model.to_owned());
}

/// Saves `found`'s `model` as the provider in the configuration file
/// `config` (the rest of it kept).
pub fn save(config: &Path, found: &Found, model: &str) -> std::io::Result<()> {
    crate::config::trust::edit(config, |doc| {
        doc["provider"] = toml_edit::value("openai-compatible");
        doc["base_url"] = toml_edit::value(found.base_url.as_str());
        doc["model"] = toml_edit::value(model);
        Ok(())
    })
}

#[cfg(test)]
mod tests;
