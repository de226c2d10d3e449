//! `create_agent` misuses and the documented edges of each `Agent` member.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use zidane_agent::{
    AgentCacheChange, AgentError, AgentOptions, AgentRunOptions, CompactOptions, ContextOptions, DecisionRequest,
    Decisions, QueuedMessageOptions, create_agent,
};
use zidane_core::session::{MemoryStore, Session};
use zidane_hooks::{DynHandler, HookMap};
use zidane_provider::scripted::{Script, ScriptedProvider};
use zidane_provider::{FinishReason, Provider, StreamEvent, ThinkingLevel, UsageReport};

use crate::support::{agent, options, provider, record};

fn named(name: &str) -> Arc<dyn Provider> {
    Arc::new(ScriptedProvider::new(name, []))
}

#[test]
fn create_agent_refuses_each_misuse() {
    let err = |o: AgentOptions| create_agent(o).unwrap_err().to_string();
    assert_eq!(err(AgentOptions::default()), "at least one provider is required");
    assert_eq!(
        err(AgentOptions {
            provider: vec![named("a"), named(" ")],
            ..Default::default()
        }),
        "provider #1 has a blank name"
    );
    assert_eq!(
        err(AgentOptions {
            provider: vec![named("a"), named("a")],
            ..Default::default()
        }),
        "two providers are named `a`"
    );
    let typo = HookMap::new().on_named("tool:gat", DynHandler::sync(|_, _| Ok(())));
    assert_eq!(
        err(AgentOptions {
            provider: vec![named("a")],
            hooks: typo,
            ..Default::default()
        }),
        "unknown hook `tool:gat`; did you mean `tool:gate`?"
    );
    assert_eq!(
        err(AgentOptions {
            provider: vec![named("a")],
            session: Some(Session {
                id: "s".into(),
                ..Default::default()
            }),
            session_id: Some("s".into()),
            ..Default::default()
        }),
        "`session` and `session_id` cannot be used together"
    );
    assert_eq!(
        err(AgentOptions {
            provider: vec![named("a")],
            session_id: Some("s".into()),
            ..Default::default()
        }),
        "`session_id` needs a session store (`store`)"
    );
    // A session without a store is kept in memory, as the spec says.
    assert!(
        create_agent(AgentOptions {
            provider: vec![named("a")],
            session: Some(Session {
                id: "s".into(),
                ..Default::default()
            }),
            ..Default::default()
        })
        .is_ok()
    );
    // One provider may have any name, even a blank one.
    assert!(
        create_agent(AgentOptions {
            provider: vec![named("")],
            ..Default::default()
        })
        .is_ok()
    );
}

#[tokio::test(start_paused = true)]
async fn run_steer_reset_compact_and_destroy_edges() {
    let p = provider(vec![
        Script::new()
            .delay(Duration::from_secs(10))
            .text("slow")
            .end(FinishReason::Stop),
        Script::answer("again"),
    ]);
    let agent = agent(&p);
    assert!(
        !agent.steer("nobody is running", QueuedMessageOptions::default()),
        "no run in flight"
    );
    let running = agent.clone();
    let run = tokio::spawn(async move { running.run(AgentRunOptions::prompt("Go.")).await });
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(agent.is_running());
    assert!(matches!(
        agent.run(AgentRunOptions::prompt("two")).await.unwrap_err(),
        AgentError::Busy
    ));
    assert!(matches!(agent.reset().await.unwrap_err(), AgentError::Busy));
    assert!(matches!(
        agent
            .compact(CompactOptions {
                keep_turns: Some(1),
                ..Default::default()
            })
            .await
            .unwrap_err(),
        AgentError::Busy
    ));
    agent.abort();
    assert!(
        !agent.steer("after the abort", QueuedMessageOptions::default()),
        "steer after abort returns false"
    );
    let stats = run.await.unwrap().unwrap();
    assert_eq!(stats.status, zidane_core::events::RunStatus::Aborted);
    agent.wait_for_idle().await;
    assert!(!agent.is_running());
    agent.reset().await.unwrap();
    assert!(agent.turns().is_empty());
    agent.destroy().await;
    agent.destroy().await; // idempotent
    assert!(agent.get_context_segments(&ContextOptions::default()).is_none());
    // A run after destroy brings the agent back.
    agent.run(AgentRunOptions::prompt("Again.")).await.unwrap();
    assert!(agent.get_context_segments(&ContextOptions::default()).is_some());
}

#[tokio::test(start_paused = true)]
async fn execution_is_ready_once_for_concurrent_callers() {
    let agent = agent(&provider(vec![]));
    let log = record(&agent);
    let (a, b, c) = tokio::join!(agent.ensure_execution(), agent.ensure_execution(), agent.warmup());
    assert_eq!(a.unwrap(), b.unwrap());
    c.unwrap();
    assert_eq!(
        log.lock().unwrap().iter().filter(|n| **n == "execution:ready").count(),
        1
    );
    assert!(agent.handle().await.is_some());
}

