//! Tools at the model boundary and around a call: aliases, description
//! overrides, durable state, the turn sink, progress, timeouts, guards.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use zidane_core::clock::FixedClock;
use zidane_core::events::{
    BudgetMode, GuardAction, SharedError, StreamServerToolUse, StreamThinking, ToolProgress, ToolProgressEvent,
    ToolStateCommitFailed, ToolStateOp,
};
use zidane_core::seams::TurnSink;
use zidane_core::tool::{DescriptionOverride, ToolFailure, ToolStateStore};
use zidane_core::{FnTool, ToolOutput, ToolSet};
use zidane_hooks::HookBus;
use zidane_loop::{Behavior, LoopConfig, RepeatGuard, RepeatMode, RunLoop, RunOptions, ToolBudget};
use zidane_provider::scripted::{Script, ScriptedProvider};
use zidane_provider::{BoxFuture, ContentBlock, FinishReason, Provider, Role, SessionTurn, StreamEvent};

use crate::harness::harness;

fn counter() -> FnTool {
    FnTool::new(
        "counter",
        "Counts calls in durable state",
        json!({"type": "object"}),
        |_input, cx| async move {
            let n = cx.state().get("n").and_then(|v| v.as_u64()).unwrap_or(0) + 1;
            cx.state().set("n", json!(n));
            Ok(ToolOutput::text(n.to_string()))
        },
    )
}

#[tokio::test(start_paused = true)]
async fn aliases_and_descriptions_apply_at_the_model_boundary_only() {
    let tools = ToolSet::new().with(counter()).alias("counter", "tick").describe(
        "counter",
        DescriptionOverride::Map(Arc::new(|cur| format!("{cur}. Never call twice."))),
    );
    let h = harness(
        vec![Script::call("c1", "tick", json!({})), Script::answer("ok")],
        tools,
        Behavior::default(),
    );
    h.looped.run(RunOptions::prompt("Go.")).await.unwrap();
    let requests = h.provider.requests();
    assert_eq!(requests[0].tools[0].name, "tick");
    assert_eq!(
        requests[0].tools[0].description,
        "Counts calls in durable state. Never call twice."
    );
    // History holds the canonical name; the wire holds the alias.
    assert!(matches!(&h.looped.turns()[1].content[0], ContentBlock::ToolUse { name, .. } if name == "counter"));
    assert!(matches!(&requests[1].messages[1].content()[0], ContentBlock::ToolUse { name, .. } if name == "tick"));
    assert_eq!(h.wire_results(1)[0]["content"], json!("1"));
}

struct FailingStore;

impl ToolStateStore for FailingStore {
    fn load(&self) -> BoxFuture<'_, Result<BTreeMap<String, serde_json::Value>, ToolFailure>> {
        Box::pin(async { Ok(BTreeMap::new()) })
    }

    fn commit<'a>(&'a self, _ops: &'a [ToolStateOp]) -> BoxFuture<'a, Result<(), ToolFailure>> {
        Box::pin(async { Err("the store is read-only".into()) })
    }
}

fn looped(provider: &ScriptedProvider, tools: ToolSet, adjust: impl FnOnce(&mut LoopConfig)) -> RunLoop {
    let mut config = LoopConfig::new(Arc::new(provider.clone()) as Arc<dyn Provider>);
    config.tools = tools;
    config.clock = Arc::new(FixedClock::new(0));
    adjust(&mut config);
    RunLoop::new(config)
}

