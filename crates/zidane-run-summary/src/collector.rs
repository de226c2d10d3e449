//! The collector: hook handlers that fold one run's events into a summary.

use parking_lot::Mutex;
use std::fmt;
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use zidane_core::events::{
    AgentDone, AgentStart, BudgetExceeded, McpError, McpToolError, PairingRepair, RepeatGuardExceeded, SpawnComplete,
    SpawnError, StreamError, StreamProgress, StreamRetry, StreamServerToolUse, StreamText, StreamThinking,
    ToolBudgetExceeded, ToolDispatched, ToolError, ToolOutcome, ToolTransform, TurnAfter, ValidationReject,
};
use zidane_hooks::{HookBus, HookEvent, HookScope};

use crate::summary::{
    RunSummary, RunSummaryBlock, RunSummaryBudget, RunSummaryByModel, RunSummaryError, RunSummaryRepeatGuard,
    RunSummaryRetry, RunSummaryStatus, RunSummaryTokens, RunSummaryValidation,
};

/// The key of a language server's report in a tool result's metadata.
const DIAGNOSTICS_KEY: &str = "diagnostics";

/// Receives each finished summary.
pub type SummarySink = Arc<dyn Fn(&RunSummary) + Send + Sync>;

/// Options of [`create_run_summary_collector`].
#[derive(Clone, Default)]
pub struct RunSummaryCollectorOptions {
    /// Called with each finished summary, synchronously on `agent:done`.
    pub on_summary: Option<SummarySink>,
}

impl fmt::Debug for RunSummaryCollectorOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunSummaryCollectorOptions")
            .field("on_summary", &self.on_summary.is_some())
            .finish()
    }
}

/// Builds a [`RunSummary`] per run from the hooks of every bus it is
/// installed on. Cheap to clone; clones share [`RunSummaryCollector::latest`].
#[derive(Clone, Debug)]
pub struct RunSummaryCollector {
    options: RunSummaryCollectorOptions,
    latest: Arc<Mutex<Option<RunSummary>>>,
}

/// A collector. State is created fresh by each [`RunSummaryCollector::install`],
/// so one collector on several agents never mixes their runs; `latest()` is
/// the most recent summary of any of them.
pub fn create_run_summary_collector(options: RunSummaryCollectorOptions) -> RunSummaryCollector {
    RunSummaryCollector {
        options,
        latest: Arc::default(),
    }
}

#[derive(Default)]
struct Building {
    summary: RunSummary,
    started: Option<Instant>,
    ttft_ms: Option<u64>,
    children: Vec<RunSummary>,
}

/// A value's serialized name (`gate-block`, `orphan-tool-use`, ...).
fn name_of(value: &impl Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

impl RunSummaryCollector {
    /// The most recent summary of any install; `None` until a run ends.
    pub fn latest(&self) -> Option<RunSummary> {
        self.latest.lock().clone()
    }

    /// Installs the handlers on `hooks`; dropping (or closing) the returned
    /// scope uninstalls them.
    #[must_use = "dropping the returned scope uninstalls the collector at once"]
    pub fn install(&self, hooks: &HookBus) -> HookScope {
        let state: Arc<Mutex<Building>> = Arc::default();
        let scope = hooks.scope();
        install_run(&scope, &state);
        install_refusals(&scope, &state);
        install_errors(&scope, &state);
        install_repairs(&scope, &state);
        let (latest, on_summary) = (Arc::clone(&self.latest), self.options.on_summary.clone());
        let s = Arc::clone(&state);
        scope.on_sync::<AgentDone, _>(move |ev, _| {
            let summary = {
                let mut b = s.lock();
                let stats = ev.stats();
                let ended_at = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as u64);
                let duration_ms = b.started.map_or(0, |t| t.elapsed().as_millis() as u64);
                let children = std::mem::take(&mut b.children);
                let ttft_ms = b.ttft_ms;
                let summary = &mut b.summary;
                summary.turns = stats.turns;
                summary.status = RunSummaryStatus::of(stats.status);
                summary.stop_reason = Some(stats.status);
                summary.ended_at = zidane_provider::Timestamp::from_millis(ended_at);
                summary.duration = std::time::Duration::from_millis(duration_ms);
                summary.totals = RunSummaryTokens {
                    tokens: stats.totals,
                    ttft_ms,
                };
                summary.children = (!children.is_empty()).then_some(children);
                std::mem::take(summary)
            };
            if let Some(f) = &on_summary {
                f(&summary);
            }
            *latest.lock() = Some(summary);
            Ok(())
        });
        scope
    }
}

