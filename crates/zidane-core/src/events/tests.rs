use std::collections::BTreeSet;

use serde_json::json;
use zidane_hooks::{Child, DynHandler, HookBus, HookEvent, HookMap};
use zidane_provider::ToolResultContent;

use super::*;
use super::{CompactRestoreInit, RunBeforeEndInit, ToolGateInit};
use crate::bubble::install_bubbling;

fn spec_hook_names() -> BTreeSet<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/spec/zidane-agent-reference.md"
    );
    let spec = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "cannot read {path}: {e}. This test checks the catalogue against the spec in the `shared/` folder beside \
             the checkout (`../shared`); put it there to run it (`cargo xtask ci` expects it too)"
        )
    });
    let start = spec.find("### `AgentHooks`").unwrap();
    let end = spec[start..].find("### `AgentOptions`").unwrap() + start;
    spec[start..end]
        .lines()
        .filter_map(|l| l.strip_prefix("- `"))
        .filter_map(|l| l.split_once("` (`"))
        .map(|(name, _)| name.to_owned())
        .collect()
}

#[test]
fn catalogue_names_exactly_the_spec_hooks() {
    let ours: BTreeSet<String> = CATALOGUE.iter().map(|h| h.name.to_owned()).collect();
    assert_eq!(ours.len(), CATALOGUE.len(), "no name twice");
    assert_eq!(ours.len(), 122);
    assert_eq!(ours, spec_hook_names());
    assert_eq!(HOOK_SPECS.len(), CATALOGUE.len());
    for (info, spec) in CATALOGUE.iter().zip(HOOK_SPECS) {
        assert_eq!(info.name, spec.name());
        assert_eq!(info.spec.name(), info.name);
    }
}

#[test]
fn catalogue_snapshot() {
    let mut rows: Vec<String> = CATALOGUE
        .iter()
        .map(|h| {
            let kind = if h.mutable { "mutable" } else { "observe" };
            format!("{} | {} | {} | {kind}", h.name, h.rust_type, h.emitter.crate_name())
        })
        .collect();
    rows.sort();
    insta::assert_snapshot!(rows.join("\n"));
}

#[test]
fn decision_events_are_marked_mutable() {
    let mutable: BTreeSet<&str> = CATALOGUE.iter().filter(|h| h.mutable).map(|h| h.name).collect();
    let expected: BTreeSet<&str> = [
        "background:reconcile",
        "child:mcp:tool:gate",
        "child:tool:gate",
        "child:tool:transform",
        "compact:restore",
        "content-ref:resolve",
        "context:transform",
        "mcp:tool:gate",
        "mcp:tool:transform",
        "mcp:tools:filter",
        "run:beforeEnd",
        "spawn:before",
        "system:transform",
        "tool-state:commit-failed",
        "tool:before",
        "tool:error",
        "tool:gate",
        "tool:transform",
        "tool:unknown",
        "tracing:redact",
        "turn:before",
    ]
    .into();
    assert_eq!(mutable, expected);
    assert_eq!(hook_info("stream:text").map(|h| h.emitter), Some(Emitter::Loop));
    assert_eq!(
        hook_info("cache:break").map(|h| h.emitter),
        Some(Emitter::CacheTelemetry)
    );
    assert!(hook_info("tool:gat").is_none());
}

fn gate() -> ToolGate {
    let mut g = ToolGate::new(ToolGateInit {
        name: "shell".into(),
        call_id: "call-1".into(),
        run_id: "run-1".into(),
        turn_id: "turn-1".into(),
        resumed: false,
        run_tool_counts: Default::default(),
    });
    g.input = json!({"cmd": "rm -rf /"});
    g
}

#[test]
fn gate_block_beats_result_and_defaults_its_reason() {
    let mut g = gate();
    assert_eq!(g.decision(), GateDecision::Execute);

    g.result = Some("cached".into());
    assert_eq!(
        g.decision(),
        GateDecision::Substitute(ToolResultContent::Text("cached".into()))
    );

    g.block = true;
    assert_eq!(
        g.decision(),
        GateDecision::Block {
            reason: BLOCKED_DEFAULT_REASON.into(),
            metadata: Default::default()
        }
    );

    g.reason = "  ".into();
    assert!(matches!(g.decision(), GateDecision::Block { reason, .. } if reason == "Tool execution was blocked"));

    g.reason = "no deleting the disk".into();
    g.metadata.insert("policy".into(), json!("fs"));
    let decision = g.decision();
    insta::assert_json_snapshot!("blocked_tool_result", decision.tool_result("call-1").unwrap());
    assert_eq!(
        serde_json::to_value(decision.tool_result("call-1")).unwrap(),
        json!({
            "type": "tool_result",
            "tool_use_id": "call-1",
            "content": "Blocked: no deleting the disk",
            "is_error": true,
        })
    );
    assert_eq!(GateDecision::Execute.tool_result("call-1"), None);
}

