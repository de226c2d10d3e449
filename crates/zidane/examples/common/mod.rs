//! What every example shares: its provider, from the environment and the
//! command line.
//!
//! - `--provider anthropic|openai`: which wire format (default: the one
//!   whose key is set, `ANTHROPIC_API_KEY` or `OPENAI_API_KEY`; Anthropic
//!   when neither is);
//! - `--base-url URL`: the provider's server (Anthropic: the root without
//!   `/v1`; OpenAI-compatible: with it), for a gateway or a local model;
//! - `--model MODEL`: the model (default: the provider's);
//! - anything else is the example's own arguments.
//!
//! With `--base-url` and no key, the server is asked without credentials
//! (a local model needs none).

#![allow(dead_code)]

use std::sync::Arc;

use zidane::providers::Provider;
use zidane::providers::anthropic::{AnthropicConfig, AnthropicProvider};
use zidane::providers::openai::{OpenAiConfig, OpenAiProvider};

/// An example's command line.
pub struct Args {
    pub provider: Option<String>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// The arguments left for the example.
    pub rest: Vec<String>,
}

impl Args {
    /// The command line of this process.
    pub fn parse() -> Args {
        let mut args = Args {
            provider: None,
            base_url: None,
            model: None,
            rest: Vec::new(),
        };
        let mut it = std::env::args().skip(1);
        while let Some(arg) = it.next() {
            match arg.as_str() {
                "--provider" => args.provider = it.next(),
                "--base-url" => args.base_url = it.next(),
                "--model" => args.model = it.next(),
                _ => args.rest.push(arg),
            }
        }
        args
    }

    /// The example's first own argument, or `default`.
    pub fn first_or(&self, default: &str) -> String {
        self.rest.first().cloned().unwrap_or_else(|| default.to_owned())
    }

    /// The model chain the agent runs with (empty: the provider's default).
    pub fn model(&self) -> Vec<zidane::agent::ModelRef> {
        self.model.iter().map(|m| m.as_str().into()).collect()
    }

    /// The flags this process was given, to hand a child process.
    pub fn provider_flags(&self) -> Vec<String> {
        let mut flags = Vec::new();
        for (flag, value) in [
            ("--provider", &self.provider),
            ("--base-url", &self.base_url),
            ("--model", &self.model),
        ] {
            if let Some(value) = value {
                flags.extend([flag.to_owned(), value.clone()]);
            }
        }
        flags
    }
}

fn env(key: &str) -> Option<String> {
    std::env::var(key).ok().filter(|v| !v.is_empty())
}

/// The provider the command line and the environment name.
pub fn provider(args: &Args) -> Result<Arc<dyn Provider>, Box<dyn std::error::Error>> {
    let which = args.provider.clone().unwrap_or_else(|| {
        if env("ANTHROPIC_API_KEY").is_none() && env("OPENAI_API_KEY").is_some() {
            "openai".into()
        } else {
            "anthropic".into()
        }
    });
    match which.as_str() {
        "anthropic" => {
            let config = match (env("ANTHROPIC_API_KEY"), &args.base_url) {
                (Some(key), Some(base)) => AnthropicConfig::new(key).with_base_url(base),
                (None, Some(base)) => AnthropicConfig::keyless(base),
                _ => AnthropicConfig::from_env()?,
            };
            Ok(Arc::new(AnthropicProvider::new(config)?))
        }
        "openai" => {
            let config = match (env("OPENAI_API_KEY"), &args.base_url) {
                (key, Some(base)) => OpenAiConfig::compatible(base, key.map(Into::into)),
                (Some(key), None) => OpenAiConfig::openai(key),
                (None, None) => return Err("set OPENAI_API_KEY, or give --base-url".into()),
            };
            Ok(Arc::new(OpenAiProvider::new(config)?))
        }
        other => Err(format!("unknown provider `{other}` (anthropic or openai)").into()),
    }
}