/// Registers `f` to update the run being built.
fn on<E: HookEvent>(
    scope: &HookScope,
    state: &Arc<Mutex<Building>>,
    f: impl Fn(&E, &mut Building) + Send + Sync + 'static,
) {
    let state = Arc::clone(state);
    scope.on_sync::<E, _>(move |ev, _| {
        f(ev, &mut state.lock());
        Ok(())
    });
}

/// The run's start, its first byte, and each turn's usage.
fn install_run(scope: &HookScope, state: &Arc<Mutex<Building>>) {
    on::<AgentStart>(scope, state, |ev, b| {
        *b = Building::default();
        b.started = Some(Instant::now());
        let s = &mut b.summary;
        s.run_id = Some(ev.run_id().to_owned());
        s.depth = ev.depth();
        s.parent_run_id = ev.parent_run_id().map(str::to_owned);
        s.agent_name = ev.agent_name().map(str::to_owned);
        s.started_at = zidane_provider::Timestamp::from_millis(ev.started_at());
    });
    fn first_byte(b: &mut Building) {
        if b.ttft_ms.is_none()
            && let Some(started) = b.started
        {
            b.ttft_ms = Some(started.elapsed().as_millis() as u64);
        }
    }
    on::<StreamText>(scope, state, |_, b| first_byte(b));
    on::<StreamThinking>(scope, state, |_, b| first_byte(b));
    on::<StreamProgress>(scope, state, |_, b| first_byte(b));
    on::<StreamServerToolUse>(scope, state, |_, b| first_byte(b));
    on::<TurnAfter>(scope, state, |ev, b| add_usage(&mut b.summary.by_model, ev.usage()));
}

/// Calls the loop refused, and budgets exceeded.
fn install_refusals(scope: &HookScope, state: &Arc<Mutex<Building>>) {
    on::<ToolDispatched>(scope, state, |ev, b| {
        if matches!(
            ev.outcome(),
            ToolOutcome::GateBlock | ToolOutcome::Unknown | ToolOutcome::InvalidInput
        ) {
            b.summary.blocks.push(RunSummaryBlock {
                call_id: ev.call_id().to_owned(),
                outcome: name_of(&ev.outcome()),
                reason: ev.reason().map(str::to_owned),
                tool_name: ev.name().to_owned(),
            });
        }
    });
    on::<ValidationReject>(scope, state, |ev, b| {
        b.summary.validation_rejects.push(RunSummaryValidation {
            call_id: ev.call_id().to_owned(),
            reason: ev.reason().to_owned(),
            tool_name: ev.name().to_owned(),
        });
    });
    on::<BudgetExceeded>(scope, state, |ev, b| {
        b.summary.budget_events.push(RunSummaryBudget {
            kind: "bytes".into(),
            limit: ev.budget(),
            mode: None,
            observed: ev.bytes(),
            tool_name: None,
            turn_id: Some(ev.turn_id().to_owned()),
        });
    });
    on::<ToolBudgetExceeded>(scope, state, |ev, b| {
        b.summary.budget_events.push(RunSummaryBudget {
            kind: "tool-count".into(),
            limit: u64::from(ev.max()),
            mode: Some(name_of(&ev.mode())),
            observed: u64::from(ev.count()),
            tool_name: Some(ev.tool().to_owned()),
            turn_id: Some(ev.turn_id().to_owned()),
        });
    });
}

/// Failures: tools, streams, MCP servers, sub-agents.
fn install_errors(scope: &HookScope, state: &Arc<Mutex<Building>>) {
    on::<ToolError>(scope, state, |ev, b| {
        b.summary.errors.push(RunSummaryError {
            kind: "tool".into(),
            message: ev.error().to_string(),
            call_id: Some(ev.call_id().to_owned()),
            tool_name: Some(ev.name().to_owned()),
            turn_id: Some(ev.turn_id().to_owned()),
            ..Default::default()
        });
    });
    on::<StreamError>(scope, state, |ev, b| {
        // A provider's failure names its type: the server's own
        // (`overloaded_error`), else the class it falls in.
        let error_type = ev
            .err()
            .downcast_ref::<zidane_provider::ProviderError>()
            .map(|e| e.error_type().map_or_else(|| format!("{:?}", e.kind()), str::to_owned));
        b.summary.errors.push(RunSummaryError {
            kind: "stream".into(),
            message: ev.err().to_string(),
            error_type,
            request_id: ev.request_id().map(str::to_owned),
            status_code: ev.status_code(),
            turn_id: Some(ev.turn_id().to_owned()),
            ..Default::default()
        });
    });
    on::<McpError>(scope, state, |ev, b| {
        b.summary.errors.push(RunSummaryError {
            kind: "mcp".into(),
            message: ev.error().to_string(),
            server: Some(ev.name().to_owned()),
            ..Default::default()
        });
    });
    on::<McpToolError>(scope, state, |ev, b| {
        b.summary.errors.push(RunSummaryError {
            kind: "mcp-tool".into(),
            message: ev.error().to_string(),
            server: Some(ev.server().to_owned()),
            tool_name: Some(ev.tool().to_owned()),
            call_id: Some(ev.call_id().to_owned()),
            ..Default::default()
        });
    });
    on::<SpawnError>(scope, state, |ev, b| {
        b.summary.errors.push(RunSummaryError {
            kind: "spawn".into(),
            message: ev.error().to_string(),
            child_id: Some(ev.spawn().child_id.clone()),
            ..Default::default()
        });
    });
}

