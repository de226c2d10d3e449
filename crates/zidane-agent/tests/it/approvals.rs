//! Tool calls at the model boundary: interceptors and approvals (every
//! verdict, with and without an approver, an approver that waits,
//! approvals remembered for the session and across a later agent on it),
//! and the names and descriptions the model sees.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use zidane_agent::{
    Agent, AgentOptions, AgentRunOptions, ApprovalDecision, ApprovalRequest, FnInterceptor, RememberedApproval,
    ToolCall, ToolCallApprover, ToolCallInterceptor, ToolCallVerdict, create_agent,
};
use zidane_core::session::{MemoryStore, SessionStore};
use zidane_core::{FnTool, ToolOutput, ToolSet};
use zidane_provider::scripted::{Script, ScriptedProvider};
use zidane_provider::{BoxFuture, ContentBlock, Provider, ToolResultContent};

use crate::support::{provider, record};

/// A `shell` that records what it was asked to run (nothing runs).
fn shell(ran: &Arc<Mutex<Vec<String>>>) -> ToolSet {
    let ran = Arc::clone(ran);
    ToolSet::new().with(FnTool::new(
        "shell",
        "Run",
        json!({"type": "object", "properties": {"command": {"type": "string"}}}),
        move |input, _| {
            let ran = Arc::clone(&ran);
            async move {
                ran.lock()
                    .unwrap()
                    .push(input["command"].as_str().unwrap_or_default().to_owned());
                Ok(ToolOutput::text("ran"))
            }
        },
    ))
}

/// Asks for every `shell` call; denies `rm`; rewrites `ls` to `ls -la`.
fn policy() -> Arc<dyn ToolCallInterceptor> {
    Arc::new(FnInterceptor(|call: &ToolCall| {
        let command = call.input["command"].as_str().unwrap_or_default();
        if command.starts_with("rm ") {
            ToolCallVerdict::Deny {
                reason: "deleting is not allowed here".into(),
            }
        } else if command == "ls" {
            ToolCallVerdict::Rewrite {
                input: json!({"command": "ls -la"}),
            }
        } else if command.starts_with("cargo") {
            ToolCallVerdict::Ask {
                reason: Some("it runs a build".into()),
            }
        } else {
            ToolCallVerdict::Allow
        }
    }))
}

/// Answers from a list, after `delay`, and counts what it was asked.
struct Scripted {
    answers: Mutex<Vec<ApprovalDecision>>,
    asked: Mutex<Vec<String>>,
    delay: Duration,
}

impl ToolCallApprover for Scripted {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move {
            self.asked.lock().unwrap().push(format!(
                "{} {} ({})",
                request.call.name,
                request.call.input["command"].as_str().unwrap_or_default(),
                request.reason.unwrap_or_default()
            ));
            tokio::time::sleep(self.delay).await;
            self.answers.lock().unwrap().remove(0)
        })
    }
}

fn approver(answers: Vec<ApprovalDecision>, delay: Duration) -> Arc<Scripted> {
    Arc::new(Scripted {
        answers: Mutex::new(answers),
        asked: Mutex::default(),
        delay,
    })
}

fn agent(
    model: &ScriptedProvider,
    ran: &Arc<Mutex<Vec<String>>>,
    approver: Option<Arc<Scripted>>,
    store: Option<Arc<dyn SessionStore>>,
) -> Agent {
    create_agent(AgentOptions {
        provider: vec![Arc::new(model.clone()) as Arc<dyn Provider>],
        tools: shell(ran),
        interceptors: vec![policy()],
        approve_tool_call: approver.map(|a| a as Arc<dyn ToolCallApprover>),
        session_id: store.is_some().then(|| "work".to_owned()),
        store,
        ..Default::default()
    })
    .unwrap()
}

fn calls(commands: &[&str]) -> Vec<Script> {
    let mut scripts: Vec<Script> = commands
        .iter()
        .enumerate()
        .map(|(i, c)| Script::call(format!("c{i}"), "shell", json!({"command": c})))
        .collect();
    scripts.push(Script::answer("done"));
    scripts
}

