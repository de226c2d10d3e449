use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use zidane_core::clock::FixedClock;
use zidane_core::events::{GuardAction, ToolGate};
use zidane_core::{FnTool, ToolOutput, ToolSet};
use zidane_loop::{Behavior, LoopConfig, RepeatGuard, RepeatMode, RunLoop, RunOptions};
use zidane_provider::scripted::{Script, ScriptedProvider};
use zidane_provider::{ErrorKind, FinishReason, Provider, ProviderError};

use crate::{RunSummary, RunSummaryCollectorOptions, create_run_summary_collector};

fn looped(scripts: Vec<Script>, behavior: Behavior) -> RunLoop {
    let provider = ScriptedProvider::new("mock", scripts);
    let mut config = LoopConfig::new(Arc::new(provider) as Arc<dyn Provider>);
    config.clock = Arc::new(FixedClock::new(1_700_000_000_000));
    config.agent_name = Some("reviewer".into());
    config.behavior = behavior;
    config.tools = ToolSet::new()
        .with(FnTool::new(
            "echo",
            "Echo",
            json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
            |_i, _cx| async move { Ok(ToolOutput::text("ok")) },
        ))
        .with(FnTool::new(
            "fail",
            "Fails",
            json!({"type": "object"}),
            |_i, _cx| async move { Err::<ToolOutput, _>("disk full".into()) },
        ));
    RunLoop::new(config)
}

/// A run that hits a bit of everything: a gate block, a validation reject,
/// an unknown tool, a tool error, a retry, a repeat-guard steer and a byte
/// budget.
#[tokio::test(start_paused = true)]
async fn a_summary_of_an_eventful_run() {
    let overloaded = ProviderError::new(ErrorKind::Overloaded, "mock", "Overloaded")
        .with_status(529)
        .with_request_id(Some("req_1".into()));
    let batch = Script::new()
        .tool_call(0, "c1", "echo", json!({"n": 1}))
        .tool_call(1, "c2", "echo", json!({"n": "many"}))
        .tool_call(2, "c3", "teleport", json!({}))
        .tool_call(3, "c4", "fail", json!({}))
        .tool_call(4, "c5", "echo", json!({"n": 5}))
        .usage(100, 20)
        .end(FinishReason::ToolCalls);
    let scripts = vec![
        Script::new().error(overloaded),
        batch,
        Script::new()
            .tool_call(0, "c6", "echo", json!({"n": 5}))
            .usage(120, 10)
            .end(FinishReason::ToolCalls),
        Script::answer("done"),
    ];
    let guard = RepeatGuard {
        mode: RepeatMode::Window { window: 8 },
        threshold: 2,
        action: GuardAction::Steer,
        tools: vec![],
    };
    let behavior = Behavior {
        tool_output_budget: Some(4),
        repeat_guard: Some(guard),
        ..Default::default()
    };
    let looped = looped(scripts, behavior);
    looped.hooks().on_sync::<ToolGate, _>(|g, _| {
        if g.call_id() == "c1" {
            g.block = true;
            g.reason = "read-only session".into();
        }
        Ok(())
    });
    let seen: Arc<Mutex<Vec<RunSummary>>> = Arc::default();
    let s = Arc::clone(&seen);
    let collector = create_run_summary_collector(RunSummaryCollectorOptions {
        on_summary: Some(Arc::new(move |summary: &RunSummary| {
            s.lock().unwrap().push(summary.clone())
        })),
    });
    let installed = collector.install(looped.hooks());
    looped.run(RunOptions::prompt("Go.")).await.unwrap();
    drop(installed);

    let summary = collector.latest().unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![summary.clone()]);
    assert_eq!(summary.turns, 3);
    assert_eq!(summary.blocks.len(), 3);
    assert_eq!(summary.stream_retries.len(), 1);
    let json = serde_json::to_value(&summary).unwrap();
    let back: RunSummary = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(back, summary, "round-trips through JSON without loss");
    insta::assert_json_snapshot!(json, {
        ".endedAt" => "[ended]",
        ".durationMs" => "[duration]",
        ".totals.ttftMs" => "[ttft]",
    });
}

