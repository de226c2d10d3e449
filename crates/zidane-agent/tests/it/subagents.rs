//! Sub-agents: the spawn tool, bubbling, slots and queueing, control
//! (abort, cancel, gates from the parent) and what the parent receives.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use zidane_agent::{
    Agent, AgentOptions, AgentRunOptions, SpawnConfig, SubagentDefinition, SubagentTools, create_agent,
};
use zidane_core::clock::FixedClock;
use zidane_core::events::{
    AgentStats, ChildRunStats, ChildSpawnBefore, ChildSpawnComplete, ChildToolAfter, ChildToolGate, RunStatus,
    SpawnBefore, SpawnError, SpawnQueued,
};
use zidane_core::{FnTool, ToolOutput, ToolSet};
use zidane_loop::BehaviorOverride;
use zidane_provider::scripted::{Script, ScriptedProvider};
use zidane_provider::{
    AbortSignal, ContentBlock, EventStream, Provider, ProviderMeta, Role, StreamOptions, ToolResultContent, TurnUsage,
};

/// Answers each request from the script queue of the conversation it
/// belongs to: the first user message names it (a child's task), anything
/// else is the root's.
#[derive(Clone)]
struct Routed {
    root: ScriptedProvider,
    routes: Vec<(&'static str, ScriptedProvider)>,
}

impl Routed {
    fn new(root: Vec<Script>) -> Self {
        Routed {
            root: ScriptedProvider::new("mock", root),
            routes: Vec::new(),
        }
    }

    fn route(mut self, task: &'static str, scripts: Vec<Script>) -> Self {
        self.routes.push((task, ScriptedProvider::new("mock", scripts)));
        self
    }

    fn child(&self, task: &str) -> &ScriptedProvider {
        &self.routes.iter().find(|(t, _)| *t == task).unwrap().1
    }

    fn pick(&self, options: &StreamOptions) -> &ScriptedProvider {
        let first = options.messages.first().and_then(|m| {
            m.content().iter().find_map(|b| match b {
                ContentBlock::Text { text, .. } => Some(text.clone()),
                _ => None,
            })
        });
        first
            .and_then(|text| self.routes.iter().find(|(task, _)| text == *task))
            .map_or(&self.root, |(_, p)| p)
    }
}

impl Provider for Routed {
    fn name(&self) -> &str {
        "mock"
    }

    fn meta(&self) -> &ProviderMeta {
        self.root.meta()
    }

    fn stream(&self, options: &StreamOptions, signal: AbortSignal) -> EventStream {
        self.pick(options).stream(options, signal)
    }
}

fn tools(ran: Arc<Mutex<Vec<String>>>) -> ToolSet {
    let shell_ran = Arc::clone(&ran);
    ToolSet::new()
        .with(FnTool::new(
            "echo",
            "Echo",
            json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            move |input, _cx| {
                let ran = Arc::clone(&ran);
                async move {
                    let text = input["text"].as_str().unwrap_or_default().to_owned();
                    ran.lock().unwrap().push(format!("echo {text}"));
                    Ok(ToolOutput::text(format!("echo: {text}")))
                }
            },
        ))
        .with(FnTool::new(
            "shell",
            "Run a command",
            json!({"type": "object", "properties": {"command": {"type": "string"}}}),
            move |input, _cx| {
                let ran = Arc::clone(&shell_ran);
                async move {
                    ran.lock().unwrap().push(format!("shell {}", input["command"]));
                    Ok(ToolOutput::text("ran"))
                }
            },
        ))
        .with(FnTool::new(
            "wait",
            "Wait a minute",
            json!({"type": "object"}),
            |_, _cx| async move {
                tokio::time::sleep(Duration::from_secs(60)).await;
                Ok(ToolOutput::text("waited"))
            },
        ))
        .with(zidane_tools::spawn())
}

struct Setup {
    agent: Agent,
    ran: Arc<Mutex<Vec<String>>>,
}

fn setup(provider: &Routed, spawn: SpawnConfig) -> Setup {
    let ran: Arc<Mutex<Vec<String>>> = Arc::default();
    let agent = create_agent(AgentOptions {
        provider: vec![Arc::new(provider.clone()) as Arc<dyn Provider>],
        clock: Some(Arc::new(FixedClock::new(1_700_000_000_000))),
        tools: tools(Arc::clone(&ran)),
        spawn,
        ..Default::default()
    })
    .unwrap();
    Setup { agent, ran }
}

/// Records the parent's spawn and child events and its own `tool:after`
/// (the child's streamed text has a test of its own).
fn record(agent: &Agent) -> Arc<Mutex<Vec<&'static str>>> {
    crate::support::record_where(agent, |name| {
        let wanted = name.starts_with("spawn:") || name.starts_with("child:") || name == "tool:after";
        wanted && !name.starts_with("child:stream:")
    })
}

