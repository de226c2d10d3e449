//! Extensions folded into an agent: every folded field colliding with an
//! explicit option, and every transform observed at its point.

use std::sync::{Arc, Mutex};

use serde_json::json;
use zidane_agent::{
    AgentOptions, AgentRunOptions, ContextCategory, ContextOptions, Extension, FnInterceptor, SkillDefinition,
    SubagentDefinition, ToolCall, ToolCallVerdict, create_agent,
};
use zidane_core::events::{AgentStart, RunStatus, ToolTransform};
use zidane_core::{FnTool, ToolOutput, ToolSet};
use zidane_hooks::HookMap;
use zidane_provider::scripted::Script;
use zidane_provider::{ContentBlock, ToolResultContent};

use crate::support::{options, provider};

fn tool(name: &'static str, description: &'static str, answer: &'static str) -> FnTool {
    FnTool::new(name, description, json!({"type": "object"}), move |_, _| async move {
        Ok(ToolOutput::text(answer))
    })
}

fn skill(name: &str) -> SkillDefinition {
    SkillDefinition {
        name: name.into(),
        description: format!("The {name} skill"),
        instructions: "Do it well.".into(),
        folder: None,
    }
}

fn extension(order: &Arc<Mutex<Vec<&'static str>>>) -> Extension {
    let o = Arc::clone(order);
    Extension {
        name: "house".into(),
        tools: ToolSet::new()
            .with(tool("echo", "The extension's echo", "from the extension"))
            .with(tool("lint", "Lint the code", "clean"))
            .with(tool("hidden", "Never offered", "-")),
        skills: vec![skill("house-style")],
        hooks: HookMap::default().on_sync::<AgentStart, _>(move |_, _| {
            o.lock().unwrap().push("extension");
            Ok(())
        }),
        system: vec!["Follow the house style.".into()],
        subagents: vec![SubagentDefinition {
            name: "reviewer".into(),
            description: "Reviews a change".into(),
            ..Default::default()
        }],
        interceptors: vec![Arc::new(FnInterceptor(|call: &ToolCall| {
            if call.name == "lint" {
                ToolCallVerdict::Rewrite {
                    input: json!({"strict": true}),
                }
            } else {
                ToolCallVerdict::Allow
            }
        }))],
        behavior_transforms: vec![Arc::new(|b: &mut zidane_loop::Behavior| b.max_turns = Some(2))],
        run_transforms: vec![Arc::new(|r: &mut AgentRunOptions| {
            r.prompt.push_str(" (house rules apply)")
        })],
        tool_catalog_transforms: vec![Arc::new(|tools: &mut ToolSet| tools.retain(|name| name != "hidden"))],
        tool_result_metadata: vec![Arc::new(
            |name: &str,
             _input: &serde_json::Value,
             is_error: bool,
             meta: &mut serde_json::Map<String, serde_json::Value>| {
                meta.insert("checkedBy".into(), json!(format!("house:{name}:{is_error}")));
            },
        )],
        context_breakdown_sections: vec![Arc::new(|| {
            vec![ContextCategory {
                name: "house notes",
                tokens: 42,
                estimated: true,
            }]
        })],
        ..Default::default()
    }
}

