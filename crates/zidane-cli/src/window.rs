//! The model's context window: `--context-window` (or the key), else what
//! the server says it serves, else a built-in table, else a stated
//! default. The window drives auto-compaction, the context report's free
//! space and the output cap (a request never asks for more output than the
//! window leaves).
//!
//! Servers asked, in order, for an OpenAI-compatible base URL: llama.cpp
//! (`/props`: `n_ctx`), Ollama (`/api/show`: `num_ctx`, else the model's
//! context length), LM Studio (`/api/v0/models/ID`: the loaded, else the
//! maximum context length), vLLM (`/v1/models`: `max_model_len`), and
//! OpenRouter-style listings (`/models`: `context_length`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use zidane::providers::{AbortSignal, BoxFuture, HttpClient, Liveness, RequestBody, Timeouts};

use crate::setup::ProviderKind;

/// The window assumed when nothing says otherwise, for a compatible server.
pub(crate) const DEFAULT_LOCAL: u32 = 32_768;

/// A window and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Window {
    pub(crate) tokens: u32,
    pub(crate) source: String,
}

impl Window {
    /// Whether llama.cpp's server said it: it can stream its progress
    /// through the prompt.
    pub(crate) fn is_llama_cpp(&self) -> bool {
        self.source.starts_with("llama.cpp")
    }
}

/// The built-in table for the providers' own models (by id prefix).
pub(crate) fn known(kind: ProviderKind, model: &str) -> Option<u32> {
    let model = model.to_ascii_lowercase();
    let model = model.rsplit('/').next().unwrap_or(&model);
    let table: &[(&str, u32)] = &[
        ("claude-", 200_000),
        ("gpt-4.1", 1_047_576),
        ("gpt-5", 400_000),
        ("gpt-4o", 128_000),
        ("o1", 200_000),
        ("o3", 200_000),
        ("o4-mini", 200_000),
        ("gpt-4-turbo", 128_000),
    ];
    let found = table
        .iter()
        .find(|(prefix, _)| model.starts_with(prefix))
        .map(|(_, n)| *n);
    match kind {
        ProviderKind::OpenaiCompatible => found.filter(|_| model.starts_with("claude-") || model.starts_with("gpt-")),
        _ => found,
    }
}

fn root_of(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    base.strip_suffix("/v1").unwrap_or(base).to_owned()
}

async fn get(client: &HttpClient, url: &str, body: Option<Value>) -> Option<Value> {
    let builder = match body {
        Some(_) => http::Request::post(url).header(http::header::CONTENT_TYPE, "application/json"),
        None => http::Request::get(url),
    };
    let payload = body.map(|b| bytes::Bytes::from(b.to_string())).unwrap_or_default();
    let request = builder.body(RequestBody::chunks([payload])).ok()?;
    let bytes = client
        .send_for_body("discovery", request, &AbortSignal::never())
        .await
        .ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn positive(v: &Value) -> Option<u32> {
    v.as_u64().filter(|n| *n > 0).and_then(|n| u32::try_from(n).ok())
}

/// What the server at `base_url` says about `model`'s window.
pub(crate) async fn discover(base_url: &str, model: &str) -> Option<Window> {
    let client = HttpClient::new(Timeouts {
        connect: Duration::from_secs(2),
        idle: Duration::from_secs(3),
    })
    .ok()?;
    let root = root_of(base_url);
    let base = base_url.trim_end_matches('/');
    let found = |tokens: u32, source: &str| {
        Some(Window {
            tokens,
            source: source.to_owned(),
        })
    };
    if let Some(props) = get(&client, &format!("{root}/props"), None).await {
        let n = positive(&props["default_generation_settings"]["n_ctx"]).or_else(|| positive(&props["n_ctx"]));
        if let Some(n) = n {
            return found(n, "llama.cpp /props");
        }
    }
    if let Some(show) = get(&client, &format!("{root}/api/show"), Some(json!({ "model": model }))).await {
        let configured = show["parameters"].as_str().and_then(|p| {
            p.lines()
                .find_map(|l| l.trim().strip_prefix("num_ctx").map(|n| n.trim().parse::<u32>().ok()))
                .flatten()
        });
        let trained = show["model_info"].as_object().and_then(|info| {
            info.iter()
                .find(|(k, _)| k.ends_with(".context_length"))
                .and_then(|(_, v)| positive(v))
        });
        if let Some(n) = configured {
            return found(n, "Ollama /api/show num_ctx");
        }
        if let Some(n) = trained {
            // Ollama serves 4,096 tokens unless `num_ctx` says more, whatever
            // the model was trained for.
            return found(n.min(4_096), "Ollama /api/show (no num_ctx: Ollama's 4096)");
        }
    }
    if let Some(m) = get(&client, &format!("{root}/api/v0/models/{model}"), None).await
        && let Some(n) = positive(&m["loaded_context_length"]).or_else(|| positive(&m["max_context_length"]))
    {
        return found(n, "LM Studio /api/v0/models");
    }
    if let Some(list) = get(&client, &format!("{base}/models"), None).await {
        for entry in list["data"].as_array().into_iter().flatten() {
            if entry["id"].as_str() != Some(model) {
                continue;
            }
            if let Some(n) = positive(&entry["max_model_len"]) {
                return found(n, "vLLM /v1/models max_model_len");
            }
            if let Some(n) = positive(&entry["context_length"]) {
                return found(n, "the server's model listing (context_length)");
            }
        }
    }
    None
}

/// The window in effect, and a line to print when it was looked up or
/// assumed.
pub(crate) async fn resolve(
    flag: Option<u32>,
    kind: ProviderKind,
    model: Option<&str>,
    base_url: Option<&str>,
) -> (Option<Window>, Option<String>) {
    if let Some(n) = flag {
        return (
            Some(Window {
                tokens: n,
                source: "--context-window".into(),
            }),
            None,
        );
    }
    let model = model.unwrap_or_default();
    if let (Some(url), ProviderKind::OpenaiCompatible) = (base_url, kind) {
        return match discover(url, model).await {
            Some(w) => {
                let line = format!("zidane: context window {} tokens ({})", w.tokens, w.source);
                (Some(w), Some(line))
            }
            None => {
                let w = known(kind, model).unwrap_or(DEFAULT_LOCAL);
                let line = format!(
                    "zidane: the server did not say its context window; assuming {w} tokens (set --context-window or `context_window`)"
                );
                (
                    Some(Window {
                        tokens: w,
                        source: "assumed".into(),
                    }),
                    Some(line),
                )
            }
        };
    }
    let window = known(kind, model).map(|tokens| Window {
        tokens,
        source: "built-in table".into(),
    });
    (window, None)
}

/// A request's size in bytes: the system prompt, and the messages and tools
/// as JSON (counted as they are written, not kept).
pub(crate) fn request_bytes(options: &zidane::providers::StreamOptions) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(options.system.as_ref().map_or(0, String::len));
    let _ = serde_json::to_writer(&mut count, &options.messages);
    let _ = serde_json::to_writer(&mut count, &options.tools);
    count.0
}

