//! The `@zidane-rs/agent` Node addon: the reference's `zidane/agent`
//! TypeScript API served by the Rust agent core.
//!
//! This crate is the native half: a [`NativeAgent`] per agent, around one
//! Rust [`Agent`], with one thread-safe function back into JavaScript
//! (`bridge.rs`) through which the Rust loop calls JavaScript tools and hook
//! handlers. The JavaScript half (`npm/index.js`) gives the reference's
//! shapes: `createAgent`, the providers, the `basic` preset, the hook bus,
//! `createRunSummaryCollector`.
//!
//! Invariants:
//! - nothing here keeps the Node process alive: the bridge is a weak
//!   thread-safe function, and a pending promise exists only while a call
//!   into Rust is in flight;
//! - no call from the JavaScript thread blocks on the Rust runtime (a hook
//!   handler waiting on that thread would never run).

#![allow(missing_docs)] // the N-API exports are documented in `npm/index.d.ts`

mod bridge;
#[cfg(test)]
mod hookgen;
mod options;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use napi::bindgen_prelude::within_runtime_if_available;
use napi::{Error, Result, Status};
use napi_derive::napi;
use parking_lot::Mutex;
use serde_json::{Value, json};
use zidane::agent::{
    Agent, AgentCacheChange, CompactOptions, ContextOptions, QueuedMessageOptions, RunOutput, RunSummaryCollector,
    RunSummaryCollectorOptions, create_agent, create_run_summary_collector,
};
use zidane::durable::DurableResumeOptions;
use zidane::hooks::{HookHandle, HookScope};
use zidane::providers::ThinkingLevel;

use crate::bridge::{Bridge, JsCall};

fn invalid(message: impl Into<String>) -> Error {
    Error::new(Status::InvalidArg, message.into())
}

fn failed(message: impl ToString) -> Error {
    Error::new(Status::GenericFailure, message.to_string())
}

fn parse<T: serde::de::DeserializeOwned>(json: &str, what: &str) -> Result<T> {
    serde_json::from_str(json).map_err(|e| invalid(format!("{what}: {e}")))
}

fn output_json(output: &RunOutput) -> String {
    let mut stats = serde_json::to_value(&output.stats).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut stats {
        map.insert("text".into(), Value::String(output.text.clone()));
    }
    stats.to_string()
}

/// A run-summary collector installed on the bus, and its handlers' scope.
type Installed = (RunSummaryCollector, HookScope);

/// One agent, driven from JavaScript.
#[napi]
pub struct NativeAgent {
    agent: Agent,
    bridge: Bridge,
    next: AtomicU32,
    hooks: Arc<Mutex<HashMap<u32, HookHandle>>>,
    summaries: Arc<Mutex<HashMap<u32, Installed>>>,
}

#[napi]
impl NativeAgent {
    /// Builds the agent from the normalized options (JSON) and the
    /// dispatcher that runs JavaScript tools and hook handlers.
    #[napi(constructor)]
    pub fn new(options: String, dispatch: JsCall) -> Result<Self> {
        let spec: options::Spec = parse(&options, "createAgent options")?;
        let bridge = Bridge::new(dispatch);
        let options = options::agent_options(spec, &bridge).map_err(invalid)?;
        let agent = within_runtime_if_available(|| create_agent(options)).map_err(|e| invalid(e.to_string()))?;
        Ok(NativeAgent {
            agent,
            bridge,
            next: AtomicU32::new(1),
            hooks: Arc::default(),
            summaries: Arc::default(),
        })
    }

    /// The hook names of the vocabulary, in order.
    #[napi]
    pub fn hook_names() -> Vec<String> {
        zidane::agent::hook_names().map(str::to_owned).collect()
    }

    /// Routes the hook `name` to the dispatcher; returns the subscription's id.
    #[napi]
    pub fn subscribe(&self, name: String) -> Result<u32> {
        let handle = bridge::register(self.agent.hooks(), &name, self.bridge.clone())
            .ok_or_else(|| invalid(format!("unknown hook `{name}`")))?;
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.hooks.lock().insert(id, handle);
        Ok(id)
    }

    /// Ends a subscription; `false` when it had ended already.
    #[napi]
    pub fn unsubscribe(&self, id: u32) -> bool {
        let handle = self.hooks.lock().remove(&id);
        handle.is_some_and(|h| self.agent.hooks().off(h))
    }

    #[napi]
    pub async fn run(&self, options: String) -> Result<String> {
        let spec: options::RunSpec = parse(&options, "run options")?;
        let agent = self.agent.clone();
        let output = agent.run(options::run_options(spec)).await.map_err(failed)?;
        Ok(output_json(&output))
    }

    #[napi]
    pub async fn resume(&self) -> Result<Option<String>> {
        let agent = self.agent.clone();
        let output = agent.resume(DurableResumeOptions::default()).await.map_err(failed)?;
        Ok(output.as_ref().map(output_json))
    }

    #[napi]
    pub fn steer(&self, prompt: String, id: Option<String>) -> bool {
        self.agent.steer(
            prompt,
            QueuedMessageOptions {
                id,
                ..Default::default()
            },
        )
    }

    #[napi]
    pub fn follow_up(&self, prompt: String, id: Option<String>) -> bool {
        self.agent.follow_up(
            prompt,
            QueuedMessageOptions {
                id,
                ..Default::default()
            },
        )
    }