/// Pairing repairs, the repeat guard, retries, and sub-agents' summaries.
fn install_repairs(scope: &HookScope, state: &Arc<Mutex<Building>>) {
    on::<PairingRepair>(scope, state, |ev, b| {
        *b.summary.pairing_repairs.entry(name_of(&ev.kind())).or_insert(0) += 1;
    });
    on::<RepeatGuardExceeded>(scope, state, |ev, b| {
        b.summary.repeat_guard_events.push(RunSummaryRepeatGuard {
            action: name_of(&ev.action()),
            count: ev.count(),
            threshold: ev.threshold(),
            tool_name: ev.tool().to_owned(),
            turn_id: Some(ev.turn_id().to_owned()),
        });
    });
    on::<StreamRetry>(scope, state, |ev, b| {
        b.summary.stream_retries.push(RunSummaryRetry {
            attempt: ev.attempt(),
            delay_ms: ev.delay_ms(),
            message: ev.err().to_string(),
            model: ev.model().to_owned(),
            request_id: ev.request_id().map(str::to_owned),
            status_code: ev.status_code(),
            turn_id: ev.turn_id().to_owned(),
        });
    });
    // A language server's report, which its hook put in the result's
    // metadata before this handler (installed after it) runs.
    on::<ToolTransform>(scope, state, |ev, b| {
        if let Some(report) = ev.metadata.get(DIAGNOSTICS_KEY).filter(|r| r.is_object()) {
            b.summary.diagnostics.add(report);
        }
    });
    on::<SpawnComplete>(scope, state, |ev, b| {
        let parent = b.summary.run_id.clone();
        b.children.push(child_summary(ev.stats(), parent));
    });
}

/// Folds turn usages into per-model totals, in the order models first
/// served.
fn add_usage(by_model: &mut Vec<RunSummaryByModel>, usage: &zidane_provider::TurnUsage) {
    let model = usage.model_id.clone().unwrap_or_else(|| "(unknown)".to_owned());
    let entry = match by_model.iter().position(|m| m.model_id == model) {
        Some(i) => &mut by_model[i],
        None => {
            by_model.push(RunSummaryByModel {
                model_id: model,
                ..Default::default()
            });
            let last = by_model.len() - 1;
            &mut by_model[last]
        }
    };
    entry.turns += 1;
    entry.input += usage.input;
    entry.output += usage.output;
    entry.cache_read += usage.cache_read;
    entry.cache_creation += usage.cache_creation;
    match usage.cost {
        Some(cost) => entry.cost += cost,
        None => entry.unpriced_turns += 1,
    }
}

/// A finished child's summary, from the statistics `spawn:complete` carries
/// (its own children included, recursively). Its timestamps and failures
/// are not in those statistics: `startedAt` / `endedAt` stay 0 and the
/// error lists empty; `durationMs` is the child's wall time.
fn child_summary(child: &zidane_core::events::ChildRunStats, parent_run_id: Option<String>) -> RunSummary {
    let stats = &child.stats;
    let mut by_model = Vec::new();
    for usage in &stats.turn_usage {
        add_usage(&mut by_model, usage);
    }
    let children: Vec<RunSummary> = stats.children.iter().map(|c| child_summary(c, None)).collect();
    RunSummary {
        agent_name: child.agent_name.clone(),
        depth: child.depth,
        duration: child.duration,
        parent_run_id,
        status: RunSummaryStatus::of(stats.status),
        stop_reason: Some(stats.status),
        turns: stats.turns,
        by_model,
        children: (!children.is_empty()).then_some(children),
        totals: RunSummaryTokens {
            tokens: stats.totals,
            ttft_ms: None,
        },
        ..Default::default()
    }
}