/// Each request's output cap: never more than the window leaves after the
/// request's input (estimated at four bytes a token), and at least 256.
pub(crate) fn clamp_output(hooks: &zidane::hooks::HookBus, window: u32) -> zidane::hooks::HookHandle {
    hooks.on_sync::<zidane::agent::events::TurnBefore, _>(move |ev, _| {
        let input = u32::try_from(request_bytes(&ev.options) / 4).unwrap_or(u32::MAX);
        let room = window.saturating_sub(input).max(256);
        let cap = ev.options.max_tokens.unwrap_or(room).min(room);
        ev.options.max_tokens = Some(cap);
        Ok(())
    })
}

/// A client for the small questions to a local server (`/slots`).
fn probe_client() -> Option<HttpClient> {
    HttpClient::new(Timeouts {
        connect: Duration::from_secs(2),
        idle: Duration::from_secs(3),
    })
    .ok()
}

/// Whether llama.cpp's `/slots` says a slot is processing. A server without
/// `/slots` (or one that does not answer) is not working.
async fn slot_busy(client: &HttpClient, url: &str) -> bool {
    get(client, url, None).await.is_some_and(|slots| {
        slots
            .as_array()
            .is_some_and(|all| all.iter().any(|s| s["is_processing"] == Value::Bool(true)))
    })
}

/// The liveness check of a local server: a silent stream (a long prompt
/// being read, a tool call held back until the generation ends) is not a
/// failure while llama.cpp's `/slots` says a slot is processing.
#[derive(Debug)]
pub(crate) struct SlotLiveness {
    url: String,
    client: HttpClient,
    told: std::sync::Arc<AtomicBool>,
}

impl SlotLiveness {
    pub(crate) fn new(base_url: &str) -> Option<Self> {
        Some(SlotLiveness {
            url: format!("{}/slots", root_of(base_url)),
            client: probe_client()?,
            told: std::sync::Arc::default(),
        })
    }
}

impl Liveness for SlotLiveness {
    fn working(&self) -> BoxFuture<'static, bool> {
        let (client, url, told) = (self.client.clone(), self.url.clone(), std::sync::Arc::clone(&self.told));
        Box::pin(async move {
            let busy = slot_busy(&client, &url).await;
            if busy && !told.swap(true, Ordering::Relaxed) {
                crate::session::notice(
                    "the model is silent, but the server says it is still working (llama.cpp /slots): waiting on"
                        .to_owned(),
                );
            }
            busy
        })
    }
}

/// Before a retry against a local server, waits (up to ten minutes) while
/// llama.cpp's `/slots` says a slot is still working: an abandoned answer
/// keeps the server's only slot busy, and a retry sent now would queue
/// behind it. Servers without `/slots` are not waited for.
pub(crate) fn wait_for_free_slots(hooks: &zidane::hooks::HookBus, base_url: &str) -> zidane::hooks::HookHandle {
    let url = format!("{}/slots", root_of(base_url));
    hooks.on::<zidane::agent::events::StreamRetry, _>(move |_, _| {
        let url = url.clone();
        Box::pin(async move {
            let Some(client) = probe_client() else {
                return Ok(());
            };
            let deadline = tokio::time::Instant::now() + Duration::from_secs(600);
            let mut told = false;
            while tokio::time::Instant::now() < deadline && slot_busy(&client, &url).await {
                if !told {
                    crate::session::notice(
                        "the server is still writing the abandoned answer; the retry waits for its slot".to_owned(),
                    );
                    told = true;
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            Ok(())
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_table() {
        assert_eq!(known(ProviderKind::Anthropic, "claude-sonnet-4-5"), Some(200_000));
        assert_eq!(known(ProviderKind::Openai, "gpt-4.1-mini"), Some(1_047_576));
        assert_eq!(known(ProviderKind::Openrouter, "openai/gpt-4o"), Some(128_000));
        assert_eq!(known(ProviderKind::OpenaiCompatible, "qwen2.5-coder"), None);
        assert_eq!(root_of("http://h:8080/v1/"), "http://h:8080");
    }
}