#[tokio::test(start_paused = true)]
async fn a_session_run_fires_the_session_hooks_in_order() {
    let p = provider(vec![
        Script::call("c1", "echo", json!({"text": "hi"})),
        Script::answer("done"),
    ]);
    let agent = create_agent(AgentOptions {
        session_id: Some("s1".into()),
        store: Some(Arc::new(MemoryStore::new())),
        ..options(&p)
    })
    .unwrap();
    let log = record(&agent);
    agent.run(AgentRunOptions::prompt("Echo hi.")).await.unwrap();
    let names: Vec<&str> = log
        .lock()
        .unwrap()
        .iter()
        .copied()
        .filter(|n| n.starts_with("session:") || *n == "agent:start" || *n == "agent:done" || *n == "execution:ready")
        .collect();
    insta::assert_json_snapshot!(names);
    let session = agent.session().unwrap();
    assert_eq!(session.runs.len(), 1);
    assert_eq!((session.runs[0].first_turn, session.runs[0].end_turn), (0, 4));
    agent.set_session_meta("title", json!("Echo")).await.unwrap();
    assert!(log.lock().unwrap().contains(&"session:meta"));
}

fn cached_turn(text: &str) -> Script {
    Script::new()
        .text(text)
        .event(StreamEvent::Usage(UsageReport {
            input: Some(100),
            output: Some(20),
            cache_read: Some(900),
            cache_creation: Some(0),
            ..Default::default()
        }))
        .end(FinishReason::Stop)
}

#[tokio::test(start_paused = true)]
async fn cache_estimates_match_hand_computed_values() {
    let p = provider(vec![cached_turn("hi")]);
    let agent = agent(&p);
    assert_eq!(agent.cache_expires_at(), None, "no request yet");
    let before = agent.cache_impact(&AgentCacheChange {
        model: Some("other".into()),
        thinking: Some(ThinkingLevel::High),
        ..Default::default()
    });
    assert_eq!(
        before.tokens, 0,
        "model and thinking have nothing to compare against yet"
    );
    agent.run(AgentRunOptions::prompt("Hi.")).await.unwrap();
    // The fixed clock stands at 1_700_000_000_000; five minutes later:
    assert_eq!(
        agent.cache_expires_at(),
        Some(zidane_provider::Timestamp::from_millis(1_700_000_000_000 + 300_000))
    );
    let same = agent.cache_impact(&AgentCacheChange {
        model: Some("scripted-model".into()),
        ..Default::default()
    });
    assert_eq!(same.tokens, 0, "the same model changes nothing");
    let model = agent.cache_impact(&AgentCacheChange {
        model: Some("other".into()),
        ..Default::default()
    });
    assert_eq!(
        (model.tokens, model.changed.as_slice()),
        (1000, &["model"][..]),
        "100 input + 900 cache read"
    );
    let tools = agent.cache_impact(&AgentCacheChange {
        tools: true,
        ..Default::default()
    });
    assert_eq!(tools.tokens, 1000);
    let thinking = agent.cache_impact(&AgentCacheChange {
        thinking: Some(ThinkingLevel::High),
        ..Default::default()
    });
    let system = agent.cache_impact(&AgentCacheChange {
        system: true,
        ..Default::default()
    });
    assert!(thinking.tokens <= system.tokens && system.tokens <= 1000);
    assert_eq!(agent.cache_impact(&AgentCacheChange::default()).tokens, 0);
}

