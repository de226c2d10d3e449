//! Spec behaviours the agent once got wrong, each pinned by a test.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use zidane_agent::{AgentOptions, AgentRunOptions, CompactOptions, QueuedMessageOptions, create_agent};
use zidane_core::events::{CompactEnd, CompactStatus, ExecutionHandle, RunStatus, SharedError};
use zidane_core::execution::{DirEntry, ExecOptions, ExecOutput, ExecutionContext, FileStat};
use zidane_provider::scripted::{Script, ScriptedProvider};
use zidane_provider::{BoxFuture, ContentBlock, FinishReason, Provider};

use crate::support::{agent, options, provider};

/// An execution context whose handle takes a minute to spawn.
struct SlowSpawn;

impl ExecutionContext for SlowSpawn {
    fn kind(&self) -> &str {
        "slow"
    }
    fn spawn(&self) -> BoxFuture<'_, Result<ExecutionHandle, SharedError>> {
        Box::pin(async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok(ExecutionHandle {
                id: "slow".into(),
                kind: "slow".into(),
            })
        })
    }
    fn exec<'a>(
        &'a self,
        _: &'a ExecutionHandle,
        _: &'a str,
        _: ExecOptions,
    ) -> BoxFuture<'a, Result<ExecOutput, SharedError>> {
        Box::pin(async { Ok(ExecOutput::default()) })
    }
    fn read_file<'a>(&'a self, _: &'a ExecutionHandle, _: &'a str) -> BoxFuture<'a, Result<Vec<u8>, SharedError>> {
        Box::pin(async { Ok(Vec::new()) })
    }
    fn write_file<'a>(
        &'a self,
        _: &'a ExecutionHandle,
        _: &'a str,
        _: &'a [u8],
    ) -> BoxFuture<'a, Result<(), SharedError>> {
        Box::pin(async { Ok(()) })
    }
    fn list<'a>(&'a self, _: &'a ExecutionHandle, _: &'a str) -> BoxFuture<'a, Result<Vec<DirEntry>, SharedError>> {
        Box::pin(async { Ok(Vec::new()) })
    }
    fn stat<'a>(&'a self, _: &'a ExecutionHandle, _: &'a str) -> BoxFuture<'a, Result<Option<FileStat>, SharedError>> {
        Box::pin(async { Ok(None) })
    }
    fn destroy<'a>(&'a self, _: &'a ExecutionHandle) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
}

#[tokio::test(start_paused = true)]
async fn an_abort_while_the_run_is_starting_keeps_it_from_starting() {
    let p = provider(vec![Script::answer("should never be asked")]);
    let agent = create_agent(AgentOptions {
        execution: Some(Arc::new(SlowSpawn)),
        ..options(&p)
    })
    .unwrap();
    let running = agent.clone();
    let run = tokio::spawn(async move { running.run(AgentRunOptions::prompt("Go.")).await });
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(agent.is_running(), "the run is spawning its execution handle");
    agent.abort();
    let stats = run.await.unwrap().unwrap();
    assert_eq!(stats.status, RunStatus::Aborted);
    assert_eq!(stats.turns, 0);
    assert!(p.requests().is_empty(), "no request reached the model");
    assert!(agent.turns().is_empty(), "the prompt was not recorded");
}

#[tokio::test(start_paused = true)]
async fn abort_stops_a_manual_compaction_which_then_compacts_nothing() {
    let p = provider(vec![
        Script::answer("one"),
        Script::answer("two"),
        // The summary request: slow enough to be aborted.
        Script::new()
            .delay(Duration::from_secs(30))
            .text("SUMMARY")
            .end(FinishReason::Stop),
    ]);
    let agent = agent(&p);
    agent.run(AgentRunOptions::prompt("First.")).await.unwrap();
    agent.run(AgentRunOptions::prompt("Second.")).await.unwrap();
    let before = agent.turns();
    let ends: Arc<std::sync::Mutex<Vec<CompactStatus>>> = Arc::default();
    let seen = Arc::clone(&ends);
    agent.hooks().on_sync::<CompactEnd, _>(move |ev, _| {
        seen.lock().unwrap().push(ev.status());
        Ok(())
    });
    let compacting = agent.clone();
    let compact = tokio::spawn(async move {
        compacting
            .compact(CompactOptions {
                keep_turns: Some(1),
                ..Default::default()
            })
            .await
    });
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(agent.is_running(), "compaction is in progress");
    agent.abort();
    let result = compact.await.unwrap().unwrap();
    assert!(!result.compacted);
    assert_eq!(agent.turns(), before, "history unchanged");
    assert_eq!(*ends.lock().unwrap(), vec![CompactStatus::Aborted]);
    assert!(!agent.is_running());
}

