//! A run's decisions are journaled steps on Restate: a service process
//! killed after a person approved a call, after a hook's decision and
//! after a compaction's summary asks none of them again when Restate
//! replays the invocation in a new process.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use zidane_agent::{
    AgentOptions, ApprovalDecision, ApprovalRequest, AutoCompact, DecideHookContext, DecisionRequest, FnInterceptor,
    ToolCall, ToolCallApprover, ToolCallVerdict,
};
use zidane_core::events::{CompactRestore, ToolGate};
use zidane_core::tool::{FnTool, ToolOutput, ToolSet};
use zidane_hooks::HookMap;
use zidane_provider::{AnthropicConfig, AnthropicProvider, BoxFuture, Provider};
use zidane_restate::ZidaneAgent;

use crate::ONE_AT_A_TIME;
use crate::harness::{Reply, Restate, Service, answer, model, tool_call, until, with_input};

/// A line in the service's `events.log` (the workspace, which outlives the
/// process).
fn note(dir: &Path, line: &str) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("events.log"))
        .unwrap();
    writeln!(f, "{line}").unwrap();
}

fn notes(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("events.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Says yes to every call, and notes each question.
struct Person(PathBuf);

impl ToolCallApprover for Person {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> BoxFuture<'a, ApprovalDecision> {
        note(&self.0, &format!("asked:{}", request.call.call_id));
        Box::pin(async { ApprovalDecision::Approve })
    }
}

/// Not a test of its own: the service of the test below, which starts
/// this binary filtered to this function with `ZIDANE_RS_BIND` set.
/// Without the variable it returns at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decisions_service_helper() {
    let (Ok(bind), Ok(url), Ok(dir)) = (
        std::env::var("ZIDANE_RS_BIND"),
        std::env::var("ZIDANE_RS_MODEL"),
        std::env::var("ZIDANE_RS_DIR"),
    ) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let provider: Arc<dyn Provider> =
        Arc::new(AnthropicProvider::new(AnthropicConfig::new("sk-test").with_base_url(url)).unwrap());
    let object = ZidaneAgent::new(move |_session| {
        let (d1, d2, d3) = (dir.clone(), dir.clone(), dir.clone());
        // `work` notes that it ran; while `hang` exists in the workspace it
        // then never ends (the process is killed in it).
        let tools = ToolSet::new().with(FnTool::new(
            "work",
            "Works",
            json!({"type": "object"}),
            move |_input, cx| {
                let dir = d1.clone();
                async move {
                    note(&dir, &format!("ran:{}", cx.call_id()));
                    if dir.join("hang").exists() {
                        std::fs::write(dir.join("hanging"), "").unwrap();
                        std::future::pending::<()>().await;
                    }
                    Ok(ToolOutput::text("worked"))
                }
            },
        ));
        let ask = FnInterceptor(|_: &ToolCall| ToolCallVerdict::Ask { reason: None });
        Ok(AgentOptions {
            provider: vec![Arc::clone(&provider)],
            model: vec!["claude-sonnet-4-5".into()],
            tools,
            interceptors: vec![Arc::new(ask)],
            approve_tool_call: Some(Arc::new(Person(dir.clone()))),
            auto_compact: Some(AutoCompact {
                threshold: 0.5,
                keep_turns: 2,
                context_window: Some(1000),
                ..Default::default()
            }),
            // A compaction re-attaches a plan that names the process that
            // made it (a replay must re-attach the one the journal holds).
            hooks: HookMap::new()
                .on_sync::<CompactRestore, _>(move |ev, _cx| {
                    let pid = std::process::id();
                    note(&d3, &format!("restore:{pid}"));
                    ev.add("todoread", json!({}), format!("{PLAN} from process {pid}"));
                    Ok(())
                })
                // A gate handler asks the decision provider (the model)
                // about every call.
                .on::<ToolGate, _>(move |ev, cx| {
                    let dir = d2.clone();
                    Box::pin(async move {
                        let question = DecisionRequest::Predicate {
                            question: format!("Is `{}` safe to run?", ev.name()),
                        };
                        let answer = cx.try_decide(question).await;
                        let shown = match answer {
                            Ok(r) => r.answers.map(|a| a["probability"].to_string()).unwrap_or_default(),
                            Err(e) => format!("error: {e}"),
                        };
                        note(&dir, &format!("decided:{}:{shown}", ev.call_id()));
                        Ok(())
                    })
                }),
            ..Default::default()
        })
    });
    let listener = tokio::net::TcpListener::bind(&bind).await.unwrap();
    zidane_restate::serve(object, listener, std::future::pending::<()>()).await;
}