fn results(turns: &[zidane_provider::SessionTurn]) -> Vec<(String, String, bool)> {
    turns
        .iter()
        .flat_map(|t| t.content.iter())
        .filter_map(|b| match b {
            ContentBlock::ToolResult {
                tool_use_id,
                content: ToolResultContent::Text(text),
                is_error,
            } => Some((tool_use_id.clone(), text.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

/// One turn spawning two children, `a` and `b`.
fn two_spawns(a: &str, b: &str) -> Script {
    Script::new()
        .tool_call(0, "a", "spawn", json!({"task": a}))
        .tool_call(1, "b", "spawn", json!({"task": b}))
        .usage(10, 5)
        .end(zidane_provider::FinishReason::ToolCalls)
}

/// An answer that takes `secs` (on the paused clock) to arrive.
fn answer_after(secs: u64, text: &str) -> Script {
    Script::new()
        .delay(Duration::from_secs(secs))
        .text(text)
        .usage(10, 5)
        .end(zidane_provider::FinishReason::Stop)
}

fn spawn_call(id: &str, task: &str) -> Script {
    Script::call(id, "spawn", json!({"task": task}))
}

fn usage(input: u64, output: u64, finish: zidane_provider::FinishReason) -> TurnUsage {
    TurnUsage {
        input,
        output,
        model_id: Some("scripted-model".to_owned()),
        finish_reason: Some(finish),
        ..Default::default()
    }
}

#[tokio::test(start_paused = true)]
async fn a_child_answers_the_spawn_call_with_its_stats_and_the_parent_counts_them() {
    let provider = Routed::new(vec![
        spawn_call("s1", "count the files"),
        Script::answer("there are three"),
    ])
    .route(
        "count the files",
        vec![
            Script::call("c1", "echo", json!({"text": "ls"})),
            Script::answer("three files"),
        ],
    );
    let Setup { agent, ran } = setup(&provider, SpawnConfig::default());
    let log = record(&agent);
    let stats = agent.run(AgentRunOptions::prompt("how many files?")).await.unwrap();

    assert_eq!(
        results(&agent.turns()),
        vec![(
            "s1".to_owned(),
            "three files\n\n[sub-agent s1: 2 turns, 1 tool call, 20 input / 10 output tokens]".to_owned(),
            false
        )]
    );
    assert_eq!(*ran.lock().unwrap(), vec!["echo ls"]);
    // The child saw only its task, never the parent's conversation.
    let child_requests = provider.child("count the files").requests();
    assert_eq!(child_requests[0].messages.len(), 1);
    assert_eq!(child_requests[0].messages[0].role(), Role::User);

    let child = ChildRunStats {
        child_id: "s1".to_owned(),
        agent_name: None,
        depth: 1,
        duration: std::time::Duration::ZERO,
        stats: {
            let mut s = AgentStats::default();
            s.turns = 2;
            s.tool_calls = 1;
            s.totals.input = 20;
            s.totals.output = 10;
            s.turn_usage = vec![
                usage(10, 5, zidane_provider::FinishReason::ToolCalls),
                usage(10, 5, zidane_provider::FinishReason::Stop),
            ];
            s.status = RunStatus::Completed;
            s
        },
    };
    assert_eq!(stats.children, vec![child]);
    // Two turns of the parent, two of the child.
    assert_eq!((stats.turns, stats.totals.input, stats.totals.output), (2, 40, 20));
    insta::assert_debug_snapshot!(log.lock().unwrap());
}

#[tokio::test(start_paused = true)]
async fn two_spawn_calls_of_one_turn_run_at_the_same_time() {
    let both = two_spawns("task a", "task b");
    let provider = Routed::new(vec![both, Script::answer("both done")])
        .route("task a", vec![answer_after(2, "a done")])
        .route("task b", vec![answer_after(1, "b done")]);
    let Setup { agent, .. } = setup(&provider, SpawnConfig::default());
    let log = record(&agent);
    let started = tokio::time::Instant::now();
    agent.run(AgentRunOptions::prompt("do both")).await.unwrap();
    // Side by side: the slower child's time, not the sum.
    assert_eq!(started.elapsed(), Duration::from_secs(2));
    let results = results(&agent.turns());
    assert!(results[0].1.starts_with("a done\n\n"), "{results:?}");
    assert!(results[1].1.starts_with("b done\n\n"), "{results:?}");
    insta::assert_debug_snapshot!(log.lock().unwrap());
}

#[tokio::test(start_paused = true)]
async fn a_top_level_spawn_past_the_slot_limit_waits_for_a_slot() {
    let both = two_spawns("task a", "task b");
    let provider = Routed::new(vec![both, Script::answer("both done")])
        .route("task a", vec![answer_after(1, "a done")])
        .route("task b", vec![answer_after(1, "b done")]);
    let config = SpawnConfig {
        max_concurrent: 1,
        ..Default::default()
    };
    let Setup { agent, .. } = setup(&provider, config);
    let log = record(&agent);
    let queued: Arc<Mutex<Vec<(String, u32, u32)>>> = Arc::default();
    let q = Arc::clone(&queued);
    agent.hooks().on_sync::<SpawnQueued, _>(move |ev, _| {
        q.lock()
            .unwrap()
            .push((ev.child_id().to_owned(), ev.running(), ev.limit()));
        Ok(())
    });
    let started = tokio::time::Instant::now();
    agent.run(AgentRunOptions::prompt("do both")).await.unwrap();
    // One after the other.
    assert_eq!(started.elapsed(), Duration::from_secs(2));
    assert_eq!(*queued.lock().unwrap(), vec![("b".to_owned(), 1, 1)]);
    let results = results(&agent.turns());
    assert!(results.iter().all(|(_, _, is_error)| !is_error), "{results:?}");
    insta::assert_debug_snapshot!(log.lock().unwrap());
}

#[tokio::test(start_paused = true)]
async fn a_grandchild_is_seen_from_the_root_with_its_own_identity() {
    let provider = Routed::new(vec![spawn_call("s1", "plan it"), Script::answer("planned")])
        .route(
            "plan it",
            vec![spawn_call("g1", "look it up"), Script::answer("the plan")],
        )
        .route(
            "look it up",
            vec![
                Script::call("c1", "echo", json!({"text": "deep"})),
                Script::answer("found"),
            ],
        );
    let Setup { agent, .. } = setup(&provider, SpawnConfig::default());
    let log = record(&agent);
    let nested: Arc<Mutex<Vec<String>>> = Arc::default();
    let n = Arc::clone(&nested);
    agent.hooks().on_sync::<ChildSpawnBefore, _>(move |ev, _| {
        n.lock().unwrap().push(format!(
            "before {} of {:?} at {} (carrier {:?})",
            ev.spawn().child_id,
            ev.parent_child_id(),
            ev.depth(),
            ev.spawn().tracing_context
        ));
        Ok(())
    });
    let n = Arc::clone(&nested);
    agent.hooks().on_sync::<ChildSpawnComplete, _>(move |ev, _| {
        n.lock().unwrap().push(format!(
            "complete {} of {:?}: {} turns",
            ev.stats().child_id,
            ev.parent_child_id(),
            ev.stats().stats.turns
        ));
        Ok(())
    });
    let n = Arc::clone(&nested);
    agent.hooks().on_sync::<ChildToolAfter, _>(move |ev, _| {
        n.lock()
            .unwrap()
            .push(format!("tool {} of {} at {}", ev.name(), ev.child_id(), ev.depth()));
        Ok(())
    });
    let stats = agent.run(AgentRunOptions::prompt("plan")).await.unwrap();
    assert_eq!(
        *nested.lock().unwrap(),
        vec![
            "before g1 of Some(\"s1\") at 2 (carrier {})",
            "tool echo of g1 at 2",
            "complete g1 of Some(\"s1\"): 2 turns",
            "tool spawn of s1 at 1",
        ]
    );
    // The root counts its child, which counts its own.
    assert_eq!(stats.children.len(), 1);
    assert_eq!(stats.children[0].stats.children.len(), 1);
    assert_eq!(stats.totals.input, 2 * 10 + 2 * 10 + 2 * 10);
    insta::assert_debug_snapshot!(log.lock().unwrap());
}

#[tokio::test(start_paused = true)]
async fn a_spawn_past_the_depth_limit_is_refused_with_a_tool_error() {
    let provider = Routed::new(vec![spawn_call("s1", "plan it"), Script::answer("planned")]).route(
        "plan it",
        vec![spawn_call("g1", "look it up"), Script::answer("I did it myself")],
    );
    let config = SpawnConfig {
        max_depth: 1,
        ..Default::default()
    };
    let Setup { agent, .. } = setup(&provider, config);
    let log = record(&agent);
    let refused: Arc<Mutex<Vec<(String, bool)>>> = Arc::default();
    let r = Arc::clone(&refused);
    agent.hooks().on_sync::<ChildToolAfter, _>(move |ev, _| {
        if let ToolResultContent::Text(text) = ev.result() {
            r.lock().unwrap().push((text.clone(), ev.is_error()));
        }
        Ok(())
    });
    agent.run(AgentRunOptions::prompt("plan")).await.unwrap();
    assert_eq!(
        *refused.lock().unwrap(),
        vec![(
            "sub-agents may not spawn past depth 1: this agent is at depth 1; do the task yourself".to_owned(),
            true
        )]
    );
    insta::assert_debug_snapshot!(log.lock().unwrap());
}

#[tokio::test(start_paused = true)]
async fn a_failing_child_is_a_tool_error_for_the_parent() {
    let provider = Routed::new(vec![spawn_call("s1", "break"), Script::answer("it broke")]).route(
        "break",
        vec![Script::new().error(zidane_provider::ProviderError::new(
            zidane_provider::ErrorKind::Auth,
            "mock",
            "invalid x-api-key",
        ))],
    );
    let Setup { agent, .. } = setup(&provider, SpawnConfig::default());
    let log = record(&agent);
    let errors: Arc<Mutex<Vec<String>>> = Arc::default();
    let e = Arc::clone(&errors);
    agent.hooks().on_sync::<SpawnError, _>(move |ev, _| {
        e.lock()
            .unwrap()
            .push(format!("{}: {}", ev.spawn().child_id, ev.error()));
        Ok(())
    });
    let stats = agent.run(AgentRunOptions::prompt("go")).await.unwrap();
    assert_eq!(stats.status, RunStatus::Completed);
    let results = results(&agent.turns());
    assert_eq!(results.len(), 1);
    assert!(results[0].2, "{results:?}");
    assert!(results[0].1.starts_with("the sub-agent failed: "), "{results:?}");
    assert!(results[0].1.contains("invalid x-api-key"), "{results:?}");
    assert_eq!(errors.lock().unwrap().len(), 1);
    insta::assert_debug_snapshot!(log.lock().unwrap());
}

#[tokio::test(start_paused = true)]
async fn aborting_the_parent_stops_the_child() {
    let provider = Routed::new(vec![spawn_call("s1", "hang")])
        .route("hang", vec![Script::new().then(zidane_provider::scripted::Step::Hang)]);
    let Setup { agent, .. } = setup(&provider, SpawnConfig::default());
    let log = record(&agent);
    let stopper = agent.clone();
    agent.hooks().on_sync::<SpawnBefore, _>(move |_, _| {
        let stopper = stopper.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(5)).await;
            stopper.abort_with("user pressed stop");
        });
        Ok(())
    });
    let errors: Arc<Mutex<Vec<String>>> = Arc::default();
    let e = Arc::clone(&errors);
    agent.hooks().on_sync::<SpawnError, _>(move |ev, _| {
        e.lock()
            .unwrap()
            .push(format!("{}: {}", ev.spawn().child_id, ev.error()));
        Ok(())
    });
    let started = tokio::time::Instant::now();
    let stats = agent.run(AgentRunOptions::prompt("go")).await.unwrap();
    assert_eq!(started.elapsed(), Duration::from_secs(5));
    assert_eq!(stats.status, RunStatus::Aborted);
    // The child stops with its parent (its run was a task of its own) and
    // says so, without keeping the parent waiting.
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(
        *errors.lock().unwrap(),
        vec!["s1: the sub-agent was stopped before it answered: user pressed stop"]
    );
    assert_eq!(provider.child("hang").requests().len(), 1);
    insta::assert_debug_snapshot!(log.lock().unwrap());
}

#[tokio::test(start_paused = true)]
async fn cancelling_one_spawn_call_stops_that_child_only() {
    let both = two_spawns("hang", "task b");
    let provider = Routed::new(vec![both, Script::answer("b was enough")])
        .route("hang", vec![Script::new().then(zidane_provider::scripted::Step::Hang)])
        .route("task b", vec![answer_after(3, "b done")]);
    let Setup { agent, .. } = setup(&provider, SpawnConfig::default());
    let log = record(&agent);
    let canceller = agent.clone();
    let cancelling: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>> = Arc::default();
    let tasks = Arc::clone(&cancelling);
    agent.hooks().on_sync::<SpawnBefore, _>(move |ev, _| {
        if ev.child_id() == "a" {
            let canceller = canceller.clone();
            tasks.lock().unwrap().push(tokio::spawn(async move {
                tokio::time::sleep(Duration::from_secs(1)).await;
                assert!(canceller.cancel_tool("a", Some("not needed")));
            }));
        }
        Ok(())
    });
    let stats = agent.run(AgentRunOptions::prompt("go")).await.unwrap();
    let tasks: Vec<_> = std::mem::take(&mut *cancelling.lock().unwrap());
    assert_eq!(tasks.len(), 1);
    for task in tasks {
        task.await.unwrap(); // the cancel found the call
    }
    assert_eq!(stats.status, RunStatus::Completed);
    let results = results(&agent.turns());
    assert_eq!(results[0].0, "a");
    assert!(results[0].2, "{results:?}");
    assert_eq!(results[0].1, "The user cancelled this tool call.");
    assert_eq!(results[1].0, "b");
    assert!(results[1].1.starts_with("b done"), "{results:?}");
    insta::assert_debug_snapshot!(log.lock().unwrap());
}

#[tokio::test(start_paused = true)]
async fn a_parent_child_tool_gate_handler_blocks_a_childs_shell_call() {
    let provider = Routed::new(vec![spawn_call("s1", "clean up"), Script::answer("ok")]).route(
        "clean up",
        vec![
            Script::call("c1", "shell", json!({"command": "rm -rf /"})),
            Script::answer("could not"),
        ],
    );
    let Setup { agent, ran } = setup(&provider, SpawnConfig::default());
    let log = record(&agent);
    agent.hooks().on_sync::<ChildToolGate, _>(|ev, _| {
        if ev.name() == "shell" {
            ev.block = true;
            ev.reason = format!("no shell for sub-agent {}", ev.child_id());
        }
        Ok(())
    });
    agent.run(AgentRunOptions::prompt("go")).await.unwrap();
    assert!(ran.lock().unwrap().is_empty(), "the blocked command ran");
    let child_requests = provider.child("clean up").requests();
    let child_results = child_requests[1]
        .messages
        .iter()
        .flat_map(|m| m.content().iter())
        .filter_map(|b| match b {
            ContentBlock::ToolResult { content, is_error, .. } => Some((content.clone(), *is_error)),
            _ => None,
        })
        .collect::<Vec<_>>();
    assert_eq!(
        child_results,
        vec![(
            ToolResultContent::Text("Blocked: no shell for sub-agent s1".to_owned()),
            true
        )]
    );
    insta::assert_debug_snapshot!(log.lock().unwrap());
}

#[tokio::test(start_paused = true)]
async fn a_named_sub_agent_runs_with_its_prompt_tools_and_caps_and_is_listed_to_the_model() {
    let provider = Routed::new(vec![
        Script::call("s1", "spawn", json!({"task": "review it", "agent": "reviewer"})),
        Script::call("s2", "spawn", json!({"task": "x", "agent": "nobody"})),
        Script::answer("done"),
    ])
    .route(
        "review it",
        vec![
            Script::call("c1", "echo", json!({"text": "one"})),
            Script::call("c2", "echo", json!({"text": "two"})),
        ],
    );
    let config = SpawnConfig {
        agents: vec![SubagentDefinition {
            name: "reviewer".to_owned(),
            description: "Reviews a change".to_owned(),
            system: Some("You review.".to_owned()),
            tools: SubagentTools::Only(vec!["echo".to_owned()]),
            max_turns: Some(1),
            ..Default::default()
        }],
        ..Default::default()
    };
    let Setup { agent, .. } = setup(&provider, config);
    let stats = agent.run(AgentRunOptions::prompt("go")).await.unwrap();
    let parent_request = &provider.root.requests()[0];
    let spawn = parent_request.tools.iter().find(|t| t.name == "spawn").unwrap();
    assert!(
        spawn
            .description
            .ends_with("\n\nNamed sub-agents (pass one as `agent`):\n- reviewer: Reviews a change"),
        "{}",
        spawn.description
    );
    let child_request = &provider.child("review it").requests()[0];
    assert_eq!(child_request.system.as_deref(), Some("You review."));
    let child_tools: Vec<&str> = child_request.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(child_tools, vec!["echo"]);
    // The turn cap stopped the child after one turn.
    assert_eq!(stats.children[0].stats.status, RunStatus::MaxTurns);
    assert_eq!(stats.children[0].agent_name.as_deref(), Some("reviewer"));
    let results = results(&agent.turns());
    assert_eq!(
        results[1],
        (
            "s2".to_owned(),
            "there is no sub-agent named `nobody`; known: reviewer".to_owned(),
            true
        )
    );
}

#[tokio::test(start_paused = true)]
async fn the_childrens_usage_counts_against_the_parents_token_budget() {
    let provider = Routed::new(vec![spawn_call("s1", "spend"), Script::answer("never asked")]).route(
        "spend",
        vec![
            Script::new()
                .text("spent")
                .usage(5_000, 5)
                .end(zidane_provider::FinishReason::Stop),
        ],
    );
    let Setup { agent, .. } = setup(&provider, SpawnConfig::default());
    let err = agent
        .run(AgentRunOptions {
            prompt: "go".to_owned(),
            behavior: BehaviorOverride {
                max_total_tokens: Some(Some(1_000)),
                ..Default::default()
            },
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("token"), "{err}");
    // The parent stopped before its second request.
    assert_eq!(provider.root.requests().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_child_shares_the_read_state_only_when_asked() {
    for share in [false, true] {
        let provider = Routed::new(vec![spawn_call("s1", "probe"), Script::answer("ok")]).route(
            "probe",
            vec![Script::call("p", "probe", json!({})), Script::answer("ok")],
        );
        let read_state = zidane_core::tool::ReadStateMap::default();
        read_state.lock().insert(
            "a.txt".to_owned(),
            zidane_core::tool::ReadStateEntry {
                hash: 1,
                mtime_ms: None,
                range: None,
                read_at_ms: 0,
            },
        );
        let seen: Arc<Mutex<Option<usize>>> = Arc::default();
        let s = Arc::clone(&seen);
        let probe = FnTool::new("probe", "Probe", json!({"type": "object"}), move |_, cx| {
            let s = Arc::clone(&s);
            async move {
                *s.lock().unwrap() = Some(cx.read_state().lock().len());
                Ok(ToolOutput::text("ok"))
            }
        });
        let agent = create_agent(AgentOptions {
            provider: vec![Arc::new(provider.clone()) as Arc<dyn Provider>],
            tools: ToolSet::new().with(probe).with(zidane_tools::spawn()),
            read_state: Some(read_state),
            spawn: SpawnConfig {
                share_read_state: share,
                ..Default::default()
            },
            ..Default::default()
        })
        .unwrap();
        agent.run(AgentRunOptions::prompt("go")).await.unwrap();
        assert_eq!(
            *seen.lock().unwrap(),
            Some(usize::from(share)),
            "share_read_state: {share}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_childs_streamed_text_reaches_the_parent_with_the_childs_id() {
    let provider =
        Routed::new(vec![spawn_call("s1", "talk"), Script::answer("ok")]).route("talk", vec![Script::answer("hello")]);
    let Setup { agent, .. } = setup(&provider, SpawnConfig::default());
    type Seen = Vec<(String, u32, String, String)>;
    let texts: Arc<Mutex<Seen>> = Arc::default();
    let t = Arc::clone(&texts);
    agent
        .hooks()
        .on_sync::<zidane_core::events::ChildStreamText, _>(move |ev, _| {
            t.lock().unwrap().push((
                ev.child_id().to_owned(),
                ev.depth(),
                ev.delta().to_owned(),
                ev.text().to_string(),
            ));
            Ok(())
        });
    agent.run(AgentRunOptions::prompt("go")).await.unwrap();
    assert_eq!(
        *texts.lock().unwrap(),
        vec![("s1".to_owned(), 1, "hello".to_owned(), "hello".to_owned())]
    );
}

#[tokio::test(start_paused = true)]
async fn the_tracing_carrier_set_on_spawn_before_reaches_the_childs_agent_start() {
    let provider = Routed::new(vec![spawn_call("s1", "trace me"), Script::answer("ok")])
        .route("trace me", vec![Script::answer("traced")]);
    let starts: Arc<Mutex<Vec<String>>> = Arc::default();
    let s = Arc::clone(&starts);
    let config = SpawnConfig {
        hooks: zidane_hooks::HookMap::default().on_sync::<zidane_core::events::AgentStart, _>(move |ev, _| {
            s.lock().unwrap().push(format!(
                "depth {} parent {:?} carrier {:?}",
                ev.depth(),
                ev.parent_run_id(),
                ev.tracing_context()
            ));
            Ok(())
        }),
        ..Default::default()
    };
    let Setup { agent, .. } = setup(&provider, config);
    agent.hooks().on_sync::<SpawnBefore, _>(|ev, _| {
        ev.tracing_context.insert(
            "traceparent".to_owned(),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".to_owned(),
        );
        Ok(())
    });
    let parent_run: Arc<Mutex<Option<String>>> = Arc::default();
    let p = Arc::clone(&parent_run);
    agent
        .hooks()
        .on_sync::<zidane_core::events::AgentStart, _>(move |ev, _| {
            *p.lock().unwrap() = Some(ev.run_id().to_owned());
            Ok(())
        });
    agent.run(AgentRunOptions::prompt("go")).await.unwrap();
    let parent = parent_run.lock().unwrap().clone().unwrap();
    assert_eq!(
        *starts.lock().unwrap(),
        vec![format!(
            "depth 1 parent Some({parent:?}) carrier {{\"traceparent\": \"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\"}}"
        )]
    );
}

#[tokio::test(start_paused = true)]
async fn the_parents_cancel_tool_reaches_a_childs_call() {
    let provider = Routed::new(vec![spawn_call("s1", "wait then answer"), Script::answer("ok")]).route(
        "wait then answer",
        vec![
            Script::call("w1", "wait", json!({})),
            Script::answer("answered without waiting"),
        ],
    );
    let Setup { agent, .. } = setup(&provider, SpawnConfig::default());
    let cancelled: Arc<Mutex<Vec<String>>> = Arc::default();
    let c = Arc::clone(&cancelled);
    agent
        .hooks()
        .on_sync::<zidane_core::events::ChildToolCancelled, _>(move |ev, _| {
            c.lock()
                .unwrap()
                .push(format!("{} {} {}", ev.child_id(), ev.call_id(), ev.reason()));
            Ok(())
        });
    let canceller = agent.clone();
    let cancelling: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>> = Arc::default();
    let tasks = Arc::clone(&cancelling);
    agent
        .hooks()
        .on_sync::<zidane_core::events::ChildToolBefore, _>(move |ev, _| {
            if ev.call_id() == "w1" {
                let canceller = canceller.clone();
                tasks.lock().unwrap().push(tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    assert!(canceller.cancel_tool("w1", Some("the user moved on")));
                }));
            }
            Ok(())
        });
    let started = tokio::time::Instant::now();
    agent.run(AgentRunOptions::prompt("go")).await.unwrap();
    let tasks: Vec<_> = std::mem::take(&mut *cancelling.lock().unwrap());
    assert_eq!(tasks.len(), 1);
    for task in tasks {
        task.await.unwrap(); // the cancel reached the child's call
    }
    assert_eq!(started.elapsed(), Duration::from_secs(1));
    assert_eq!(*cancelled.lock().unwrap(), vec!["s1 w1 the user moved on"]);
    assert!(results(&agent.turns())[0].1.starts_with("answered without waiting"));
    assert!(!agent.cancel_tool("w1", None), "nothing left to cancel");
}

#[tokio::test(start_paused = true)]
async fn a_child_may_spend_no_more_than_its_parent_has_left() {
    let provider = Routed::new(vec![spawn_call("s1", "spend a lot"), Script::answer("never")]).route(
        "spend a lot",
        vec![
            Script::call("c1", "echo", json!({"text": "one"})),
            Script::answer("never reached"),
        ],
    );
    // The child's first turn costs 15 tokens, more than the 10 the
    // parent has left after its own 15: the child stops there.
    let Setup { agent, .. } = setup(&provider, SpawnConfig::default());
    let errors: Arc<Mutex<Vec<String>>> = Arc::default();
    let e = Arc::clone(&errors);
    agent.hooks().on_sync::<SpawnError, _>(move |ev, _| {
        e.lock().unwrap().push(ev.error().to_string());
        Ok(())
    });
    let err = agent
        .run(AgentRunOptions {
            prompt: "go".into(),
            behavior: BehaviorOverride {
                max_total_tokens: Some(Some(25)),
                ..Default::default()
            },
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(
        provider.child("spend a lot").requests().len(),
        1,
        "the child went on past the budget"
    );
    let errors = errors.lock().unwrap().clone();
    assert_eq!(errors.len(), 1);
    assert!(errors[0].contains("token"), "{errors:?}");
    // The parent counts what the child spent, and stops too.
    assert_eq!(err.stats().map(|s| s.totals.input + s.totals.output), Some(30));
}

#[tokio::test(start_paused = true)]
async fn a_definitions_model_caps_and_tool_choices_and_the_default_child_prompt_apply() {
    let provider = Routed::new(vec![
        Script::call("s1", "spawn", json!({"task": "fast task", "agent": "fast"})),
        Script::call("s2", "spawn", json!({"task": "own tools", "agent": "own"})),
        Script::call("s3", "spawn", json!({"task": "plain task"})),
        Script::answer("done"),
    ])
    .route("fast task", vec![Script::answer("fast")])
    .route("own tools", vec![Script::answer("own")])
    .route("plain task", vec![Script::answer("plain")]);
    let config = SpawnConfig {
        system: Some("You are a helper.".into()),
        agents: vec![
            SubagentDefinition {
                name: "fast".into(),
                description: "Quick".into(),
                tools: SubagentTools::Except(vec!["shell".into(), "spawn".into()]),
                model: vec!["small-model".into()],
                thinking: Some(zidane_provider::ThinkingLevel::Low),
                max_tokens: Some(123),
                ..Default::default()
            },
            SubagentDefinition {
                name: "own".into(),
                description: "Own tools".into(),
                tools: SubagentTools::Set(ToolSet::new().with(FnTool::new(
                    "lookup",
                    "Look up",
                    json!({"type": "object"}),
                    |_, _| async { Ok(ToolOutput::text("-")) },
                ))),
                ..Default::default()
            },
        ],
        ..Default::default()
    };
    let Setup { agent, .. } = setup(&provider, config);
    agent.run(AgentRunOptions::prompt("go")).await.unwrap();
    let names = |task: &str| -> Vec<String> {
        provider.child(task).requests()[0]
            .tools
            .iter()
            .map(|t| t.name.clone())
            .collect()
    };
    let fast = &provider.child("fast task").requests()[0];
    assert_eq!(
        (fast.model.as_str(), fast.thinking, fast.max_tokens),
        ("small-model", zidane_provider::ThinkingLevel::Low, Some(123))
    );
    assert_eq!(names("fast task"), vec!["echo", "wait"]);
    assert_eq!(names("own tools"), vec!["lookup"]);
    let plain = &provider.child("plain task").requests()[0];
    assert_eq!(plain.system.as_deref(), Some("You are a helper."));
    assert_eq!(names("plain task"), vec!["echo", "shell", "wait", "spawn"]);
}

#[tokio::test(start_paused = true)]
async fn an_empty_task_is_refused_with_a_tool_error() {
    let provider = Routed::new(vec![spawn_call("s1", "   "), Script::answer("ok")]);
    let Setup { agent, .. } = setup(&provider, SpawnConfig::default());
    agent.run(AgentRunOptions::prompt("go")).await.unwrap();
    assert_eq!(
        results(&agent.turns()),
        vec![(
            "s1".to_owned(),
            "the task is empty: say what the sub-agent should do".to_owned(),
            true
        )]
    );
}

/// A tool call of `echo` that reports `input_tokens` of input.
fn heavy_call(id: &str, input_tokens: u64) -> Script {
    Script::new()
        .tool_call(0, id, "echo", json!({"text": id}))
        .event(zidane_provider::StreamEvent::Usage(zidane_provider::UsageReport {
            input: Some(input_tokens),
            output: Some(10),
            ..Default::default()
        }))
        .end(zidane_provider::FinishReason::ToolCalls)
}

fn summarizes(request: &StreamOptions) -> bool {
    request.messages.last().is_some_and(|m| {
        m.content()
            .iter()
            .any(|b| matches!(b, ContentBlock::Text { text } if text.starts_with("Summarize the conversation")))
    })
}

#[tokio::test(start_paused = true)]
async fn a_child_compacts_with_its_parents_settings_unless_its_definition_says_otherwise() {
    let long_task = "work long";
    // The summary request still opens with the child's task (routed to the
    // child's script); the request after it opens with the summary (routed
    // to the root's script, which answers for the child there).
    let provider = Routed::new(vec![
        spawn_call("s1", long_task),
        Script::answer("child done"),
        Script::answer("parent done"),
    ])
    .route(
        long_task,
        vec![
            heavy_call("c1", 100),
            heavy_call("c2", 700),
            Script::answer("SUMMARY OF THE CHILD"),
        ],
    );
    let compacting = zidane_agent::AutoCompact {
        threshold: 0.5,
        keep_turns: 2,
        context_window: Some(1000),
        ..Default::default()
    };
    let agent = create_agent(AgentOptions {
        provider: vec![Arc::new(provider.clone()) as Arc<dyn Provider>],
        clock: Some(Arc::new(FixedClock::new(1_700_000_000_000))),
        tools: tools(Arc::default()),
        auto_compact: Some(compacting.clone()),
        ..Default::default()
    })
    .unwrap();
    agent.run(AgentRunOptions::prompt("go")).await.unwrap();
    let child = provider.child(long_task).requests();
    assert_eq!(child.len(), 3);
    assert!(
        summarizes(&child[2]),
        "the child compacted after crossing the threshold"
    );
    let after = format!("{:?}", provider.root.requests()[1].messages[0].content());
    assert!(
        after.contains("SUMMARY OF THE CHILD"),
        "the child went on from its summary: {after}"
    );

    // A definition that turns it off: the child runs its turns unsummarized.
    let provider = Routed::new(vec![
        Script::call("s1", "spawn", json!({"task": long_task, "agent": "plain"})),
        Script::answer("parent done"),
    ])
    .route(
        long_task,
        vec![
            heavy_call("c1", 100),
            heavy_call("c2", 700),
            Script::answer("child done"),
        ],
    );
    let agent = create_agent(AgentOptions {
        provider: vec![Arc::new(provider.clone()) as Arc<dyn Provider>],
        clock: Some(Arc::new(FixedClock::new(1_700_000_000_000))),
        tools: tools(Arc::default()),
        auto_compact: Some(compacting),
        spawn: SpawnConfig {
            agents: vec![SubagentDefinition {
                name: "plain".into(),
                description: "No compaction".into(),
                auto_compact: Some(None),
                ..Default::default()
            }],
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    agent.run(AgentRunOptions::prompt("go")).await.unwrap();
    assert_eq!(provider.root.requests().len(), 2, "no summary was asked for");
    assert_eq!(provider.child(long_task).requests().len(), 3);
}

/// A `child:*` listener the parent adds while its child runs reaches that
/// child from its next turn on.
#[tokio::test]
async fn a_child_listener_added_while_the_child_runs_reaches_it() {
    let provider = Routed::new(vec![spawn_call("s1", "work"), Script::answer("ok")]).route(
        "work",
        vec![
            Script::call("c1", "listen", json!({})),
            Script::call("c2", "echo", json!({"text": "hi"})),
            Script::answer("done"),
        ],
    );
    let parent_bus: Arc<std::sync::OnceLock<zidane_hooks::HookBus>> = Arc::default();
    let late: Arc<Mutex<Vec<String>>> = Arc::default();
    let (bus, seen) = (Arc::clone(&parent_bus), Arc::clone(&late));
    // Called by the child in its first turn: the parent starts listening.
    let listen = FnTool::new("listen", "Listen", json!({"type": "object"}), move |_, _cx| {
        let (bus, seen) = (Arc::clone(&bus), Arc::clone(&seen));
        async move {
            let _ = bus.get().unwrap().on_sync::<ChildToolAfter, _>(move |ev, _| {
                seen.lock().unwrap().push(format!("{} {}", ev.child_id(), ev.name()));
                Ok(())
            });
            Ok(ToolOutput::text("listening"))
        }
    });
    let ran: Arc<Mutex<Vec<String>>> = Arc::default();
    let agent = create_agent(AgentOptions {
        provider: vec![Arc::new(provider.clone()) as Arc<dyn Provider>],
        clock: Some(Arc::new(FixedClock::new(1_700_000_000_000))),
        tools: tools(ran).with(listen),
        ..Default::default()
    })
    .unwrap();
    parent_bus.set(agent.hooks().clone()).unwrap();
    agent.run(AgentRunOptions::prompt("go")).await.unwrap();
    assert_eq!(*late.lock().unwrap(), ["s1 echo"], "the child's second turn bubbled");
}

/// A content reference in a child's request is resolved by the parent's
/// resolver, which hears which child asks.
#[tokio::test]
async fn a_childs_content_ref_is_resolved_by_the_parent_naming_the_child() {
    use zidane_core::events::{ContentRefResolve, TurnBefore};
    use zidane_provider::ImageSource;
    let provider =
        Routed::new(vec![spawn_call("s1", "look"), Script::answer("ok")]).route("look", vec![Script::answer("a cat")]);
    // Every child's request carries a referenced image.
    let child_hooks = zidane_hooks::HookMap::new().on_sync::<TurnBefore, _>(|ev, _| {
        if let Some(last) = ev.options.messages.last_mut() {
            let mut content = last.content().to_vec();
            content.push(ContentBlock::ContentRef {
                reference: "blob://cat".into(),
                kind: "image".into(),
                media_type: Some("image/png".into()),
            });
            *last = zidane_provider::Message::new(last.role(), content);
        }
        Ok(())
    });
    let Setup { agent, .. } = setup(
        &provider,
        SpawnConfig {
            hooks: child_hooks,
            ..SpawnConfig::default()
        },
    );
    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let a = Arc::clone(&asked);
    agent.hooks().on_sync::<ContentRefResolve, _>(move |ev, _| {
        a.lock().unwrap().push(format!(
            "{} for {:?} at {:?}",
            ev.block().reference,
            ev.child_id(),
            ev.depth()
        ));
        ev.data = Some("aGVsbG8=".into());
        Ok(())
    });
    agent.run(AgentRunOptions::prompt("go")).await.unwrap();
    assert_eq!(*asked.lock().unwrap(), ["blob://cat for Some(\"s1\") at Some(1)"]);
    let sent = provider.child("look").requests()[0].messages[0].content().to_vec();
    assert!(
        sent.contains(&ContentBlock::Image {
            source: ImageSource::Base64 {
                media_type: "image/png".into(),
                data: "aGVsbG8=".into()
            }
        }),
        "{sent:?}"
    );
}

/// The bubbled `child:*` events a busy child's run produces reach the
/// parent, one table of names: thinking and server tools in its stream, a
/// failed attempt and its retry, a failing tool, a tool's progress, a call
/// refused by validation, a repeat guard, and a grandchild that fails.
#[tokio::test(start_paused = true)]
async fn a_busy_childs_events_all_bubble_to_the_parent() {
    use zidane_core::events::GuardAction;
    use zidane_loop::{Behavior, RepeatGuard, RepeatMode};
    use zidane_provider::{ErrorKind, FinishReason, ProviderError, StreamEvent};
    let stream = Script::new()
        .event(StreamEvent::ThinkingDelta {
            index: 0,
            text: "Let me look.".into(),
        })
        .event(StreamEvent::ServerToolUse {
            index: 1,
            id: "w1".into(),
            name: "web_search".into(),
            input: json!({"query": "rust"}),
        })
        .event(StreamEvent::ServerToolResult {
            index: 2,
            tool_use_id: "w1".into(),
            kind: "web_search_tool_result".into(),
            content: json!([]),
        })
        .tool_call(3, "c1", "fail", json!({}))
        .tool_call(4, "c2", "build", json!({}))
        .tool_call(5, "c3", "strict", json!({"n": {"deep": [1, 2]}}))
        .usage(10, 5)
        .end(FinishReason::ToolCalls);
    let provider = Routed::new(vec![spawn_call("s1", "busy"), Script::answer("ok")])
        .route(
            "busy",
            vec![
                Script::new().error(ProviderError::new(ErrorKind::Overloaded, "mock", "Overloaded").with_status(529)),
                stream,
                Script::call("c4", "echo", json!({"text": "same"})),
                Script::call("c5", "echo", json!({"text": "same"})),
                spawn_call("g1", "inner"),
                Script::answer("done"),
            ],
        )
        .route(
            "inner",
            vec![Script::new().error(ProviderError::new(ErrorKind::Auth, "mock", "invalid x-api-key"))],
        );
    let failing = FnTool::new("fail", "Fails", json!({"type": "object"}), |_, _cx| async move {
        Err::<ToolOutput, _>("it broke".into())
    });
    let build = FnTool::new("build", "Builds", json!({"type": "object"}), |_, cx| async move {
        cx.report_progress(zidane_core::events::ToolProgress {
            message: Some("compiling".into()),
            data: serde_json::Value::Null,
        })
        .await;
        Ok(ToolOutput::text("built"))
    });
    let strict = FnTool::new(
        "strict",
        "Needs a count",
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
        |_, _cx| async move { Ok(ToolOutput::text("counted")) },
    );
    let ran: Arc<Mutex<Vec<String>>> = Arc::default();
    let agent = create_agent(AgentOptions {
        provider: vec![Arc::new(provider.clone()) as Arc<dyn Provider>],
        clock: Some(Arc::new(FixedClock::new(1_700_000_000_000))),
        tools: tools(ran).with(failing).with(build).with(strict),
        behavior: Behavior {
            repeat_guard: Some(RepeatGuard {
                mode: RepeatMode::Chain,
                threshold: 2,
                action: GuardAction::Steer,
                tools: vec![],
            }),
            ..Default::default()
        },
        spawn: SpawnConfig {
            max_depth: 2,
            ..SpawnConfig::default()
        },
        ..Default::default()
    })
    .unwrap();
    let seen = crate::support::record_where(&agent, |name| name.starts_with("child:"));
    agent.run(AgentRunOptions::prompt("go")).await.unwrap();
    let seen = seen.lock().unwrap().clone();
    let missing: Vec<&str> = [
        "child:stream:error",
        "child:stream:retry",
        "child:stream:thinking",
        "child:stream:server_tool_use",
        "child:stream:server_tool_result",
        "child:stream:end",
        "child:tool:error",
        "child:tool:progress",
        "child:validation:reject",
        "child:repeat-guard:exceeded",
        "child:spawn:error",
    ]
    .into_iter()
    .filter(|name| !seen.contains(name))
    .collect();
    assert!(missing.is_empty(), "not bubbled: {missing:?}; seen: {seen:?}");
}

/// A child decides where its parent does: with the parent's decisions
/// off, a gate handler on the child's bus that asks `ctx.decide` is told
/// they are unavailable (the child does not fall back to asking a
/// provider its parent was told not to ask).
#[tokio::test(start_paused = true)]
async fn a_child_takes_its_parents_decisions_settings() {
    use zidane_agent::DecideHookContext;
    let provider = Routed::new(vec![spawn_call("s1", "Check it."), Script::answer("done")]).route(
        "Check it.",
        vec![
            Script::call("e1", "echo", json!({"text": "x"})),
            Script::answer("checked"),
        ],
    );
    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let a = Arc::clone(&asked);
    let config = SpawnConfig {
        hooks: zidane_hooks::HookMap::default().on::<zidane_core::events::ToolGate, _>(move |_, cx| {
            let a = Arc::clone(&a);
            Box::pin(async move {
                let result = cx
                    .decide(zidane_agent::DecisionRequest::Predicate {
                        question: "Is echo safe?".into(),
                    })
                    .await;
                a.lock()
                    .unwrap()
                    .push(result.reason.unwrap_or_else(|| "answered".into()));
                Ok(())
            })
        }),
        ..Default::default()
    };
    let ran: Arc<Mutex<Vec<String>>> = Arc::default();
    let agent = create_agent(AgentOptions {
        provider: vec![Arc::new(provider.clone()) as Arc<dyn Provider>],
        clock: Some(Arc::new(FixedClock::new(1_700_000_000_000))),
        tools: tools(Arc::clone(&ran)),
        spawn: config,
        decisions: zidane_agent::Decisions::Disabled,
        ..Default::default()
    })
    .unwrap();
    let output = agent.run(AgentRunOptions::prompt("go")).await.unwrap();
    assert_eq!(output.text, "done");
    assert_eq!(*asked.lock().unwrap(), ["unavailable"]);
    assert_eq!(*ran.lock().unwrap(), ["echo x"]);
}
