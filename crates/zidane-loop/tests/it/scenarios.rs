//! Scenarios: the exact hook sequence (insta), what the model receives, and
//! the run statistics.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{Value, json};
use zidane_core::events::{
    BudgetMode, GuardAction, RunBeforeEnd, RunStatus, ToolError, ToolGate, ToolUnknown, TurnAfter,
};
use zidane_core::{FnTool, ToolOutput, ToolSet};
use zidane_loop::{Behavior, BudgetCap, ModelRef, RepeatGuard, RepeatMode, RunErrorKind, RunOptions, ToolBudget};
use zidane_provider::scripted::{Script, ScriptedProvider, Step};
use zidane_provider::{ContentBlock, ErrorKind, FinishReason, ProviderError, StreamEvent};

use crate::harness::{Harness, harness, harness_with, stats};

fn echo() -> FnTool {
    FnTool::new(
        "echo",
        "Echo the text",
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        |input, _cx| async move {
            Ok(ToolOutput::text(format!(
                "echo: {}",
                input["text"].as_str().unwrap_or_default()
            )))
        },
    )
}

fn sum() -> FnTool {
    FnTool::new(
        "sum",
        "Add two numbers",
        json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}),
        |input, _cx| async move {
            Ok(ToolOutput::text(
                (input["a"].as_f64().unwrap_or(0.0) + input["b"].as_f64().unwrap_or(0.0)).to_string(),
            ))
        },
    )
}

fn slow(name: &'static str, secs: u64) -> FnTool {
    FnTool::new(
        name,
        "Sleep then answer",
        json!({"type": "object"}),
        move |_input, _cx| async move {
            tokio::time::sleep(Duration::from_secs(secs)).await;
            Ok(ToolOutput::text(format!("{name} done")))
        },
    )
    .parallel()
}

fn failing() -> FnTool {
    FnTool::new(
        "fail",
        "Always fails",
        json!({"type": "object"}),
        |_input, _cx| async move { Err::<ToolOutput, _>("disk full".into()) },
    )
}

fn tools() -> ToolSet {
    ToolSet::new().with(echo()).with(sum()).with(failing())
}

fn overloaded() -> ProviderError {
    ProviderError::new(ErrorKind::Overloaded, "mock", "Overloaded").with_status(529)
}

/// Runs the harness and snapshots hooks, wire results and stats.
async fn run(h: &Harness, options: RunOptions) -> serde_json::Value {
    let outcome = h.looped.run(options).await;
    let (stats, error) = match outcome {
        Ok(s) => (s, None),
        Err(e) => (*e.stats.clone(), Some(e.kind.to_string())),
    };
    let requests = h.provider.requests().len();
    let wire: Vec<_> = (0..requests)
        .map(|i| h.wire_results(i))
        .filter(|r| !r.is_empty())
        .collect();
    json!({ "hooks": h.hooks(), "wire": wire, "stats": stats_value(&stats), "error": error })
}

fn stats_value(s: &zidane_core::events::AgentStats) -> serde_json::Value {
    stats(s)
}

#[tokio::test(start_paused = true)]
async fn plain_answer() {
    let h = harness(vec![Script::answer("Hello!")], ToolSet::new(), Behavior::default());
    insta::assert_json_snapshot!(run(&h, RunOptions::prompt("Say hello.")).await);
    let turns = h.looped.turns();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[1].content, vec![ContentBlock::text("Hello!")]);
}

#[tokio::test(start_paused = true)]
async fn one_tool() {
    let h = harness(
        vec![
            Script::call("c1", "echo", json!({"text": "hi"})),
            Script::answer("done"),
        ],
        tools(),
        Behavior::default(),
    );
    insta::assert_json_snapshot!(run(&h, RunOptions::prompt("Echo hi.")).await);
}

#[tokio::test(start_paused = true)]
async fn parallel_tools_run_together_and_answer_in_call_order() {
    let script = Script::new()
        .tool_call(0, "c1", "slow_a", json!({}))
        .tool_call(1, "c2", "slow_b", json!({}))
        .usage(10, 5)
        .end(FinishReason::ToolCalls);
    let h = harness(
        vec![script, Script::answer("both done")],
        ToolSet::new().with(slow("slow_a", 5)).with(slow("slow_b", 2)),
        Behavior::default(),
    );
    let started = tokio::time::Instant::now();
    let snapshot = run(&h, RunOptions::prompt("Run both.")).await;
    assert_eq!(
        started.elapsed(),
        Duration::from_secs(5),
        "concurrent: the longest call, not the sum"
    );
    insta::assert_json_snapshot!(snapshot);
}

#[tokio::test(start_paused = true)]
async fn gate_block() {
    let h = harness(
        vec![Script::call("c1", "echo", json!({"text": "x"})), Script::answer("ok")],
        tools(),
        Behavior::default(),
    );
    h.looped.hooks().on_sync::<ToolGate, _>(|gate, _| {
        gate.block = true;
        gate.reason = "echo is disabled".into();
        Ok(())
    });
    let snapshot = run(&h, RunOptions::prompt("Echo.")).await;
    assert_eq!(
        h.wire_results(1),
        vec![
            json!({"type": "tool_result", "tool_use_id": "c1", "content": "Blocked: echo is disabled", "is_error": true})
        ]
    );
    insta::assert_json_snapshot!(snapshot);
}

#[tokio::test(start_paused = true)]
async fn gate_substitute() {
    let h = harness(
        vec![Script::call("c1", "echo", json!({"text": "x"})), Script::answer("ok")],
        tools(),
        Behavior::default(),
    );
    h.looped.hooks().on_sync::<ToolGate, _>(|gate, _| {
        gate.result = Some("from cache".into());
        Ok(())
    });
    let snapshot = run(&h, RunOptions::prompt("Echo.")).await;
    assert_eq!(
        h.wire_results(1),
        vec![json!({"type": "tool_result", "tool_use_id": "c1", "content": "from cache"})]
    );
    insta::assert_json_snapshot!(snapshot);
}