#[tokio::test(start_paused = true)]
async fn decisions_answer_or_say_why_not() {
    let p = provider(vec![
        Script::answer(r#"{"probability": 0.7}"#),
        Script::answer("maybe?"),
        Script::answer(r#"{"choice": "b"}"#),
    ]);
    let agent = agent(&p);
    let log = record(&agent);
    let yes = agent
        .decide(DecisionRequest::Predicate {
            question: "Is the sky blue?".into(),
        })
        .await;
    assert_eq!((yes.ok, yes.answers), (true, Some(json!({"probability": 0.7}))));
    let bad = agent.decide(DecisionRequest::Predicate { question: "?".into() }).await;
    assert!(!bad.ok && bad.reason.unwrap().contains("not JSON"));
    let choice = agent
        .decide(DecisionRequest::Choice {
            question: "Pick".into(),
            options: vec!["a".into(), "b".into()],
        })
        .await;
    assert_eq!(choice.answers, Some(json!({"choice": "b"})));
    assert_eq!(
        log.lock()
            .unwrap()
            .iter()
            .filter(|n| n.starts_with("decision:"))
            .copied()
            .collect::<Vec<_>>(),
        vec![
            "decision:start",
            "decision:end",
            "decision:start",
            "decision:end",
            "decision:start",
            "decision:end"
        ]
    );
    let off = create_agent(AgentOptions {
        decisions: Decisions::Disabled,
        ..options(&p)
    })
    .unwrap();
    let result = off
        .decide(DecisionRequest::Score {
            question: "?".into(),
            min: 0.0,
            max: 1.0,
        })
        .await;
    assert_eq!((result.ok, result.reason.as_deref()), (false, Some("unavailable")));
}

#[tokio::test(start_paused = true)]
async fn context_accounting_works_before_the_first_run() {
    let p = provider(vec![]);
    let agent = create_agent(AgentOptions {
        system: Some("You are careful. <rules>be brief</rules>".into()),
        ..options(&p)
    })
    .unwrap();
    let opts = ContextOptions {
        effective_window: Some(10_000),
        rules_block: Some("<rules>be brief</rules>".into()),
        rules_files: vec![("AGENTS.md".into(), "be brief".into())],
        exact: false,
    };
    let breakdown = agent.get_context_breakdown(&opts).await.unwrap();
    let names: Vec<&str> = breakdown.categories.iter().map(|c| c.name).collect();
    assert_eq!(names, vec!["system", "rules", "tools", "conversation", "free"]);
    assert_eq!(breakdown.categories[1].tokens, 6, "23 characters of rules");
    assert!(breakdown.fraction.unwrap() < 0.1);
    let segments = agent.get_context_segments(&opts).unwrap();
    assert_eq!(
        segments[0].text, "You are careful. ",
        "the rules block is reported once, as its file"
    );
    assert!(matches!(&segments[1].source, zidane_agent::SegmentSource::RulesFile { path } if path == "AGENTS.md"));
}

/// A thinking block the provider no longer accepts (an invalid signature,
/// 400) is scrubbed from the history, in memory and in the session, and
/// the request goes again; `history:repair` names the turns it changed.
#[tokio::test(start_paused = true)]
async fn rejected_reasoning_is_scrubbed_from_the_history_and_the_request_goes_again() {
    use std::sync::{Arc, Mutex};
    use zidane_core::events::HistoryRepair;
    use zidane_core::session::{MemoryStore, Session, SessionStore};
    use zidane_provider::{ContentBlock, ErrorKind, ProviderError, Role, SessionTurn};

    let store = Arc::new(MemoryStore::default());
    let turn = |id: &str, role: Role, content: Vec<ContentBlock>| SessionTurn {
        id: id.into(),
        role,
        content: content.into(),
        created_at: zidane_provider::Timestamp::from_millis(1),
        usage: None,
    };
    let session = Session {
        id: "s".into(),
        turns: vec![
            turn("u1", Role::User, vec![ContentBlock::text("hi")]),
            turn(
                "a1",
                Role::Assistant,
                vec![
                    ContentBlock::Thinking {
                        thinking: "let me think".into(),
                        signature: Some("stale".into()),
                    },
                    ContentBlock::text("hello"),
                ],
            ),
        ],
        ..Default::default()
    };
    store.create("s", 1).await.unwrap();
    store.append_turns("s", &session.turns, 1).await.unwrap();
    let rejected = ProviderError::new(
        ErrorKind::InvalidRequest,
        "mock",
        "messages.1.content.0: Invalid `signature` in `thinking` block",
    )
    .with_status(400);
    let model = provider(vec![Script::new().error(rejected), Script::answer("again")]);
    let agent = create_agent(AgentOptions {
        store: Some(Arc::clone(&store) as Arc<dyn SessionStore>),
        session_id: Some("s".into()),
        ..options(&model)
    })
    .unwrap();
    let repairs: Arc<Mutex<Vec<Vec<String>>>> = Arc::default();
    let r = Arc::clone(&repairs);
    agent.hooks().on_sync::<HistoryRepair, _>(move |ev, _| {
        r.lock().unwrap().push(ev.turn_ids().clone());
        Ok(())
    });
    let stats = agent.run(AgentRunOptions::prompt("once more")).await.unwrap();
    assert!(stats.completed());
    assert_eq!(*repairs.lock().unwrap(), vec![vec!["a1".to_owned()]]);
    let thinking = |turns: &[SessionTurn]| {
        turns
            .iter()
            .flat_map(|t| t.content.iter())
            .any(|b| matches!(b, ContentBlock::Thinking { .. }))
    };
    let retried = &model.requests()[1];
    assert!(
        !retried
            .messages
            .iter()
            .flat_map(|m| m.content().iter())
            .any(|b| matches!(b, ContentBlock::Thinking { .. }))
    );
    assert!(!thinking(&agent.turns()));
    let kept = store.load("s").await.unwrap().unwrap();
    assert!(!thinking(&kept.turns), "the session still holds the rejected block");
    assert_eq!(kept.turns.len(), 4);
}

#[tokio::test(start_paused = true)]
async fn the_providers_input_changes_are_reported_for_the_turn() {
    use std::sync::{Arc, Mutex};
    use zidane_core::events::ProviderInputTransformations;
    use zidane_provider::{FinishReason, StreamEvent};
    let entry = json!({"type": "thinking_dropped", "path": "messages.1.content.0", "reason": "account_mismatch"});
    let model = provider(vec![
        Script::new()
            .event(StreamEvent::InputTransformations(vec![entry.clone()]))
            .text("answered without its old reasoning")
            .usage(10, 5)
            .end(FinishReason::Stop),
    ]);
    let agent = crate::support::agent(&model);
    type Reported = Vec<(Vec<serde_json::Value>, bool)>;
    let seen: Arc<Mutex<Reported>> = Arc::default();
    let s = Arc::clone(&seen);
    agent.hooks().on_sync::<ProviderInputTransformations, _>(move |ev, _| {
        s.lock().unwrap().push((
            ev.transformations().clone(),
            !ev.run_id().is_empty() && !ev.turn_id().is_empty(),
        ));
        Ok(())
    });
    agent.run(AgentRunOptions::prompt("go")).await.unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![(vec![entry], true)]);
}

/// A referenced image is resolved into bytes for the request only: the
/// conversation keeps the reference, and the resolver hears of the block.
#[tokio::test(start_paused = true)]
async fn a_content_ref_is_resolved_on_the_wire_only() {
    use std::sync::{Arc, Mutex};
    use zidane_core::events::ContentRefResolve;
    use zidane_provider::{ContentBlock, ImageSource};
    let model = provider(vec![Script::answer("a cat")]);
    let agent = crate::support::agent(&model);
    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let a = Arc::clone(&asked);
    agent.hooks().on_sync::<ContentRefResolve, _>(move |ev, _| {
        a.lock()
            .unwrap()
            .push(format!("{} {} {:?}", ev.block().reference, ev.block().kind, ev.depth()));
        ev.data = Some("aGVsbG8=".into());
        Ok(())
    });
    let reference = ContentBlock::ContentRef {
        reference: "blob://cat".into(),
        kind: "image".into(),
        media_type: Some("image/jpeg".into()),
    };
    agent
        .run(AgentRunOptions {
            prompt: "What is this?".into(),
            parts: vec![reference.clone()],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(*asked.lock().unwrap(), vec!["blob://cat image Some(0)"]);
    let sent = model.requests()[0].messages[0].content().to_vec();
    assert_eq!(
        sent[1],
        ContentBlock::Image {
            source: ImageSource::Base64 {
                media_type: "image/jpeg".into(),
                data: "aGVsbG8=".into()
            }
        }
    );
    assert_eq!(
        agent.turns()[0].content[1],
        reference,
        "the conversation keeps the reference"
    );
}

/// What the provider reports about a turn reaches `provider:diagnostic`
/// with the run and turn it belongs to.
#[tokio::test(start_paused = true)]
async fn a_providers_diagnostic_is_reported_for_the_turn() {
    use std::sync::{Arc, Mutex};
    use zidane_core::events::ProviderDiagnostic;
    use zidane_provider::{FinishReason, StreamEvent};
    let data = json!({"type": "fallback", "from": {"model": "big"}, "to": {"model": "small"}});
    let model = provider(vec![
        Script::new()
            .event(StreamEvent::Diagnostic(zidane_provider::ProviderDiagnostic {
                kind: "fallback".into(),
                message: "the server handed the turn from big to small".into(),
                data: data.clone(),
            }))
            .text("answered by the smaller model")
            .usage(10, 5)
            .end(FinishReason::Stop),
    ]);
    let agent = crate::support::agent(&model);
    type Reported = Vec<(String, String, serde_json::Value, bool)>;
    let seen: Arc<Mutex<Reported>> = Arc::default();
    let s = Arc::clone(&seen);
    agent.hooks().on_sync::<ProviderDiagnostic, _>(move |ev, _| {
        s.lock().unwrap().push((
            ev.kind().to_owned(),
            ev.message().to_owned(),
            ev.data().clone(),
            !ev.run_id().is_empty() && !ev.turn_id().is_empty(),
        ));
        Ok(())
    });
    agent.run(AgentRunOptions::prompt("go")).await.unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        vec![(
            "fallback".to_owned(),
            "the server handed the turn from big to small".to_owned(),
            data,
            true
        )]
    );
}

#[tokio::test(start_paused = true)]
async fn run_gives_back_the_final_answer_beside_the_statistics() {
    let p = provider(vec![
        Script::call("c1", "echo", json!({"text": "hi"})),
        Script::new().text("The answer ").text("is 42.").end(FinishReason::Stop),
        Script::new()
            .delay(Duration::from_secs(60))
            .text("never")
            .end(FinishReason::Stop),
    ]);
    let agent = agent(&p);
    assert_eq!(agent.last_text(), None, "no answer before the first run");
    let output = agent.run(AgentRunOptions::prompt("Ask.")).await.unwrap();
    assert_eq!(output.text, "The answer is 42.");
    assert_eq!(output.to_string(), "The answer is 42.");
    // The statistics are the output's own fields too.
    assert_eq!((output.turns, output.tool_calls), (2, 1));
    assert!(output.completed());
    assert_eq!(agent.last_text().as_deref(), Some("The answer is 42."));

    // A run aborted before its first turn has no answer of its own, while
    // the conversation's last answer stays readable.
    let running = agent.clone();
    let run = tokio::spawn(async move { running.run(AgentRunOptions::prompt("Again.")).await });
    tokio::time::sleep(Duration::from_secs(1)).await;
    agent.abort();
    let output = run.await.unwrap().unwrap();
    assert_eq!(output.status, zidane_core::events::RunStatus::Aborted);
    assert_eq!(output.text, "", "{output:?}");
    assert_eq!(agent.last_text().as_deref(), Some("The answer is 42."));
}

#[tokio::test]
async fn a_store_without_a_session_id_mints_one_and_keeps_the_turns() {
    let store = Arc::new(MemoryStore::new());
    let p = provider(vec![Script::answer("kept")]);
    let agent = create_agent(AgentOptions {
        store: Some(store.clone()),
        ..options(&p)
    })
    .unwrap();
    let id = agent.session_id().expect("an agent with a store has a session");
    agent.run(AgentRunOptions::prompt("Remember.")).await.unwrap();
    assert_eq!(
        agent.session_id().as_deref(),
        Some(id.as_str()),
        "the id does not change"
    );
    let saved = zidane_core::session::SessionStore::load(&*store, &id)
        .await
        .unwrap()
        .expect("the minted session is in the store");
    assert_eq!(saved.turns.len(), 2, "the prompt and the answer are kept");

    // Without a store there is nothing to name.
    let memory = agent_without_store();
    assert_eq!(memory.session_id(), None);

    let minted = zidane_agent::new_session_id();
    assert_eq!(minted.len(), 36, "a UUID: {minted}");
    assert_ne!(minted, zidane_agent::new_session_id());
}

fn agent_without_store() -> zidane_agent::Agent {
    agent(&provider(vec![]))
}

#[tokio::test]
async fn run_stream_gives_each_event_in_order_and_ends_with_the_output() {
    use zidane_agent::RunEvent;
    let p = provider(vec![
        Script::new()
            .text("Let me look.")
            .tool_call(0, "c1", "echo", json!({"text": "hi"}))
            .end(FinishReason::ToolCalls),
        Script::new().text("Done ").text("here.").end(FinishReason::Stop),
    ]);
    let agent = agent(&p);
    let mut stream = agent.run_stream(AgentRunOptions::prompt("Go."));
    let mut seen = Vec::new();
    let mut output = None;
    while let Some(event) = stream.next().await {
        match event.unwrap() {
            RunEvent::TextDelta(text) => seen.push(format!("text {text}")),
            RunEvent::ToolCall { call_id, name, input } => seen.push(format!("call {call_id} {name} {input}")),
            RunEvent::TurnEnd { turn, .. } => seen.push(format!("end {turn}")),
            RunEvent::ToolResult {
                call_id,
                content,
                is_error,
                ..
            } => seen.push(format!("result {call_id} {} {is_error}", content.text())),
            RunEvent::Done(out) => output = Some(out),
            other => seen.push(format!("{other:?}")),
        }
    }
    assert_eq!(
        seen,
        [
            "text Let me look.",
            r#"call c1 echo {"text":"hi"}"#,
            "end 1",
            "result c1 echo: hi false",
            "text Done ",
            "text here.",
            "end 2",
        ]
    );
    let output = output.expect("the last event is the output");
    assert_eq!(output.text, "Done here.");
    assert!(stream.next().await.is_none(), "nothing after the output");
}

#[tokio::test]
async fn run_stream_ends_with_the_runs_error() {
    let p = provider(vec![Script::new().error(zidane_provider::ProviderError::new(
        zidane_provider::ErrorKind::InvalidRequest,
        "mock",
        "bad request",
    ))]);
    let agent = agent(&p);
    let mut stream = agent.run_stream(AgentRunOptions::prompt("Go."));
    let mut last = None;
    while let Some(event) = stream.next().await {
        last = Some(event);
    }
    let error = last.unwrap().unwrap_err();
    assert!(error.to_string().contains("bad request"), "{error}");
}

#[tokio::test]
async fn a_run_errors_chain_of_causes_repeats_no_line() {
    let p = provider(vec![
        Script::new().error(
            zidane_provider::ProviderError::new(zidane_provider::ErrorKind::InvalidRequest, "mock", "bad request")
                .with_source(std::io::Error::other("the socket closed")),
        ),
    ]);
    let agent = agent(&p);
    let error = agent.run(AgentRunOptions::prompt("Go.")).await.unwrap_err();
    let mut chain = vec![error.to_string()];
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        chain.push(cause.to_string());
        source = cause.source();
    }
    assert_eq!(
        chain,
        ["mock: invalid request: bad request", "the socket closed"],
        "each line once"
    );
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

/// The text of the tool result the model received for `call_id`.
fn result_text(p: &ScriptedProvider, call_id: &str) -> (String, bool) {
    for request in p.requests() {
        for message in &request.messages {
            for block in message.content() {
                if let zidane_provider::ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                    ..
                } = block
                    && tool_use_id == call_id
                {
                    return (content.text(), *is_error);
                }
            }
        }
    }
    panic!("no result for {call_id}")
}

#[tokio::test]
async fn a_typed_tools_bad_input_reaches_the_model_as_a_validation_error() {
    use zidane_core::{FnTool, ToolSet};
    let add = FnTool::typed::<AddArgs>("add", "Add two integers.", |args, _cx| async move {
        Ok((args.a + args.b).to_string())
    });
    let schema = zidane_core::tool::Tool::input_schema(&add).clone();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["a"]["type"], "integer");
    assert_eq!(schema["required"], json!(["a", "b"]));
    // A hand-written schema looser than the type: the input passes the
    // loop's check and fails to deserialize.
    let loose = FnTool::typed_with_schema(
        "loose",
        "Add.",
        json!({"type": "object"}),
        |args: AddArgs, _cx| async move { Ok((args.a + args.b).to_string()) },
    );
    let failing = FnTool::typed_with_schema(
        "failing",
        "Fails.",
        json!({"type": "object"}),
        |_: Value, _cx| async move { Err::<String, _>("the disk is full".into()) },
    );
    let p = provider(vec![
        Script::call("bad", "add", json!({"a": "seventeen", "b": 25})),
        Script::call("good", "add", json!({"a": 17, "b": 25})),
        Script::call("loose", "loose", json!({"a": "x"})),
        Script::call("fails", "failing", json!({})),
        Script::answer("42"),
    ]);
    let agent = create_agent(AgentOptions {
        tools: ToolSet::new().with(add).with(loose).with(failing),
        ..options(&p)
    })
    .unwrap();
    let output = agent.run(AgentRunOptions::prompt("Add.")).await.unwrap();
    assert_eq!(output.text, "42", "the run went on");
    let (bad, bad_error) = result_text(&p, "bad");
    assert!(bad.starts_with("Validation error:"), "{bad}");
    assert!(bad_error);
    assert_eq!(result_text(&p, "good"), ("42".to_owned(), false));
    let (loose, loose_error) = result_text(&p, "loose");
    assert!(
        loose.starts_with("Validation error:") && loose.contains("invalid type"),
        "{loose}"
    );
    assert!(loose_error);
    assert_eq!(
        result_text(&p, "fails"),
        ("Tool error: the disk is full".to_owned(), true)
    );
}

