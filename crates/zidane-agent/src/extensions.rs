//! Extensions: bundles of tools, MCP servers, skills, hooks, system
//! fragments, sub-agent definitions, interceptors and transforms, folded
//! into `create_agent` with the explicit options winning every collision.
//!
//! Folding, field by field: tools merged by name (an explicit tool of the
//! same name wins; among extensions the later wins); MCP servers deduped
//! by name (explicit wins); skills: an explicit `skills` replaces the
//! extensions' wholesale, otherwise theirs are the agent's; skill policies
//! narrow the agent's (denials add up, allow lists intersect, the lowest
//! `max_active` holds); hooks from both fire, the extensions' first;
//! system fragments are appended after `system`, blank-line separated;
//! sub-agent definitions join the spawn tool's (explicit wins by name);
//! interceptors run before the explicit ones. Transforms apply in
//! contribution order at their points: behavior and run transforms before
//! each run, tool-catalog transforms to each run's tool set, MCP config
//! transforms once, before any bootstrap (what `Agent::mcp_servers`
//! returns), tool-result metadata on every result (through
//! `tool:transform`), context sections in `get_context_breakdown`.

use std::sync::Arc;

use serde_json::Value;
use zidane_core::ToolSet;
use zidane_core::events::ToolResultMetadata;
use zidane_hooks::HookMap;
use zidane_loop::Behavior;

use crate::approvals::ToolCallInterceptor;
use crate::context::ContextCategory;
use crate::run_options::AgentRunOptions;
use crate::skills::{SkillDefinition, SkillPolicy};
use crate::subagents::SubagentDefinition;

/// Changes the behavior a run starts with.
pub type BehaviorTransform = Arc<dyn Fn(&mut Behavior) + Send + Sync>;
/// Changes a run's options before it starts.
pub type RunTransform = Arc<dyn Fn(&mut AgentRunOptions) + Send + Sync>;
/// Changes the tools one run offers (hide, describe, add).
pub type ToolCatalogTransform = Arc<dyn Fn(&mut ToolSet) + Send + Sync>;
/// Changes the MCP servers before they are connected.
#[cfg(feature = "mcp")]
pub type McpConfigTransform = Arc<dyn Fn(&mut Vec<zidane_mcp::McpServerConfig>) + Send + Sync>;
/// Adds metadata to a tool result (its name, input and whether it is an
/// error are given).
pub type ToolResultMetadataFn = Arc<dyn Fn(&str, &Value, bool, &mut ToolResultMetadata) + Send + Sync>;
/// Adds categories to the context breakdown (before `free`).
pub type ContextSection = Arc<dyn Fn() -> Vec<ContextCategory> + Send + Sync>;

/// One extension's contributions.
#[derive(Clone, Default)]
pub struct Extension {
    /// Its name (for diagnostics).
    pub name: String,
    /// Tools it adds.
    pub tools: ToolSet,
    /// MCP servers it adds.
    #[cfg(feature = "mcp")]
    pub mcp_servers: Vec<zidane_mcp::McpServerConfig>,
    /// Skills it adds.
    pub skills: Vec<SkillDefinition>,
    /// Policies it puts on skills.
    pub skill_policies: Vec<SkillPolicy>,
    /// Hooks it installs (they fire before the explicit ones).
    pub hooks: HookMap,
    /// Text appended to the system prompt.
    pub system: Vec<String>,
    /// Sub-agents it defines.
    pub subagents: Vec<SubagentDefinition>,
    /// Interceptors it puts before the explicit ones.
    pub interceptors: Vec<Arc<dyn ToolCallInterceptor>>,
    /// See [`BehaviorTransform`].
    pub behavior_transforms: Vec<BehaviorTransform>,
    /// See [`RunTransform`].
    pub run_transforms: Vec<RunTransform>,
    /// See [`ToolCatalogTransform`].
    pub tool_catalog_transforms: Vec<ToolCatalogTransform>,
    /// See [`McpConfigTransform`].
    #[cfg(feature = "mcp")]
    pub mcp_config_transforms: Vec<McpConfigTransform>,
    /// See [`ToolResultMetadataFn`].
    pub tool_result_metadata: Vec<ToolResultMetadataFn>,
    /// See [`ContextSection`].
    pub context_breakdown_sections: Vec<ContextSection>,
}

/// What the agent keeps of its extensions after folding.
#[derive(Clone, Default)]
pub(crate) struct Transforms {
    pub(crate) behavior: Vec<BehaviorTransform>,
    pub(crate) run: Vec<RunTransform>,
    pub(crate) tool_catalog: Vec<ToolCatalogTransform>,
    pub(crate) context: Vec<ContextSection>,
}
