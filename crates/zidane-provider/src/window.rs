//! A model's context window: what the server says it serves, else a
//! built-in table of the providers' own models, else a stated default; and
//! whether a local server that has gone silent is still working.
//!
//! Servers asked, in order, for an OpenAI-compatible base URL: llama.cpp
//! (`/props`: `n_ctx`), Ollama (`/api/show`: `num_ctx`, else the model's
//! context length capped at Ollama's 4,096), LM Studio
//! (`/api/v0/models/ID`: the loaded, else the maximum context length), vLLM
//! (`/v1/models`: `max_model_len`), and OpenRouter-style listings
//! (`/models`: `context_length`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use serde_json::{Value, json};

use crate::abort::AbortSignal;
use crate::http::{HttpClient, Liveness, RequestBody, Timeouts};
use crate::kind::ProviderKind;
use crate::provider::BoxFuture;

/// Told a line for the person (a local server's state).
pub type NoticeFn = Arc<dyn Fn(&str) + Send + Sync>;

/// The window assumed for an OpenAI-compatible server that does not say.
pub const DEFAULT_LOCAL_WINDOW: u32 = 32_768;

/// A window and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// Its size in tokens.
    pub tokens: u32,
    /// Where it came from (`llama.cpp /props`, `built-in table`, …).
    pub source: String,
}

impl Window {
    /// Whether llama.cpp's server said it: it can stream its progress
    /// through the prompt.
    pub fn is_llama_cpp(&self) -> bool {
        self.source.starts_with("llama.cpp")
    }
}

