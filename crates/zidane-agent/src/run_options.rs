//! What one run, one queued message, a resume or a suspend takes.

use serde_json::Value;
use zidane_hooks::HookMap;
use zidane_loop::{BehaviorOverride, ModelRef};
use zidane_provider::{ContentBlock, ThinkingLevel};

/// One run's options.
#[derive(Clone, Default)]
pub struct AgentRunOptions {
    /// The prompt as text.
    pub prompt: String,
    /// Extra prompt parts (images, documents) after the text.
    pub parts: Vec<ContentBlock>,
    /// A system prompt for this run.
    pub system: Option<String>,
    /// Notes appended to the prompt.
    pub system_notes: Vec<String>,
    /// The model fallback chain (empty: the agent's).
    pub model: Vec<ModelRef>,
    /// Thinking level.
    pub thinking: ThinkingLevel,
    /// Output token limit per request (else the agent's).
    pub max_tokens: Option<u32>,
    /// This run's changes to the agent's behavior, merged field by field
    /// (a field left unset keeps the agent's value).
    pub behavior: BehaviorOverride,
    /// Hooks for this run only.
    pub hooks: HookMap,
    /// JSON schema of the final answer.
    pub response_schema: Option<Value>,
    /// A goal the run keeps working toward: when the model ends its
    /// answer, the goal's check runs, and while it says "not met" the run
    /// goes on with its reason (see [`Goal`](crate::Goal)).
    pub goal: Option<crate::Goal>,
}

impl AgentRunOptions {
    /// A text prompt.
    pub fn prompt(text: impl Into<String>) -> Self {
        AgentRunOptions {
            prompt: text.into(),
            ..Default::default()
        }
    }
}

/// A prompt: text, or parts (text with images and documents).
#[derive(Debug, Clone, PartialEq)]
pub enum Prompt {
    /// Plain text.
    Text(String),
    /// Content parts, in order.
    Parts(Vec<ContentBlock>),
}

impl From<&str> for Prompt {
    fn from(text: &str) -> Self {
        Prompt::Text(text.to_owned())
    }
}

impl From<String> for Prompt {
    fn from(text: String) -> Self {
        Prompt::Text(text)
    }
}

impl From<Vec<ContentBlock>> for Prompt {
    fn from(parts: Vec<ContentBlock>) -> Self {
        Prompt::Parts(parts)
    }
}

/// Options of [`Agent::steer`](crate::Agent::steer) and [`Agent::follow_up`](crate::Agent::follow_up).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueuedMessageOptions {
    /// Comes back in `steer:inject`, so a host can tell which message the
    /// loop added.
    pub id: Option<String>,
    /// Notes appended to the message as extra text blocks.
    pub system_notes: Vec<String>,
}

pub(crate) fn queued(prompt: Prompt, options: QueuedMessageOptions) -> (Vec<ContentBlock>, Option<String>) {
    let mut content = match prompt {
        Prompt::Text(text) => vec![ContentBlock::text(text)],
        Prompt::Parts(parts) => parts,
    };
    content.extend(options.system_notes.into_iter().map(ContentBlock::text));
    (content, options.id)
}

/// What a change would make the next request read again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentCacheChange {
    /// A model id to switch to.
    pub model: Option<String>,
    /// A thinking level to switch to.
    pub thinking: Option<ThinkingLevel>,
    /// Whether the system prompt changes.
    pub system: bool,
    /// Whether the tool list changes.
    pub tools: bool,
}

/// The estimate of [`Agent::cache_impact`](crate::Agent::cache_impact).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentCacheImpact {
    /// Tokens the next request would read again instead of from the cache.
    pub tokens: u64,
    /// The parts of the change that count (`model`, `thinking`, `system`, `tools`).
    pub changed: Vec<&'static str>,
}

/// `Agent::resume`'s options.
#[derive(Clone, Default)]
pub struct DurableResumeOptions {
    /// Run options applied over the ones the run's record kept: a model
    /// chain, thinking level, token limit or system prompt set here wins,
    /// and so do behavior fields set here; hooks here are the resumed run's.
    /// The prompt is ignored.
    pub run: Option<AgentRunOptions>,
}

/// `Agent::suspend`'s options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SuspendOptions {
    /// How long running tool calls may take to finish; a call still running
    /// then is cut off and stays pending. Unset: they all finish.
    pub grace: Option<std::time::Duration>,
}
