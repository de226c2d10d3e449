//! Token usage and finish reasons.

use serde::{Deserialize, Serialize};

/// Why the model stopped a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FinishReason {
    /// A final answer.
    Stop,
    /// The model called tools and waits for their results.
    ToolCalls,
    /// The output token limit cut the turn.
    Length,
    /// The provider paused a long turn; sending it back continues it.
    Pause,
    /// The model refused.
    Refusal,
    /// The stream ended in an error.
    Error,
}

/// Tokens and cost of one provider request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnUsage {
    /// Input tokens, not counting cache reads or writes.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    pub cache_creation: u64,
    /// Of `cache_creation`, tokens written with a 5-minute lifetime, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_5m: Option<u64>,
    /// Of `cache_creation`, tokens written with a 1-hour lifetime, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_1h: Option<u64>,
    /// Cost in USD; absent when the model's price is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// The model that served the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_id: Option<String>,
    /// Why the turn ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<FinishReason>,
}