/// What the model server was asked, by kind.
const DECISION: &str = "safe to run?";
pub(crate) const SUMMARY: &str = "Summarize the conversation so far";
const SUMMARY_TEXT: &str = "SUMMARY-OF-THE-RUN";
const PLAN: &str = "THE-PLAN";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_killed_after_an_approval_a_decision_and_a_summary_asks_none_again() {
    let _one = ONE_AT_A_TIME.lock().await;
    let hung = Arc::new(AtomicBool::new(false));
    let h = Arc::clone(&hung);
    let (url, bodies, mut arrived) = model(move |body, _| {
        if body.contains(DECISION) {
            Reply::Stream(answer(r#"{"probability": 0.9}"#))
        } else if body.contains(SUMMARY) {
            Reply::Stream(answer(SUMMARY_TEXT))
        } else if body.contains(SUMMARY_TEXT) {
            // The first request after the compaction: the service is
            // killed in it.
            if h.swap(true, Ordering::SeqCst) {
                Reply::Stream(answer("Done."))
            } else {
                Reply::Hang
            }
        } else if !body.contains("\"c1\"") {
            Reply::Stream(with_input(&tool_call("c1", "work"), 100))
        } else {
            Reply::Stream(with_input(&tool_call("c2", "work"), 700))
        }
    })
    .await;
    let restate = Restate::start().await;
    let mut service = Service::helper(&url, "decisions::decisions_service_helper").await;
    let dir = service.workspace.path().to_path_buf();
    std::fs::write(dir.join("hang"), "").unwrap();
    restate.register(&service.uri).await;
    let id = restate.send("d1", "run", &json!({"prompt": "Work twice."}), &[]).await;

    // Killed in `c1`, after its approval and its decision.
    until("the first call", Duration::from_secs(30), || {
        let hanging = dir.join("hanging");
        async move { hanging.exists() }
    })
    .await;
    assert_eq!(notes(&dir), ["asked:c1", "decided:c1:0.9", "ran:c1"]);
    std::fs::remove_file(dir.join("hang")).unwrap();
    service.kill().await;
    service.restart().await;

    // Killed in the first request after the compaction's summary.
    while !hung.load(Ordering::SeqCst) {
        arrived.recv().await.unwrap();
    }
    service.kill().await;
    service.restart().await;

    let output = restate.output(&id).await;
    assert_eq!(output["text"], "Done.", "{output}");
    let bodies = bodies.lock().unwrap().clone();
    let count = |what: &str| bodies.iter().filter(|b| b.contains(what)).count();
    assert_eq!(count(DECISION), 2, "one decision request per call, none on replay");
    assert_eq!(count(SUMMARY), 1, "one summary request, none on replay");
    let notes = notes(&dir);
    let asked: Vec<&String> = notes.iter().filter(|n| n.starts_with("asked:")).collect();
    assert_eq!(asked, ["asked:c1", "asked:c2"], "each call approved once: {notes:?}");
    let ran: Vec<&String> = notes.iter().filter(|n| n.starts_with("ran:")).collect();
    assert_eq!(
        ran,
        ["ran:c1", "ran:c2"],
        "the call in flight is not run again: {notes:?}"
    );
    assert!(
        notes
            .iter()
            .filter(|n| n.starts_with("decided:"))
            .all(|n| n.ends_with(":0.9")),
        "a replayed decision has the recorded answer: {notes:?}"
    );
    // What the compaction re-attached is journaled with it: the replay
    // re-attaches the plan the first process made, without asking again.
    let restored: Vec<&String> = notes.iter().filter(|n| n.starts_with("restore:")).collect();
    assert_eq!(restored.len(), 1, "re-attached once: {notes:?}");
    let made_by = format!("{PLAN} from process {}", &restored[0]["restore:".len()..]);
    let after: Vec<&String> = bodies.iter().filter(|b| b.contains(SUMMARY_TEXT)).collect();
    assert_eq!(
        after.len(),
        2,
        "the request killed in, and the same one after the replay"
    );
    for body in after {
        assert!(body.contains(&made_by), "{made_by} in {body}");
    }
}