#[tokio::test(start_paused = true)]
async fn block_and_substitute_from_two_handlers_block_wins() {
    let h = harness(
        vec![Script::call("c1", "echo", json!({"text": "x"})), Script::answer("ok")],
        tools(),
        Behavior::default(),
    );
    h.looped.hooks().on_sync::<ToolGate, _>(|gate, _| {
        gate.result = Some("from cache".into());
        Ok(())
    });
    h.looped.hooks().on_sync::<ToolGate, _>(|gate, _| {
        gate.block = true;
        Ok(())
    });
    let snapshot = run(&h, RunOptions::prompt("Echo.")).await;
    assert_eq!(
        h.wire_results(1),
        vec![
            json!({"type": "tool_result", "tool_use_id": "c1", "content": "Blocked: Tool execution was blocked", "is_error": true})
        ]
    );
    insta::assert_json_snapshot!(snapshot);
}

#[tokio::test(start_paused = true)]
async fn invalid_input_coerced() {
    let h = harness(
        vec![
            Script::call("c1", "sum", json!({"a": "2", "b": 3})),
            Script::answer("5"),
        ],
        tools(),
        Behavior::default(),
    );
    let snapshot = run(&h, RunOptions::prompt("Add.")).await;
    assert_eq!(
        h.wire_results(1),
        vec![json!({"type": "tool_result", "tool_use_id": "c1", "content": "5"})]
    );
    insta::assert_json_snapshot!(snapshot);
}

#[tokio::test(start_paused = true)]
async fn invalid_input_rejected() {
    let h = harness(
        vec![Script::call("c1", "sum", json!({"a": "two"})), Script::answer("sorry")],
        tools(),
        Behavior::default(),
    );
    let snapshot = run(&h, RunOptions::prompt("Add.")).await;
    let wire = h.wire_results(1);
    assert_eq!(wire[0]["is_error"], json!(true));
    assert!(
        wire[0]["content"].as_str().unwrap().starts_with("Validation error: "),
        "{wire:?}"
    );
    insta::assert_json_snapshot!(snapshot);
}

#[tokio::test(start_paused = true)]
async fn unknown_tool() {
    let h = harness(
        vec![Script::call("c1", "teleport", json!({})), Script::answer("ok")],
        tools(),
        Behavior::default(),
    );
    let snapshot = run(&h, RunOptions::prompt("Go.")).await;
    insta::assert_json_snapshot!(snapshot);
}

#[tokio::test(start_paused = true)]
async fn unknown_tool_substituted_without_error() {
    let h = harness(
        vec![Script::call("c1", "teleport", json!({})), Script::answer("ok")],
        tools(),
        Behavior::default(),
    );
    h.looped.hooks().on_sync::<ToolUnknown, _>(|ev, _| {
        ev.result = Some("Teleporting is not available here; walk instead.".into());
        ev.suppress_error = true;
        Ok(())
    });
    let snapshot = run(&h, RunOptions::prompt("Go.")).await;
    assert_eq!(
        h.wire_results(1),
        vec![
            json!({"type": "tool_result", "tool_use_id": "c1", "content": "Teleporting is not available here; walk instead."})
        ]
    );
    insta::assert_json_snapshot!(snapshot);
}

#[tokio::test(start_paused = true)]
async fn tool_error_with_a_substituted_result() {
    let h = harness(
        vec![Script::call("c1", "fail", json!({})), Script::answer("ok")],
        tools(),
        Behavior::default(),
    );
    h.looped.hooks().on_sync::<ToolError, _>(|ev, _| {
        ev.result = Some(format!("The disk is full ({}); free space and retry.", ev.error()).into());
        Ok(())
    });
    let snapshot = run(&h, RunOptions::prompt("Fail.")).await;
    assert_eq!(
        h.wire_results(1),
        vec![
            json!({"type": "tool_result", "tool_use_id": "c1", "content": "The disk is full (disk full); free space and retry.", "is_error": true})
        ]
    );
    insta::assert_json_snapshot!(snapshot);
}

#[tokio::test(start_paused = true)]
async fn default_tool_error_and_a_panicking_tool() {
    let panicky = FnTool::new("boom", "Panics", json!({"type": "object"}), |_i, _cx| async move {
        if true {
            panic!("kaboom");
        }
        Ok(ToolOutput::text("never"))
    });
    let script = Script::new()
        .tool_call(0, "c1", "fail", json!({}))
        .tool_call(1, "c2", "boom", json!({}))
        .end(FinishReason::ToolCalls);
    let h = harness(
        vec![script, Script::answer("ok")],
        tools().with(panicky),
        Behavior::default(),
    );
    let stats = h.looped.run(RunOptions::prompt("Try.")).await.unwrap();
    assert_eq!(stats.status, RunStatus::Completed);
    assert_eq!(
        h.wire_results(1),
        vec![
            json!({"type": "tool_result", "tool_use_id": "c1", "content": "Tool error: disk full", "is_error": true}),
            json!({"type": "tool_result", "tool_use_id": "c2", "content": "Tool error: the tool panicked: kaboom", "is_error": true}),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn cancelled_call_leaves_the_rest_of_the_batch_running() {
    let script = Script::new()
        .tool_call(0, "c1", "slow_a", json!({}))
        .tool_call(1, "c2", "slow_b", json!({}))
        .end(FinishReason::ToolCalls);
    let h = harness(
        vec![script, Script::answer("ok")],
        ToolSet::new().with(slow("slow_a", 10)).with(slow("slow_b", 2)),
        Behavior::default(),
    );
    let looped = h.looped.clone();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(looped.cancel_tool("c1", Some("user clicked cancel")));
        assert!(!looped.cancel_tool("c1", None), "a second cancel finds nothing");
    });
    let snapshot = run(&h, RunOptions::prompt("Run both.")).await;
    canceller.await.unwrap();
    assert_eq!(
        h.wire_results(1),
        vec![
            json!({"type": "tool_result", "tool_use_id": "c1", "content": zidane_loop::pairing::TOOL_USE_CANCELLED_MESSAGE, "is_error": true}),
            json!({"type": "tool_result", "tool_use_id": "c2", "content": "slow_b done"}),
        ]
    );
    insta::assert_json_snapshot!(snapshot);
}

#[tokio::test(start_paused = true)]
async fn a_cancel_before_the_call_registers_is_applied_when_it_does() {
    let h = harness(
        vec![Script::call("c9", "slow_a", json!({})), Script::answer("ok")],
        ToolSet::new().with(slow("slow_a", 10)),
        Behavior::default(),
    );
    assert!(!h.looped.cancel_tool("c9", None), "nothing is running yet");
    // Parked cancels are cleared when a run starts; park it mid-run instead.
    // The observer records what `cancel_tool` answered; the assertion is
    // made outside it (the bus only logs an observer's panic).
    let looped = h.looped.clone();
    let answered: Arc<std::sync::Mutex<Vec<bool>>> = Arc::default();
    let a = Arc::clone(&answered);
    h.looped.hooks().on_sync::<TurnAfter, _>(move |_, _| {
        a.lock().unwrap().push(looped.cancel_tool("c9", Some("early")));
        Ok(())
    });
    h.looped.run(RunOptions::prompt("Go.")).await.unwrap();
    assert!(
        !answered.lock().unwrap()[0],
        "the call is not running yet at turn:after, so the cancel is parked"
    );
    assert_eq!(
        h.wire_results(1)[0]["content"],
        json!(zidane_loop::pairing::TOOL_USE_CANCELLED_MESSAGE)
    );
}

#[tokio::test(start_paused = true)]
async fn abort_mid_stream() {
    let script = Script::new()
        .text("Let me think")
        .delay(Duration::from_secs(30))
        .text(" more")
        .end(FinishReason::Stop);
    let h = harness(vec![script], ToolSet::new(), Behavior::default());
    let looped = h.looped.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(5)).await;
        looped.abort(Some("user pressed ctrl-c"));
    });
    let snapshot = run(&h, RunOptions::prompt("Think.")).await;
    assert_eq!(snapshot["stats"]["status"], json!("aborted"));
    assert!(
        !h.looped.steer(vec![ContentBlock::text("too late")], None),
        "steer after the run returns false"
    );
    insta::assert_json_snapshot!(snapshot);
}