#[tokio::test(start_paused = true)]
async fn tool_state_is_committed_when_a_call_settles() {
    let provider = ScriptedProvider::new(
        "mock",
        [
            Script::call("c1", "counter", json!({})),
            Script::call("c2", "counter", json!({})),
            Script::answer("done"),
        ],
    );
    let looped = looped(&provider, ToolSet::new().with(counter()), |_| {});
    looped.run(RunOptions::prompt("Count twice.")).await.unwrap();
    let results: Vec<_> = provider.requests()[1..]
        .iter()
        .map(|r| match &r.messages.last().unwrap().content()[0] {
            ContentBlock::ToolResult { content, .. } => content.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        results,
        vec!["1".into(), "2".into()],
        "the second call saw the first call's committed write"
    );
}

#[tokio::test(start_paused = true)]
async fn a_failed_commit_is_reported_and_the_call_is_unaffected() {
    let provider = ScriptedProvider::new(
        "mock",
        [Script::call("c1", "counter", json!({})), Script::answer("done")],
    );
    let looped = looped(&provider, ToolSet::new().with(counter()), |c| {
        c.tool_state = Arc::new(FailingStore)
    });
    let seen: Arc<Mutex<Vec<(String, usize)>>> = Arc::default();
    let s = Arc::clone(&seen);
    looped.hooks().on_sync::<ToolStateCommitFailed, _>(move |ev, _| {
        s.lock().unwrap().push((ev.error().to_string(), ev.ops().len()));
        ev.handled = true;
        Ok(())
    });
    looped.run(RunOptions::prompt("Count.")).await.unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![("the store is read-only".to_owned(), 1)]);
    assert!(
        matches!(&provider.requests()[1].messages.last().unwrap().content()[0], ContentBlock::ToolResult { content, .. } if content == &"1".into())
    );
}

#[derive(Default)]
struct RecordingSink(Mutex<Vec<Vec<(Role, usize)>>>);

impl TurnSink for RecordingSink {
    fn flush<'a>(
        &'a self,
        turns: &'a [SessionTurn],
        _mark: zidane_core::seams::TurnMark<'a>,
    ) -> BoxFuture<'a, Result<(), SharedError>> {
        self.0
            .lock()
            .unwrap()
            .push(turns.iter().map(|t| (t.role, t.content.len())).collect());
        Box::pin(async { Ok(()) })
    }
}

#[tokio::test(start_paused = true)]
async fn the_sink_gets_each_tool_call_together_with_its_results() {
    let provider = ScriptedProvider::new(
        "mock",
        [Script::call("c1", "counter", json!({})), Script::answer("done")],
    );
    let sink = Arc::new(RecordingSink::default());
    let s = Arc::clone(&sink);
    let looped = looped(&provider, ToolSet::new().with(counter()), move |c| c.sink = Some(s));
    looped.run(RunOptions::prompt("Count.")).await.unwrap();
    assert_eq!(
        *sink.0.lock().unwrap(),
        vec![
            vec![(Role::User, 1)],
            vec![(Role::Assistant, 1), (Role::User, 1)],
            vec![(Role::Assistant, 1)]
        ],
        "the prompt as it arrives; never an assistant tool_use flushed alone"
    );
}

#[tokio::test(start_paused = true)]
async fn progress_reaches_observers_but_not_the_model() {
    let reporter = FnTool::new("build", "Builds", json!({"type": "object"}), |_input, cx| async move {
        for step in ["compiling", "linking"] {
            cx.report_progress(ToolProgress {
                message: Some(step.into()),
                data: serde_json::Value::Null,
            })
            .await;
        }
        Ok(ToolOutput::text("built"))
    });
    let h = harness(
        vec![Script::call("c1", "build", json!({})), Script::answer("ok")],
        ToolSet::new().with(reporter),
        Behavior::default(),
    );
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let s = Arc::clone(&seen);
    h.looped.hooks().on_sync::<ToolProgressEvent, _>(move |ev, _| {
        s.lock()
            .unwrap()
            .push(ev.progress().message.clone().unwrap_or_default());
        Ok(())
    });
    h.looped.run(RunOptions::prompt("Build.")).await.unwrap();
    assert_eq!(*seen.lock().unwrap(), vec!["compiling", "linking"]);
    assert_eq!(h.wire_results(1)[0]["content"], json!("built"));
    let hooks = h.hooks();
    let at = |name| hooks.iter().position(|h| *h == name).unwrap();
    assert!(at("tool:before") < at("tool:progress") && at("tool:progress") < at("tool:after"));
}

