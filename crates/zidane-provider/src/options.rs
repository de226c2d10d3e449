//! The options of one streamed request.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::message::Message;

/// Marker inside a system prompt between its static half (cached with the
/// tools) and its dynamic half. Providers split the prompt here; the marker
/// itself never reaches the wire.
pub const SYSTEM_PROMPT_BOUNDARY: &str = "__ZIDANE_SYSTEM_PROMPT_DYNAMIC_BOUNDARY__";

/// How hard the model should think.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingLevel {
    /// No extended thinking.
    #[default]
    Off,
    /// The least thinking the model supports.
    Minimal,
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
}

impl ThinkingLevel {
    /// The level's wire name (`"off"`, `"low"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ThinkingLevel::Off => "off",
            ThinkingLevel::Minimal => "minimal",
            ThinkingLevel::Low => "low",
            ThinkingLevel::Medium => "medium",
            ThinkingLevel::High => "high",
        }
    }
}

/// Lifetime of prompt-cache entries written by a request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CacheTtl {
    /// Five minutes, the providers' default.
    #[default]
    #[serde(rename = "5m")]
    FiveMinutes,
    /// One hour.
    #[serde(rename = "1h")]
    OneHour,
}

impl CacheTtl {
    /// The lifetime in milliseconds.
    pub fn as_millis(self) -> u64 {
        match self {
            CacheTtl::FiveMinutes => 5 * 60 * 1000,
            CacheTtl::OneHour => 60 * 60 * 1000,
        }
    }
}

/// Which tool the model may or must call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolChoice {
    /// The model decides.
    Auto,
    /// The model must call some tool.
    Any,
    /// The model must not call tools.
    None,
    /// The model must call this tool.
    Tool {
        /// Tool name as the model sees it.
        name: String,
    },
}

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    /// Name on the wire (an alias, when one is configured).
    pub name: String,
    /// What the tool does.
    pub description: String,
    /// JSON schema of the arguments.
    pub input_schema: Value,
}

/// Everything one provider request needs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamOptions {
    /// Model id.
    pub model: String,
    /// System prompt, possibly split by [`SYSTEM_PROMPT_BOUNDARY`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The conversation.
    pub messages: Vec<Message>,
    /// Tools offered to the model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
    /// Thinking level.
    #[serde(default)]
    pub thinking: ThinkingLevel,
    /// Exact thinking budget in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_budget: Option<u32>,
    /// Whole-task thinking budget in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_budget: Option<u32>,
    /// Whether the level-derived effort hint is sent (`None` means yes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort_hint: Option<bool>,
    /// Output token limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Lifetime of cache entries this request writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_ttl: Option<CacheTtl>,
    /// Tool choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// JSON schema the final answer must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<Value>,
}

impl StreamOptions {
    /// Options for `model` over `messages`, everything else default.
    pub fn new(model: impl Into<String>, messages: Vec<Message>) -> Self {
        StreamOptions {
            model: model.into(),
            messages,
            ..Default::default()
        }
    }

    /// The system prompt split at [`SYSTEM_PROMPT_BOUNDARY`]: the static half
    /// and, when the marker is present, the dynamic half.
    pub fn system_halves(&self) -> Option<(&str, Option<&str>)> {
        let system = self.system.as_deref()?;
        Some(match system.split_once(SYSTEM_PROMPT_BOUNDARY) {
            Some((head, tail)) => (head, Some(tail)),
            None => (system, None),
        })
    }
}
