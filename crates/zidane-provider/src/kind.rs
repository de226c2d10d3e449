//! The providers a choice can name, and why a choice fails.

use std::fmt;

use crate::ProviderError;

/// The providers a choice can name (by [`name`](Self::name) in a file,
/// through serde).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ProviderKind {
    /// Anthropic's Messages API (or a compatible server).
    Anthropic,
    /// OpenAI's Chat Completions API.
    Openai,
    /// OpenAI's Responses API (reasoning kept across turns).
    OpenaiResponses,
    /// OpenRouter.
    Openrouter,
    /// Any OpenAI-compatible server: Ollama, vLLM, llama.cpp, LM Studio, a
    /// gateway.
    OpenaiCompatible,
}

impl ProviderKind {
    /// Every kind, in the order a help text lists them.
    pub const ALL: [ProviderKind; 5] = [
        ProviderKind::Anthropic,
        ProviderKind::Openai,
        ProviderKind::OpenaiResponses,
        ProviderKind::Openrouter,
        ProviderKind::OpenaiCompatible,
    ];

    /// The kind's name on a command line or in a file (`openai-compatible`).
    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Openai => "openai",
            ProviderKind::OpenaiResponses => "openai-responses",
            ProviderKind::Openrouter => "openrouter",
            ProviderKind::OpenaiCompatible => "openai-compatible",
        }
    }

    /// The environment variable its key is read from by default (`None`:
    /// the key is optional, `OPENAI_API_KEY` when set).
    pub fn key_var(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
            ProviderKind::Openai | ProviderKind::OpenaiResponses | ProviderKind::OpenaiCompatible => "OPENAI_API_KEY",
            ProviderKind::Openrouter => "OPENROUTER_API_KEY",
        }
    }

    /// The largest image the provider takes, in bytes.
    pub fn image_limit(self) -> usize {
        match self {
            ProviderKind::Anthropic => 5 * 1024 * 1024,
            _ => 20 * 1024 * 1024,
        }
    }

    /// The kind the environment names: the first provider key set, else an
    /// OpenAI-compatible server when a base URL is given.
    pub fn from_env(base_url: Option<&str>) -> Result<ProviderKind, ChoiceError> {
        Self::from_vars(base_url, &|name| env(name))
    }

    pub(crate) fn from_vars(
        base_url: Option<&str>,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ProviderKind, ChoiceError> {
        if var("ANTHROPIC_API_KEY").is_some() || var("ANTHROPIC_AUTH_TOKEN").is_some() {
            Ok(ProviderKind::Anthropic)
        } else if var("OPENAI_API_KEY").is_some() {
            Ok(ProviderKind::Openai)
        } else if var("OPENROUTER_API_KEY").is_some() {
            Ok(ProviderKind::Openrouter)
        } else if base_url.is_some() {
            Ok(ProviderKind::OpenaiCompatible)
        } else {
            Err(ChoiceError::NoProvider)
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ProviderKind {
    type Err = ChoiceError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProviderKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| ChoiceError::UnknownKind(s.to_owned()))
    }
}

/// Why a provider cannot be chosen or built.
#[derive(Debug)]
#[non_exhaustive]
pub enum ChoiceError {
    /// No kind was given and no provider key is in the environment.
    NoProvider,
    /// A kind name that is not one of [`ProviderKind::ALL`].
    UnknownKind(String),
    /// The key the provider needs is not in the environment.
    MissingKey {
        /// The provider.
        kind: ProviderKind,
        /// The variable looked for.
        var: String,
    },
    /// An OpenAI-compatible server needs its base URL.
    MissingBaseUrl,
    /// An OpenAI-compatible server needs its model's name.
    MissingModel,
    /// The base URL is not an `http` or `https` URL with a host (shown with
    /// any password masked).
    BadBaseUrl(String),
    /// The provider could not be built (its HTTP client, its TLS set-up).
    Build(ProviderError),
}

impl fmt::Display for ChoiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChoiceError::NoProvider => f.write_str(
                "no provider is configured: set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENROUTER_API_KEY, \
                 or pass --provider openai-compatible --base-url http://localhost:11434/v1 for a local server",
            ),
            ChoiceError::UnknownKind(name) => {
                let names: Vec<&str> = ProviderKind::ALL.iter().map(|k| k.name()).collect();
                write!(f, "unknown provider `{name}` (one of {})", names.join(", "))
            }
            ChoiceError::MissingKey { kind, var } => write!(f, "--provider {kind} needs {var} in the environment"),
            ChoiceError::MissingBaseUrl => {
                f.write_str("--provider openai-compatible needs --base-url (e.g. http://localhost:11434/v1)")
            }
            ChoiceError::MissingModel => {
                f.write_str("--provider openai-compatible needs --model (the server's model name)")
            }
            ChoiceError::BadBaseUrl(url) => write!(
                f,
                "--base-url `{url}` is not a valid URL: give the server's address, e.g. http://localhost:8080/v1"
            ),
            ChoiceError::Build(e) => write!(f, "cannot set up the provider: {e}"),
        }
    }
}

impl std::error::Error for ChoiceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ChoiceError::Build(e) => Some(e),
            _ => None,
        }
    }
}

/// A variable of the environment, when set to something.
pub(crate) fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}