    #[napi]
    pub fn abort(&self, reason: Option<String>) {
        match reason {
            Some(reason) => self.agent.abort_with(&reason),
            None => self.agent.abort(),
        }
    }

    #[napi]
    pub fn cancel_tool(&self, call_id: String, reason: Option<String>) -> bool {
        self.agent.cancel_tool(&call_id, reason.as_deref())
    }

    #[napi]
    pub async fn wait_for_idle(&self) -> Result<()> {
        let agent = self.agent.clone();
        agent.wait_for_idle().await;
        Ok(())
    }

    #[napi(getter)]
    pub fn is_running(&self) -> bool {
        self.agent.is_running()
    }

    /// The turns in memory, as JSON.
    #[napi]
    pub fn turns(&self) -> String {
        serde_json::to_string(&self.agent.turns()).unwrap_or_else(|_| "[]".into())
    }

    #[napi]
    pub fn session_id(&self) -> Option<String> {
        self.agent.session_id()
    }

    #[napi]
    pub async fn reset(&self) -> Result<()> {
        let agent = self.agent.clone();
        agent.reset().await.map_err(failed)
    }

    #[napi]
    pub async fn destroy(&self) -> Result<()> {
        let agent = self.agent.clone();
        let handles: Vec<HookHandle> = self.hooks.lock().drain().map(|(_, h)| h).collect();
        for handle in handles {
            agent.hooks().off(handle);
        }
        self.summaries.lock().clear();
        agent.destroy().await;
        Ok(())
    }

    #[napi]
    pub async fn compact(&self, options: String) -> Result<String> {
        let spec: Value = parse(&options, "compact options")?;
        let options = CompactOptions {
            keep_turns: spec.get("keepTurns").and_then(Value::as_u64).map(|n| n as usize),
            focus: spec.get("focus").and_then(Value::as_str).map(str::to_owned),
        };
        let agent = self.agent.clone();
        let result = agent.compact(options).await.map_err(failed)?;
        Ok(json!({
            "compacted": result.compacted,
            "replacedCount": result.replaced,
            "restoredFiles": result.restored,
            "summary": result.summary,
            "effectiveTokens": result.effective_tokens,
        })
        .to_string())
    }

    #[napi]
    pub fn cache_expires_at(&self) -> Option<f64> {
        let at = self.agent.cache_expires_at()?;
        let ms = at
            .to_system_time()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_millis();
        Some(ms as f64)
    }

    #[napi]
    pub fn cache_impact(&self, change: String) -> Result<String> {
        let spec: Value = parse(&change, "cacheImpact change")?;
        let thinking = match spec.get("thinking") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                serde_json::from_value::<ThinkingLevel>(v.clone())
                    .map_err(|e| invalid(format!("cacheImpact: thinking: {e}")))?,
            ),
        };
        let change = AgentCacheChange {
            model: spec.get("model").and_then(Value::as_str).map(str::to_owned),
            thinking,
            system: spec.get("system").and_then(Value::as_bool).unwrap_or(false),
            tools: spec.get("tools").and_then(Value::as_bool).unwrap_or(false),
        };
        let impact = self.agent.cache_impact(&change);
        Ok(json!({ "tokens": impact.tokens, "changed": impact.changed }).to_string())
    }

    #[napi]
    pub async fn get_context_breakdown(&self, options: String) -> Result<Option<String>> {
        let spec: Value = parse(&options, "getContextBreakdown options")?;
        let options = ContextOptions {
            effective_window: spec.get("effectiveWindow").and_then(Value::as_u64),
            ..Default::default()
        };
        let agent = self.agent.clone();
        let Some(breakdown) = agent.get_context_breakdown(&options).await else {
            return Ok(None);
        };
        let categories: Vec<Value> = breakdown
            .categories
            .iter()
            .map(|c| json!({ "name": c.name, "tokens": c.tokens, "estimated": c.estimated }))
            .collect();
        Ok(Some(
            json!({
                "categories": categories,
                "used": breakdown.used,
                "effectiveWindow": breakdown.effective_window,
                "fraction": breakdown.fraction,
            })
            .to_string(),
        ))
    }

    /// Installs a run-summary collector on this agent's bus; each summary
    /// also reaches JavaScript as a `summary` envelope. Returns its id.
    #[napi]
    pub fn install_summary(&self) -> u32 {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let bridge = self.bridge.clone();
        let collector = create_run_summary_collector(RunSummaryCollectorOptions {
            on_summary: Some(Arc::new(move |summary| {
                bridge.tell(json!({ "kind": "summary", "id": id, "summary": summary }));
            })),
        });
        let scope = collector.install(self.agent.hooks());
        self.summaries.lock().insert(id, (collector, scope));
        id
    }

    /// The latest summary of collector `id`, as JSON.
    #[napi]
    pub fn summary_latest(&self, id: u32) -> Option<String> {
        let summaries = self.summaries.lock();
        let (collector, _) = summaries.get(&id)?;
        serde_json::to_string(&collector.latest()?).ok()
    }

    #[napi]
    pub fn uninstall_summary(&self, id: u32) -> bool {
        self.summaries.lock().remove(&id).is_some()
    }
}
