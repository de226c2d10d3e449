//! The cache-break logger on real runs of the loop (scripted provider).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::{Arc, Mutex};

use serde_json::json;
use zidane_cache_telemetry::{CacheBreakLoggerOptions, install_cache_break_logger};
use zidane_core::clock::FixedClock;
use zidane_core::events::{
    CacheBreak, CacheBreakInfo, CacheDimensionName, CacheDrift, CacheDriftInfo, CacheSystemSection, ContextTransform,
    SystemTransform, TurnBefore,
};
use zidane_core::{FnTool, ToolOutput, ToolSet};
use zidane_loop::{LoopConfig, RunLoop, RunOptions};
use zidane_provider::scripted::{Script, ScriptedProvider};
use zidane_provider::{FinishReason, Message, Provider, SYSTEM_PROMPT_BOUNDARY, StreamEvent, ToolSpec, UsageReport};

fn turn(i: usize, read: u64, created: u64, last: bool) -> Script {
    let script = if last {
        Script::new().text("done")
    } else {
        Script::new().tool_call(0, format!("c{i}"), "echo", json!({}))
    };
    script
        .event(StreamEvent::Usage(UsageReport {
            input: Some(50),
            output: Some(10),
            cache_read: Some(read),
            cache_creation: Some(created),
            ..Default::default()
        }))
        .end(if last {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        })
}

struct Rig {
    looped: RunLoop,
    drifts: Arc<Mutex<Vec<CacheDriftInfo>>>,
    breaks: Arc<Mutex<Vec<CacheBreakInfo>>>,
    lines: Arc<Mutex<Vec<String>>>,
    _logger: zidane_hooks::HookScope,
}

/// `usage[i]` = (cache read, cache creation) of turn i; the last turn answers.
fn rig(usage: &[(u64, u64)]) -> Rig {
    rig_with(usage, |_| {})
}

/// As [`rig`], with `setup` registering request-rewriting hooks before the
/// logger is installed (the logger snapshots what the handlers before it
/// left).
fn rig_with(usage: &[(u64, u64)], setup: impl FnOnce(&RunLoop)) -> Rig {
    let scripts: Vec<Script> = usage
        .iter()
        .enumerate()
        .map(|(i, (r, c))| turn(i, *r, *c, i + 1 == usage.len()))
        .collect();
    let provider = ScriptedProvider::new("mock", scripts);
    let mut config = LoopConfig::new(Arc::new(provider) as Arc<dyn Provider>);
    config.clock = Arc::new(FixedClock::new(0));
    config.system = Some(format!("You are careful.{SYSTEM_PROMPT_BOUNDARY}Session notes."));
    config.tools = ToolSet::new().with(FnTool::new(
        "echo",
        "Echo",
        json!({"type": "object"}),
        |_i, _cx| async move { Ok(ToolOutput::text("ok")) },
    ));
    let looped = RunLoop::new(config);
    setup(&looped);
    let lines: Arc<Mutex<Vec<String>>> = Arc::default();
    let l = Arc::clone(&lines);
    let logger = install_cache_break_logger(
        looped.hooks(),
        CacheBreakLoggerOptions {
            log: Some(Arc::new(move |line: &str| l.lock().unwrap().push(line.to_owned()))),
            ..Default::default()
        },
    );
    let drifts: Arc<Mutex<Vec<CacheDriftInfo>>> = Arc::default();
    let breaks: Arc<Mutex<Vec<CacheBreakInfo>>> = Arc::default();
    let (d, b) = (Arc::clone(&drifts), Arc::clone(&breaks));
    looped.hooks().on_sync::<CacheDrift, _>(move |ev, _| {
        d.lock().unwrap().push(ev.info().clone());
        Ok(())
    });
    looped.hooks().on_sync::<CacheBreak, _>(move |ev, _| {
        b.lock().unwrap().push(ev.info().clone());
        Ok(())
    });
    Rig {
        looped,
        drifts,
        breaks,
        lines,
        _logger: logger,
    }
}

