use super::*;
use zidane_core::durable::CheckpointBackend;

#[test]
fn synchronous_sets_how_commits_are_synced() {
    let dir = tempfile::tempdir().unwrap();
    for (mode, want) in [
        (Synchronous::Full, 2),
        (Synchronous::Normal, 1),
        (Synchronous::BeforeEffects, 1),
    ] {
        let store = SqliteStore::open_with(dir.path().join(format!("{mode:?}.db")), mode).unwrap();
        let conn = store.connection();
        let level: i64 = conn.lock().query_row("PRAGMA synchronous", [], |r| r.get(0)).unwrap();
        assert_eq!(level, want, "{mode:?}");
    }
}

/// The statements the traced connection ran, in order.
static TRACED: parking_lot::Mutex<Vec<String>> = parking_lot::Mutex::new(Vec::new());

fn traced(event: rusqlite::trace::TraceEvent<'_>) {
    let rusqlite::trace::TraceEvent::Stmt(_, statement) = event else {
        return;
    };
    let statement = statement.trim();
    if statement.starts_with("PRAGMA synchronous") || statement == "COMMIT" {
        TRACED.lock().push(statement.to_owned());
    }
}

#[tokio::test]
async fn before_effects_syncs_the_commit_before_an_unsafe_call_and_no_other() {
    use std::time::Duration;
    use zidane_core::durable::{Durability, DurableRuntime, Step, StepKey, StepKind, StepValue};

    let dir = tempfile::tempdir().unwrap();
    let options = CheckpointOptions {
        synchronous: Synchronous::BeforeEffects,
        group_commit: Duration::from_secs(3600),
        heartbeat: Duration::from_secs(3600),
        lease_ttl: Duration::from_secs(7200),
    };
    let rt = Arc::new(CheckpointRuntime::open_with(dir.path().join("s.db"), options).unwrap());
    rt.sqlite()
        .connection()
        .lock()
        .trace_v2(rusqlite::trace::TraceEventCodes::SQLITE_TRACE_STMT, Some(traced));
    assert!(CheckpointBackend::acquire(Arc::clone(&rt), "s".into()).await.unwrap());
    rt.bind_run("r", "s");
    let step = |kind, name: &str, durability| Step {
        key: StepKey {
            run_id: "r".into(),
            turn: 1,
            kind,
            name: name.into(),
        },
        durability,
    };
    let decision = |v: &str| StepValue::Decision(serde_json::json!(v));
    TRACED.lock().clear();
    // A decision waits for the next commit: nothing is written.
    let d = decision("a");
    rt.step(
        step(StepKind::Decision, "d1", Durability::Safe),
        Box::pin(async move { Ok(d) }),
    )
    .await
    .unwrap();
    assert!(TRACED.lock().is_empty(), "{:?}", TRACED.lock());
    // An unsafe call: the waiting record is committed, synced, before its
    // body runs.
    let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let at_start = Arc::clone(&seen);
    let work = Box::pin(async move {
        at_start.lock().extend(TRACED.lock().iter().cloned());
        Ok(StepValue::Tool(zidane_core::durable::ToolStep {
            outcome: zidane_core::durable::ToolStepOutcome::Output(zidane_core::ToolOutput::text("ok")),
            state: Vec::new(),
            resume_state: serde_json::Map::new(),
        }))
    });
    rt.step(step(StepKind::ToolCall, "c1", Durability::Unsafe), work)
        .await
        .unwrap();
    assert_eq!(
        *seen.lock(),
        ["PRAGMA synchronous = FULL", "COMMIT", "PRAGMA synchronous = NORMAL"],
        "the record before the call, synced"
    );
    assert_eq!(
        rt.records("r").await.unwrap().len(),
        1,
        "the decision; the call's record waits"
    );
    // A sync (a person's answer, a summary) is synced too.
    TRACED.lock().clear();
    rt.sync("r").await.unwrap();
    assert_eq!(
        *TRACED.lock(),
        ["PRAGMA synchronous = FULL", "COMMIT", "PRAGMA synchronous = NORMAL"]
    );
    assert_eq!(rt.records("r").await.unwrap().len(), 2);
    TRACED.lock().clear();
    CheckpointBackend::append_turns(&*rt, "s", "r", 1, &[]).await.unwrap();
    assert_eq!(*TRACED.lock(), ["COMMIT"], "a flush is not synced");
}
