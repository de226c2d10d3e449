//! Choosing a provider from a kind, a base URL, a model and the
//! environment: the rules a program (or a service) follows so a person can
//! say "this server, this model" and get the right wire format, key and
//! timeouts.
//!
//! - The kind comes from the caller, else from the first provider key set
//!   in the environment (`ANTHROPIC_API_KEY` or `ANTHROPIC_AUTH_TOKEN`,
//!   `OPENAI_API_KEY`, `OPENROUTER_API_KEY`), else a base URL alone means
//!   an OpenAI-compatible server.
//! - A base URL is the API's root. The Anthropic format adds `/v1/messages`
//!   itself, so a root given with its `/v1` (as OpenAI-style URLs are) is
//!   taken without it; the OpenAI formats keep it.
//! - An OpenAI-compatible server needs a base URL and a model; its key is
//!   optional. A server on this machine or a private network may be silent
//!   for minutes while it reads a long prompt on a CPU, so it gets a longer
//!   idle timeout ([`LOCAL_IDLE_TIMEOUT`]) and, for llama.cpp, a liveness
//!   check on its `/slots` ([`SlotLiveness`](crate::SlotLiveness)).
//! - Tool calls in the text ([`TextToolCalls`]): always when asked; for a
//!   compatible server, once it fails to parse a call its model wrote.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::anthropic::{AnthropicConfig, AnthropicProvider};
use crate::http::{ApiKey, HttpClient};
use crate::kind::env;
pub use crate::kind::{ChoiceError, ProviderKind};
use crate::openai::{OpenAiConfig, OpenAiProvider};
use crate::provider::Provider;
use crate::text_tools::{TextToolCalls, TextToolMode};
use crate::window::{NoticeFn, SlotLiveness};
use crate::{ErrorKind, ProviderError};

/// How long a server on a loopback or private address may stay silent
/// before a request fails (unless the choice names an idle timeout).
pub const LOCAL_IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// What a caller says about the provider it wants; [`build`](Self::build)
/// turns it into one.
///
/// ```
/// # mod zidane { pub mod providers { pub use zidane_provider::*; } }
/// use zidane::providers::{ProviderChoice, ProviderKind};
///
/// let choice = ProviderChoice {
///     kind: Some(ProviderKind::OpenaiCompatible),
///     base_url: Some("http://127.0.0.1:11434/v1".into()),
///     model: Some("qwen2.5-coder".into()),
///     ..Default::default()
/// };
/// let provider = choice.build()?;
/// assert_eq!(provider.name(), "openai-compatible");
/// # Ok::<(), zidane::providers::ChoiceError>(())
/// ```
#[derive(Clone, Default)]
pub struct ProviderChoice {
    /// The provider (`None`: from the environment, see
    /// [`ProviderKind::from_env`]).
    pub kind: Option<ProviderKind>,
    /// The API's root (`None`: the provider's own).
    pub base_url: Option<String>,
    /// The model (`None`: the provider's default; an OpenAI-compatible
    /// server has none).
    pub model: Option<String>,
    /// The environment variable holding the key (`None`: the kind's own,
    /// [`ProviderKind::key_var`]).
    pub api_key_env: Option<String>,
    /// The longest silence before a request fails (`None`: 120 seconds, or
    /// [`LOCAL_IDLE_TIMEOUT`] for a server on this machine or a private
    /// network).
    pub idle_timeout: Option<Duration>,
    /// The model's context window in tokens (`None`: the provider's own).
    pub context_window: Option<u32>,
    /// Describe the tools in the prompt and read calls from the text, from
    /// the first request on.
    pub text_tool_calls: bool,
    /// Ask an OpenAI-compatible server (llama.cpp) to stream its progress
    /// through the prompt.
    pub prompt_progress: bool,
    /// Told once when a local server is silent but says it is still
    /// working, so a person knows why the wait goes on.
    pub on_notice: Option<NoticeFn>,
}