#[tokio::test]
async fn two_handlers_block_and_substitute_block_wins() {
    let bus = HookBus::new();
    bus.on_sync::<ToolGate, _>(|ev, _| {
        ev.result = Some("from cache".into());
        Ok(())
    });
    bus.on_sync::<ToolGate, _>(|ev, _| {
        ev.block = true;
        ev.reason = "policy".into();
        Ok(())
    });
    let mut g = gate();
    bus.emit(&mut g).await.unwrap();
    assert!(matches!(g.decision(), GateDecision::Block { reason, .. } if reason == "policy"));
}

#[tokio::test]
async fn hooks_keyed_by_spec_names_install_through_the_catalogue() {
    let bus = HookBus::new();
    let map = HookMap::new().on_named(
        "tool:gate",
        DynHandler::sync(|mut ev, _| {
            if let Some(g) = ev.downcast_mut::<ToolGate>() {
                g.block = true;
            }
            Ok(())
        }),
    );
    let _scope = map.install(&bus, HOOK_SPECS).unwrap();
    let mut g = gate();
    bus.emit(&mut g).await.unwrap();
    assert!(g.block);

    let err = HookMap::new()
        .on_named("tool:gat", DynHandler::sync(|_, _| Ok(())))
        .install(&bus, HOOK_SPECS)
        .unwrap_err();
    assert_eq!(err.to_string(), "unknown hook `tool:gat`; did you mean `tool:gate`?");
    let err = HookMap::new()
        .on_named("child:stream:txt", DynHandler::sync(|_, _| Ok(())))
        .validate(HOOK_SPECS)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown hook `child:stream:txt`; did you mean `child:stream:text`?"
    );
}

#[tokio::test]
async fn a_parent_gate_decides_a_child_call() {
    assert_eq!(<ChildToolGate as HookEvent>::NAME, "child:tool:gate");
    let parent = HookBus::new();
    parent.on_sync::<ChildToolGate, _>(|ev, _| {
        if ev.child_id() == "worker" && ev.name() == "shell" {
            ev.block = true;
            ev.reason = "children may not run shell".into();
        }
        Ok(())
    });
    let mut bubbled = Child::new("worker", 1, gate());
    parent.emit(&mut bubbled).await.unwrap();
    let back = bubbled.into_inner();
    assert!(matches!(back.decision(), GateDecision::Block { reason, .. } if reason == "children may not run shell"));
}

#[test]
fn run_before_end_keeps_the_first_follow_up() {
    let mut ev = RunBeforeEnd::new(RunBeforeEndInit {
        run_id: "run-1".into(),
        session: None,
        session_id: None,
        turn: 3,
    });
    assert_eq!(ev.follow_up_message(), None);
    assert!(ev.follow_up("keep going"));
    assert!(!ev.follow_up("second"));
    assert_eq!(ev.follow_up_message(), Some("keep going"));
}

#[test]
fn compact_restore_collects_added_calls_and_redact_starts_at_value() {
    let mut ev = CompactRestore::new(CompactRestoreInit {
        session: None,
        session_id: Some("s1".into()),
    });
    ev.add("todoread", json!({}), "- [ ] plan");
    assert_eq!(ev.added().len(), 1);
    assert_eq!(ev.take_added()[0].name, "todoread");
    assert!(ev.added().is_empty());

    let redact = TracingRedact::for_value(RedactKind::Prompt, "secret", None);
    assert_eq!((redact.value(), redact.redacted.as_str()), ("secret", "secret"));
}

#[tokio::test]
async fn bubbling_installs_nothing_on_the_child_for_a_parent_that_listens_to_nothing() {
    let (parent, child) = (HookBus::new(), HookBus::new());
    let _link = install_bubbling(&child, &parent, "c1", 1);
    assert!(!child.has::<ToolGate>());
    assert!(!child.has::<StreamText>());
}

