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

/// The model behind [`zidane_bench::loopback::windowed_server`]: an essay
/// longer than the window holds, a summary when asked for one, and what
/// the question was about when the conversation still says it.
fn essayist(body: &str) -> String {
    if body.contains("Summarize the conversation so far") {
        return "SUMMARY: the person asked for an essay about lighthouses, and got a long one.".into();
    }
    if body.contains("What topic did I ask about?") {
        let knows = body.contains("lighthouses");
        return if knows {
            "You asked about lighthouses."
        } else {
            "I do not know."
        }
        .into();
    }
    "Lighthouses stand where the land ends and the sea begins. ".repeat(1000)
}

/// An agent on session `s` of `store`, against the windowed server at
/// `url` (an 8,192-token window the provider knows), compacting
/// automatically (with the window) or not at all.
fn windowed_agent(url: &str, store: &Arc<MemoryStore>, auto: bool) -> zidane_agent::Agent {
    let mut config = zidane_provider::OpenAiConfig::keyless(url, "m");
    config.context_window = 8192;
    let provider = zidane_provider::OpenAiProvider::new(config).unwrap();
    create_agent(AgentOptions {
        provider: vec![Arc::new(provider) as Arc<dyn zidane_provider::Provider>],
        auto_compact: auto.then(|| AutoCompact {
            context_window: Some(8192),
            ..Default::default()
        }),
        session_id: Some("s".into()),
        store: Some(Arc::clone(store) as Arc<dyn zidane_core::session::SessionStore>),
        ..Default::default()
    })
    .unwrap()
}

/// A long answer fills the window (prompt and answer together are the
/// whole of it); the next prompt, in a new process on the session, would
/// not fit on top of it. The last usage says so, so auto-compaction
/// summarizes before that request (the lone long answer included), and
/// the server never refuses one.
#[tokio::test]
async fn a_long_answer_that_fills_the_window_is_summarized_before_the_next_prompt() {
    let (url, requests) = zidane_bench::loopback::windowed_server(8192, essayist).await.unwrap();
    let store = Arc::new(MemoryStore::new());
    let first = windowed_agent(&url, &store, true);
    first
        .run(AgentRunOptions::prompt("Write an essay about lighthouses."))
        .await
        .unwrap();
    let essay = requests.lock().unwrap()[0].clone();
    assert!(!essay.refused);

    let second = windowed_agent(&url, &store, true);
    let output = second
        .run(AgentRunOptions::prompt("What topic did I ask about?"))
        .await
        .unwrap();
    assert_eq!(output.text, "You asked about lighthouses.");
    let requests = requests.lock().unwrap().clone();
    assert!(
        requests.iter().all(|r| !r.refused),
        "no request past the window: {:?}",
        requests.iter().map(|r| r.prompt_tokens).collect::<Vec<_>>()
    );
    assert_eq!(requests.len(), 3, "the essay, the summary, the question");
    assert!(requests[1].body.contains("Summarize the conversation so far"));
}

/// Without auto-compaction, a request the server refuses as larger than
/// its window, with no tool result to elide, is saved by a summary and
/// sent again, instead of ending the run.
#[tokio::test]
async fn a_context_overflow_that_compaction_can_save_does_not_end_the_run() {
    let (url, requests) = zidane_bench::loopback::windowed_server(8192, essayist).await.unwrap();
    let store = Arc::new(MemoryStore::new());
    let first = windowed_agent(&url, &store, false);
    first
        .run(AgentRunOptions::prompt("Write an essay about lighthouses."))
        .await
        .unwrap();
    let second = windowed_agent(&url, &store, false);
    let errors = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = Arc::clone(&errors);
    second
        .hooks()
        .on_sync::<zidane_core::events::StreamError, _>(move |_, _| {
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok(())
        });
    let output = second
        .run(AgentRunOptions::prompt("What topic did I ask about?"))
        .await
        .unwrap();
    assert_eq!(output.text, "You asked about lighthouses.");
    let requests = requests.lock().unwrap().clone();
    let refused: Vec<bool> = requests.iter().map(|r| r.refused).collect();
    assert_eq!(
        refused,
        [false, true, false, false],
        "the essay, the question refused, the summary, the question again"
    );
    assert!(requests[2].body.contains("Summarize the conversation so far"));
    assert_eq!(
        errors.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the model call did not fail"
    );
}