impl fmt::Debug for ProviderChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderChoice")
            .field("kind", &self.kind)
            .field("base_url", &self.base_url.as_deref().map(shown_url))
            .field("model", &self.model)
            .field("api_key_env", &self.api_key_env)
            .field("idle_timeout", &self.idle_timeout)
            .field("context_window", &self.context_window)
            .field("text_tool_calls", &self.text_tool_calls)
            .field("prompt_progress", &self.prompt_progress)
            .finish_non_exhaustive()
    }
}

impl ProviderChoice {
    /// The kind this choice resolves to.
    pub fn kind(&self) -> Result<ProviderKind, ChoiceError> {
        match self.kind {
            Some(kind) => Ok(kind),
            None => ProviderKind::from_env(self.base_url.as_deref()),
        }
    }

    /// The provider, reading its key from the environment.
    pub fn build(&self) -> Result<Arc<dyn Provider>, ChoiceError> {
        self.build_with(&|name| env(name))
    }

    /// The provider, with the environment read through `var` (a test, or a
    /// host with its own secrets).
    pub fn build_with(&self, var: &dyn Fn(&str) -> Option<String>) -> Result<Arc<dyn Provider>, ChoiceError> {
        let kind = match self.kind {
            Some(kind) => kind,
            None => ProviderKind::from_vars(self.base_url.as_deref(), var)?,
        };
        if let Some(url) = &self.base_url {
            check_base_url(url)?;
        }
        let built = match kind {
            ProviderKind::Anthropic => self.anthropic(var)?,
            ProviderKind::Openai | ProviderKind::OpenaiResponses | ProviderKind::Openrouter => {
                self.openai(kind, var)?
            }
            ProviderKind::OpenaiCompatible => self.compatible(var)?,
        };
        let mode = match (self.text_tool_calls, kind) {
            (true, _) => Some(TextToolMode::Always),
            (false, ProviderKind::OpenaiCompatible) => Some(TextToolMode::Auto),
            (false, _) => None,
        };
        Ok(match mode {
            Some(mode) => Arc::new(TextToolCalls::new(built, mode)),
            None => built,
        })
    }

    fn key(&self, kind: ProviderKind, var: &dyn Fn(&str) -> Option<String>) -> Result<String, ChoiceError> {
        let name = self.api_key_env.as_deref().unwrap_or(kind.key_var());
        var(name).ok_or_else(|| ChoiceError::MissingKey {
            kind,
            var: name.to_owned(),
        })
    }

    fn anthropic(&self, var: &dyn Fn(&str) -> Option<String>) -> Result<Arc<dyn Provider>, ChoiceError> {
        let mut config = match &self.api_key_env {
            Some(_) => {
                let key = self.key(ProviderKind::Anthropic, var)?;
                let mut config = AnthropicConfig::new(key);
                if let Some(base) = var("ANTHROPIC_BASE_URL") {
                    config.base_url = base;
                }
                config
            }
            None => anthropic_from_vars(var)?,
        };
        if let Some(url) = &self.base_url {
            let root = url.trim_end_matches('/');
            config = config.with_base_url(root.strip_suffix("/v1").unwrap_or(root).to_owned());
        }
        if let Some(model) = &self.model {
            config = config.with_model(model.clone());
        }
        if let Some(idle) = self.idle_timeout {
            config.timeouts.idle = idle;
        }
        if let Some(window) = self.context_window {
            config.context_window = window;
        }
        AnthropicProvider::new(config)
            .map(|p| Arc::new(p) as Arc<dyn Provider>)
            .map_err(ChoiceError::Build)
    }