/// The built-in table for the providers' own models (by id prefix); an
/// OpenAI-compatible server's model is found only when it is one of those
/// providers' (`claude-…`, `gpt-…`).
pub fn known_window(kind: ProviderKind, model: &str) -> Option<u32> {
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

/// A base URL's root: without a trailing slash and `/v1`.
pub(crate) fn root_of(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    base.strip_suffix("/v1").unwrap_or(base).to_owned()
}

/// A client for the small questions to a server: short timeouts.
fn probe_client() -> Option<HttpClient> {
    HttpClient::new(Timeouts {
        connect: Duration::from_secs(2),
        idle: Duration::from_secs(3),
    })
    .ok()
}

async fn get(client: &HttpClient, url: &str, body: Option<Value>) -> Option<Value> {
    let builder = match body {
        Some(_) => http::Request::post(url).header(http::header::CONTENT_TYPE, "application/json"),
        None => http::Request::get(url),
    };
    let payload = body.map(|b| Bytes::from(b.to_string())).unwrap_or_default();
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

/// What the server at `base_url` (an OpenAI-compatible root, with or
/// without `/v1`) says about `model`'s window; `None` when no server
/// there says.
///
/// ```
/// # mod zidane { pub mod providers { pub use zidane_provider::*; } }
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// # let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// # let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
/// # tokio::spawn(async move {
/// #     use tokio::io::{AsyncReadExt, AsyncWriteExt};
/// #     let (mut stream, _) = listener.accept().await.unwrap();
/// #     let mut buf = [0; 4096];
/// #     let _ = stream.read(&mut buf).await;
/// #     let body = r#"{"default_generation_settings":{"n_ctx":8192}}"#;
/// #     let reply = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}", body.len());
/// #     stream.write_all(reply.as_bytes()).await.unwrap();
/// # });
/// // A llama.cpp server on this machine, serving an 8,192-token window:
/// let window = zidane::providers::discover_window(&base_url, "qwen2.5-coder").await;
/// assert_eq!(window.map(|w| w.tokens), Some(8192));
/// # }
/// ```
pub async fn discover_window(base_url: &str, model: &str) -> Option<Window> {
    let client = probe_client()?;
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

/// The window in effect and, when it was looked up or assumed, a line
/// saying so.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResolvedWindow {
    /// The window (`None`: nothing says, and the provider's own applies).
    pub window: Option<Window>,
    /// What a person is told about it (`context window 8192 tokens
    /// (llama.cpp /props)`), when it was asked of a server or assumed.
    pub note: Option<String>,
}

/// The window of a run: `given` (a flag or a setting), else what an
/// OpenAI-compatible server at `base_url` says, else the built-in table,
/// else (for such a server) [`DEFAULT_LOCAL_WINDOW`].
pub async fn resolve_window(
    given: Option<u32>,
    kind: ProviderKind,
    model: Option<&str>,
    base_url: Option<&str>,
) -> ResolvedWindow {
    if let Some(n) = given {
        return ResolvedWindow {
            window: Some(Window {
                tokens: n,
                source: "--context-window".into(),
            }),
            note: None,
        };
    }
    let model = model.unwrap_or_default();
    if let (Some(url), ProviderKind::OpenaiCompatible) = (base_url, kind) {
        return match discover_window(url, model).await {
            Some(w) => ResolvedWindow {
                note: Some(format!("context window {} tokens ({})", w.tokens, w.source)),
                window: Some(w),
            },
            None => {
                let tokens = known_window(kind, model).unwrap_or(DEFAULT_LOCAL_WINDOW);
                ResolvedWindow {
                    window: Some(Window {
                        tokens,
                        source: "assumed".into(),
                    }),
                    note: Some(format!(
                        "the server did not say its context window; assuming {tokens} tokens (set --context-window or `context_window`)"
                    )),
                }
            }
        };
    }
    ResolvedWindow {
        window: known_window(kind, model).map(|tokens| Window {
            tokens,
            source: "built-in table".into(),
        }),
        note: None,
    }
}

/// Whether llama.cpp's `/slots` at `base_url`'s root says a slot is
/// processing. A server without `/slots` (or one that does not answer) is
/// not working.
pub async fn slots_busy(base_url: &str) -> bool {
    let Some(client) = probe_client() else {
        return false;
    };
    busy(&client, &format!("{}/slots", root_of(base_url))).await
}

async fn busy(client: &HttpClient, url: &str) -> bool {
    get(client, url, None).await.is_some_and(|slots| {
        slots
            .as_array()
            .is_some_and(|all| all.iter().any(|s| s["is_processing"] == Value::Bool(true)))
    })
}

/// The liveness check of a local server: a silent stream (a long prompt
/// being read, a tool call held back until the generation ends) is not a
/// failure while llama.cpp's `/slots` says a slot is processing.
pub struct SlotLiveness {
    url: String,
    client: HttpClient,
    told: Arc<AtomicBool>,
    on_busy: Option<NoticeFn>,
}

impl std::fmt::Debug for SlotLiveness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlotLiveness")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl SlotLiveness {
    /// The check of the server at `base_url` (`None`: no HTTP client could
    /// be made).
    pub fn new(base_url: &str) -> Option<Self> {
        Some(SlotLiveness {
            url: format!("{}/slots", root_of(base_url)),
            client: probe_client()?,
            told: Arc::default(),
            on_busy: None,
        })
    }

    /// The same check, telling `notice` once when a silence is waited out
    /// because the server says it is working.
    pub fn on_busy(mut self, notice: NoticeFn) -> Self {
        self.on_busy = Some(notice);
        self
    }
}

impl Liveness for SlotLiveness {
    fn working(&self) -> BoxFuture<'static, bool> {
        let (client, url, told) = (self.client.clone(), self.url.clone(), Arc::clone(&self.told));
        let notice = self.on_busy.clone();
        Box::pin(async move {
            let working = busy(&client, &url).await;
            if working
                && !told.swap(true, Ordering::Relaxed)
                && let Some(notice) = notice
            {
                notice("the model is silent, but the server says it is still working (llama.cpp /slots): waiting on");
            }
            working
        })
    }
}

#[cfg(test)]
mod tests;
