use std::sync::{Arc, Mutex};

use serde_json::json;
use zidane_agent::{Agent, AgentOptions, create_agent};
use zidane_core::clock::FixedClock;
use zidane_core::events::HOOK_SPECS;
use zidane_core::{FnTool, ToolOutput, ToolSet};
use zidane_hooks::DynHandler;
use zidane_provider::Provider;
use zidane_provider::scripted::{Script, ScriptedProvider};

pub fn provider(scripts: Vec<Script>) -> ScriptedProvider {
    ScriptedProvider::new("mock", scripts)
}

pub fn echo_tools() -> ToolSet {
    ToolSet::new().with(FnTool::new(
        "echo",
        "Echo",
        json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        |input, _cx| async move {
            Ok(ToolOutput::text(format!(
                "echo: {}",
                input["text"].as_str().unwrap_or_default()
            )))
        },
    ))
}

pub fn options(provider: &ScriptedProvider) -> AgentOptions {
    AgentOptions {
        provider: vec![Arc::new(provider.clone()) as Arc<dyn Provider>],
        clock: Some(Arc::new(FixedClock::new(1_700_000_000_000))),
        tools: echo_tools(),
        ..Default::default()
    }
}

pub fn agent(provider: &ScriptedProvider) -> Agent {
    create_agent(options(provider)).unwrap()
}

/// Records every hook name the agent's bus emits.
pub fn record(agent: &Agent) -> Arc<Mutex<Vec<&'static str>>> {
    let log: Arc<Mutex<Vec<&'static str>>> = Arc::default();
    for spec in HOOK_SPECS {
        let log = Arc::clone(&log);
        spec.register(
            agent.hooks(),
            &DynHandler::sync(move |ev, _| {
                log.lock().unwrap().push(ev.name());
                Ok(())
            }),
        );
    }
    log
}