    fn openai(
        &self,
        kind: ProviderKind,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Arc<dyn Provider>, ChoiceError> {
        let key = self.key(kind, var)?;
        let mut config = match kind {
            ProviderKind::Openai => OpenAiConfig::openai(key),
            ProviderKind::OpenaiResponses => OpenAiConfig::openai_responses(key),
            _ => OpenAiConfig::openrouter(key),
        };
        if let Some(url) = &self.base_url {
            config = config.with_base_url(url.clone());
        }
        if let Some(model) = &self.model {
            config = config.with_model(model.clone());
        }
        if let Some(idle) = self.idle_timeout {
            config.timeouts.idle = idle;
        }
        if let Some(window) = self.context_window {
            config.context_window = window;
        }
        OpenAiProvider::new(config)
            .map(|p| Arc::new(p) as Arc<dyn Provider>)
            .map_err(ChoiceError::Build)
    }

    fn compatible(&self, var: &dyn Fn(&str) -> Option<String>) -> Result<Arc<dyn Provider>, ChoiceError> {
        let url = self.base_url.clone().ok_or(ChoiceError::MissingBaseUrl)?;
        let model = self.model.clone().ok_or(ChoiceError::MissingModel)?;
        let key = var(self.api_key_env.as_deref().unwrap_or("OPENAI_API_KEY")).map(ApiKey::new);
        let local = is_local_url(&url);
        let mut config = OpenAiConfig::compatible(url.clone(), key).with_model(model);
        match self.idle_timeout {
            Some(idle) => config.timeouts.idle = idle,
            None if local => config.timeouts.idle = LOCAL_IDLE_TIMEOUT,
            None => {}
        }
        if let Some(window) = self.context_window {
            config.context_window = window;
        }
        config.dialect.prompt_progress = self.prompt_progress;
        let mut client = HttpClient::new(config.timeouts).map_err(ChoiceError::Build)?;
        // A local server may be silent for minutes while it works.
        if local && let Some(slots) = SlotLiveness::new(&url) {
            let slots = match &self.on_notice {
                Some(notice) => slots.on_busy(Arc::clone(notice)),
                None => slots,
            };
            client = client.with_liveness(Arc::new(slots));
        }
        Ok(Arc::new(OpenAiProvider::with_client(config, client)))
    }
}

/// The Anthropic configuration of the environment, read through `var`.
fn anthropic_from_vars(var: &dyn Fn(&str) -> Option<String>) -> Result<AnthropicConfig, ChoiceError> {
    let mut config = if let Some(key) = var("ANTHROPIC_API_KEY") {
        AnthropicConfig::new(key)
    } else if let Some(token) = var("ANTHROPIC_AUTH_TOKEN") {
        AnthropicConfig::new("").with_auth(crate::http::Auth::Bearer(token.into()))
    } else {
        return Err(ChoiceError::MissingKey {
            kind: ProviderKind::Anthropic,
            var: "ANTHROPIC_API_KEY".into(),
        });
    };
    if let Some(base) = var("ANTHROPIC_BASE_URL") {
        config.base_url = base;
    }
    Ok(config)
}

/// Checks that `url` is an `http` or `https` URL with a host.
pub fn check_base_url(url: &str) -> Result<(), ChoiceError> {
    let valid = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .is_some_and(|rest| {
            let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
            let host = authority.rsplit('@').next().unwrap_or_default();
            !host.is_empty() && !host.starts_with(':') && !host.contains(char::is_whitespace)
        });
    if valid {
        Ok(())
    } else {
        Err(ChoiceError::BadBaseUrl(shown_url(url)))
    }
}

/// `url` as it may be shown: a password in it is masked.
pub fn shown_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split(':').next().unwrap_or_default();
            let masked = if userinfo.contains(':') {
                format!("{user}:***")
            } else {
                "***".to_owned()
            };
            format!("{scheme}://{masked}@{host}{path}")
        }
        None => url.to_owned(),
    }
}

/// Whether `url`'s host is this machine or a private network (by name or
/// address).
pub fn is_local_url(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    let host = if let Some(v6) = host.strip_prefix('[') {
        v6.split(']').next().unwrap_or_default()
    } else {
        host.split(':').next().unwrap_or_default()
    };
    if host.eq_ignore_ascii_case("localhost") || host.ends_with(".local") || host.ends_with(".localhost") {
        return true;
    }
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => ip.is_loopback() || ip.is_private() || ip.is_link_local(),
        Ok(std::net::IpAddr::V6(ip)) => ip.is_loopback() || (ip.segments()[0] & 0xfe00) == 0xfc00,
        Err(_) => false,
    }
}

impl From<ChoiceError> for ProviderError {
    fn from(e: ChoiceError) -> Self {
        match e {
            ChoiceError::Build(e) => e,
            other => ProviderError::new(ErrorKind::InvalidRequest, "choice", other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests;
