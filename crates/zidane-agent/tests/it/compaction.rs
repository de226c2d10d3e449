//! Compaction on the scripted provider: automatic between tool batches, and
//! manual.

use std::sync::Arc;

use serde_json::json;
use zidane_agent::{AgentOptions, AgentRunOptions, AutoCompact, CompactOptions, create_agent};
use zidane_core::events::{CompactRestore, ContextTransform};
use zidane_core::session::MemoryStore;
use zidane_provider::scripted::Script;
use zidane_provider::{ContentBlock, FinishReason, Role, StreamEvent, UsageReport};

use crate::support::{options, provider, record};

fn call(id: &str, input_tokens: u64) -> Script {
    Script::new()
        .tool_call(0, id, "echo", json!({"text": id}))
        .event(StreamEvent::Usage(UsageReport {
            input: Some(input_tokens),
            output: Some(10),
            ..Default::default()
        }))
        .end(FinishReason::ToolCalls)
}

#[tokio::test(start_paused = true)]
async fn crossing_the_threshold_between_tool_batches_compacts_before_the_next_request() {
    let p = provider(vec![
        call("c1", 100),
        call("c2", 700),
        Script::answer("SUMMARY OF WORK"),
        Script::answer("done"),
    ]);
    let store = Arc::new(MemoryStore::new());
    let agent = create_agent(AgentOptions {
        auto_compact: Some(AutoCompact {
            threshold: 0.5,
            keep_turns: 2,
            context_window: Some(1000),
            ..Default::default()
        }),
        session_id: Some("s".into()),
        store: Some(store.clone()),
        ..options(&p)
    })
    .unwrap();
    agent.hooks().on_sync::<CompactRestore, _>(|ev, _| {
        ev.add("todoread", json!({}), "- [x] echo c1\n- [ ] finish");
        Ok(())
    });
    let log = record(&agent);
    agent.run(AgentRunOptions::prompt("Work.")).await.unwrap();

    let requests = p.requests();
    assert_eq!(requests.len(), 4);
    let summary_request = &requests[2];
    assert_eq!(summary_request.messages.last().unwrap().role(), Role::User);
    assert!(
        matches!(&summary_request.messages.last().unwrap().content()[0], ContentBlock::Text { text } if text.starts_with("Summarize the conversation"))
    );
    let next = &requests[3];
    assert!(matches!(&next.messages[0].content()[0], ContentBlock::Text { text } if text.contains("SUMMARY OF WORK")));
    assert!(matches!(&next.messages[1].content()[0], ContentBlock::ToolUse { name, .. } if name == "todoread"));
    assert!(matches!(
        &next.messages[2].content()[0],
        ContentBlock::ToolResult { .. }
    ));
    assert_eq!(
        next.messages.len(),
        5,
        "summary, restored call and result, then the kept call and result"
    );
    assert!(
        !next
            .messages
            .iter()
            .any(|m| m.content() == [ContentBlock::text("Work.")]),
        "the old turns are gone"
    );
    assert!(matches!(&next.messages[3].content()[0], ContentBlock::ToolUse { id, .. } if id == "c2"));

    let hooks = log.lock().unwrap().clone();
    let compact: Vec<&str> = hooks.iter().copied().filter(|n| n.starts_with("compact:")).collect();
    assert_eq!(compact.first(), Some(&"compact:start"));
    assert_eq!(compact.last(), Some(&"compact:end"));
    assert_eq!(compact.iter().filter(|n| **n == "compact:start").count(), 1);
    assert_eq!(compact.iter().filter(|n| **n == "compact:end").count(), 1);
    assert!(compact.contains(&"compact:restore"));
    // The compaction is persisted.
    let saved = zidane_core::session::SessionStore::load(store.as_ref(), "s")
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(&saved.turns[0].content[0], ContentBlock::Text { text } if text.contains("SUMMARY OF WORK")));
}

#[tokio::test(start_paused = true)]
async fn manual_compaction_resends_the_last_request_for_the_cache() {
    let p = provider(vec![
        Script::answer("first answer"),
        Script::answer("second answer"),
        Script::answer("SUMMARY"),
        Script::answer("after"),
    ]);
    let agent = create_agent(options(&p)).unwrap();
    agent.run(AgentRunOptions::prompt("One.")).await.unwrap();
    agent.run(AgentRunOptions::prompt("Two.")).await.unwrap();
    let log = record(&agent);
    let result = agent
        .compact(CompactOptions {
            keep_turns: Some(1),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(result.compacted);
    assert_eq!(result.summary.as_deref(), Some("SUMMARY"));
    let requests = p.requests();
    let last_run = &requests[1];
    let summary = &requests[2];
    assert_eq!(
        &summary.messages[..last_run.messages.len()],
        &last_run.messages[..],
        "the cached prefix, resent"
    );
    assert_eq!(
        log.lock()
            .unwrap()
            .iter()
            .copied()
            .filter(|n| n.starts_with("compact:"))
            .collect::<Vec<_>>(),
        vec!["compact:start", "compact:progress", "compact:restore", "compact:end"]
    );
    // Nothing to compact is not an error.
    let again = agent
        .compact(CompactOptions {
            keep_turns: Some(100),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(!again.compacted);
    let seen = Arc::new(std::sync::Mutex::new(0usize));
    let s = Arc::clone(&seen);
    agent.hooks().on_sync::<ContextTransform, _>(move |ev, _| {
        *s.lock().unwrap() = ev.messages.len();
        Ok(())
    });
    agent.run(AgentRunOptions::prompt("Three.")).await.unwrap();
    assert!(
        *seen.lock().unwrap() <= 4,
        "the next run starts from the compacted history"
    );
}