fn results(agent: &Agent) -> Vec<(String, bool)> {
    agent
        .turns()
        .iter()
        .flat_map(|t| t.content.iter())
        .filter_map(|b| match b {
            ContentBlock::ToolResult {
                content: ToolResultContent::Text(t),
                is_error,
                ..
            } => Some((t.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn each_verdict_without_an_approver() {
    let model = provider(calls(&["echo hi", "rm -rf build", "ls", "cargo build"]));
    let ran: Arc<Mutex<Vec<String>>> = Arc::default();
    let agent = agent(&model, &ran, None, None);
    let log = record(&agent);
    agent.run(AgentRunOptions::prompt("go")).await.unwrap();
    assert_eq!(*ran.lock().unwrap(), vec!["echo hi", "ls -la"]);
    assert_eq!(
        results(&agent),
        vec![
            ("ran".to_owned(), false),
            ("Blocked: deleting is not allowed here".to_owned(), true),
            ("ran".to_owned(), false),
            (
                "Blocked: `shell` needs approval (it runs a build) and there is nobody to approve it".to_owned(),
                true
            ),
        ]
    );
    let tool_hooks: Vec<&str> = log
        .lock()
        .unwrap()
        .iter()
        .copied()
        .filter(|n| n.starts_with("tool:"))
        .collect();
    insta::assert_debug_snapshot!(tool_hooks);
}

#[tokio::test(start_paused = true)]
async fn an_approver_that_waits_for_a_person_decides() {
    let model = provider(calls(&["cargo build", "cargo publish"]));
    let ran: Arc<Mutex<Vec<String>>> = Arc::default();
    let person = approver(
        vec![
            ApprovalDecision::Approve,
            ApprovalDecision::Decline {
                reason: Some("not today".into()),
            },
        ],
        Duration::from_secs(30),
    );
    let agent = agent(&model, &ran, Some(Arc::clone(&person)), None);
    let started = tokio::time::Instant::now();
    agent.run(AgentRunOptions::prompt("go")).await.unwrap();
    assert_eq!(
        started.elapsed(),
        Duration::from_secs(60),
        "each call waited for its answer"
    );
    assert_eq!(*ran.lock().unwrap(), vec!["cargo build"]);
    assert_eq!(
        *person.asked.lock().unwrap(),
        vec![
            "shell cargo build (it runs a build)",
            "shell cargo publish (it runs a build)"
        ]
    );
    assert_eq!(results(&agent)[1], ("Blocked: not today".to_owned(), true));
}

#[tokio::test(start_paused = true)]
async fn an_abort_while_waiting_for_approval_stops_the_run() {
    let model = provider(calls(&["cargo build"]));
    let ran: Arc<Mutex<Vec<String>>> = Arc::default();
    let person = approver(vec![ApprovalDecision::Approve], Duration::from_secs(3600));
    let agent = agent(&model, &ran, Some(person), None);
    let stopper = agent.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(5)).await;
        stopper.abort();
    });
    let stats = agent.run(AgentRunOptions::prompt("go")).await.unwrap();
    assert_eq!(stats.status, zidane_core::events::RunStatus::Aborted);
    assert!(ran.lock().unwrap().is_empty());
}

#[tokio::test(start_paused = true)]
async fn an_approval_remembered_for_the_session_holds_for_a_later_agent() {
    let store: Arc<dyn SessionStore> = Arc::new(MemoryStore::default());
    let model = provider(calls(&["cargo test", "cargo test -p core", "cargo test; rm -rf ~"]));
    let ran: Arc<Mutex<Vec<String>>> = Arc::default();
    let person = approver(
        vec![
            ApprovalDecision::ApproveAlways(RememberedApproval::CommandPrefix("cargo test".into())),
            ApprovalDecision::Decline { reason: None },
        ],
        Duration::ZERO,
    );
    let first = agent(&model, &ran, Some(Arc::clone(&person)), Some(Arc::clone(&store)));
    first.run(AgentRunOptions::prompt("go")).await.unwrap();
    // Asked for the first; the second is covered; the third chains a
    // second command, so it is asked again (and declined).
    assert_eq!(person.asked.lock().unwrap().len(), 2);
    assert_eq!(*ran.lock().unwrap(), vec!["cargo test", "cargo test -p core"]);
    assert_eq!(
        results(&first)[2],
        ("Blocked: the user declined this call".to_owned(), true)
    );
    let kept = store.load("work").await.unwrap().unwrap().metadata["approvals.remembered"].clone();
    assert_eq!(kept, json!([{"kind": "commandPrefix", "value": "cargo test"}]));

    // Another agent on the session (a resumed process) asks nobody.
    let model = provider(calls(&["cargo test --release"]));
    let later = approver(vec![], Duration::ZERO);
    let second = agent(&model, &ran, Some(Arc::clone(&later)), Some(store));
    second.run(AgentRunOptions::prompt("again")).await.unwrap();
    assert!(later.asked.lock().unwrap().is_empty());
    assert_eq!(
        second.remembered_approvals(),
        vec![RememberedApproval::CommandPrefix("cargo test".into())]
    );
    assert_eq!(
        ran.lock().unwrap().last().map(String::as_str),
        Some("cargo test --release")
    );
}

#[test]
fn a_command_prefix_covers_only_commands_without_shell_operators() {
    let prefix = RememberedApproval::CommandPrefix("cargo test".into());
    let shell = |c: &str| -> Value { json!({"command": c}) };
    assert!(prefix.covers("shell", &shell("cargo test")));
    assert!(prefix.covers("shell", &shell("cargo test -p x")));
    for risky in [
        "cargo testing",
        "cargo test && rm -rf /",
        "cargo test | sh",
        "cargo test $(rm x)",
        "cargo test > /etc/passwd",
        "cargo test\nrm x",
    ] {
        assert!(!prefix.covers("shell", &shell(risky)), "{risky}");
    }
    assert!(!prefix.covers("write_file", &shell("cargo test")));
    assert!(RememberedApproval::Tool("edit".into()).covers("edit", &json!({})));
}

#[tokio::test(start_paused = true)]
async fn aliases_and_descriptions_reach_the_model_while_history_and_hooks_keep_the_canonical_name() {
    let model = provider(vec![
        Script::call("c1", "say", json!({"text": "hi"})),
        Script::answer("said"),
    ]);
    let agent = create_agent(AgentOptions {
        tool_aliases: [
            ("echo".to_owned(), "say".to_owned()),
            ("nothing".to_owned(), "x".to_owned()),
        ]
        .into(),
        tool_descriptions: [(
            "echo".to_owned(),
            zidane_core::tool::DescriptionOverride::Map(Arc::new(|current: &str| format!("{current} (out loud)"))),
        )]
        .into(),
        ..crate::support::options(&model)
    })
    .unwrap();
    let named: Arc<Mutex<Vec<String>>> = Arc::default();
    let n = Arc::clone(&named);
    agent
        .hooks()
        .on_sync::<zidane_core::events::ToolBefore, _>(move |ev, _| {
            n.lock().unwrap().push(ev.name().to_owned());
            Ok(())
        });
    agent.run(AgentRunOptions::prompt("go")).await.unwrap();
    let request = &model.requests()[0];
    let listed: Vec<(&str, &str)> = request
        .tools
        .iter()
        .map(|t| (t.name.as_str(), t.description.as_str()))
        .collect();
    assert_eq!(listed, vec![("say", "Echo (out loud)")]);
    assert_eq!(*named.lock().unwrap(), vec!["echo"]);
    let call = agent.turns()[1].content[0].clone();
    assert!(
        matches!(call, ContentBlock::ToolUse { ref name, .. } if name == "echo"),
        "{call:?}"
    );
    assert_eq!(results(&agent), vec![("echo: hi".to_owned(), false)]);
}

/// A hook handler asks the agent's decision provider (`ctx.decide`), with
/// `decision:start` / `decision:end` around it, and acts on the answer.
#[tokio::test(start_paused = true)]
async fn a_gate_handler_decides_through_its_context() {
    use zidane_agent::{DecideHookContext, DecisionRequest};
    use zidane_core::events::ToolGate;
    let model = provider(vec![
        Script::call("c1", "echo", json!({"text": "drop table users"})),
        Script::answer("{\"probability\": 0.95}"),
        Script::answer("refused"),
    ]);
    let agent = crate::support::agent(&model);
    let log = record(&agent);
    agent.hooks().on::<ToolGate, _>(|gate, cx| {
        Box::pin(async move {
            let verdict = cx
                .decide(DecisionRequest::Predicate {
                    question: format!("`{}` destroys data", gate.input),
                })
                .await;
            let likely = verdict.answers.as_ref().and_then(|a| a["probability"].as_f64());
            if likely.is_some_and(|p| p > 0.8) {
                gate.block = true;
                gate.reason = "it looks destructive".into();
            }
            Ok(())
        })
    });
    agent.run(AgentRunOptions::prompt("go")).await.unwrap();
    assert_eq!(
        results(&agent),
        vec![("Blocked: it looks destructive".to_owned(), true)]
    );
    let names = log.lock().unwrap().clone();
    let at = |n: &str| names.iter().position(|x| *x == n).unwrap();
    assert!(at("tool:gate") < at("decision:start") && at("decision:start") < at("decision:end"));
    // The question went to the model as the decision's own request.
    let asked = &model.requests()[1];
    assert_eq!(asked.messages.len(), 1);
    assert!(asked.tools.is_empty());
}
