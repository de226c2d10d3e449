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
use zidane_core::events::{ToolResultMetadata, ToolTransform};
use zidane_hooks::HookMap;
use zidane_loop::Behavior;

use crate::approvals::ToolCallInterceptor;
use crate::context::ContextCategory;
use crate::options::{AgentOptions, AgentRunOptions};
use crate::skills::{SkillDefinition, SkillPolicy, SkillsConfig};
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

fn narrow(policy: &mut SkillPolicy, other: &SkillPolicy) {
    policy.deny.extend(other.deny.iter().cloned());
    policy.allow = match (policy.allow.take(), &other.allow) {
        (None, None) => None,
        (Some(a), None) => Some(a),
        (None, Some(b)) => Some(b.clone()),
        (Some(a), Some(b)) => Some(a.into_iter().filter(|n| b.contains(n)).collect()),
    };
    policy.max_active = match (policy.max_active, other.max_active) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
}

/// Folds `options.extensions` into the options; what acts later (the
/// transforms) comes back apart.
pub(crate) fn fold(mut options: AgentOptions) -> (AgentOptions, Transforms) {
    let extensions = std::mem::take(&mut options.extensions);
    let mut transforms = Transforms::default();
    if extensions.is_empty() {
        return (options, transforms);
    }
    let mut tools = ToolSet::new();
    let mut hooks = HookMap::default();
    let mut skills = Vec::new();
    let mut policies = Vec::new();
    let mut fragments = Vec::new();
    let mut subagents: Vec<SubagentDefinition> = Vec::new();
    let mut interceptors = Vec::new();
    let mut metadata: Vec<ToolResultMetadataFn> = Vec::new();
    #[cfg(feature = "mcp")]
    let mut servers: Vec<zidane_mcp::McpServerConfig> = Vec::new();
    #[cfg(feature = "mcp")]
    let mut mcp_transforms = Vec::new();
    for ext in extensions {
        tools.merge(ext.tools);
        hooks = hooks.merge(ext.hooks);
        skills.extend(ext.skills);
        policies.extend(ext.skill_policies);
        fragments.extend(ext.system.into_iter().filter(|f| !f.trim().is_empty()));
        for def in ext.subagents {
            subagents.retain(|d| d.name != def.name);
            subagents.push(def);
        }
        interceptors.extend(ext.interceptors);
        transforms.behavior.extend(ext.behavior_transforms);
        transforms.run.extend(ext.run_transforms);
        transforms.tool_catalog.extend(ext.tool_catalog_transforms);
        transforms.context.extend(ext.context_breakdown_sections);
        metadata.extend(ext.tool_result_metadata);
        #[cfg(feature = "mcp")]
        {
            for server in ext.mcp_servers {
                servers.retain(|s| s.name != server.name);
                servers.push(server);
            }
            mcp_transforms.extend(ext.mcp_config_transforms);
        }
    }
    // Explicit options win every collision.
    tools.merge(std::mem::take(&mut options.tools));
    options.tools = tools;
    // The metadata goes on before the explicit hooks, so their
    // `tool:transform` handlers see it.
    if !metadata.is_empty() {
        hooks = hooks.on_sync::<ToolTransform, _>(move |ev, _| {
            let mut added = std::mem::take(&mut ev.metadata);
            for f in &metadata {
                f(ev.name(), ev.input(), ev.is_error(), &mut added);
            }
            ev.metadata = added;
            Ok(())
        });
    }
    options.hooks = hooks.merge(std::mem::take(&mut options.hooks));
    if options.skills.is_none() && !skills.is_empty() {
        options.skills = Some(SkillsConfig {
            skills,
            ..Default::default()
        });
    }
    if let Some(config) = options.skills.as_mut() {
        for policy in &policies {
            narrow(&mut config.policy, policy);
        }
    }
    if !fragments.is_empty() {
        let mut system = options.system.take().unwrap_or_default();
        for fragment in fragments {
            if !system.is_empty() {
                system.push_str("\n\n");
            }
            system.push_str(&fragment);
        }
        options.system = Some(system);
    }
    for def in subagents {
        if !options.spawn.agents.iter().any(|d| d.name == def.name) {
            options.spawn.agents.push(def);
        }
    }
    interceptors.append(&mut options.interceptors);
    options.interceptors = interceptors;
    #[cfg(feature = "mcp")]
    {
        for server in std::mem::take(&mut options.mcp_servers) {
            servers.retain(|s| s.name != server.name);
            servers.push(server);
        }
        for transform in &mcp_transforms {
            transform(&mut servers);
        }
        options.mcp_servers = servers;
    }
    (options, transforms)
}