#[tokio::test(start_paused = true)]
async fn compaction_goes_to_the_provider_the_last_request_went_to() {
    let primary = ScriptedProvider::new("primary", [Script::answer("from primary")]);
    let other = ScriptedProvider::new("other", [Script::answer("from other"), Script::answer("SUMMARY")]);
    let agent = create_agent(AgentOptions {
        provider: vec![
            Arc::new(primary.clone()) as Arc<dyn Provider>,
            Arc::new(other.clone()) as Arc<dyn Provider>,
        ],
        ..options(&primary)
    })
    .unwrap();
    agent.run(AgentRunOptions::prompt("One.")).await.unwrap();
    let on_other = AgentRunOptions {
        model: vec![zidane_loop::ModelRef::on("other", "m")],
        ..AgentRunOptions::prompt("Two.")
    };
    agent.run(on_other).await.unwrap();
    let result = agent
        .compact(CompactOptions {
            keep_turns: Some(1),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(result.compacted);
    assert_eq!(result.summary.as_deref(), Some("SUMMARY"));
    assert_eq!(primary.requests().len(), 1, "the primary got only its run's request");
    assert_eq!(
        other.requests().len(),
        2,
        "the summary went where the last request went"
    );
}

#[tokio::test(start_paused = true)]
async fn steer_takes_prompt_parts_and_system_notes() {
    let p = provider(vec![
        Script::new()
            .delay(Duration::from_secs(5))
            .tool_call(0, "c1", "echo", json!({"text": "x"}))
            .end(FinishReason::ToolCalls),
        Script::answer("done"),
    ]);
    let agent = agent(&p);
    let running = agent.clone();
    let run = tokio::spawn(async move { running.run(AgentRunOptions::prompt("Go.")).await });
    tokio::time::sleep(Duration::from_secs(1)).await;
    let parts = vec![ContentBlock::text("look at this"), ContentBlock::text("and this")];
    let options = QueuedMessageOptions {
        id: Some("s1".into()),
        system_notes: vec!["note: be brief".into()],
    };
    assert!(agent.steer(parts, options));
    run.await.unwrap().unwrap();
    let second = &p.requests()[1];
    let last = second.messages.last().unwrap();
    let texts: Vec<&str> = last
        .content()
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, vec!["look at this", "and this", "note: be brief"]);
}

#[tokio::test(start_paused = true)]
async fn a_run_level_behavior_changes_only_the_fields_it_sets() {
    let p = provider(vec![Script::answer("over the cap")]);
    let agent = create_agent(AgentOptions {
        behavior: zidane_loop::Behavior {
            max_total_tokens: Some(1),
            ..Default::default()
        },
        ..options(&p)
    })
    .unwrap();
    let run = AgentRunOptions {
        behavior: zidane_loop::BehaviorOverride {
            max_turns: Some(Some(3)),
            ..Default::default()
        },
        ..AgentRunOptions::prompt("Go.")
    };
    let err = agent.run(run).await.unwrap_err();
    assert!(err.is_budget_exceeded(), "the agent's token cap still applies: {err}");
    assert_eq!(err.stats().map(|s| s.turns), Some(1));
}

#[tokio::test(start_paused = true)]
async fn a_given_session_the_store_lacks_is_created_there_with_its_turns() {
    use zidane_core::session::{MemoryStore, Session, SessionStore};
    use zidane_provider::{Role, SessionTurn};
    let store = Arc::new(MemoryStore::new());
    let seeded = SessionTurn {
        id: "t0".into(),
        role: Role::User,
        content: vec![ContentBlock::text("earlier")].into(),
        created_at: zidane_provider::Timestamp::from_millis(1),
        usage: None,
    };
    let p = provider(vec![Script::answer("now")]);
    let agent = create_agent(AgentOptions {
        session: Some(Session {
            id: "fresh".into(),
            turns: vec![seeded.clone()],
            ..Default::default()
        }),
        store: Some(store.clone() as Arc<dyn SessionStore>),
        ..options(&p)
    })
    .unwrap();
    agent.run(AgentRunOptions::prompt("Go on.")).await.unwrap();
    let saved = store
        .load("fresh")
        .await
        .unwrap()
        .expect("the session was created in the store");
    assert_eq!(saved.turns.len(), 3, "the seeded turn, the prompt and the answer");
    assert_eq!(saved.turns[0], seeded);
}

#[tokio::test(start_paused = true)]
async fn automatic_decisions_skip_a_provider_that_cannot_make_them() {
    use zidane_agent::DecisionRequest;
    use zidane_provider::{Capabilities, ProviderMeta};
    let plain = ScriptedProvider::new("plain", [Script::answer("not a decision")]).with_meta(ProviderMeta::new(
        "plain-model",
        8_000,
        Capabilities::default(),
    ));
    let decider = ScriptedProvider::new("decider", [Script::answer(r#"{"probability": 0.9}"#)]);
    let agent = create_agent(AgentOptions {
        provider: vec![
            Arc::new(plain.clone()) as Arc<dyn Provider>,
            Arc::new(decider.clone()) as Arc<dyn Provider>,
        ],
        ..options(&plain)
    })
    .unwrap();
    let answer = agent
        .decide(DecisionRequest::Predicate {
            question: "Ready?".into(),
        })
        .await;
    assert!(answer.ok, "{:?}", answer.reason);
    assert!(plain.requests().is_empty());
    assert_eq!(decider.requests().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn session_hooks_report_the_session_and_its_turn_count() {
    use std::sync::Mutex;
    use zidane_core::events::{RunBeforeEnd, SessionTurns, SystemTransform};
    use zidane_core::session::MemoryStore;
    let p = provider(vec![
        Script::call("c1", "echo", json!({"text": "a"})),
        Script::answer("done"),
    ]);
    let agent = create_agent(AgentOptions {
        session_id: Some("s".into()),
        store: Some(Arc::new(MemoryStore::new())),
        ..options(&p)
    })
    .unwrap();
    let counts: Arc<Mutex<Vec<usize>>> = Arc::default();
    type Seen = Vec<(&'static str, Option<String>)>;
    let sessions: Arc<Mutex<Seen>> = Arc::default();
    let c = Arc::clone(&counts);
    agent.hooks().on_sync::<SessionTurns, _>(move |ev, _| {
        c.lock().unwrap().push(ev.count());
        Ok(())
    });
    let s = Arc::clone(&sessions);
    agent.hooks().on_sync::<RunBeforeEnd, _>(move |ev, _| {
        s.lock()
            .unwrap()
            .push(("run:beforeEnd", ev.session_id().map(str::to_owned)));
        Ok(())
    });
    let s = Arc::clone(&sessions);
    agent.hooks().on_sync::<SystemTransform, _>(move |ev, _| {
        s.lock()
            .unwrap()
            .push(("system:transform", ev.session_id().map(str::to_owned)));
        Ok(())
    });
    agent.run(AgentRunOptions::prompt("Go.")).await.unwrap();
    agent.run(AgentRunOptions::prompt("Again.")).await.unwrap_err();
    // The prompt (1), the call with its result (3), the answer (4); then the
    // second run's prompt (5) before its provider ran out of scripts.
    assert_eq!(*counts.lock().unwrap(), vec![1, 3, 4, 5]);
    let s = Some("s".to_owned());
    assert_eq!(
        sessions.lock().unwrap()[..3],
        [
            ("system:transform", s.clone()),
            ("system:transform", s.clone()),
            ("run:beforeEnd", s)
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn agent_level_model_chain_and_output_limit_apply_to_runs_that_set_none() {
    let p = provider(vec![Script::answer("one"), Script::answer("two")]);
    let agent = create_agent(AgentOptions {
        model: vec!["agent-model".into()],
        max_tokens: Some(123),
        ..options(&p)
    })
    .unwrap();
    agent.run(AgentRunOptions::prompt("One.")).await.unwrap();
    let own = AgentRunOptions {
        model: vec!["run-model".into()],
        max_tokens: Some(7),
        ..AgentRunOptions::prompt("Two.")
    };
    agent.run(own).await.unwrap();
    let requests = p.requests();
    assert_eq!(
        requests
            .iter()
            .map(|r| (r.model.as_str(), r.max_tokens))
            .collect::<Vec<_>>(),
        vec![("agent-model", Some(123)), ("run-model", Some(7))]
    );
}

#[tokio::test(start_paused = true)]
async fn ensure_execution_rejects_when_destroy_lands_during_the_spawn() {
    let p = provider(vec![]);
    let agent = create_agent(AgentOptions {
        execution: Some(Arc::new(SlowSpawn)),
        ..options(&p)
    })
    .unwrap();
    let ensuring = agent.clone();
    let pending = tokio::spawn(async move { ensuring.ensure_execution().await });
    tokio::time::sleep(Duration::from_secs(1)).await;
    agent.destroy().await;
    let refused = pending.await.unwrap();
    assert!(
        matches!(refused, Err(zidane_agent::AgentError::Destroyed)),
        "{refused:?}"
    );
    assert!(agent.handle().await.is_none(), "the spawned handle was released");
    assert!(
        agent
            .get_context_segments(&zidane_agent::ContextOptions::default())
            .is_none()
    );
    assert!(
        agent
            .get_context_breakdown(&zidane_agent::ContextOptions::default())
            .await
            .is_none(),
        "the context answers keep being None after destroy"
    );
}