#[tokio::test(start_paused = true)]
async fn a_decision_is_bounded_by_its_timeout_and_stopped_by_abort() {
    use zidane_agent::{DEFAULT_DECISION_TIMEOUT, DecisionError};
    let question = || DecisionRequest::Predicate { question: "?".into() };
    // A provider that never answers: the default limit ends the wait.
    let p = provider(vec![
        Script::new().delay(Duration::from_secs(3600)).text("late"),
        Script::new().delay(Duration::from_secs(3600)).text("late"),
    ]);
    let agent = agent(&p);
    let started = tokio::time::Instant::now();
    let timed_out = agent.try_decide(question()).await.unwrap_err();
    assert!(matches!(timed_out, DecisionError::TimedOut(limit) if limit == DEFAULT_DECISION_TIMEOUT));
    assert_eq!(started.elapsed(), DEFAULT_DECISION_TIMEOUT);

    // `abort` stops a pending decision, run or no run.
    let asking = agent.clone();
    let pending = tokio::spawn(async move { asking.try_decide(question()).await });
    tokio::time::sleep(Duration::from_secs(1)).await;
    agent.abort();
    let aborted = pending.await.unwrap().unwrap_err();
    assert!(matches!(aborted, DecisionError::Aborted), "{aborted:?}");
    assert_eq!(started.elapsed(), DEFAULT_DECISION_TIMEOUT + Duration::from_secs(1));

    // A pinned limit.
    let pinned = create_agent(AgentOptions {
        decisions: Decisions::Pinned {
            provider: None,
            model: None,
            timeout: Some(Duration::from_secs(5)),
        },
        ..options(&provider(vec![
            Script::new().delay(Duration::from_secs(60)).text("late"),
        ]))
    })
    .unwrap();
    let result = pinned.decide(question()).await;
    assert_eq!(result.reason.as_deref(), Some("the decision timed out after 5s"));
}

