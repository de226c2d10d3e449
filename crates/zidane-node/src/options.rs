//! `createAgent`'s options, as the JavaScript side normalizes them, into
//! the Rust [`AgentOptions`]; and a run's options into [`AgentRunOptions`].

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use serde::Deserialize;
use serde_json::Value;
use zidane::agent::{AgentOptions, AgentRunOptions, Behavior, ModelRef, SqliteStore};
use zidane::durable::{CheckpointRuntime, DurableOptions};
use zidane::presets::{BasicOptions, basic};
use zidane::providers::Provider;
use zidane::providers::anthropic::{AnthropicConfig, AnthropicProvider};
use zidane::providers::openai::{OpenAiConfig, OpenAiProvider};
use zidane::tools::ToolSet;

use crate::bridge::{Bridge, JsTool};

/// A provider as `anthropic()`, `openai()` and `openaiCompatible()` describe it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProviderSpec {
    kind: String,
    api_key: Option<String>,
    #[serde(rename = "baseURL")]
    base_url: Option<String>,
    model: Option<String>,
    /// The JavaScript provider object's number: agents made with the same
    /// object share one provider (one connection pool).
    id: Option<u64>,
}

/// The providers alive, by JavaScript provider object.
static PROVIDERS: std::sync::LazyLock<parking_lot::Mutex<HashMap<String, Weak<dyn Provider>>>> =
    std::sync::LazyLock::new(Default::default);

/// The provider of `spec`: the one already made from the same JavaScript
/// object while it lives, else a new one.
fn shared_provider(spec: &ProviderSpec) -> Result<Arc<dyn Provider>, String> {
    let Some(id) = spec.id else {
        return provider(spec);
    };
    let key = format!("{id}:{spec:?}");
    let mut cache = PROVIDERS.lock();
    cache.retain(|_, p| p.strong_count() > 0);
    if let Some(p) = cache.get(&key).and_then(Weak::upgrade) {
        return Ok(p);
    }
    let p = provider(spec)?;
    cache.insert(key, Arc::downgrade(&p));
    Ok(p)
}

/// A JavaScript tool's metadata (its body stays in JavaScript).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolSpec {
    name: String,
    #[serde(default)]
    description: String,
    input_schema: Option<Value>,
    #[serde(default)]
    parallel: bool,
}

/// Where the session is kept.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionSpec {
    /// The SQLite file.
    path: String,
    /// The session's id; a new one when unset.
    id: Option<String>,
}

/// The checkpoint runtime's SQLite file.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DurableSpec {
    path: String,
    on_interrupted: Option<String>,
}

/// `createAgent`'s options, normalized by `index.js`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Spec {
    provider: Vec<ProviderSpec>,
    name: Option<String>,
    system: Option<String>,
    model: Option<String>,
    max_tokens: Option<u32>,
    preset: Option<String>,
    cwd: Option<String>,
    #[serde(default)]
    tools: Vec<ToolSpec>,
    max_turns: Option<u32>,
    session: Option<SessionSpec>,
    session_id: Option<String>,
    durable: Option<DurableSpec>,
}

fn provider(spec: &ProviderSpec) -> Result<Arc<dyn Provider>, String> {
    let error = |e: zidane::providers::ProviderError| format!("provider `{}`: {e}", spec.kind);
    match spec.kind.as_str() {
        "anthropic" => {
            let key = spec
                .api_key
                .clone()
                .or_else(|| std::env::var("ANTHROPIC_API_KEY").ok().filter(|k| !k.is_empty()));
            let mut config = match (key, &spec.base_url) {
                (Some(key), Some(base)) => AnthropicConfig::new(key).with_base_url(base),
                (Some(key), None) => AnthropicConfig::new(key),
                (None, Some(base)) => AnthropicConfig::keyless(base),
                (None, None) => return Err("anthropic(): no apiKey given and ANTHROPIC_API_KEY is not set".into()),
            };
            if let Some(model) = &spec.model {
                config = config.with_model(model);
            }
            Ok(Arc::new(AnthropicProvider::new(config).map_err(error)?))
        }
        "openai" | "openai-compatible" => {
            let key = spec
                .api_key
                .clone()
                .or_else(|| std::env::var("OPENAI_API_KEY").ok().filter(|k| !k.is_empty()));
            let mut config = match (key, &spec.base_url) {
                (key, Some(base)) => OpenAiConfig::compatible(base, key.map(Into::into)),
                (Some(key), None) => OpenAiConfig::openai(key),
                (None, None) => return Err("openai(): no apiKey given and OPENAI_API_KEY is not set".into()),
            };
            if let Some(model) = &spec.model {
                config = config.with_model(model);
            }
            Ok(Arc::new(OpenAiProvider::new(config).map_err(error)?))
        }
        other => Err(format!("unknown provider kind `{other}`")),
    }
}

