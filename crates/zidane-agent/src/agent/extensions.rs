//! Extensions folded into the options an agent is built from.

use crate::extensions::{ToolResultMetadataFn, Transforms};
use crate::mcp::McpFold;
use crate::options::AgentOptions;
use crate::skills::{SkillPolicy, SkillsConfig};
use crate::subagents::SubagentDefinition;
use zidane_core::ToolSet;
use zidane_core::events::ToolTransform;
use zidane_hooks::HookMap;

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
    let mut mcp = McpFold::default();
    for mut ext in extensions {
        mcp.add(&mut ext);
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
    mcp.finish(&mut options);
    (options, transforms)
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
