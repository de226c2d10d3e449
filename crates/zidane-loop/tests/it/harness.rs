//! A loop on the scripted provider, with every hook recorded by name.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use zidane_core::ToolSet;
use zidane_core::clock::FixedClock;
use zidane_core::events::{AgentStats, HOOK_SPECS};
use zidane_hooks::DynHandler;
use zidane_loop::{Behavior, LoopConfig, RunLoop};
use zidane_provider::scripted::{Script, ScriptedProvider};
use zidane_provider::{ContentBlock, Provider};

pub struct Harness {
    pub provider: ScriptedProvider,
    pub looped: RunLoop,
    pub log: Arc<Mutex<Vec<&'static str>>>,
}

pub fn harness(scripts: Vec<Script>, tools: ToolSet, behavior: Behavior) -> Harness {
    harness_with(vec![ScriptedProvider::new("mock", scripts)], tools, behavior)
}

pub fn harness_with(providers: Vec<ScriptedProvider>, tools: ToolSet, behavior: Behavior) -> Harness {
    let provider = providers[0].clone();
    let mut config = LoopConfig::new(Arc::new(provider.clone()) as Arc<dyn Provider>);
    config.providers = providers
        .into_iter()
        .map(|p| Arc::new(p) as Arc<dyn Provider>)
        .collect();
    config.tools = tools;
    config.behavior = behavior;
    config.clock = Arc::new(FixedClock::new(1_700_000_000_000));
    let looped = RunLoop::new(config);
    let log: Arc<Mutex<Vec<&'static str>>> = Arc::default();
    for spec in HOOK_SPECS {
        let log = Arc::clone(&log);
        spec.register(
            looped.hooks(),
            &DynHandler::sync(move |ev, _| {
                log.lock().unwrap().push(ev.name());
                Ok(())
            }),
        );
    }
    Harness { provider, looped, log }
}

impl Harness {
    pub fn hooks(&self) -> Vec<&'static str> {
        self.log.lock().unwrap().clone()
    }

    /// The tool_result blocks of the last message the provider received.
    pub fn wire_results(&self, request: usize) -> Vec<Value> {
        let requests = self.provider.requests();
        let last = requests[request].messages.last().unwrap();
        last.content()
            .iter()
            .filter(|b| matches!(b, ContentBlock::ToolResult { .. }))
            .map(|b| serde_json::to_value(b).unwrap())
            .collect()
    }
}

/// The stats, as a snapshot-friendly value.
pub fn stats(stats: &AgentStats) -> Value {
    json!({
        "turns": stats.turns,
        "totalIn": stats.totals.input,
        "totalOut": stats.totals.output,
        "status": stats.status,
        "suspended": stats.suspended,
        "turnUsage": stats.turn_usage.iter().map(|u| json!([u.input, u.output, u.finish_reason])).collect::<Vec<_>>(),
    })
}