/// Builds the Rust options; the JavaScript tools run through `bridge`.
pub(crate) fn agent_options(spec: Spec, bridge: &Bridge) -> Result<AgentOptions, String> {
    if spec.provider.is_empty() {
        return Err("createAgent: `provider` is required".into());
    }
    let providers = spec
        .provider
        .iter()
        .map(shared_provider)
        .collect::<Result<Vec<_>, _>>()?;
    let mut options = AgentOptions {
        provider: providers,
        name: spec.name,
        system: spec.system,
        model: spec.model.iter().map(|m| ModelRef::from(m.as_str())).collect(),
        max_tokens: spec.max_tokens,
        behavior: Behavior {
            max_turns: spec.max_turns,
            ..Default::default()
        },
        ..Default::default()
    };
    let mut tools = ToolSet::new();
    match spec.preset.as_deref() {
        None => {}
        Some("basic") => {
            let root = match spec.cwd {
                Some(cwd) => std::path::PathBuf::from(cwd),
                None => std::env::current_dir().map_err(|e| format!("basic: no working folder: {e}"))?,
            };
            let preset = basic(BasicOptions::in_folder(root));
            tools = preset.tools;
            if options.system.is_none() {
                options.system = Some(preset.system);
            }
            options.execution = Some(preset.execution);
        }
        Some(other) => return Err(format!("unknown preset `{other}` (this build has `basic`)")),
    }
    for tool in spec.tools {
        tools = tools.with(JsTool {
            name: tool.name,
            description: tool.description,
            schema: tool
                .input_schema
                .unwrap_or_else(|| serde_json::json!({ "type": "object", "properties": {} })),
            parallel: tool.parallel,
            bridge: bridge.clone(),
        });
    }
    options.tools = tools;
    if let Some(session) = spec.session {
        let store = SqliteStore::open(&session.path).map_err(|e| format!("session store {}: {e}", session.path))?;
        options.store = Some(Arc::new(store));
        options.session_id = Some(session.id.unwrap_or_else(zidane::agent::new_session_id));
    }
    if let Some(durable) = spec.durable {
        let runtime =
            CheckpointRuntime::open(&durable.path).map_err(|e| format!("durable runtime {}: {e}", durable.path))?;
        let mut d = DurableOptions::from(Arc::new(runtime));
        if durable.on_interrupted.as_deref() == Some("resume") {
            d.on_interrupted = zidane::durable::OnInterrupted::Resume;
        }
        options.durable = Some(d);
    }
    if spec.session_id.is_some() {
        options.session_id = spec.session_id;
    }
    Ok(options)
}

/// A run's options.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunSpec {
    #[serde(default)]
    prompt: String,
    system: Option<String>,
    #[serde(default)]
    system_notes: Vec<String>,
    model: Option<String>,
    max_tokens: Option<u32>,
}

pub(crate) fn run_options(spec: RunSpec) -> AgentRunOptions {
    let mut options = AgentRunOptions::prompt(spec.prompt);
    options.system = spec.system;
    options.system_notes = spec.system_notes;
    options.model = spec.model.iter().map(|m| ModelRef::from(m.as_str())).collect();
    options.max_tokens = spec.max_tokens;
    options
}