#[tokio::test(start_paused = true)]
async fn one_collector_on_two_agents_never_mixes_their_runs() {
    let a = looped(vec![Script::answer("a")], Behavior::default());
    let b = looped(
        vec![
            Script::new()
                .delay(Duration::from_secs(1))
                .usage(7, 7)
                .end(FinishReason::Stop),
        ],
        Behavior::default(),
    );
    let collector = create_run_summary_collector(RunSummaryCollectorOptions::default());
    let _ia = collector.install(a.hooks());
    let _ib = collector.install(b.hooks());
    let (ra, rb) = tokio::join!(a.run(RunOptions::prompt("one")), b.run(RunOptions::prompt("two")));
    ra.unwrap();
    rb.unwrap();
    let latest = collector.latest().unwrap();
    assert_eq!(
        (latest.totals.tokens.input, latest.turns),
        (7, 1),
        "the later run, with only its own usage"
    );
    assert_eq!(latest.by_model.len(), 1);
    assert_eq!(latest.by_model[0].turns, 1);
}

/// A run that spawned: each finished child (and its own children) is in
/// `children`, with its totals and per-model figures.
#[tokio::test]
async fn a_run_that_spawned_lists_its_children() {
    use zidane_core::events::{
        AgentDone, AgentDoneInit, AgentStart, AgentStartInit, AgentStats, ChildRunStats, RunStatus, SpawnComplete,
        SpawnCompleteInit,
    };
    use zidane_hooks::HookBus;
    use zidane_provider::TurnUsage;

    let bus = HookBus::new();
    let collector = create_run_summary_collector(RunSummaryCollectorOptions::default());
    let _scope = collector.install(&bus);
    let usage = |input, output, model: &str| TurnUsage {
        input,
        output,
        cost: Some(0.5),
        model_id: Some(model.to_owned()),
        ..Default::default()
    };
    let mut grandchild = AgentStats::default();
    grandchild.turns = 1;
    grandchild.totals.input = 7;
    grandchild.turn_usage = vec![usage(7, 1, "small")];
    let mut child = AgentStats::default();
    child.turns = 2;
    child.totals.input = 30 + 7;
    child.totals.output = 4 + 1;
    child.totals.cost = Some(1.5);
    child.turn_usage = vec![usage(10, 2, "big"), usage(20, 2, "big")];
    child.children = vec![ChildRunStats {
        child_id: "g1".into(),
        agent_name: None,
        depth: 2,
        duration: std::time::Duration::from_millis(5),
        stats: grandchild,
    }];
    bus.emit(&mut AgentStart::new(AgentStartInit {
        agent_name: None,
        depth: 0,
        parent_run_id: None,
        provider_name: None,
        run_id: "root".into(),
        started_at: 1,
        tracing_context: Default::default(),
    }))
    .await
    .unwrap();
    bus.emit(&mut SpawnComplete::new(SpawnCompleteInit {
        stats: ChildRunStats {
            child_id: "c1".into(),
            agent_name: Some("reviewer".into()),
            depth: 1,
            duration: std::time::Duration::from_millis(40),
            stats: child,
        },
    }))
    .await
    .unwrap();
    let mut done = AgentStats::default();
    done.status = RunStatus::Completed;
    bus.emit(&mut AgentDone::new(AgentDoneInit { stats: done }))
        .await
        .unwrap();

    let summary = collector.latest().unwrap();
    let children = serde_json::to_value(summary.children.unwrap()).unwrap();
    assert_eq!(
        children,
        json!([{
            "agentName": "reviewer",
            "blocks": [],
            "budgetEvents": [],
            "byModel": [{"cacheCreation": 0, "cacheRead": 0, "cost": 1.0, "input": 30, "modelId": "big", "output": 4, "turns": 2}],
            "children": [{
                "blocks": [],
                "budgetEvents": [],
                "byModel": [{"cacheCreation": 0, "cacheRead": 0, "cost": 0.5, "input": 7, "modelId": "small", "output": 1, "turns": 1}],
                "depth": 2,
                "durationMs": 5,
                "endedAt": 0,
                "errors": [],
                "pairingRepairs": {},
                "repeatGuardEvents": [],
                "startedAt": 0,
                "status": "completed",
                "stopReason": "completed",
                "streamRetries": [],
                "totals": {"cacheCreation": 0, "cacheRead": 0, "input": 7, "output": 0},
                "turns": 1,
                "validationRejects": []
            }],
            "depth": 1,
            "durationMs": 40,
            "endedAt": 0,
            "errors": [],
            "pairingRepairs": {},
            "parentRunId": "root",
            "repeatGuardEvents": [],
            "startedAt": 0,
            "status": "completed",
            "stopReason": "completed",
            "streamRetries": [],
            "totals": {"cacheCreation": 0, "cacheRead": 0, "cost": 1.5, "input": 37, "output": 5},
            "turns": 2,
            "validationRejects": []
        }])
    );
}