#[tokio::test(start_paused = true)]
async fn a_hanging_tool_times_out_as_a_tool_error() {
    let hang = FnTool::new(
        "hang",
        "Never returns",
        json!({"type": "object"}),
        |_input, _cx| async move {
            std::future::pending::<()>().await;
            Ok(ToolOutput::text("never"))
        },
    );
    let behavior = Behavior {
        tool_timeout: Some(Duration::from_secs(30)),
        ..Default::default()
    };
    let h = harness(
        vec![Script::call("c1", "hang", json!({})), Script::answer("ok")],
        ToolSet::new().with(hang),
        behavior,
    );
    let started = tokio::time::Instant::now();
    h.looped.run(RunOptions::prompt("Go.")).await.unwrap();
    assert_eq!(started.elapsed(), Duration::from_secs(30));
    assert_eq!(
        h.wire_results(1)[0],
        json!({"type": "tool_result", "tool_use_id": "c1", "content": "Tool error: timed out after 30s", "is_error": true})
    );
}

#[tokio::test(start_paused = true)]
async fn without_a_setting_a_hanging_tool_times_out_after_twenty_minutes() {
    let hang = FnTool::new(
        "hang",
        "Never returns",
        json!({"type": "object"}),
        |_input, _cx| async move {
            std::future::pending::<()>().await;
            Ok(ToolOutput::text("never"))
        },
    );
    let h = harness(
        vec![Script::call("c1", "hang", json!({})), Script::answer("ok")],
        ToolSet::new().with(hang),
        Behavior::default(),
    );
    let started = tokio::time::Instant::now();
    h.looped.run(RunOptions::prompt("Go.")).await.unwrap();
    assert_eq!(started.elapsed(), Duration::from_secs(1200));
    assert_eq!(h.wire_results(1)[0]["content"], "Tool error: timed out after 1200s");
}

#[tokio::test(start_paused = true)]
async fn window_repeat_guard_steers_and_budget_steer_nudges() {
    let mut budgets = BTreeMap::new();
    budgets.insert(
        "counter".to_owned(),
        ToolBudget {
            max: 1,
            mode: BudgetMode::Steer,
            message: "Stop counting.".into(),
        },
    );
    let guard = RepeatGuard {
        mode: RepeatMode::Window { window: 4 },
        threshold: 2,
        action: GuardAction::Steer,
        tools: vec!["counter".into()],
    };
    let behavior = Behavior {
        tool_budgets: budgets,
        repeat_guard: Some(guard),
        ..Default::default()
    };
    let h = harness(
        vec![
            Script::call("c1", "counter", json!({})),
            Script::call("c2", "counter", json!({})),
            Script::answer("ok"),
        ],
        ToolSet::new().with(counter()),
        behavior,
    );
    h.looped.run(RunOptions::prompt("Go.")).await.unwrap();
    let last = &h.provider.requests()[2];
    let steered = last.messages.iter().flat_map(|m| m.content()).find_map(|b| match b {
        ContentBlock::ToolResult {
            tool_use_id, content, ..
        } if tool_use_id == "c2" => Some(content.clone()),
        _ => None,
    });
    let zidane_provider::ToolResultContent::Text(text) = steered.unwrap() else {
        panic!("text result")
    };
    assert!(
        text.starts_with("2\n\n") && text.contains("same input 2 times"),
        "{text}"
    );
    assert_eq!(
        last.messages.last().unwrap().content(),
        &[ContentBlock::text("Stop counting.")]
    );
    let hooks = h.hooks();
    assert!(hooks.contains(&"tool-budget:exceeded") && hooks.contains(&"repeat-guard:exceeded"));
}