#[tokio::test]
async fn a_parents_child_gate_verdict_goes_back_to_the_child_and_up_from_a_grandchild() {
    let (root, child, grandchild) = (HookBus::new(), HookBus::new(), HookBus::new());
    let seen: std::sync::Arc<std::sync::Mutex<Vec<(String, u32)>>> = std::sync::Arc::default();
    let s = std::sync::Arc::clone(&seen);
    root.on_sync::<ChildToolGate, _>(move |ev, _| {
        s.lock().unwrap().push((ev.child_id().to_owned(), ev.depth()));
        ev.block = true;
        ev.reason = format!("not from {}", ev.child_id());
        Ok(())
    });
    let _up = install_bubbling(&child, &root, "c1", 1);
    // Only the gate is forwarded: its own form and a grandchild's.
    assert!(child.has::<ToolGate>() && child.has::<ChildToolGate>());
    assert!(!child.has::<StreamText>());
    let _down = install_bubbling(&grandchild, &child, "g1", 2);

    let mut ev = gate();
    child.emit(&mut ev).await.unwrap();
    assert!(ev.block);
    assert_eq!(ev.reason, "not from c1");
    let mut ev = gate();
    grandchild.emit(&mut ev).await.unwrap();
    assert_eq!(ev.reason, "not from g1");
    assert_eq!(*seen.lock().unwrap(), vec![("c1".to_owned(), 1), ("g1".to_owned(), 2)]);
}

#[tokio::test]
async fn a_grandchilds_spawn_reaches_the_root_naming_the_child_that_spawned_it() {
    let (root, child) = (HookBus::new(), HookBus::new());
    let seen: std::sync::Arc<std::sync::Mutex<Vec<String>>> = std::sync::Arc::default();
    let s = std::sync::Arc::clone(&seen);
    root.on_sync::<ChildSpawnBefore, _>(move |ev, _| {
        s.lock().unwrap().push(format!(
            "{} by {:?} at {} carrier {:?}",
            ev.spawn().child_id,
            ev.parent_child_id(),
            ev.depth(),
            ev.spawn().tracing_context
        ));
        Ok(())
    });
    let _up = install_bubbling(&child, &root, "c1", 1);
    let mut before = SpawnBefore::new(SpawnBeforeInit {
        child_id: "g1".to_owned(),
        agent_name: None,
        prompt: "look".to_owned(),
        depth: 2,
        parent_run_id: Some("run-c1".to_owned()),
    });
    before
        .tracing_context
        .insert("traceparent".to_owned(), "00-abc-def-01".to_owned());
    child.emit(&mut before).await.unwrap();
    assert_eq!(*seen.lock().unwrap(), vec!["g1 by Some(\"c1\") at 2 carrier {}"]);
}

#[test]
fn agent_stats_keep_the_specs_flat_totals_in_json() {
    let mut stats = AgentStats::default();
    stats.add_turn(&zidane_provider::TurnUsage {
        input: 10,
        output: 5,
        cache_read: 3,
        cache_creation: 2,
        cost: Some(0.5),
        ..Default::default()
    });
    let json = serde_json::to_value(&stats).unwrap();
    assert_eq!(
        (
            &json["totalIn"],
            &json["totalOut"],
            &json["totalCacheRead"],
            &json["totalCacheCreation"],
            &json["cost"]
        ),
        (
            &serde_json::json!(10),
            &serde_json::json!(5),
            &serde_json::json!(3),
            &serde_json::json!(2),
            &serde_json::json!(0.5)
        )
    );
    assert!(json.get("totals").is_none(), "{json}");
    let back: AgentStats = serde_json::from_value(json).unwrap();
    assert_eq!(back, stats);
    assert_eq!(
        stats.totals,
        TokenTotals {
            cache_creation: 2,
            cache_read: 3,
            cost: Some(0.5),
            input: 10,
            output: 5
        }
    );
}

#[test]
fn spawn_completes_read_flat_through_to_the_childs_stats() {
    let stats = ChildRunStats {
        child_id: "g1".into(),
        agent_name: Some("scout".into()),
        depth: 2,
        duration: std::time::Duration::from_millis(40),
        stats: AgentStats::default(),
    };
    let done = SpawnComplete::new(SpawnCompleteInit { stats: stats.clone() });
    assert_eq!((done.child_id.as_str(), done.depth), ("g1", 2));
    let bubbled = ChildSpawnComplete::new(ChildSpawnCompleteInit {
        stats,
        parent_child_id: Some("c1".into()),
        depth: 2,
    });
    assert_eq!(bubbled.agent_name.as_deref(), Some("scout"));
    assert_eq!(bubbled.duration, std::time::Duration::from_millis(40));
    assert_eq!(bubbled.parent_child_id(), Some("c1"));
}
