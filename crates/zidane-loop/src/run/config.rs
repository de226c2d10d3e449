//! What a loop is built with and what one run takes: `LoopConfig`,
//! `RunOptions` and the model references of a fallback chain.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use zidane_hooks::{HookBus, HookMap};
use zidane_provider::{AbortSignal, CacheTtl, ContentBlock, Pricing, Provider, ThinkingLevel};

use crate::behavior::{Behavior, BehaviorOverride};
use zidane_core::clock::{Clock, SystemClock};
use zidane_core::execution::Workspace;
use zidane_core::seams::{Compactor, DurableRuntime, MemoryRuntime, Spawning, ToolCallPolicy, TurnSink};
use zidane_core::tool::{MemoryToolState, ReadStateMap, ToolSet, ToolStateStore};

/// A model to run on: a model id, optionally pinned to a provider by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRef {
    /// Provider name; `None` tries every provider in order.
    pub provider: Option<String>,
    /// Model id.
    pub model: String,
}

impl From<&str> for ModelRef {
    fn from(model: &str) -> Self {
        ModelRef::any(model)
    }
}

impl From<String> for ModelRef {
    fn from(model: String) -> Self {
        ModelRef::any(model)
    }
}

impl ModelRef {
    /// A model id on any provider.
    pub fn any(model: impl Into<String>) -> Self {
        ModelRef {
            provider: None,
            model: model.into(),
        }
    }

    /// A model id on the named provider.
    pub fn on(provider: impl Into<String>, model: impl Into<String>) -> Self {
        ModelRef {
            provider: Some(provider.into()),
            model: model.into(),
        }
    }
}

/// What a loop is built with; lives as long as the loop.
#[derive(Clone)]
pub struct LoopConfig {
    /// Providers; the first is the primary.
    pub providers: Vec<Arc<dyn Provider>>,
    /// The default model chain of a run that names none (empty: the primary
    /// provider's default model). The same shape as [`RunOptions::model`].
    pub model: Vec<ModelRef>,
    /// Default system prompt.
    pub system: Option<String>,
    /// Tools offered to the model.
    pub tools: ToolSet,
    /// The hook bus.
    pub hooks: HookBus,
    /// Default behavior (a run may override it).
    pub behavior: Behavior,
    /// Time and id source.
    pub clock: Arc<dyn Clock>,
    /// Prices for turn costs.
    pub pricing: Pricing,
    /// Where steps run (and, when durable, are recorded).
    pub runtime: Arc<dyn DurableRuntime>,
    /// Where turns go as they are produced.
    pub sink: Option<Arc<dyn TurnSink>>,
    /// Checked before each provider request; may compact the conversation.
    pub compactor: Option<Arc<dyn Compactor>>,
    /// Backing store of durable tool state.
    pub tool_state: Arc<dyn ToolStateStore>,
    /// The runtime commits each tool call's state writes with its step
    /// record (a checkpoint runtime whose store backs `tool_state`), so
    /// the loop does not commit them to `tool_state` itself.
    pub tool_state_in_steps: bool,
    /// Read state shared by the tools.
    pub read_state: ReadStateMap,
    /// Display name (in `agent:start`).
    pub agent_name: Option<String>,
    /// Depth below the root agent (0 for a root).
    pub depth: u32,
    /// The spawning run, for sub-agents.
    pub parent_run_id: Option<String>,
    /// Trace carrier from the parent, for sub-agents.
    pub tracing_context: BTreeMap<String, String>,
    /// Reason given to a `cancel_tool` without one.
    pub cancel_reason: String,
    /// Decides each call before the gate (interceptors, approvals).
    pub policy: Option<Arc<dyn ToolCallPolicy>>,
    /// Whether the reserved `metadata.artifacts` of tool results reaches
    /// the sink ([`TurnSink::artifacts`]); `false`: ignored.
    pub artifacts: bool,
}

impl LoopConfig {
    /// The model to ask `provider` for when nothing else says: the first
    /// entry of the default chain that may run on it, else its own default.
    pub fn default_model_for(&self, provider: &dyn Provider) -> String {
        self.model
            .iter()
            .find(|r| r.provider.as_deref().is_none_or(|p| p == provider.name()))
            .map_or_else(|| provider.meta().default_model.clone(), |r| r.model.clone())
    }

    /// A loop over one provider, everything else default.
    pub fn new(provider: Arc<dyn Provider>) -> Self {
        LoopConfig {
            providers: vec![provider],
            model: Vec::new(),
            system: None,
            tools: ToolSet::new(),
            hooks: HookBus::new(),
            behavior: Behavior::default(),
            clock: Arc::new(SystemClock::default()),
            pricing: Pricing::new(),
            runtime: Arc::new(MemoryRuntime),
            sink: None,
            compactor: None,
            tool_state: Arc::new(MemoryToolState::default()),
            tool_state_in_steps: false,
            read_state: ReadStateMap::default(),
            agent_name: None,
            depth: 0,
            parent_run_id: None,
            tracing_context: BTreeMap::new(),
            cancel_reason: "user-cancelled-tool".to_owned(),
            policy: None,
            artifacts: true,
        }
    }
}