#[tokio::test(start_paused = true)]
async fn thinking_and_server_tools_reach_their_hooks_and_cost_nothing_unobserved() {
    let script = || {
        Script::new()
            .event(StreamEvent::ThinkingDelta {
                index: 0,
                text: "Let me search.".into(),
            })
            .event(StreamEvent::ThinkingSignature {
                index: 0,
                signature: "sig".into(),
            })
            .event(StreamEvent::ServerToolUse {
                index: 1,
                id: "s1".into(),
                name: "web_search".into(),
                input: json!({"query": "rust"}),
            })
            .event(StreamEvent::ServerToolResult {
                index: 2,
                tool_use_id: "s1".into(),
                kind: "web_search_tool_result".into(),
                content: json!([]),
            })
            .event(StreamEvent::TextDelta {
                index: 3,
                text: "Found it.".into(),
            })
            .end(FinishReason::Stop)
    };
    let h = harness(vec![script()], ToolSet::new(), Behavior::default());
    let thoughts: Arc<Mutex<Vec<String>>> = Arc::default();
    let t = Arc::clone(&thoughts);
    h.looped.hooks().on_sync::<StreamThinking, _>(move |ev, _| {
        t.lock().unwrap().push(ev.thinking().to_string());
        Ok(())
    });
    h.looped.run(RunOptions::prompt("Search.")).await.unwrap();
    assert_eq!(*thoughts.lock().unwrap(), vec!["Let me search."]);
    let hooks = h.hooks();
    assert!(hooks.contains(&"stream:server_tool_use") && hooks.contains(&"stream:server_tool_result"));
    let content = &h.looped.turns()[1].content;
    assert!(matches!(&content[0], ContentBlock::Thinking { signature: Some(s), .. } if s == "sig"));
    assert_eq!(content.len(), 4);

    // With nobody listening, no per-token payload is built: the bus reports
    // no listener and the run still completes.
    let quiet = ScriptedProvider::new("mock", [script()]);
    let looped = looped(&quiet, ToolSet::new(), |_| {});
    assert!(!looped.hooks().has::<StreamThinking>() && !looped.hooks().has::<StreamServerToolUse>());
    looped.run(RunOptions::prompt("Search.")).await.unwrap();
    let _ = HookBus::new();
}

#[tokio::test(start_paused = true)]
async fn pairing_is_repaired_when_a_transform_or_a_loaded_session_breaks_it() {
    // A loaded session whose last call never got its result.
    let provider = ScriptedProvider::new("mock", [Script::answer("ok"), Script::answer("ok")]);
    let looped = looped(&provider, ToolSet::new().with(counter()), |_| {});
    looped.set_turns(vec![
        SessionTurn {
            id: "t1".into(),
            role: Role::User,
            content: vec![ContentBlock::text("count")].into(),
            created_at: zidane_provider::Timestamp::EPOCH,
            usage: None,
        },
        SessionTurn {
            id: "t2".into(),
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: "c1".into(),
                name: "counter".into(),
                input: json!({}),
            }]
            .into(),
            created_at: zidane_provider::Timestamp::EPOCH,
            usage: None,
        },
    ]);
    let repairs: Arc<Mutex<Vec<String>>> = Arc::default();
    let r = Arc::clone(&repairs);
    looped
        .hooks()
        .on_sync::<zidane_core::events::PairingRepair, _>(move |ev, _| {
            r.lock().unwrap().push(ev.tool_use_id().to_owned());
            Ok(())
        });
    looped.run(RunOptions::prompt("Go on.")).await.unwrap();
    assert_eq!(*repairs.lock().unwrap(), vec!["c1"]);
    let first = &provider.requests()[0];
    assert!(
        matches!(&first.messages[2].content()[0], ContentBlock::ToolResult { tool_use_id, is_error: true, .. } if tool_use_id == "c1")
    );

    // A context:transform that drops a tool-results message is repaired too,
    // on the wire only.
    looped
        .hooks()
        .on_sync::<zidane_core::events::ContextTransform, _>(|ev, _| {
            ev.messages
                .retain(|m| !m.content().iter().any(|b| matches!(b, ContentBlock::ToolResult { .. })));
            Ok(())
        });
    repairs.lock().unwrap().clear();
    looped.run(RunOptions::prompt("Again.")).await.unwrap();
    assert_eq!(*repairs.lock().unwrap(), vec!["c1"]);
}

/// A sink that fails its first `failures` flushes, then keeps what it gets.
struct FlakySink {
    failures: Mutex<usize>,
    saved: Mutex<Vec<String>>,
}