#[tokio::test(start_paused = true)]
async fn abort_mid_tool_keeps_history_paired() {
    let h = harness(
        vec![Script::call("c1", "slow_a", json!({}))],
        ToolSet::new().with(slow("slow_a", 60)),
        Behavior::default(),
    );
    let looped = h.looped.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(5)).await;
        looped.abort(None);
    });
    let snapshot = run(&h, RunOptions::prompt("Go.")).await;
    let turns = h.looped.turns();
    let last = turns.last().unwrap();
    assert_eq!(
        last.content,
        vec![ContentBlock::ToolResult {
            tool_use_id: "c1".into(),
            content: zidane_loop::pairing::INTERRUPT_MESSAGE_FOR_TOOL_USE.into(),
            is_error: true
        }]
    );
    insta::assert_json_snapshot!(snapshot);
}

#[tokio::test(start_paused = true)]
async fn steer_mid_run_is_injected_at_the_next_turn() {
    let h = harness(
        vec![Script::call("c1", "slow_a", json!({})), Script::answer("adjusted")],
        ToolSet::new().with(slow("slow_a", 10)),
        Behavior::default(),
    );
    let looped = h.looped.clone();
    let steering = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(looped.steer(
            vec![ContentBlock::text("Also check the tests.")],
            Some("steer-1".into())
        ));
        assert!(
            !looped.steer(vec![ContentBlock::text("  ")], None),
            "an empty prompt is refused"
        );
    });
    let snapshot = run(&h, RunOptions::prompt("Go.")).await;
    steering.await.unwrap();
    let second = &h.provider.requests()[1];
    assert_eq!(
        second.messages.last().unwrap().content(),
        &[ContentBlock::text("Also check the tests.")]
    );
    insta::assert_json_snapshot!(snapshot);
}

#[tokio::test(start_paused = true)]
async fn follow_up_runs_after_the_final_answer() {
    let h = harness(
        vec![
            Script::new()
                .delay(Duration::from_secs(2))
                .text("first")
                .end(FinishReason::Stop),
            Script::answer("second"),
        ],
        ToolSet::new(),
        Behavior::default(),
    );
    let looped = h.looped.clone();
    assert!(!h.looped.follow_up(vec![ContentBlock::text("no run yet")], None));
    let following = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(looped.follow_up(vec![ContentBlock::text("And then?")], Some("f1".into())));
    });
    let snapshot = run(&h, RunOptions::prompt("Go.")).await;
    following.await.unwrap();
    assert_eq!(h.provider.requests().len(), 2);
    insta::assert_json_snapshot!(snapshot);
}

#[tokio::test(start_paused = true)]
async fn run_before_end_follow_up_keeps_the_run_going_once() {
    let h = harness(
        vec![Script::answer("draft"), Script::answer("final")],
        ToolSet::new(),
        Behavior::default(),
    );
    let fired = Arc::new(AtomicUsize::new(0));
    let f = Arc::clone(&fired);
    h.looped.hooks().on_sync::<RunBeforeEnd, _>(move |ev, _| {
        if f.fetch_add(1, Ordering::SeqCst) == 0 {
            assert!(ev.follow_up("Check your draft."));
            assert!(!ev.follow_up("ignored"), "the first follow-up wins");
        }
        Ok(())
    });
    let snapshot = run(&h, RunOptions::prompt("Write.")).await;
    assert_eq!(fired.load(Ordering::SeqCst), 2);
    insta::assert_json_snapshot!(snapshot);
}