/// One run's input.
#[derive(Clone, Default)]
pub struct RunOptions {
    /// The prompt: text, images, documents. May be empty when messages are
    /// queued.
    pub prompt: Vec<ContentBlock>,
    /// A run-level system prompt (replaces the loop's for this run).
    pub system: Option<String>,
    /// Notes appended to the prompt as extra text blocks.
    pub system_notes: Vec<String>,
    /// The model fallback chain (empty: the loop's default model).
    pub model: Vec<ModelRef>,
    /// Thinking level.
    pub thinking: ThinkingLevel,
    /// Exact thinking budget.
    pub thinking_budget: Option<u32>,
    /// Output token limit per request.
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Prompt-cache lifetime.
    pub cache_ttl: Option<CacheTtl>,
    /// This run's changes to the loop's behavior, merged field by field.
    pub behavior: BehaviorOverride,
    /// Hooks for this run only, removed when it ends.
    pub hooks: HookMap,
    /// JSON schema the final answer must match (`output` fires with it).
    pub response_schema: Option<Value>,
    /// The run's id (else one from the clock), for hosts that announce the
    /// run before it starts.
    pub run_id: Option<String>,
    /// Tools added for this run (discovered MCP tools), beside the loop's.
    pub extra_tools: Vec<Arc<dyn zidane_core::tool::Tool>>,
    /// Tools that become ready while the run goes on (MCP servers still
    /// starting when it began): asked before each turn's request, what it
    /// gives joins the run's tools (as `extra_tools` do) from that turn on.
    pub late_tools: Option<LateTools>,
    /// The session the run is on, named in `run:beforeEnd` and
    /// `system:transform`.
    pub session_id: Option<String>,
    /// An outer signal: the run aborts when it fires (also before the run
    /// started, in which case no request is sent).
    pub signal: Option<AbortSignal>,
    /// Continue a run a dead process left: the conversation already holds
    /// its turns up to the end of loop turn `turn`, so no prompt is added
    /// and the next turn's steps are asked of the runtime first.
    pub resume: Option<ResumeFrom>,
    /// Where this run's tool calls act (the agent's execution context and
    /// live handle); tools see it as [`ToolContext::workspace`](zidane_core::ToolContext::workspace).
    pub workspace: Option<Workspace>,
    /// The tools of this run instead of the loop's and `extra_tools` (a
    /// host that reshaped them for the run).
    pub tools: Option<ToolSet>,
    /// How this run's tool calls start sub-agents
    /// ([`ToolContext::spawn`](zidane_core::ToolContext::spawn)); the
    /// children's usage joins the run's totals and budgets.
    pub spawning: Spawning,
    /// What the host adds to the system prompt for this run (to `system`,
    /// or to the loop's when the run sets none), in order.
    pub system_additions: Vec<SystemAddition>,
    /// Changes the run's behavior once it is merged (the loop's under
    /// `behavior`), in order.
    pub behavior_transforms: Vec<BehaviorTransform>,
    /// Changes the run's tools (the loop's with `extra_tools`, unless
    /// `tools` is set), in order.
    pub tool_transforms: Vec<ToolTransform>,
}

/// Gives the tools that became ready since it was last asked (empty:
/// none).
pub type LateTools = Arc<dyn Fn() -> Vec<Arc<dyn zidane_core::tool::Tool>> + Send + Sync>;

/// Changes the behavior a run starts with.
pub type BehaviorTransform = Arc<dyn Fn(&mut Behavior) + Send + Sync>;
/// Changes the tools one run offers (hide, describe, add).
pub type ToolTransform = Arc<dyn Fn(&mut ToolSet) + Send + Sync>;

/// A part a host adds to a run's system prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SystemAddition {
    /// A section after what is there, a blank line between.
    Section(String),
    /// Text for the dynamic half: after what is there when the prompt has
    /// a [`SYSTEM_PROMPT_BOUNDARY`](zidane_provider::SYSTEM_PROMPT_BOUNDARY)
    /// (a blank line between), else after a boundary it adds, so the cached
    /// static half stays the same bytes.
    Dynamic(String),
}

impl SystemAddition {
    fn apply(&self, system: &mut String) {
        match self {
            SystemAddition::Section(text) => {
                system.push_str("\n\n");
                system.push_str(text);
            }
            SystemAddition::Dynamic(text) => {
                if system.contains(zidane_provider::SYSTEM_PROMPT_BOUNDARY) {
                    system.push_str("\n\n");
                } else {
                    system.push_str(zidane_provider::SYSTEM_PROMPT_BOUNDARY);
                }
                system.push_str(text);
            }
        }
    }
}

impl RunOptions {
    /// The run's own system prompt: `system` (or, with additions, the
    /// loop's `base`) with the additions applied; `None` when the run
    /// changes nothing.
    pub(crate) fn run_system(&self, base: Option<&String>) -> Option<String> {
        if self.system_additions.is_empty() {
            return self.system.clone();
        }
        let mut system = self.system.clone().or_else(|| base.cloned()).unwrap_or_default();
        for addition in &self.system_additions {
            addition.apply(&mut system);
        }
        Some(system)
    }
}

/// Where a resumed run picks up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResumeFrom {
    /// The loop turn the saved turns end at (0: only the prompt).
    pub turn: u32,
}

impl RunOptions {
    /// A text prompt.
    pub fn prompt(text: impl Into<String>) -> Self {
        RunOptions {
            prompt: vec![ContentBlock::text(text)],
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests;