impl TurnSink for FlakySink {
    fn flush<'a>(
        &'a self,
        turns: &'a [SessionTurn],
        _mark: zidane_core::seams::TurnMark<'a>,
    ) -> BoxFuture<'a, Result<(), zidane_core::events::SharedError>> {
        Box::pin(async move {
            let mut failures = self.failures.lock().unwrap();
            if *failures > 0 {
                *failures -= 1;
                return Err(Arc::new(zidane_core::events::MessageError("database is locked".into())) as _);
            }
            self.saved.lock().unwrap().extend(turns.iter().map(|t| t.id.clone()));
            Ok(())
        })
    }
}

#[tokio::test(start_paused = true)]
async fn a_store_that_recovers_within_the_retries_loses_nothing() {
    let provider = ScriptedProvider::new(
        "mock",
        [Script::call("c1", "counter", json!({})), Script::answer("done")],
    );
    let sink = Arc::new(FlakySink {
        failures: Mutex::new(2),
        saved: Mutex::default(),
    });
    let s = Arc::clone(&sink);
    let looped = looped(&provider, ToolSet::new().with(counter()), move |c| {
        c.sink = Some(s as Arc<dyn TurnSink>)
    });
    let stats = looped.run(RunOptions::prompt("Count.")).await.unwrap();
    assert!(stats.completed());
    let ids: Vec<String> = looped.turns().iter().map(|t| t.id.clone()).collect();
    assert_eq!(*sink.saved.lock().unwrap(), ids, "every turn saved, in order");
}

#[tokio::test(start_paused = true)]
async fn turns_the_store_cannot_save_fail_the_run_and_go_first_with_the_next_save() {
    let provider = ScriptedProvider::new(
        "mock",
        [
            Script::call("c1", "counter", json!({})),
            Script::answer("not asked"),
            Script::answer("second run"),
        ],
    );
    // The prompt's save and its two retries fail.
    let sink = Arc::new(FlakySink {
        failures: Mutex::new(3),
        saved: Mutex::default(),
    });
    let s = Arc::clone(&sink);
    let looped = looped(&provider, ToolSet::new().with(counter()), move |c| {
        c.sink = Some(s as Arc<dyn TurnSink>)
    });
    let err = looped.run(RunOptions::prompt("Count.")).await.unwrap_err();
    let zidane_loop::RunErrorKind::Store { unsaved, error } = &err.kind else {
        panic!("expected a store failure, got {}", err.kind);
    };
    assert_eq!(*unsaved, 1, "the prompt");
    assert_eq!(error.to_string(), "database is locked");
    assert_eq!(
        err.kind.to_string(),
        "1 turn(s) could not be saved to the session store: database is locked"
    );
    assert!(
        provider.requests().is_empty(),
        "no request went out for an unsaved prompt"
    );
    assert!(sink.saved.lock().unwrap().is_empty());

    // The store works again: the next run's first save carries the unsaved
    // prompt before its own turns, so the store never skips a turn.
    looped.run(RunOptions::prompt("Again.")).await.unwrap();
    let ids: Vec<String> = looped.turns().iter().map(|t| t.id.clone()).collect();
    assert_eq!(*sink.saved.lock().unwrap(), ids);
}

#[tokio::test(start_paused = true)]
async fn every_tool_result_is_bounded_by_one_budget() {
    let big = FnTool::new(
        "big",
        "Prints a lot",
        json!({"type": "object"}),
        |_input, _cx| async move { Ok(ToolOutput::text("x".repeat(300_000))) },
    );
    let h = harness(
        vec![Script::call("c1", "big", json!({})), Script::answer("ok")],
        ToolSet::new().with(big),
        Behavior::default(),
    );
    h.looped.run(RunOptions::prompt("Go.")).await.unwrap();
    let sent = h.wire_results(1)[0]["content"].as_str().unwrap().to_owned();
    assert!(sent.starts_with(&"x".repeat(1000)));
    assert!(
        sent.ends_with("\n[... the result was 300000 bytes; cut at 262144: ask for less at a time]"),
        "{}",
        &sent[sent.len() - 120..]
    );
    assert_eq!(
        sent.len(),
        262_144 + "\n[... the result was 300000 bytes; cut at 262144: ask for less at a time]".len()
    );
}