/// Lets the drift emissions, which run off the request path, finish.
async fn settle() {
    for _ in 0..16 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_drift_handler_that_never_returns_holds_no_request() {
    let rig = rig(&[(0, 1000), (1000, 200), (300, 1100)]);
    rig.looped.hooks().on_sync::<SystemTransform, _>(|ev, _| {
        if ev.turn() == 3 {
            ev.system = ev.system.replace("Session notes.", "Session notes: 3 files read.");
        }
        Ok(())
    });
    rig.looped
        .hooks()
        .on::<CacheDrift, _>(|_, _| Box::pin(std::future::pending::<Result<(), zidane_hooks::HandlerError>>()));
    let run = rig.looped.run(RunOptions::prompt("Work."));
    let done = tokio::time::timeout(std::time::Duration::from_secs(600), run).await;
    assert!(
        done.is_ok_and(|r| r.is_ok()),
        "the run ended while the drift's handler still waits"
    );
    settle().await;
    assert_eq!(
        rig.drifts.lock().unwrap().len(),
        1,
        "the other handlers heard of the drift"
    );
}

#[tokio::test(start_paused = true)]
async fn a_healthy_run_emits_nothing() {
    let rig = rig(&[(0, 1000), (1000, 200), (1200, 150), (1350, 100)]);
    rig.looped.run(RunOptions::prompt("Work.")).await.unwrap();
    settle().await;
    assert!(rig.drifts.lock().unwrap().is_empty());
    assert!(rig.breaks.lock().unwrap().is_empty());
    assert!(rig.lines.lock().unwrap().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_system_prompt_edit_mid_run_drifts_and_breaks_traced_to_its_section() {
    let rig = rig(&[(0, 1000), (1000, 200), (300, 1100)]);
    rig.looped.hooks().on_sync::<SystemTransform, _>(|ev, _| {
        if ev.turn() == 3 {
            ev.system = ev.system.replace("Session notes.", "Session notes: 3 files read.");
        }
        Ok(())
    });
    rig.looped.run(RunOptions::prompt("Work.")).await.unwrap();
    settle().await;
    let drifts = rig.drifts.lock().unwrap().clone();
    assert_eq!(drifts.len(), 1);
    assert_eq!(drifts[0].changed, vec![CacheDimensionName::System]);
    assert_eq!(drifts[0].system_sections, Some(vec![CacheSystemSection::HostDynamic]));
    assert_eq!(drifts[0].turn, 3);
    let breaks = rig.breaks.lock().unwrap().clone();
    assert_eq!(breaks.len(), 1);
    let b = &breaks[0];
    assert_eq!((b.cache_read, b.expected_at_least, b.rebilled_tokens), (300, 960, 900));
    assert_eq!(b.changed, vec![CacheDimensionName::System]);
    let lines = rig.lines.lock().unwrap().clone();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("cache-break: turn 3 read 300 of at least 960 cached tokens, ~900 re-billed: system: "),
        "{}",
        lines[0]
    );
}

#[tokio::test(start_paused = true)]
async fn a_tools_change_and_a_model_switch_drift() {
    let rig = rig_with(&[(0, 1000), (1000, 100), (1100, 100)], |looped| {
        looped.hooks().on_sync::<TurnBefore, _>(|ev, _| {
            if ev.turn() == 2 {
                ev.options.tools.push(ToolSpec {
                    name: "late".into(),
                    description: "Added late".into(),
                    input_schema: json!({"type": "object"}),
                });
            }
            if ev.turn() == 3 {
                ev.options.model = "other-model".into();
            }
            Ok(())
        });
    });
    rig.looped.run(RunOptions::prompt("Work.")).await.unwrap();
    settle().await;
    let drifts = rig.drifts.lock().unwrap().clone();
    // Turn 2 adds a tool; turn 3 drops it again (the hook adds it on turn 2
    // only) and switches the model.
    assert_eq!(drifts[0].changed, vec![CacheDimensionName::Tools]);
    assert_eq!(drifts[0].details[&CacheDimensionName::Tools], "tools: 1 → 2 tools");
    assert_eq!(
        drifts[1].changed,
        vec![CacheDimensionName::Tools, CacheDimensionName::Model]
    );
    assert_eq!(drifts[1].model, "other-model");
    assert!(rig.breaks.lock().unwrap().is_empty(), "the provider absorbed it");
}

#[tokio::test(start_paused = true)]
async fn a_compaction_rewrite_diverges_on_its_boundary() {
    let rig = rig(&[(0, 1000), (1000, 100), (1100, 100), (50, 900)]);
    rig.looped.hooks().on_sync::<ContextTransform, _>(|ev, _| {
        if ev.messages.len() > 5 {
            // Replace the first four messages with a summary, as a compaction would.
            let rest = ev.messages.split_off(4);
            ev.messages = std::iter::once(Message::user("Summary of the earlier work."))
                .chain(rest)
                .collect();
        }
        Ok(())
    });
    rig.looped.run(RunOptions::prompt("Work.")).await.unwrap();
    settle().await;
    let drifts = rig.drifts.lock().unwrap().clone();
    assert_eq!(drifts.len(), 1);
    assert_eq!(drifts[0].changed, vec![CacheDimensionName::MessagePrefix]);
    assert_eq!(drifts[0].diverged_at, Some(0));
    let breaks = rig.breaks.lock().unwrap().clone();
    assert_eq!(breaks[0].changed, vec![CacheDimensionName::MessagePrefix]);
}

#[tokio::test(start_paused = true)]
async fn a_ttl_style_break_has_nothing_changed_and_logs_nothing() {
    let rig = rig(&[(0, 1000), (1000, 100), (0, 1200)]);
    rig.looped.run(RunOptions::prompt("Work.")).await.unwrap();
    settle().await;
    assert!(rig.drifts.lock().unwrap().is_empty());
    let breaks = rig.breaks.lock().unwrap().clone();
    assert_eq!(breaks.len(), 1);
    assert!(breaks[0].changed.is_empty(), "byte-stable request: TTL or eviction");
    assert_eq!(breaks[0].rebilled_tokens, 1100);
    assert!(
        rig.lines.lock().unwrap().is_empty(),
        "unattributable breaks are not logged"
    );
}

#[tokio::test(start_paused = true)]
async fn the_turn_counter_runs_across_runs_and_uninstall_detaches() {
    let rig = rig(&[(0, 1000), (1000, 100), (0, 1200)]);
    rig.looped.run(RunOptions::prompt("Work.")).await.unwrap();
    settle().await;
    assert_eq!(rig.breaks.lock().unwrap()[0].turn, 3);
    let Rig { looped, _logger, .. } = rig;
    drop(_logger);
    assert!(!looped.hooks().has::<TurnBefore>(), "uninstalled");
}