/// A message that arrives while the run decides to end (in a
/// `run:beforeEnd` handler) is read by a turn; once the run has decided, a
/// message is refused (`false`) instead of taken and read by no turn.
#[tokio::test(start_paused = true)]
async fn a_message_is_taken_only_while_a_turn_will_read_it() {
    let h = harness(
        vec![Script::answer("draft"), Script::answer("final")],
        ToolSet::new(),
        Behavior::default(),
    );
    let fired = Arc::new(AtomicUsize::new(0));
    let f = Arc::clone(&fired);
    let during = h.looped.clone();
    h.looped.hooks().on_sync::<RunBeforeEnd, _>(move |_, _| {
        if f.fetch_add(1, Ordering::SeqCst) == 0 {
            assert!(during.follow_up(vec![ContentBlock::text("One more thing.")], None));
        }
        Ok(())
    });
    let refused = Arc::new(AtomicUsize::new(0));
    let (r, after) = (Arc::clone(&refused), h.looped.clone());
    h.looped
        .hooks()
        .on_sync::<zidane_core::events::AgentDone, _>(move |_, _| {
            if !after.steer(vec![ContentBlock::text("Too late.")], None)
                && !after.follow_up(vec![ContentBlock::text("Too late.")], None)
            {
                r.fetch_add(1, Ordering::SeqCst);
            }
            Ok(())
        });
    run(&h, RunOptions::prompt("Write.")).await;
    let requests = h.provider.requests();
    assert_eq!(requests.len(), 2, "the message came during the decision: one more turn");
    assert_eq!(
        requests[1].messages.last().unwrap().content(),
        [ContentBlock::text("One more thing.")]
    );
    assert_eq!(refused.load(Ordering::SeqCst), 1, "after the end, nothing is taken");
}

#[tokio::test(start_paused = true)]
async fn retry_then_success() {
    let h = harness(
        vec![
            Script::new().text("partial").error(overloaded()),
            Script::answer("recovered"),
        ],
        ToolSet::new(),
        Behavior::default(),
    );
    let snapshot = run(&h, RunOptions::prompt("Go.")).await;
    assert_eq!(h.looped.turns()[1].content, vec![ContentBlock::text("recovered")]);
    insta::assert_json_snapshot!(snapshot);
}

#[tokio::test(start_paused = true)]
async fn rate_limit_sleeps_the_servers_retry_after_in_virtual_time() {
    let limited = ProviderError::new(ErrorKind::RateLimited, "mock", "slow down")
        .with_status(429)
        .with_retry_after(Some(Duration::from_secs(7)));
    let h = harness(
        vec![Script::new().error(limited), Script::answer("ok")],
        ToolSet::new(),
        Behavior::default(),
    );
    let delays = Arc::new(std::sync::Mutex::new(Vec::new()));
    let d = Arc::clone(&delays);
    h.looped
        .hooks()
        .on_sync::<zidane_core::events::StreamRetry, _>(move |ev, _| {
            d.lock().unwrap().push(ev.delay_ms());
            Ok(())
        });
    let started = tokio::time::Instant::now();
    h.looped.run(RunOptions::prompt("Go.")).await.unwrap();
    assert_eq!(
        started.elapsed(),
        Duration::from_secs(7),
        "the server's delay, not the backoff"
    );
    assert_eq!(*delays.lock().unwrap(), vec![7000]);
}