#[tokio::test]
async fn a_decision_handler_cannot_ask_for_a_decision() {
    use zidane_agent::{DecideHookContext, DecisionError};
    use zidane_core::events::DecisionStart;
    let p = provider(vec![Script::answer(r#"{"probability": 0.4}"#)]);
    let agent = agent(&p);
    let inner: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let seen = Arc::clone(&inner);
    let direct = agent.clone();
    agent.hooks().on::<DecisionStart, _>(move |_ev, cx| {
        let seen = Arc::clone(&seen);
        let through_cx = cx.try_decide(DecisionRequest::Predicate {
            question: "again?".into(),
        });
        let direct = direct.clone();
        Box::pin(async move {
            let refused = through_cx.await.unwrap_err();
            seen.lock().unwrap().push(format!("{refused:?}"));
            let also = direct
                .try_decide(DecisionRequest::Predicate {
                    question: "again?".into(),
                })
                .await
                .unwrap_err();
            seen.lock().unwrap().push(format!("{also:?}"));
            Ok(())
        })
    });
    let answer = agent.decide(DecisionRequest::Predicate { question: "?".into() }).await;
    assert!(answer.ok, "the outer decision is answered: {answer:?}");
    assert_eq!(
        *inner.lock().unwrap(),
        [
            format!("{:?}", DecisionError::Recursive),
            format!("{:?}", DecisionError::Recursive)
        ]
    );
    assert_eq!(p.requests().len(), 1, "only the outer decision reached the provider");
}

#[tokio::test]
async fn system_before_fires_only_for_a_run_that_sets_a_system_prompt() {
    use zidane_core::events::SystemBefore;
    let p = provider(vec![Script::answer("one"), Script::answer("two")]);
    let agent = create_agent(AgentOptions {
        system: Some("The agent's own prompt.".into()),
        ..options(&p)
    })
    .unwrap();
    let seen: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let s = Arc::clone(&seen);
    agent.hooks().on_sync::<SystemBefore, _>(move |ev, _| {
        s.lock().unwrap().push(ev.system().to_owned());
        Ok(())
    });
    agent.run(AgentRunOptions::prompt("Plain.")).await.unwrap();
    assert!(
        seen.lock().unwrap().is_empty(),
        "the agent's own prompt is not the run's"
    );
    let mut with_system = AgentRunOptions::prompt("With a system prompt.");
    with_system.system = Some("This run's prompt.".into());
    agent.run(with_system).await.unwrap();
    assert_eq!(*seen.lock().unwrap(), ["This run's prompt."]);
}

#[tokio::test(start_paused = true)]
async fn the_options_name_kill_message_meta_and_execution_reach_where_they_are_read() {
    use zidane_core::events::{AgentStart, ToolCancelled};
    let slow = zidane_core::FnTool::new("slow", "Waits", json!({"type": "object"}), |_i, _cx| async move {
        tokio::time::sleep(Duration::from_secs(60)).await;
        Ok(zidane_core::ToolOutput::text("late"))
    });
    let p = provider(vec![Script::call("c1", "slow", json!({})), Script::answer("moved on")]);
    let agent = create_agent(AgentOptions {
        name: Some("reviewer".into()),
        tool_kill_message: Some("the host stopped it".into()),
        tools: zidane_core::ToolSet::new().with(slow),
        ..options(&p)
    })
    .unwrap();
    assert_eq!(
        agent.meta().default_model,
        p.meta().default_model,
        "the primary provider's"
    );
    assert_eq!(
        agent.execution().kind(),
        "process",
        "the default context runs in this process"
    );
    let seen: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let (names, reasons) = (Arc::clone(&seen), Arc::clone(&seen));
    agent.hooks().on_sync::<AgentStart, _>(move |ev, _| {
        names.lock().unwrap().push(format!("start {:?}", ev.agent_name()));
        Ok(())
    });
    agent.hooks().on_sync::<ToolCancelled, _>(move |ev, _| {
        reasons.lock().unwrap().push(format!("cancelled {}", ev.reason()));
        Ok(())
    });
    let running = agent.clone();
    let run = tokio::spawn(async move { running.run(AgentRunOptions::prompt("Go.")).await });
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(agent.cancel_tool("c1", None), "the call is running");
    let output = run.await.unwrap().unwrap();
    assert_eq!(output.text, "moved on");
    assert_eq!(
        *seen.lock().unwrap(),
        ["start Some(\"reviewer\")", "cancelled the host stopped it"]
    );
}

/// `session:end`, `run:beforeEnd`, `system:transform` and
/// `compact:restore` carry the session as it stands, not its id alone.
#[tokio::test]
async fn the_session_hooks_carry_the_session() {
    use zidane_agent::CompactOptions;
    use zidane_core::events::{CompactRestore, RunBeforeEnd, SessionEnd, SystemTransform};
    let p = provider(vec![
        Script::answer("first answer"),
        Script::answer("second answer"),
        Script::answer("SUMMARY"),
    ]);
    let agent = create_agent(AgentOptions {
        store: Some(Arc::new(MemoryStore::new())),
        session_id: Some("kept".into()),
        system: Some("Be brief.".into()),
        ..options(&p)
    })
    .unwrap();
    let seen: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let shown = |hook: &'static str, session: Option<&Session>, seen: &Arc<std::sync::Mutex<Vec<String>>>| {
        let line = match session {
            Some(s) => format!("{hook}: {} with {} turns", s.id, s.turns.len()),
            None => format!("{hook}: none"),
        };
        seen.lock().unwrap().push(line);
    };
    let s = Arc::clone(&seen);
    agent.hooks().on_sync::<SystemTransform, _>(move |ev, _| {
        shown("system:transform", ev.session().as_ref(), &s);
        Ok(())
    });
    let s = Arc::clone(&seen);
    agent.hooks().on_sync::<RunBeforeEnd, _>(move |ev, _| {
        shown("run:beforeEnd", ev.session().as_ref(), &s);
        Ok(())
    });
    let s = Arc::clone(&seen);
    agent.hooks().on_sync::<SessionEnd, _>(move |ev, _| {
        shown("session:end", ev.session().as_ref(), &s);
        Ok(())
    });
    let s = Arc::clone(&seen);
    agent.hooks().on_sync::<CompactRestore, _>(move |ev, _| {
        shown("compact:restore", ev.session().as_ref(), &s);
        Ok(())
    });
    agent.run(AgentRunOptions::prompt("One.")).await.unwrap();
    agent.run(AgentRunOptions::prompt("Two.")).await.unwrap();
    agent
        .compact(CompactOptions {
            keep_turns: Some(1),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "system:transform: kept with 1 turns",
            "run:beforeEnd: kept with 2 turns",
            "session:end: kept with 2 turns",
            "system:transform: kept with 3 turns",
            "run:beforeEnd: kept with 4 turns",
            "session:end: kept with 4 turns",
            "compact:restore: kept with 4 turns",
        ]
    );
}

/// `get_context_breakdown` with `exact`: the system prompt and the tools
/// take the provider's own count (Anthropic's `count_tokens`, asked of a
/// loopback server) of what they add to a one-word request, split in the
/// estimates' proportions, and are no longer marked estimated; without
/// `exact` no count is asked.
#[tokio::test]
async fn an_exact_breakdown_counts_the_system_and_tools_with_the_provider() {
    use std::sync::{Arc, Mutex};
    let counted: Arc<Mutex<Vec<serde_json::Value>>> = Arc::default();
    let seen = Arc::clone(&counted);
    let url = zidane_bench::loopback::scripted_server(move |path, body| {
        assert!(path.ends_with("/count_tokens"), "only counts are asked: {path}");
        let request: serde_json::Value = serde_json::from_str(body).unwrap();
        let scaffold = request.get("system").is_some() || request.get("tools").is_some();
        seen.lock().unwrap().push(request);
        serde_json::json!({"input_tokens": if scaffold { 1010 } else { 10 }}).to_string()
    })
    .await
    .unwrap();
    let provider =
        zidane_provider::AnthropicProvider::new(zidane_provider::AnthropicConfig::new("sk-test").with_base_url(url))
            .unwrap();
    let agent = create_agent(AgentOptions {
        provider: vec![Arc::new(provider) as Arc<dyn zidane_provider::Provider>],
        system: Some("You are careful and you explain what you change.".into()),
        tools: crate::support::echo_tools(),
        ..Default::default()
    })
    .unwrap();
    let estimated = agent.get_context_breakdown(&ContextOptions::default()).await.unwrap();
    assert!(counted.lock().unwrap().is_empty(), "an estimate asks nothing");
    assert!(estimated.categories.iter().all(|c| c.estimated));

    let exact = agent
        .get_context_breakdown(&ContextOptions {
            exact: true,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(counted.lock().unwrap().len(), 2, "with and without the scaffold");
    let category = |name: &str| exact.categories.iter().find(|c| c.name == name).unwrap().clone();
    let (system, tools) = (category("system"), category("tools"));
    assert!(!system.estimated && !tools.estimated);
    // 1,000 tokens of scaffold, shared as the estimates share it (floored).
    assert!(
        (998..=1000).contains(&(system.tokens + tools.tokens)),
        "{system:?} {tools:?}"
    );
    assert!(category("conversation").estimated);
}

/// The short form sets what the struct form sets: the provider, the
/// system prompt, a tool, the turn cap.
#[tokio::test]
async fn the_short_form_of_the_options_builds_the_same_agent() {
    use zidane_core::{FnTool, ToolOutput};
    let p = provider(vec![
        Script::call("c1", "ping", json!({})),
        Script::call("c2", "ping", json!({})),
        Script::answer("never reached"),
    ]);
    let ping = FnTool::new("ping", "Ping.", json!({"type": "object"}), |_input, _cx| async move {
        Ok(ToolOutput::text("pong"))
    });
    let agent = create_agent(
        AgentOptions::new(p.clone())
            .system("You are terse.")
            .tool(ping)
            .max_turns(2)
            .model("mock-model"),
    )
    .unwrap();
    let output = agent.run(AgentRunOptions::prompt("Ping.")).await.unwrap();
    assert_eq!(output.stats.turns, 2, "the turn cap held");
    let request = &p.requests()[0];
    assert_eq!(request.system.as_deref(), Some("You are terse."));
    assert_eq!(request.model, "mock-model");
    assert!(request.tools.iter().any(|t| t.name == "ping"), "{:?}", request.tools);
    // A fallback is a second provider, after the first.
    let two = AgentOptions::new(ScriptedProvider::new("a", [])).fallback(ScriptedProvider::new("b", []));
    let names: Vec<String> = two.provider.iter().map(|p| p.name().to_owned()).collect();
    assert_eq!(names, ["a", "b"]);
}
