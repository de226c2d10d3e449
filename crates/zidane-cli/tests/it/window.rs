//! The context window, asked of loopback servers that answer like
//! llama.cpp, Ollama, LM Studio, vLLM and a model listing.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use zidane_bench::loopback::read_request;

use super::{text, zidane};

type Route = fn(&str, &str) -> Option<String>;

/// A server that answers `route(method, path)` with JSON (404 when it says
/// nothing) and chat completions with a short answer; it keeps the chat
/// requests' bodies.
async fn server(route: Route) -> (String, Arc<Mutex<Vec<Value>>>) {
    server_chatting(route, |_| (200, chat_sse("Hi."))).await
}

/// An OpenAI stream of `text`.
fn chat_sse(text: &str) -> String {
    let chunks = [
        json!({"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]}),
        json!({"id": "c", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    ];
    chunks.iter().map(|c| format!("data: {c}\n\n")).collect::<String>() + "data: [DONE]\n\n"
}

/// Like [`server`], with chat completions answered by `chat(body)`:
/// a status and an event stream (or, for an error, a JSON body).
async fn server_chatting(route: Route, chat: fn(&str) -> (u16, String)) -> (String, Arc<Mutex<Vec<Value>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let chats: Arc<Mutex<Vec<Value>>> = Arc::default();
    let seen = Arc::clone(&chats);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let seen = Arc::clone(&seen);
            tokio::spawn(async move {
                let mut buf = Vec::new();
                while let Some((head_end, len)) = read_request(&mut stream, &mut buf).await {
                    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
                    let body = String::from_utf8_lossy(&buf[head_end..head_end + len]).into_owned();
                    buf.drain(..head_end + len);
                    let mut words = head.split_whitespace();
                    let (method, path) = (
                        words.next().unwrap_or("").to_owned(),
                        words.next().unwrap_or("").to_owned(),
                    );
                    let (status, kind, payload) = if path.ends_with("/chat/completions") {
                        seen.lock().unwrap().push(serde_json::from_str(&body).unwrap());
                        let (status, payload) = chat(&body);
                        let kind = if status == 200 {
                            "text/event-stream"
                        } else {
                            "application/json"
                        };
                        (status, kind, payload)
                    } else {
                        match route(&method, &path) {
                            Some(json) => (200, "application/json", json),
                            None => (404, "application/json", "{\"error\": \"not found\"}".to_owned()),
                        }
                    };
                    let response = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\r\n{payload}",
                        payload.len()
                    );
                    if stream.write_all(response.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, chats)
}

async fn run(route: Route, extra: &[&str]) -> (String, Vec<Value>) {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (url, chats) = server(route).await;
    let mut args = vec!["--provider", "openai-compatible", "--model", "m", "--base-url", &url];
    args.extend(extra);
    args.push("Hello.");
    let out = zidane(home.path(), work.path(), &[], &args).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let chats = chats.lock().unwrap().clone();
    (stderr, chats)
}

fn window_line(stderr: &str) -> &str {
    stderr
        .lines()
        .find(|l| l.contains("context window"))
        .unwrap_or_else(|| panic!("no window line in {stderr}"))
}

#[tokio::test]
async fn each_server_says_its_window_and_the_output_cap_fits_it() {
    let cases: [(Route, &str, u32); 6] = [
        (
            |_, path| (path == "/props").then(|| json!({"default_generation_settings": {"n_ctx": 8192}}).to_string()),
            "zidane: context window 8192 tokens (llama.cpp /props)",
            8192,
        ),
        (
            |method, path| {
                (method == "POST" && path == "/api/show").then(|| {
                    json!({"parameters": "stop \"<|im_end|>\"\nnum_ctx 16384", "model_info": {"qwen2.context_length": 32768}})
                        .to_string()
                })
            },
            "zidane: context window 16384 tokens (Ollama /api/show num_ctx)",
            16384,
        ),
        (
            |method, path| {
                (method == "POST" && path == "/api/show")
                    .then(|| json!({"model_info": {"llama.context_length": 131072}}).to_string())
            },
            "zidane: context window 4096 tokens (Ollama /api/show (no num_ctx: Ollama's 4096))",
            4096,
        ),
        (
            |_, path| {
                (path == "/api/v0/models/m").then(|| {
                    json!({"id": "m", "max_context_length": 131072, "loaded_context_length": 12000}).to_string()
                })
            },
            "zidane: context window 12000 tokens (LM Studio /api/v0/models)",
            12000,
        ),
        (
            |_, path| {
                (path == "/v1/models").then(|| {
                    json!({"data": [{"id": "other", "max_model_len": 1}, {"id": "m", "max_model_len": 24576}]})
                        .to_string()
                })
            },
            "zidane: context window 24576 tokens (vLLM /v1/models max_model_len)",
            24576,
        ),
        (
            |_, path| {
                (path == "/v1/models").then(|| json!({"data": [{"id": "m", "context_length": 20000}]}).to_string())
            },
            "zidane: context window 20000 tokens (the server's model listing (context_length))",
            20000,
        ),
    ];
    for (route, line, window) in cases {
        let (stderr, chats) = run(route, &[]).await;
        assert_eq!(window_line(&stderr), line);
        let cap = chats[0]["max_tokens"].as_u64().unwrap();
        let sent = chats[0].to_string().len() as u64 / 4;
        assert!(
            cap <= 8192 && cap + sent <= u64::from(window) + 256,
            "{line}: cap {cap}, input ~{sent}"
        );
    }
}

#[tokio::test]
async fn an_unknown_window_is_assumed_and_said_and_the_flag_wins() {
    let (stderr, chats) = run(|_, _| None, &[]).await;
    assert_eq!(
        window_line(&stderr),
        "zidane: the server did not say its context window; assuming 32768 tokens (set --context-window or `context_window`)"
    );
    assert_eq!(
        chats[0]["max_tokens"], 8192,
        "the window leaves room for the default cap"
    );
    let (stderr, chats) = run(
        |_, path| (path == "/props").then(|| json!({"n_ctx": 8192}).to_string()),
        &["--context-window", "2048"],
    )
    .await;
    assert!(!stderr.contains("context window"), "{stderr}");
    assert_eq!(
        chats[0]["max_tokens"], 256,
        "the input fills a 2048 window: the least cap"
    );
}

/// A 4,096-token window and a 200-turn run of 6 KB reads: compaction keeps
/// every request inside the window (a request over it is refused as the
/// providers refuse one): old results become stubs, the summary request is
/// cut to fit, and the kept turns' results are stubbed when the new history
/// would not fit; the run ends without an overflow.
#[tokio::test]
async fn a_long_run_fits_a_small_window() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use zidane_bench::loopback::{answer_sse, call_sse};
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    static SUMMARIES: AtomicUsize = AtomicUsize::new(0);
    static OVERFLOWS: AtomicUsize = AtomicUsize::new(0);
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(
        work.path().join("notes.txt"),
        "a line of notes to read again\n".repeat(200),
    )
    .unwrap();
    // A `PreCompact` hook hears each automatic compaction.
    std::fs::write(
        home.path().join("config.toml"),
        r#"
[[hooks.PreCompact]]
matcher = "auto"
command = 'cat >> "$ZIDANE_PROJECT_DIR/compactions.log"; echo >> "$ZIDANE_PROJECT_DIR/compactions.log"'
"#,
    )
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = Vec::new();
                while let Some((head_end, len)) = read_request(&mut stream, &mut buf).await {
                    let body = String::from_utf8_lossy(&buf[head_end..head_end + len]).into_owned();
                    buf.drain(..head_end + len);
                    let tokens = (body.len() / 4) as u64;
                    let (status, kind, payload) = if tokens > 4096 {
                        OVERFLOWS.fetch_add(1, Ordering::SeqCst);
                        let error = json!({"type": "error", "error": {"type": "invalid_request_error", "message": format!("prompt is too long: {tokens} tokens > 4096 maximum")}});
                        (400, "application/json", error.to_string())
                    } else if body.contains("Summarize the conversation so far") {
                        SUMMARIES.fetch_add(1, Ordering::SeqCst);
                        (
                            200,
                            "text/event-stream",
                            answer_sse("The user has me read notes.txt again and again.", tokens),
                        )
                    } else {
                        let n = CALLS.fetch_add(1, Ordering::SeqCst);
                        let sse = if n < 200 {
                            call_sse(
                                &format!("toolu_{n}"),
                                "shell",
                                &json!({"command": "cat notes.txt"}),
                                tokens,
                            )
                        } else {
                            answer_sse("Done.", tokens)
                        };
                        (200, "text/event-stream", sse)
                    };
                    let response = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\r\n{payload}",
                        payload.len()
                    );
                    if stream.write_all(response.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    let out = zidane(
        home.path(),
        work.path(),
        &[("ANTHROPIC_API_KEY", "sk-test")],
        &[
            "--context-window",
            "4096",
            "--max-turns",
            "250",
            "--summary",
            "--base-url",
            &url,
            "Read the notes 200 times.",
        ],
    )
    .await;
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(OVERFLOWS.load(Ordering::SeqCst), 0, "a request went over the window");
    assert!(SUMMARIES.load(Ordering::SeqCst) > 0, "compaction ran");
    assert_eq!(CALLS.load(Ordering::SeqCst), 201);
    assert!(stdout.contains("Done.\n"), "{stdout}");
    let last = stdout.lines().last().unwrap();
    let summary: Value = serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {last}\n{}", text(&out.stderr)));
    assert!(
        summary["contextSavings"]["prunedResults"].as_u64().unwrap() > 0,
        "{summary}"
    );
    let log = std::fs::read_to_string(work.path().join("compactions.log")).unwrap();
    let first: Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    assert_eq!(first["hook_event_name"], "PreCompact");
    assert_eq!(first["trigger"], "auto");
    assert!(log.lines().filter(|l| !l.is_empty()).count() >= SUMMARIES.load(Ordering::SeqCst));
}

/// A server that fails to parse the model's tool call (as llama.cpp does
/// when the model fences it): the request goes again at once with the tools
/// in the prompt, the call is read from the text and runs, and the session
/// stays in that mode; the person is told once.
#[tokio::test]
async fn a_server_that_cannot_parse_tool_calls_gets_them_in_text() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (url, chats) = server_chatting(
        |_, _| None,
        |body| {
            if body.contains("\"tools\"") {
                let error = json!({"error": {"code": 500, "message": "The model produced output that does not match the expected peg-native format", "type": "server_error"}});
                return (500, error.to_string());
            }
            if body.contains("</tool_response>") {
                return (200, chat_sse("Done: a.txt is written."));
            }
            (
                200,
                chat_sse("I will write it.\n<tool_call>\n```json\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"a.txt\", \"content\": \"hi\",}}\n```\n</tool_call>"),
            )
        },
    )
    .await;
    let args = [
        "--provider",
        "openai-compatible",
        "--model",
        "m",
        "--base-url",
        &url,
        "Write a.txt.",
    ];
    let out = zidane(home.path(), work.path(), &[], &args).await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    let chats = chats.lock().unwrap().clone();
    assert_eq!(
        std::fs::read_to_string(work.path().join("a.txt")).ok().as_deref(),
        Some("hi"),
        "{stdout}{stderr}{chats:?}"
    );
    assert_eq!(chats.len(), 3, "one refused request, then two in text mode");
    assert!(chats[0].get("tools").is_some());
    assert!(chats[1].get("tools").is_none());
    assert!(chats[1]["messages"][0]["content"].as_str().unwrap().contains("# Tools"));
    let shown = format!("{stdout}{stderr}");
    assert_eq!(
        shown
            .matches("the server could not parse the model's tool call")
            .count(),
        1,
        "{shown}"
    );
    assert!(stdout.contains("Done: a.txt is written."), "{stdout}");
}

/// After a failed attempt against a local llama.cpp-like server whose slot
/// is still busy, the retry waits for `/slots` to say the slot is free.
#[tokio::test]
async fn a_retry_waits_for_the_local_servers_slot() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static LOG: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    static POLLS: AtomicUsize = AtomicUsize::new(0);
    static CHATS: AtomicUsize = AtomicUsize::new(0);
    let (stderr, chats) = {
        let home = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let (url, chats) = server_chatting(
            |_, path| {
                (path == "/slots").then(|| {
                    let busy = POLLS.fetch_add(1, Ordering::SeqCst) < 2;
                    LOG.lock().unwrap().push(if busy { "busy" } else { "free" });
                    json!([{"id": 0, "is_processing": busy}]).to_string()
                })
            },
            |_| {
                LOG.lock().unwrap().push("chat");
                if CHATS.fetch_add(1, Ordering::SeqCst) == 0 {
                    let error =
                        json!({"error": {"code": 503, "message": "the slot was cut off", "type": "unavailable_error"}});
                    return (503, error.to_string());
                }
                (200, chat_sse("Hi."))
            },
        )
        .await;
        let args = [
            "--provider",
            "openai-compatible",
            "--model",
            "m",
            "--base-url",
            &url,
            "Hello.",
        ];
        let out = zidane(home.path(), work.path(), &[], &args).await;
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        (text(&out.stderr), chats.lock().unwrap().len())
    };
    assert_eq!(chats, 2);
    let log = LOG.lock().unwrap().clone();
    let second_chat = log.iter().rposition(|e| *e == "chat").unwrap();
    assert_eq!(&log[..], &["chat", "busy", "busy", "free", "chat"][..], "{log:?}");
    assert_eq!(second_chat, 4);
    assert_eq!(
        stderr
            .matches("the server is still writing the abandoned answer; the retry waits for its slot")
            .count(),
        1,
        "{stderr}"
    );
}

/// `text_tool_calls = true` sends no `tools`: they are described in the
/// system prompt from the first request on.
#[tokio::test]
async fn the_text_tool_calls_key_describes_tools_in_the_prompt() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.toml"), "text_tool_calls = true\n").unwrap();
    let (url, chats) = server_chatting(|_, _| None, |_| (200, chat_sse("Hi."))).await;
    let args = [
        "--provider",
        "openai-compatible",
        "--model",
        "m",
        "--base-url",
        &url,
        "Hello.",
    ];
    let out = zidane(home.path(), work.path(), &[], &args).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let chats = chats.lock().unwrap().clone();
    assert!(chats[0].get("tools").is_none(), "{}", chats[0]);
    let system = chats[0]["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("# Tools") && system.contains("## write_file"),
        "{system}"
    );
}

/// Like llama.cpp with a small model on a slow machine: asked for its
/// progress, it reports reading the prompt, starts a fenced answer, then
/// goes silent past the idle timeout (it holds back what may be a tool
/// call) while `/slots` says its slot works; the answer comes after the
/// program has asked twice. The program waits, sends one request, says
/// once why it waits, and reports the progress in `--json`.
#[tokio::test]
async fn a_silence_while_the_slot_works_is_waited_out() {
    use tokio::sync::Notify;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let chats: Arc<Mutex<Vec<Value>>> = Arc::default();
    let polls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let answered = Arc::new(Notify::new());
    let (seen, polled, go) = (Arc::clone(&chats), Arc::clone(&polls), Arc::clone(&answered));
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let (seen, polled, go) = (Arc::clone(&seen), Arc::clone(&polled), Arc::clone(&go));
            tokio::spawn(async move {
                let mut buf = Vec::new();
                while let Some((head_end, len)) = read_request(&mut stream, &mut buf).await {
                    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
                    let body = String::from_utf8_lossy(&buf[head_end..head_end + len]).into_owned();
                    buf.drain(..head_end + len);
                    let path = head.split_whitespace().nth(1).unwrap_or("").to_owned();
                    let json_reply = |payload: String| {
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{payload}",
                            payload.len()
                        )
                    };
                    let reply = match path.as_str() {
                        "/props" => json_reply(json!({"default_generation_settings": {"n_ctx": 8192}}).to_string()),
                        "/slots" => {
                            // The second question says the slot still works,
                            // and lets the answer go.
                            if polled.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 1 {
                                go.notify_one();
                            }
                            json_reply(json!([{"id": 0, "n_ctx": 8192, "is_processing": true}]).to_string())
                        }
                        p if p.ends_with("/chat/completions") => {
                            let request: Value = serde_json::from_str(&body).unwrap();
                            let progress = request["return_progress"] == json!(true);
                            seen.lock().unwrap().push(request);
                            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
                            let mut first = String::new();
                            if progress {
                                for done in [0, 1500, 3000] {
                                    let chunk = json!({"id": "c", "model": "m", "choices": [], "prompt_progress": {"total": 3000, "cache": 0, "processed": done, "time_ms": done}});
                                    first.push_str(&format!("data: {chunk}\n\n"));
                                }
                            }
                            let fence = json!({"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "```json\n"}}]});
                            first.push_str(&format!("data: {fence}\n\n"));
                            let chunked = |s: &str| format!("{:x}\r\n{s}\r\n", s.len());
                            if stream
                                .write_all(format!("{head}{}", chunked(&first)).as_bytes())
                                .await
                                .is_err()
                            {
                                return;
                            }
                            go.notified().await;
                            let rest = chat_sse("{\"answer\": 42}\n```");
                            let _ = stream
                                .write_all(format!("{}0\r\n\r\n", chunked(&rest)).as_bytes())
                                .await;
                            continue;
                        }
                        _ => "HTTP/1.1 404 X\r\ncontent-length: 0\r\n\r\n".to_owned(),
                    };
                    if stream.write_all(reply.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let args = [
        "--provider",
        "openai-compatible",
        "--model",
        "m",
        "--base-url",
        &url,
        "--idle-timeout",
        "1",
        "--json",
        "Hello.",
    ];
    let out = zidane(home.path(), work.path(), &[], &args).await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    let chats = chats.lock().unwrap().clone();
    assert_eq!(chats.len(), 1, "no retry: {stderr}");
    assert_eq!(chats[0]["return_progress"], json!(true));
    assert!(polls.load(std::sync::atomic::Ordering::SeqCst) >= 2);
    assert!(stdout.contains("{\\\"answer\\\": 42}"), "{stdout}");
    let progress: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "prompt_progress")
        .collect();
    assert_eq!(
        progress,
        [0, 1500, 3000]
            .map(|done| json!({"type": "prompt_progress", "processed": done, "total": 3000}))
            .to_vec()
    );
    assert_eq!(
        stderr
            .matches("the model is silent, but the server says it is still working")
            .count(),
        1,
        "{stderr}"
    );
}