#[tokio::test(start_paused = true)]
async fn an_extension_folds_in_with_the_explicit_options_winning() {
    let model = provider(vec![
        Script::call("c1", "echo", json!({})),
        Script::call("c2", "lint", json!({})),
        Script::answer("never reached: the turn cap is 2"),
    ]);
    let order: Arc<Mutex<Vec<&'static str>>> = Arc::default();
    let o = Arc::clone(&order);
    let seen_input: Arc<Mutex<Vec<serde_json::Value>>> = Arc::default();
    let si = Arc::clone(&seen_input);
    let agent = create_agent(AgentOptions {
        system: Some("You are careful.".into()),
        tools: ToolSet::new()
            .with(tool("echo", "Echo", "from the explicit tool"))
            .with(zidane_tools::spawn()),
        hooks: HookMap::default()
            .on_sync::<AgentStart, _>(move |_, _| {
                o.lock().unwrap().push("explicit");
                Ok(())
            })
            .on_sync::<ToolTransform, _>(move |ev, _| {
                si.lock().unwrap().push(json!({
                    "tool": ev.name(),
                    "input": ev.input(),
                    "metadata": ev.metadata,
                }));
                Ok(())
            }),
        extensions: vec![extension(&order)],
        ..options(&model)
    })
    .unwrap();
    let stats = agent.run(AgentRunOptions::prompt("Check the code.")).await.unwrap();
    let first = &model.requests()[0];
    // System fragments after `system`; explicit tool wins; the catalog
    // transform hid a tool; the sub-agent is listed.
    let system = first.system.clone().unwrap();
    assert!(
        system.starts_with("You are careful.\n\nFollow the house style.__ZIDANE_SYSTEM_PROMPT_DYNAMIC_BOUNDARY__"),
        "{system}"
    );
    // The extension's skill is in the catalog.
    assert!(system.contains("- house-style: The house-style skill"), "{system}");
    let tools: Vec<(&str, &str)> = first
        .tools
        .iter()
        .map(|t| (t.name.as_str(), t.description.as_str()))
        .collect();
    assert!(tools.contains(&("lint", "Lint the code")), "{tools:?}");
    assert!(tools.contains(&("echo", "Echo")), "{tools:?}");
    assert!(!tools.iter().any(|(n, _)| *n == "hidden"), "{tools:?}");
    let spawn = tools.iter().find(|(n, _)| *n == "spawn").unwrap();
    assert!(spawn.1.ends_with("- reviewer: Reviews a change"), "{}", spawn.1);
    // The run transform changed the prompt; hooks of both fired, the
    // extension's first; the behavior transform capped the run.
    let prompt = first.messages[0].content()[0].clone();
    assert!(
        matches!(&prompt, ContentBlock::Text { text, .. } if text == "Check the code. (house rules apply)"),
        "{prompt:?}"
    );
    assert_eq!(*order.lock().unwrap(), vec!["extension", "explicit"]);
    assert_eq!(stats.status, RunStatus::MaxTurns);
    // The interceptor rewrote lint's input; the metadata reached the
    // explicit `tool:transform` handler.
    assert_eq!(
        *seen_input.lock().unwrap(),
        vec![
            json!({"tool": "echo", "input": {}, "metadata": {"checkedBy": "house:echo:false"}}),
            json!({"tool": "lint", "input": {"strict": true}, "metadata": {"checkedBy": "house:lint:false"}}),
        ]
    );
    let results: Vec<ToolResultContent> = agent
        .turns()
        .iter()
        .flat_map(|t| t.content.iter())
        .filter_map(|b| match b {
            ContentBlock::ToolResult { content, .. } => Some(content.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(results[0], ToolResultContent::Text("from the explicit tool".into()));
    // The extension's skill, and its context section.
    let skills: Vec<String> = agent.skills().await.into_iter().map(|s| s.name).collect();
    assert_eq!(skills, vec!["house-style"]);
    let breakdown = agent.get_context_breakdown(&ContextOptions::default()).await.unwrap();
    assert!(
        breakdown
            .categories
            .iter()
            .any(|c| c.name == "house notes" && c.tokens == 42)
    );
}

#[cfg(feature = "mcp")]
#[tokio::test]
async fn explicit_skills_replace_the_extensions_and_explicit_mcp_servers_win_by_name() {
    let model = provider(vec![]);
    let order = Arc::default();
    let mut ext = extension(&order);
    let server = |name: &str, arg: &str| zidane_mcp::McpServerConfig::stdio(name, "server-bin", [arg]);
    ext.mcp_servers = vec![server("files", "from-extension"), server("search", "from-extension")];
    ext.mcp_config_transforms = vec![Arc::new(|servers: &mut Vec<zidane_mcp::McpServerConfig>| {
        servers.retain(|s| s.name != "search");
    })];
    let agent = create_agent(AgentOptions {
        skills: Some(zidane_agent::SkillsConfig {
            skills: vec![skill("mine")],
            ..Default::default()
        }),
        mcp_servers: vec![server("files", "explicit")],
        extensions: vec![ext],
        ..options(&model)
    })
    .unwrap();
    let skills: Vec<String> = agent.skills().await.into_iter().map(|s| s.name).collect();
    assert_eq!(skills, vec!["mine"]);
    let servers: Vec<String> = agent
        .mcp_servers()
        .iter()
        .map(|s| format!("{} {:?}", s.name, s.transport))
        .collect();
    assert_eq!(servers.len(), 1, "{servers:?}");
    assert!(
        servers[0].starts_with("files") && servers[0].contains("explicit"),
        "{servers:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn explicit_sub_agents_win_by_name_and_the_extensions_interceptors_run_first() {
    let model = provider(vec![Script::call("c1", "echo", json!({})), Script::answer("done")]);
    let order: Arc<Mutex<Vec<&'static str>>> = Arc::default();
    let mut ext = extension(&order);
    let (a, b) = (Arc::clone(&order), Arc::clone(&order));
    ext.interceptors = vec![Arc::new(FnInterceptor(move |_: &ToolCall| {
        a.lock().unwrap().push("extension interceptor");
        ToolCallVerdict::Allow
    }))];
    ext.behavior_transforms.clear();
    let agent = create_agent(AgentOptions {
        tools: ToolSet::new()
            .with(tool("echo", "Echo", "ok"))
            .with(zidane_tools::spawn()),
        spawn: zidane_agent::SpawnConfig {
            agents: vec![SubagentDefinition {
                name: "reviewer".into(),
                description: "The team's own reviewer".into(),
                ..Default::default()
            }],
            ..Default::default()
        },
        interceptors: vec![Arc::new(FnInterceptor(move |_: &ToolCall| {
            b.lock().unwrap().push("explicit interceptor");
            ToolCallVerdict::Allow
        }))],
        extensions: vec![ext],
        ..options(&model)
    })
    .unwrap();
    agent.run(AgentRunOptions::prompt("go")).await.unwrap();
    let spawn = model.requests()[0]
        .tools
        .iter()
        .find(|t| t.name == "spawn")
        .unwrap()
        .description
        .clone();
    assert!(spawn.ends_with("- reviewer: The team's own reviewer"), "{spawn}");
    assert_eq!(
        *order.lock().unwrap(),
        vec!["extension", "extension interceptor", "explicit interceptor"]
    );
}

/// `skill_policies` of two extensions narrow each other and the explicit
/// policy: a skill one denies or the other does not allow is left out of
/// the catalog and refused, and the smaller `max_active` holds.
#[tokio::test]
async fn extensions_skill_policies_narrow_the_skills_offered() {
    let p = provider(vec![
        Script::call("c1", "skill", json!({"name": "gamma"})),
        Script::answer("ok"),
    ]);
    let skills = Extension {
        name: "skills".into(),
        skills: vec![skill("alpha"), skill("beta"), skill("gamma"), skill("delta")],
        skill_policies: vec![zidane_agent::SkillPolicy {
            deny: vec!["beta".into()],
            max_active: Some(3),
            ..Default::default()
        }],
        ..Default::default()
    };
    let narrower = Extension {
        name: "narrower".into(),
        skill_policies: vec![zidane_agent::SkillPolicy {
            allow: Some(vec!["alpha".into(), "beta".into(), "delta".into()]),
            max_active: Some(1),
            ..Default::default()
        }],
        ..Default::default()
    };
    let agent = create_agent(AgentOptions {
        extensions: vec![skills, narrower],
        ..options(&p)
    })
    .unwrap();
    assert!(matches!(
        agent.activate_skill("beta").await,
        Err(zidane_agent::AgentError::Skill(zidane_agent::SkillError::Denied(_)))
    ));
    agent.activate_skill("alpha").await.unwrap();
    assert!(matches!(
        agent.activate_skill("delta").await,
        Err(zidane_agent::AgentError::Skill(zidane_agent::SkillError::Full(1)))
    ));
    agent.run(AgentRunOptions::prompt("Go.")).await.unwrap();
    let requests = p.requests();
    let system = requests[0].system.clone().unwrap_or_default();
    assert!(
        system.contains("- alpha (active):") && system.contains("- delta:"),
        "{system}"
    );
    assert!(!system.contains("- beta:") && !system.contains("- gamma:"), "{system}");
    assert_eq!(
        requests[1].messages.last().unwrap().content()[0],
        ContentBlock::ToolResult {
            tool_use_id: "c1".into(),
            content: ToolResultContent::Text("the skill `gamma` is not allowed here".into()),
            is_error: true,
        }
    );
}