/// A turn-limit stop counts as `completed` (the spec's two values) and says
/// what stopped it; a model without a price has its turns counted as
/// unpriced instead of passing for free.
#[tokio::test(start_paused = true)]
async fn a_turn_limit_stop_and_an_unknown_cost_are_named() {
    let call = || {
        Script::new()
            .tool_call(0, "c1", "echo", json!({"n": 1}))
            .usage(10, 2)
            .end(FinishReason::ToolCalls)
    };
    let behavior = Behavior {
        max_turns: Some(2),
        ..Default::default()
    };
    let looped = looped(vec![call(), call(), call()], behavior);
    let collector = create_run_summary_collector(RunSummaryCollectorOptions::default());
    let installed = collector.install(looped.hooks());
    looped.run(RunOptions::prompt("Go.")).await.unwrap();
    drop(installed);

    let json = serde_json::to_value(collector.latest().unwrap()).unwrap();
    assert_eq!(json["status"], "completed");
    assert_eq!(json["stopReason"], "max-turns");
    assert_eq!(json["byModel"][0]["cost"], 0.0);
    assert_eq!(json["byModel"][0]["unpricedTurns"], 2);
}

#[tokio::test(start_paused = true)]
async fn a_provider_errors_type_reaches_the_summary() {
    let looped = looped(
        vec![
            Script::new().error(
                ProviderError::new(ErrorKind::InvalidRequest, "mock", "max_tokens is too large")
                    .with_error_type(Some("invalid_request_error".into())),
            ),
        ],
        Behavior::default(),
    );
    let collector = create_run_summary_collector(RunSummaryCollectorOptions::default());
    let installed = collector.install(looped.hooks());
    assert!(looped.run(RunOptions::prompt("Go.")).await.is_err());
    drop(installed);
    let summary = collector.latest().unwrap();
    let stream = summary
        .errors
        .iter()
        .find(|e| e.kind == "stream")
        .expect("the stream error is listed");
    assert_eq!(stream.error_type.as_deref(), Some("invalid_request_error"));
}

/// Tool results whose metadata carries a language server's report are
/// counted: problems reported, errors among them, and fixed.
#[tokio::test(start_paused = true)]
async fn diagnostics_in_tool_results_are_counted() {
    let call = |id: &str, n: i64| {
        Script::new()
            .tool_call(0, id, "echo", json!({"n": n}))
            .usage(10, 2)
            .end(FinishReason::ToolCalls)
    };
    let looped = looped(
        vec![call("c1", 1), call("c2", 2), call("c3", 3), Script::answer("done")],
        Behavior::default(),
    );
    // As the language servers' hook does: a report on the first two calls.
    looped
        .hooks()
        .on_sync::<zidane_core::events::ToolTransform, _>(|ev, _| {
            let report = match ev.call_id() {
                "c1" => json!({"errors": 2, "warnings": 1, "fixed": 0, "new": 3}),
                "c2" => json!({"errors": 0, "warnings": 0, "fixed": 2, "new": 0}),
                _ => return Ok(()),
            };
            ev.metadata.insert("diagnostics".into(), report);
            Ok(())
        });
    let collector = create_run_summary_collector(RunSummaryCollectorOptions::default());
    let installed = collector.install(looped.hooks());
    looped.run(RunOptions::prompt("Go.")).await.unwrap();
    drop(installed);
    let summary = collector.latest().unwrap();
    assert_eq!(
        summary.diagnostics,
        crate::RunSummaryDiagnostics {
            results: 2,
            reported: 3,
            errors: 2,
            fixed: 2,
        }
    );
    let json = serde_json::to_value(&summary).unwrap();
    assert_eq!(
        json["diagnostics"],
        json!({"results": 2, "reported": 3, "errors": 2, "fixed": 2})
    );
}