/// A provider that stopped sending: each attempt waits out the idle
/// timeout (120 s), and the run gives up within the silence budget (5
/// minutes by default), not after every one of the 8 transport attempts
/// (16 minutes of silence, 18 with the back-off).
#[tokio::test(start_paused = true)]
async fn a_silent_provider_is_given_up_within_the_silence_budget() {
    let idle = Duration::from_secs(120);
    let silent = || {
        Script::new().delay(idle).error(
            ProviderError::new(ErrorKind::Transport, "mock", "the model sent nothing for 120s").with_silence(idle),
        )
    };
    let h = harness((0..8).map(|_| silent()).collect(), ToolSet::new(), Behavior::default());
    let started = tokio::time::Instant::now();
    let failed = h.looped.run(RunOptions::prompt("Go.")).await;
    let waited = started.elapsed();
    assert!(failed.is_err(), "{failed:?}");
    assert_eq!(
        h.provider.requests().len(),
        2,
        "two silences fit the budget, a third would not"
    );
    assert!(
        waited <= Duration::from_secs(300),
        "a silent provider held the run for {waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn retry_exhausted_then_fallback_stays_on_the_fallback() {
    let primary = ScriptedProvider::new("primary", (0..2).map(|_| Script::new().error(overloaded())));
    let backup = ScriptedProvider::new(
        "backup",
        [
            Script::call("c1", "echo", json!({"text": "x"})),
            Script::answer("served by backup"),
        ],
    );
    let behavior = Behavior {
        retry: zidane_loop::RetryPolicy {
            max_attempts: 2,
            ..Default::default()
        },
        ..Default::default()
    };
    let h = harness_with(vec![primary.clone(), backup.clone()], tools(), behavior);
    let mut options = RunOptions::prompt("Go.");
    options.model = vec![
        ModelRef::on("primary", "big-model"),
        ModelRef::on("backup", "small-model"),
    ];
    let outcome = h.looped.run(options).await.unwrap();
    assert_eq!(primary.requests().len(), 2);
    assert_eq!(backup.requests().len(), 2, "the rest of the run stays on the fallback");
    assert_eq!(backup.requests()[0].model, "small-model");
    assert_eq!(outcome.turns, 2);
    insta::assert_json_snapshot!(json!({ "hooks": h.hooks(), "stats": stats(&outcome) }));
}

#[tokio::test(start_paused = true)]
async fn terminal_failure_without_fallback_reports_stream_error() {
    let auth = ProviderError::new(ErrorKind::Auth, "mock", "invalid x-api-key").with_status(401);
    let h = harness(vec![Script::new().error(auth)], ToolSet::new(), Behavior::default());
    let snapshot = run(&h, RunOptions::prompt("Go.")).await;
    assert_eq!(
        snapshot["error"],
        json!("mock: authentication failed (HTTP 401): invalid x-api-key")
    );
    insta::assert_json_snapshot!(snapshot);
}

#[tokio::test(start_paused = true)]
async fn context_overflow_is_recovered_by_eliding_old_tool_output() {
    let exceeded = ProviderError::new(ErrorKind::ContextExceeded, "mock", "prompt is too long").with_status(400);
    let mut scripts: Vec<Script> = (0..4)
        .map(|i| Script::call(format!("c{i}"), "echo", json!({"text": "x".repeat(100)})))
        .collect();
    scripts.push(Script::new().error(exceeded));
    scripts.push(Script::answer("fits now"));
    let h = harness(scripts, tools(), Behavior::default());
    let snapshot = run(&h, RunOptions::prompt("Go.")).await;
    let last = h.provider.requests().last().unwrap().clone();
    let elided = last.messages.iter().flat_map(|m| m.content()).filter(|b| matches!(b, ContentBlock::ToolResult { content, .. } if content == &"[tool output elided to fit the context window]".into())).count();
    assert!(elided > 0, "old tool results were elided on the wire");
    assert!(
        h.looped
            .turns()
            .iter()
            .all(|t| !format!("{:?}", t.content).contains("elided")),
        "history keeps the originals"
    );
    insta::assert_json_snapshot!(snapshot);
}

#[tokio::test(start_paused = true)]
async fn tool_output_budget_asks_for_a_summary() {
    let behavior = Behavior {
        tool_output_budget: Some(10),
        ..Default::default()
    };
    let h = harness(
        vec![
            Script::call("c1", "echo", json!({"text": "a long enough output"})),
            Script::answer("summary"),
        ],
        tools(),
        behavior,
    );
    let snapshot = run(&h, RunOptions::prompt("Go.")).await;
    let second = &h.provider.requests()[1];
    let nudge = second.messages.last().unwrap();
    assert!(matches!(&nudge.content()[0], ContentBlock::Text { text } if text.contains("over the 10-byte budget")));
    insta::assert_json_snapshot!(snapshot);
}

#[tokio::test(start_paused = true)]
async fn tool_budget_blocks_past_its_max() {
    let mut budgets = BTreeMap::new();
    budgets.insert(
        "echo".to_owned(),
        ToolBudget {
            max: 1,
            mode: BudgetMode::Block,
            message: "echo budget spent".into(),
        },
    );
    let behavior = Behavior {
        tool_budgets: budgets,
        ..Default::default()
    };
    let script = Script::new()
        .tool_call(0, "c1", "echo", json!({"text": "1"}))
        .tool_call(1, "c2", "echo", json!({"text": "2"}))
        .end(FinishReason::ToolCalls);
    let h = harness(vec![script, Script::answer("ok")], tools(), behavior);
    let snapshot = run(&h, RunOptions::prompt("Go.")).await;
    assert_eq!(h.wire_results(1)[1]["content"], json!("Blocked: echo budget spent"));
    insta::assert_json_snapshot!(snapshot);
}

#[tokio::test(start_paused = true)]
async fn token_cap_ends_the_run_with_a_typed_error_and_no_abort() {
    let behavior = Behavior {
        max_total_tokens: Some(20),
        ..Default::default()
    };
    let h = harness(
        vec![
            Script::call("c1", "echo", json!({"text": "x"})),
            Script::answer("never"),
        ],
        tools(),
        behavior,
    );
    let snapshot = run(&h, RunOptions::prompt("Go.")).await;
    assert!(snapshot["error"].as_str().unwrap().starts_with("budget exceeded"));
    assert!(!h.hooks().contains(&"agent:abort"));
    let err = {
        let h2 = harness(
            vec![Script::answer("x")],
            ToolSet::new(),
            Behavior {
                max_total_tokens: Some(1),
                ..Default::default()
            },
        );
        h2.looped.run(RunOptions::prompt("Go.")).await.unwrap_err()
    };
    assert_eq!(err.kind.budget_exceeded(), Some((BudgetCap::TotalTokens, 1.0, 15.0)));
    assert_eq!(err.stats.turns, 1, "the stats of the work done");
    insta::assert_json_snapshot!(snapshot);
}

#[tokio::test(start_paused = true)]
async fn repeat_guard_aborts_after_announcing_it() {
    let guard = RepeatGuard {
        mode: RepeatMode::Chain,
        threshold: 2,
        action: GuardAction::Abort,
        tools: vec![],
    };
    let behavior = Behavior {
        repeat_guard: Some(guard),
        ..Default::default()
    };
    let h = harness(
        vec![
            Script::call("c1", "echo", json!({"text": "same"})),
            Script::call("c2", "echo", json!({"text": "same"})),
        ],
        tools(),
        behavior,
    );
    let snapshot = run(&h, RunOptions::prompt("Go.")).await;
    assert_eq!(snapshot["stats"]["status"], json!("aborted"));
    insta::assert_json_snapshot!(snapshot);
}

#[tokio::test(start_paused = true)]
async fn max_turns_stops_the_run() {
    let behavior = Behavior {
        max_turns: Some(2),
        ..Default::default()
    };
    let scripts = (0..3)
        .map(|i| Script::call(format!("c{i}"), "echo", json!({"text": "again"})))
        .collect();
    let h = harness(scripts, tools(), behavior);
    let snapshot = run(&h, RunOptions::prompt("Go.")).await;
    assert_eq!(snapshot["stats"]["status"], json!("max-turns"));
    insta::assert_json_snapshot!(snapshot);
}

#[tokio::test(start_paused = true)]
async fn pause_turns_continue_up_to_the_cap() {
    let behavior = Behavior {
        max_consecutive_pause_turns: 1,
        ..Default::default()
    };
    let pause = || Script::new().text("…").usage(1, 1).end(FinishReason::Pause);
    let h = harness(vec![pause(), pause()], ToolSet::new(), behavior);
    let stats = h.looped.run(RunOptions::prompt("Go.")).await.unwrap();
    assert_eq!((stats.turns, stats.status), (2, RunStatus::Aborted));
    assert!(!h.hooks().contains(&"agent:abort"));
}

#[tokio::test(start_paused = true)]
async fn structured_output_is_validated_and_emitted() {
    let h = harness(
        vec![Script::answer("not json"), Script::answer(r#"{"answer": 42}"#)],
        ToolSet::new(),
        Behavior::default(),
    );
    let outputs = Arc::new(std::sync::Mutex::new(Vec::new()));
    let o = Arc::clone(&outputs);
    h.looped
        .hooks()
        .on_sync::<zidane_core::events::Output, _>(move |ev, _| {
            o.lock().unwrap().push(ev.output().clone());
            Ok(())
        });
    let mut options = RunOptions::prompt("Answer.");
    options.response_schema =
        Some(json!({"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}));
    h.looped.run(options).await.unwrap();
    assert_eq!(*outputs.lock().unwrap(), vec![json!({"answer": 42})]);
}

#[tokio::test(start_paused = true)]
async fn a_second_run_while_running_is_refused_and_the_loop_stays_usable() {
    let h = harness(
        vec![
            Script::new()
                .delay(Duration::from_secs(5))
                .text("a")
                .end(FinishReason::Stop),
            Script::answer("b"),
        ],
        ToolSet::new(),
        Behavior::default(),
    );
    let looped = h.looped.clone();
    let first = tokio::spawn(async move { looped.run(RunOptions::prompt("one")).await });
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(h.looped.is_running());
    assert!(matches!(
        h.looped.run(RunOptions::prompt("two")).await.unwrap_err().kind,
        RunErrorKind::Busy
    ));
    first.await.unwrap().unwrap();
    h.looped.run(RunOptions::prompt("three")).await.unwrap();
    assert!(!h.looped.is_running());
}

#[tokio::test(start_paused = true)]
async fn a_hook_that_panics_fails_only_what_it_decides() {
    let h = harness(vec![Script::answer("fine")], ToolSet::new(), Behavior::default());
    h.looped.hooks().on_sync::<TurnAfter, _>(|_, _| panic!("observer bug"));
    let stats = h.looped.run(RunOptions::prompt("Go.")).await.unwrap();
    assert_eq!(stats.status, RunStatus::Completed, "an observer's panic is contained");

    let h = harness(vec![Script::answer("never")], ToolSet::new(), Behavior::default());
    h.looped
        .hooks()
        .on_sync::<zidane_core::events::ContextTransform, _>(|_, _| panic!("transform bug"));
    let err = h.looped.run(RunOptions::prompt("Go.")).await.unwrap_err();
    assert!(
        matches!(err.kind, RunErrorKind::Hook(_)),
        "a transform's failure fails the run: {err}"
    );
    assert!(h.hooks().contains(&"agent:done"));
}

#[tokio::test(start_paused = true)]
async fn per_run_hooks_are_detached_when_the_run_ends() {
    let h = harness(
        vec![Script::answer("one"), Script::answer("two")],
        ToolSet::new(),
        Behavior::default(),
    );
    let count = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&count);
    let mut options = RunOptions::prompt("Go.");
    options.hooks = zidane_hooks::HookMap::new().on_sync::<TurnAfter, _>(move |_, _| {
        c.fetch_add(1, Ordering::SeqCst);
        Ok(())
    });
    h.looped.run(options).await.unwrap();
    h.looped.run(RunOptions::prompt("Again.")).await.unwrap();
    assert_eq!(count.load(Ordering::SeqCst), 1);
    let mut bad = RunOptions::prompt("Go.");
    bad.hooks = zidane_hooks::HookMap::new().on_named("turn:afterr", zidane_hooks::DynHandler::sync(|_, _| Ok(())));
    let err = h.looped.run(bad).await.unwrap_err();
    assert_eq!(err.kind.to_string(), "a hook failed");
    assert!(
        std::error::Error::source(&err.kind)
            .unwrap()
            .to_string()
            .contains("did you mean `turn:after`")
    );
}

#[allow(dead_code)]
fn _uses(_: Step) {}

#[tokio::test(start_paused = true)]
async fn a_server_tool_result_names_the_tool_of_the_call_it_answers() {
    use zidane_core::events::StreamServerToolResult;
    use zidane_provider::StreamEvent;
    let script = Script::new()
        .event(StreamEvent::ServerToolUse {
            index: 0,
            id: "srvtoolu_1".into(),
            name: "web_search".into(),
            input: json!({"query": "zidane"}),
        })
        .event(StreamEvent::ServerToolResult {
            index: 1,
            tool_use_id: "srvtoolu_1".into(),
            kind: "web_search_tool_result".into(),
            content: json!([]),
        })
        .text("Found nothing.")
        .end(FinishReason::Stop);
    let h = harness(vec![script], ToolSet::new(), Behavior::default());
    let seen: Arc<std::sync::Mutex<Vec<(String, String)>>> = Arc::default();
    let s = Arc::clone(&seen);
    h.looped.hooks().on_sync::<StreamServerToolResult, _>(move |ev, _| {
        s.lock()
            .unwrap()
            .push((ev.tool_name().to_owned(), ev.tool_use_id().to_owned()));
        Ok(())
    });
    h.looped.run(RunOptions::prompt("Search.")).await.unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        vec![("web_search".to_owned(), "srvtoolu_1".to_owned())]
    );
}

#[tokio::test(start_paused = true)]
async fn stream_text_events_share_the_text_so_far_without_copying_it() {
    use zidane_core::events::{StreamText, StreamedText};
    let script = Script::new()
        .text("Hel")
        .text("lo, ")
        .text("world")
        .end(FinishReason::Stop);
    let h = harness(vec![script], ToolSet::new(), Behavior::default());
    let views: Arc<std::sync::Mutex<Vec<(String, StreamedText)>>> = Arc::default();
    let v = Arc::clone(&views);
    h.looped.hooks().on_sync::<StreamText, _>(move |ev, _| {
        v.lock().unwrap().push((ev.delta().to_owned(), ev.text().clone()));
        Ok(())
    });
    h.looped.run(RunOptions::prompt("Greet.")).await.unwrap();
    // Each view still shows the text as it was when its event fired, though
    // the stream went on appending to the same buffer.
    let seen: Vec<(String, String)> = views
        .lock()
        .unwrap()
        .iter()
        .map(|(delta, text)| (delta.clone(), text.to_string()))
        .collect();
    assert_eq!(
        seen,
        vec![
            ("Hel".to_owned(), "Hel".to_owned()),
            ("lo, ".to_owned(), "Hello, ".to_owned()),
            ("world".to_owned(), "Hello, world".to_owned()),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_stream_hook_registered_mid_stream_sees_the_rest_of_the_stream() {
    use zidane_core::events::{StreamText, StreamThinking};
    let delta = |index, text: &str| StreamEvent::TextDelta {
        index,
        text: text.into(),
    };
    let script = Script::new()
        .event(StreamEvent::ThinkingDelta {
            index: 0,
            text: "Let me see.".into(),
        })
        .event(delta(1, "Hel"))
        .event(delta(1, "lo"))
        .end(FinishReason::Stop);
    // A loop without the harness's recorders: nothing observes
    // `stream:text` when the stream starts, and the handler arrives with
    // the first reasoning delta.
    let provider: Arc<dyn zidane_provider::Provider> = Arc::new(ScriptedProvider::new("mock", [script]));
    let looped = zidane_loop::RunLoop::new(zidane_loop::LoopConfig::new(provider));
    let deltas: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let bus = looped.hooks().clone();
    let d = Arc::clone(&deltas);
    looped.hooks().once_sync::<StreamThinking, _>(move |_, _| {
        let d = Arc::clone(&d);
        bus.on_sync::<StreamText, _>(move |ev, _| {
            d.lock().unwrap().push(ev.delta().to_owned());
            Ok(())
        });
        Ok(())
    });
    let stats = looped.run(RunOptions::prompt("Greet.")).await.unwrap();
    assert_eq!(*deltas.lock().unwrap(), ["Hel", "lo"]);
    assert_eq!(stats.status, RunStatus::Completed);
}

#[tokio::test(start_paused = true)]
async fn retries_stop_when_their_total_wait_would_pass_the_cap() {
    let limited = || {
        Script::new().error(
            ProviderError::new(ErrorKind::RateLimited, "mock", "slow down")
                .with_retry_after(Some(Duration::from_secs(60))),
        )
    };
    let h = harness(
        vec![limited(), limited(), limited(), Script::answer("never reached")],
        ToolSet::new(),
        Behavior {
            retry: zidane_loop::RetryPolicy {
                max_attempts: 10,
                max_total_delay: Duration::from_secs(100),
                ..Default::default()
            },
            ..Default::default()
        },
    );
    let started = tokio::time::Instant::now();
    let err = h.looped.run(RunOptions::prompt("Go.")).await.unwrap_err();
    assert_eq!(
        err.kind.provider_error().map(ProviderError::kind),
        Some(ErrorKind::RateLimited)
    );
    // One wait of 60 s; a second would make 120 s, over the 100 s cap.
    assert_eq!(h.provider.requests().len(), 2);
    assert_eq!(started.elapsed(), Duration::from_secs(60));
}

#[tokio::test(start_paused = true)]
async fn calls_cut_off_or_malformed_are_answered_never_dropped() {
    use zidane_provider::StreamEvent;
    let echo = || {
        FnTool::new("echo", "Echo", json!({"type": "object"}), |input, _cx| async move {
            Ok(ToolOutput::text(input.to_string()))
        })
    };
    // A call whose arguments the output limit cut off.
    let cut = Script::new()
        .event(StreamEvent::ToolCallStart {
            index: 0,
            id: "c1".into(),
            name: "echo".into(),
        })
        .event(StreamEvent::ToolCallDelta {
            index: 0,
            json: "{\"text\": \"a very long".into(),
        })
        .end(FinishReason::Length);
    // A complete call whose arguments do not parse, beside a good one, and
    // two calls under one id.
    let bad = Script::new()
        .event(StreamEvent::ToolCallStart {
            index: 0,
            id: "c2".into(),
            name: "echo".into(),
        })
        .event(StreamEvent::ToolCallDelta {
            index: 0,
            json: "{not json".into(),
        })
        .event(StreamEvent::ToolCallEnd { index: 0 })
        .tool_call(1, "c3", "echo", json!({"n": 1}))
        .tool_call(2, "c3", "echo", json!({"n": 2}))
        .end(FinishReason::ToolCalls);
    let h = harness(
        vec![cut, bad, Script::answer("done")],
        ToolSet::new().with(echo()),
        Behavior::default(),
    );
    h.looped.run(RunOptions::prompt("Go.")).await.unwrap();
    let first = h.wire_results(1);
    assert_eq!(first.len(), 1);
    assert_eq!(first[0]["tool_use_id"], json!("c1"));
    assert!(
        first[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("Tool error: the arguments of this `echo` call were cut off by the output token limit"),
        "{first:?}"
    );
    assert_eq!(first[0]["is_error"], json!(true));
    let second = h.wire_results(2);
    let ids: Vec<&str> = second.iter().map(|r| r["tool_use_id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        vec!["c3", "c3_2", "c2"],
        "every call answered; the repeated id re-keyed"
    );
    assert_eq!(second[0]["content"], json!("{\"n\":1}"));
    assert_eq!(second[1]["content"], json!("{\"n\":2}"));
    assert_eq!(
        second[2]["content"],
        json!(
            "Tool error: the arguments of this `echo` call are not a valid JSON object, so nothing ran. Received: {not json. \
             Send the arguments as one JSON object (no code fence, double-quoted keys and strings), shaped like {} \
             per this schema: {\"type\":\"object\"}"
        )
    );
}

/// A small model's near-miss runs as meant: a fenced object with a trailing
/// comma and single quotes, and the object sent as a JSON string; each
/// repair is reported in `validation:coerce`.
#[tokio::test(start_paused = true)]
async fn tool_arguments_a_small_model_gets_slightly_wrong_are_repaired_and_reported() {
    let raw = |index: usize, id: &str, json: &str| {
        [
            StreamEvent::ToolCallStart {
                index,
                id: id.into(),
                name: "echo".into(),
            },
            StreamEvent::ToolCallDelta {
                index,
                json: json.into(),
            },
            StreamEvent::ToolCallEnd { index },
        ]
    };
    let mut calls = Script::new();
    for event in raw(0, "c1", "```json\n{'text': 'fenced',}\n```").into_iter().chain(raw(
        1,
        "c2",
        r#""{\"text\": \"stringly\"}""#,
    )) {
        calls = calls.event(event);
    }
    let h = harness(
        vec![calls.end(FinishReason::ToolCalls), Script::answer("done")],
        ToolSet::new().with(echo()),
        Behavior::default(),
    );
    type Coerced = Vec<(String, Vec<String>)>;
    let seen: Arc<Mutex<Coerced>> = Arc::default();
    let sink = Arc::clone(&seen);
    h.looped
        .hooks()
        .on_sync::<zidane_core::events::ValidationCoerce, _>(move |ev, _| {
            sink.lock().push((ev.call_id().to_owned(), ev.coercions().clone()));
            Ok(())
        });
    h.looped.run(RunOptions::prompt("Go.")).await.unwrap();
    let results = h.wire_results(1);
    let contents: Vec<&Value> = results.iter().map(|r| &r["content"]).collect();
    assert_eq!(contents, [&json!("echo: fenced"), &json!("echo: stringly")]);
    assert_eq!(
        seen.lock().clone(),
        [
            (
                "c1".to_owned(),
                vec![
                    "removed the Markdown code fence around the arguments".to_owned(),
                    "removed trailing commas".to_owned(),
                    "read single-quoted strings".to_owned(),
                ]
            ),
            (
                "c2".to_owned(),
                vec!["read the arguments from the JSON string that held them".to_owned()]
            ),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn an_answer_with_nothing_in_it_stores_no_empty_turn() {
    let empty = Script::new().usage(10, 0).end(zidane_provider::FinishReason::Stop);
    let h = harness(
        vec![empty, Script::answer("second try")],
        ToolSet::new(),
        Behavior::default(),
    );
    let stats = h.looped.run(RunOptions::prompt("Go.")).await.unwrap();
    assert_eq!(stats.turns, 1, "the turn is counted (and its usage)");
    assert_eq!(stats.totals.input, 10);
    let turns = h.looped.turns();
    assert_eq!(turns.len(), 1, "only the prompt: no empty assistant turn");
    h.looped.run(RunOptions::prompt("Again.")).await.unwrap();
    let requests = h.provider.requests();
    assert_eq!(
        requests[1].messages.len(),
        2,
        "two user messages, no empty one between them"
    );
    assert!(requests[1].messages.iter().all(|m| !m.content().is_empty()));
}

#[tokio::test(start_paused = true)]
async fn a_failed_attempt_the_server_billed_counts_in_the_totals() {
    let h = harness(
        vec![
            Script::new().usage(100, 20).text("partial").error(overloaded()),
            Script::answer("ok"),
        ],
        ToolSet::new(),
        Behavior::default(),
    );
    let stats = h.looped.run(RunOptions::prompt("Go.")).await.unwrap();
    assert_eq!(
        (stats.totals.input, stats.totals.output),
        (110, 25),
        "the failed attempt's 100 + 20, the answer's 10 + 5"
    );
    assert_eq!(stats.turns, 1, "the failed attempt is no turn");
    assert_eq!(stats.turn_usage.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_long_tool_argument_shows_as_progress() {
    let long = json!({"text": "y".repeat(40_000)});
    let call = Script::new()
        .tool_call(0, "c1", "echo", long)
        .end(zidane_provider::FinishReason::ToolCalls);
    let h = harness(
        vec![call, Script::answer("ok")],
        ToolSet::new().with(echo()),
        Behavior::default(),
    );
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let s = std::sync::Arc::clone(&seen);
    h.looped
        .hooks()
        .on_sync::<zidane_core::events::StreamProgress, _>(move |ev, _| {
            s.lock().unwrap().push(ev.tokens());
            Ok(())
        });
    h.looped.run(RunOptions::prompt("Go.")).await.unwrap();
    let first_turn = seen.lock().unwrap().iter().copied().max().unwrap();
    assert!(
        first_turn >= 10_000,
        "~40 KB of arguments is ~10k tokens, got {first_turn}"
    );
}

#[tokio::test(start_paused = true)]
async fn observed_text_of_several_blocks_returns_to_each_block() {
    use zidane_provider::StreamEvent;
    let turn = Script::new()
        .text("Let me look. ")
        .text("First part.")
        .tool_call(1, "c1", "echo", json!({"text": "x"}))
        .event(StreamEvent::TextDelta {
            index: 2,
            text: "After the call.".into(),
        })
        .usage(10, 5)
        .end(FinishReason::ToolCalls);
    let h = harness(
        vec![turn, Script::answer("done")],
        ToolSet::new().with(echo()),
        Behavior::default(),
    );
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    h.looped
        .hooks()
        .on_sync::<zidane_core::events::StreamText, _>(move |ev, _| {
            s.lock().unwrap().push(ev.text().to_string());
            Ok(())
        });
    h.looped.run(RunOptions::prompt("Go.")).await.unwrap();
    assert_eq!(
        seen.lock().unwrap()[2],
        "Let me look. First part.After the call.",
        "the text so far spans the blocks"
    );
    let assistant = &h.looped.turns()[1];
    assert_eq!(assistant.content[0], ContentBlock::text("Let me look. First part."));
    assert!(matches!(&assistant.content[1], ContentBlock::ToolUse { id, .. } if id == "c1"));
    assert_eq!(assistant.content[2], ContentBlock::text("After the call."));
}

/// A `turn:before` handler that drops the request's last user message
/// leaves it ending with the model's turn: the request is repaired (the
/// model is asked to continue), and the run goes on instead of failing.
#[tokio::test(start_paused = true)]
async fn a_turn_before_edit_that_ends_with_the_models_turn_is_repaired() {
    let h = harness(
        vec![Script::answer("first"), Script::answer("second")],
        ToolSet::new(),
        Behavior::default(),
    );
    h.looped.run(RunOptions::prompt("One.")).await.unwrap();
    h.looped.hooks().on_sync::<zidane_core::events::TurnBefore, _>(|ev, _| {
        ev.options.messages.pop();
        Ok(())
    });
    let stats = h.looped.run(RunOptions::prompt("Two.")).await.unwrap();
    assert_eq!(stats.turns, 1);
    let sent = &h.provider.requests()[1].messages;
    assert_eq!(sent.last().unwrap().role(), zidane_provider::Role::User);
    assert_eq!(
        sent.last().unwrap().content(),
        &[zidane_provider::ContentBlock::text("Continue.")]
    );
}
