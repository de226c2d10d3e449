use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use zidane_bench::loopback::read_request;
use zidane_core::events::{RedactKind, TracingRedact};
use zidane_core::{FnTool, ToolOutput, ToolSet};
use zidane_loop::{LoopConfig, RunLoop, RunOptions};
use zidane_provider::scripted::{Script, ScriptedProvider};
use zidane_provider::{FinishReason, Provider};

use crate::{OtelExporter, OtelOptions, REDACTION_FAILED, parse_traceparent};

/// A loopback OTLP/HTTP receiver: answers 200 (or `status`) and keeps each
/// request's path and decoded JSON body.
async fn receiver(status: u16) -> (String, Arc<Mutex<Vec<(String, Value)>>>, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let got: Arc<Mutex<Vec<(String, Value)>>> = Arc::default();
    let heads: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = Arc::clone(&got);
    let seen_heads = Arc::clone(&heads);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let seen = Arc::clone(&seen);
            let seen_heads = Arc::clone(&seen_heads);
            tokio::spawn(async move {
                let mut buf = Vec::new();
                while let Some((head_end, len)) = read_request(&mut stream, &mut buf).await {
                    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
                    seen_heads.lock().unwrap().push(head.clone());
                    let path = head.split_whitespace().nth(1).unwrap_or_default().to_owned();
                    let body: Value = serde_json::from_slice(&buf[head_end..head_end + len]).unwrap_or(Value::Null);
                    buf.drain(..head_end + len);
                    seen.lock().unwrap().push((path, body));
                    let response = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{{}}"
                    );
                    if stream.write_all(response.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (format!("http://{addr}"), got, heads)
}

fn run_loop(config_tracing: Option<&str>) -> RunLoop {
    let scripts = vec![
        Script::new()
            .tool_call(0, "call_1", "lookup", json!({"key": "secret-key-123"}))
            .usage(100, 10)
            .end(FinishReason::ToolCalls),
        Script::new()
            .text("The value is 42.")
            .usage(150, 8)
            .end(FinishReason::Stop),
    ];
    let provider = ScriptedProvider::new("mock", scripts);
    let mut config = LoopConfig::new(Arc::new(provider) as Arc<dyn Provider>);
    config.agent_name = Some("researcher".into());
    config.system = Some("You are careful. token=abc".into());
    if let Some(traceparent) = config_tracing {
        config.tracing_context.insert("traceparent".into(), traceparent.into());
    }
    config.tools = ToolSet::new().with(FnTool::new(
        "lookup",
        "Looks a key up",
        json!({"type": "object", "properties": {"key": {"type": "string"}}}),
        |_i, _cx| async move { Ok(ToolOutput::text("42 (from secret-key-123)")) },
    ));
    RunLoop::new(config)
}

/// Every span the receiver got, flattened, with attributes as a map.
fn spans(got: &[(String, Value)]) -> Vec<Value> {
    let mut out = Vec::new();
    for (_, body) in got {
        for rs in body["resourceSpans"].as_array().unwrap() {
            assert_eq!(rs["resource"]["attributes"][0]["key"], "service.name");
            for ss in rs["scopeSpans"].as_array().unwrap() {
                for span in ss["spans"].as_array().unwrap() {
                    let mut span = span.clone();
                    let attrs: serde_json::Map<String, Value> = span["attributes"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|a| {
                            let v = &a["value"];
                            let v = v
                                .get("stringValue")
                                .or_else(|| v.get("intValue"))
                                .or_else(|| v.get("boolValue"))
                                .or_else(|| v.get("doubleValue"))
                                .cloned()
                                .unwrap_or_else(|| v.clone());
                            (a["key"].as_str().unwrap().to_owned(), v)
                        })
                        .collect();
                    span["attributes"] = Value::Object(attrs);
                    out.push(span);
                }
            }
        }
    }
    out
}

fn named<'a>(spans: &'a [Value], prefix: &str) -> Vec<&'a Value> {
    spans
        .iter()
        .filter(|s| s["name"].as_str().unwrap().starts_with(prefix))
        .collect()
}

/// A tool-using run becomes one trace under the caller's `traceparent`:
/// the agent span, a chat span per model call and a tool span, with the
/// GenAI attributes, and no payload unless asked for.
#[tokio::test]
async fn a_run_becomes_a_trace_with_the_genai_attributes() {
    let (url, got, _) = receiver(200).await;
    let exporter = OtelExporter::new(OtelOptions::new(&url)).unwrap();
    let parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let looped = run_loop(Some(parent));
    let _scope = exporter.install(looped.hooks()).unwrap();
    looped.run(RunOptions::prompt("What is the value?")).await.unwrap();
    assert_eq!(exporter.flush().await.unwrap(), 4);

    let got = got.lock().unwrap().clone();
    assert!(got.iter().all(|(path, _)| path == "/v1/traces"));
    let spans = spans(&got);
    assert_eq!(spans.len(), 4, "{spans:#?}");
    let agent = named(&spans, "invoke_agent")[0];
    assert_eq!(agent["name"], "invoke_agent researcher");
    assert_eq!(agent["traceId"], "0af7651916cd43dd8448eb211c80319c");
    assert_eq!(agent["parentSpanId"], "b7ad6b7169203331");
    let a = &agent["attributes"];
    assert_eq!(a["gen_ai.operation.name"], "invoke_agent");
    assert_eq!(a["gen_ai.agent.name"], "researcher");
    assert_eq!(a["gen_ai.usage.input_tokens"], "250");
    assert_eq!(a["gen_ai.usage.output_tokens"], "18");
    assert_eq!(a["zidane.status"], "completed");

    let chats = named(&spans, "chat ");
    assert_eq!(chats.len(), 2);
    for chat in &chats {
        assert_eq!(chat["parentSpanId"], agent["spanId"]);
        assert_eq!(chat["traceId"], agent["traceId"]);
        assert_eq!(chat["kind"], 3, "a model call is a client span");
        assert_eq!(chat["attributes"]["gen_ai.operation.name"], "chat");
    }
    let reasons: Vec<&Value> = chats
        .iter()
        .map(|c| &c["attributes"]["gen_ai.response.finish_reasons"]["arrayValue"]["values"][0]["stringValue"])
        .collect();
    assert_eq!(reasons, [&json!("tool_calls"), &json!("stop")]);
    assert_eq!(chats[0]["attributes"]["gen_ai.usage.input_tokens"], "100");

    let tool = named(&spans, "execute_tool")[0];
    assert_eq!(tool["name"], "execute_tool lookup");
    assert_eq!(tool["parentSpanId"], agent["spanId"]);
    assert_eq!(tool["attributes"]["gen_ai.tool.name"], "lookup");
    assert_eq!(tool["attributes"]["gen_ai.tool.call.id"], "call_1");
    assert_eq!(tool["status"]["code"], 0);

    let text = serde_json::to_string(&got).unwrap();
    assert!(!text.contains("secret-key-123"), "no payload without capture");
    assert!(!text.contains("careful"));
    for span in &spans {
        let (start, end): (u64, u64) = (
            span["startTimeUnixNano"].as_str().unwrap().parse().unwrap(),
            span["endTimeUnixNano"].as_str().unwrap().parse().unwrap(),
        );
        assert!(start > 0 && end >= start, "{span}");
    }
}

/// With payload capture, every payload goes through `tracing:redact`
/// first, by kind, and what the handlers leave is what is shipped.
#[tokio::test]
async fn captured_payloads_go_through_tracing_redact() {
    let (url, got, _) = receiver(200).await;
    let mut options = OtelOptions::new(&url);
    options.capture_payloads = true;
    let exporter = OtelExporter::new(options).unwrap();
    let looped = run_loop(None);
    let kinds: Arc<Mutex<Vec<(RedactKind, bool)>>> = Arc::default();
    let k = Arc::clone(&kinds);
    looped.hooks().on_sync::<TracingRedact, _>(move |ev, _| {
        k.lock().unwrap().push((ev.kind(), ev.redacted == ev.value()));
        ev.redacted = ev.redacted.replace("secret-key-123", "[key]");
        Ok(())
    });
    // A second handler composes on the first one's output.
    looped.hooks().on_sync::<TracingRedact, _>(|ev, _| {
        if ev.kind() == RedactKind::System {
            ev.redacted = ev.redacted.replace("token=abc", "token=***");
        }
        Ok(())
    });
    let _scope = exporter.install(looped.hooks()).unwrap();
    looped.run(RunOptions::prompt("What is the value?")).await.unwrap();
    exporter.flush().await.unwrap();

    let kinds = kinds.lock().unwrap().clone();
    assert!(
        kinds.iter().all(|(_, starts_equal)| *starts_equal),
        "redacted starts as value"
    );
    let kinds: Vec<RedactKind> = kinds.into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        kinds,
        [
            RedactKind::System,
            RedactKind::Prompt,
            RedactKind::ToolInput,
            RedactKind::ToolInput,
            RedactKind::ToolResult,
            RedactKind::StreamText,
        ]
    );
    let got = got.lock().unwrap().clone();
    let text = serde_json::to_string(&got).unwrap();
    assert!(!text.contains("secret-key-123"), "{text}");
    assert!(!text.contains("token=abc"));
    let spans = spans(&got);
    let agent = named(&spans, "invoke_agent")[0];
    assert_eq!(
        agent["attributes"]["gen_ai.system_instructions"],
        "You are careful. token=***"
    );
    let input: Value = serde_json::from_str(agent["attributes"]["gen_ai.input.messages"].as_str().unwrap()).unwrap();
    assert_eq!(input[0]["parts"][0]["content"], "What is the value?");
    let tool = named(&spans, "execute_tool")[0];
    assert_eq!(tool["attributes"]["gen_ai.tool.call.arguments"], r#"{"key":"[key]"}"#);
    assert_eq!(tool["attributes"]["gen_ai.tool.call.result"], "42 (from [key])");
    let last = named(&spans, "chat ")[1];
    let output: Value = serde_json::from_str(last["attributes"]["gen_ai.output.messages"].as_str().unwrap()).unwrap();
    assert_eq!(
        output[0]["parts"][0],
        json!({"type": "text", "content": "The value is 42."})
    );
    assert_eq!(output[0]["finish_reason"], "stop");
}

/// A redaction handler that fails never lets the raw value through.
#[tokio::test]
async fn a_failing_redaction_ships_no_raw_value() {
    let (url, got, _) = receiver(200).await;
    let mut options = OtelOptions::new(&url);
    options.capture_payloads = true;
    let exporter = OtelExporter::new(options).unwrap();
    let looped = run_loop(None);
    looped
        .hooks()
        .on_sync::<TracingRedact, _>(|_, _| Err("the redaction service is down".into()));
    let _scope = exporter.install(looped.hooks()).unwrap();
    looped.run(RunOptions::prompt("What is the value?")).await.unwrap();
    exporter.flush().await.unwrap();
    let text = serde_json::to_string(&*got.lock().unwrap()).unwrap();
    assert!(!text.contains("secret-key-123"));
    assert!(!text.contains("What is the value?"));
    assert!(text.contains(REDACTION_FAILED));
}

/// A collector that refuses the spans is reported by `flush`, with the
/// status, and the run itself is unaffected.
#[tokio::test]
async fn a_refused_export_is_reported_by_flush() {
    let (url, _got, _) = receiver(503).await;
    let exporter = OtelExporter::new(OtelOptions::new(&url)).unwrap();
    let looped = run_loop(None);
    let _scope = exporter.install(looped.hooks()).unwrap();
    let stats = looped.run(RunOptions::prompt("What is the value?")).await.unwrap();
    assert!(stats.completed());
    let err = exporter.flush().await.unwrap_err().to_string();
    assert!(
        err.contains("1 trace export(s)") && err.contains("4 spans not delivered"),
        "{err}"
    );
    assert!(err.contains("503"), "{err}");
}

#[test]
fn endpoints_and_traceparents() {
    assert_eq!(
        OtelOptions::new("http://h:4318/").traces_url(),
        "http://h:4318/v1/traces"
    );
    assert_eq!(
        OtelOptions::new("http://h:4318/v1/traces").traces_url(),
        "http://h:4318/v1/traces"
    );
    let vars = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
    };
    assert!(OtelOptions::from_vars(vars(&[])).is_none());
    let o = OtelOptions::from_vars(vars(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318/otlp"),
        ("OTEL_SERVICE_NAME", "reviewer"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=k1, tenant = t"),
    ]))
    .unwrap();
    assert_eq!(o.traces_url(), "http://c:4318/otlp/v1/traces");
    assert_eq!(o.service_name, "reviewer");
    assert_eq!(
        o.headers,
        [
            ("x-api-key".to_owned(), "k1".to_owned()),
            ("tenant".to_owned(), "t".to_owned())
        ]
    );
    assert!(!format!("{o:?}").contains("k1"), "header values never print");
    let o = OtelOptions::from_vars(vars(&[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c/traces")])).unwrap();
    assert_eq!(o.traces_url(), "http://c/traces");
    assert!(OtelExporter::new(OtelOptions::new("not a url")).is_err());
    assert!(OtelExporter::new(OtelOptions::new("ftp://h")).is_err());

    let (trace, span) = parse_traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01").unwrap();
    assert_eq!(trace[0], 0x0a);
    assert_eq!(span[7], 0x31);
    assert!(parse_traceparent("00-00000000000000000000000000000000-b7ad6b7169203331-01").is_none());
    assert!(parse_traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b71692033-01").is_none());
    assert!(parse_traceparent("garbage").is_none());
}

/// The configured service name names the resource, and the configured
/// headers (a hosted collector's key) go with every export.
#[tokio::test]
async fn the_service_name_and_headers_reach_the_collector() {
    let (url, got, heads) = receiver(200).await;
    let mut options = OtelOptions::new(&url);
    options.service_name = "reviewer".into();
    options.headers = vec![("x-api-key".into(), "collector-key-1".into())];
    let exporter = OtelExporter::new(options).unwrap();
    let looped = run_loop(None);
    let _scope = exporter.install(looped.hooks()).unwrap();
    looped.run(RunOptions::prompt("What is the value?")).await.unwrap();
    exporter.flush().await.unwrap();
    let got = got.lock().unwrap().clone();
    assert_eq!(
        got[0].1["resourceSpans"][0]["resource"]["attributes"][0]["value"]["stringValue"],
        "reviewer"
    );
    let heads = heads.lock().unwrap().clone();
    assert!(
        heads
            .iter()
            .all(|h| h.to_ascii_lowercase().contains("x-api-key: collector-key-1")),
        "{heads:?}"
    );
}
