//! The real HTTP providers against a loopback server: recorded streams byte
//! for byte, connection reuse, and every fault the transport must classify.

use std::time::Duration;

use futures_core::Stream;
use serde_json::json;
use zidane_provider::{
    AbortController, AbortSignal, AnthropicConfig, AnthropicProvider, AssistantMessage, CacheTtl, ErrorKind,
    FinishReason, Message, MessageAccumulator, OpenAiConfig, OpenAiProvider, Provider, ProviderError, StreamEvent,
    StreamOptions,
};

use crate::server::{End, Reply, Server};
use crate::support::{Wire, fixture, fixture_files, replay};

/// Polls the next item of a provider stream.
async fn next(stream: &mut zidane_provider::EventStream) -> Option<Result<StreamEvent, ProviderError>> {
    std::future::poll_fn(|cx| std::pin::Pin::new(&mut *stream).poll_next(cx)).await
}

async fn collect(provider: &dyn Provider, options: &StreamOptions) -> Result<AssistantMessage, ProviderError> {
    let mut stream = provider.stream(options, AbortSignal::never());
    let mut acc = MessageAccumulator::new();
    while let Some(event) = next(&mut stream).await {
        acc.push(&event?);
    }
    Ok(acc.finish())
}

fn anthropic(server: &Server) -> AnthropicProvider {
    AnthropicProvider::new(AnthropicConfig::new("sk-ant-test-secret").with_base_url(server.url())).unwrap()
}

fn openai(server: &Server) -> OpenAiProvider {
    OpenAiProvider::new(OpenAiConfig::openai("sk-test-secret").with_base_url(format!("{}/v1", server.url()))).unwrap()
}

pub(crate) fn options() -> StreamOptions {
    StreamOptions::new("claude-sonnet-4-5", vec![Message::user("hi")])
}

#[tokio::test]
async fn anthropic_recordings_arrive_whole_over_one_reused_connection() {
    let files = fixture_files("anthropic");
    let replies = files
        .iter()
        .map(|f| Reply::sse(fixture(&format!("anthropic/{f}"))))
        .collect();
    let server = Server::start(replies).await;
    let provider = anthropic(&server);
    for name in &files {
        let bytes = fixture(&format!("anthropic/{name}"));
        let over_http = collect(&provider, &options()).await.unwrap();
        assert_eq!(over_http, replay(Wire::Anthropic, &bytes).unwrap(), "{name}");
    }
    assert_eq!(
        server.accepts(),
        1,
        "keep-alive: one connection for {} requests",
        files.len()
    );

    let requests = server.requests();
    let first = &requests[0];
    assert_eq!(first.path(), "/v1/messages");
    assert_eq!(first.header("x-api-key").as_deref(), Some("sk-ant-test-secret"));
    assert_eq!(first.header("anthropic-version").as_deref(), Some("2023-06-01"));
    assert_eq!(
        first.body,
        zidane_provider::anthropic::request_body(&options()).body.to_vec()
    );
}

#[tokio::test]
async fn a_keyless_anthropic_compatible_server_gets_no_credentials() {
    let fixture_name = &fixture_files("anthropic")[0];
    let server = Server::start(vec![Reply::sse(fixture(&format!("anthropic/{fixture_name}")))]).await;
    let provider = AnthropicProvider::new(AnthropicConfig::keyless(server.url())).unwrap();
    collect(&provider, &options()).await.unwrap();
    let request = &server.requests()[0];
    assert_eq!(request.path(), "/v1/messages");
    assert_eq!(request.header("x-api-key"), None);
    assert_eq!(request.header("authorization"), None);
}

#[tokio::test]
async fn openai_recordings_arrive_whole_over_one_reused_connection() {
    let files = fixture_files("openai-chat");
    let replies = files
        .iter()
        .map(|f| Reply::sse(fixture(&format!("openai-chat/{f}"))))
        .collect();
    let server = Server::start(replies).await;
    let provider = openai(&server);
    for name in &files {
        let bytes = fixture(&format!("openai-chat/{name}"));
        let over_http = collect(&provider, &options()).await.unwrap();
        assert_eq!(over_http, replay(Wire::OpenAi, &bytes).unwrap(), "{name}");
    }
    assert_eq!(server.accepts(), 1);
    let first = &server.requests()[0];
    assert_eq!(first.path(), "/v1/chat/completions");
    assert_eq!(first.header("authorization").as_deref(), Some("Bearer sk-test-secret"));
}

#[tokio::test]
async fn rate_limit_carries_retry_after_status_and_request_id() {
    let server = Server::start(vec![Reply::json(
        429,
        &[("retry-after", "7"), ("request-id", "req_123")],
        r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your rate limit"}}"#,
    )])
    .await;
    let err = collect(&anthropic(&server), &options()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::RateLimited);
    assert!(err.is_retryable());
    assert_eq!(err.status(), Some(429));
    assert_eq!(err.retry_after(), Some(Duration::from_secs(7)));
    assert_eq!(err.request_id(), Some("req_123"));
    assert_eq!(err.error_type(), Some("rate_limit_error"));
}

#[tokio::test]
async fn openai_rate_limit_reads_the_delay_from_the_message() {
    let server = Server::start(vec![Reply::json(
        429,
        &[("x-request-id", "req_9")],
        r#"{"error":{"message":"Rate limit reached for gpt-4o. Please try again in 1.5s.","type":"requests","code":"rate_limit_exceeded"}}"#,
    )])
    .await;
    let err = collect(&openai(&server), &options()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::RateLimited);
    assert_eq!(err.retry_after(), Some(Duration::from_millis(1500)));
    assert_eq!(err.request_id(), Some("req_9"));
}

#[tokio::test]
async fn status_codes_are_classified() {
    let cases = [
        (
            529,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            ErrorKind::Overloaded,
        ),
        (
            500,
            r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"}}"#,
            ErrorKind::Server,
        ),
        (
            401,
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
            ErrorKind::Auth,
        ),
        (
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
            ErrorKind::ContextExceeded,
        ),
        (
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad tools"}}"#,
            ErrorKind::InvalidRequest,
        ),
        (
            429,
            r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota"}}"#,
            ErrorKind::Quota,
        ),
        (502, "<html>bad gateway</html>", ErrorKind::Server),
    ];
    let server = Server::start(cases.iter().map(|(s, b, _)| Reply::json(*s, &[], b)).collect()).await;
    let provider = anthropic(&server);
    for (status, _, kind) in cases {
        let err = collect(&provider, &options()).await.unwrap_err();
        assert_eq!((err.status(), err.kind()), (Some(status), kind), "{err}");
        let shown = format!("{err} {err:?} {provider:?}");
        assert!(!shown.contains("sk-ant-test-secret"), "the key never appears: {shown}");
    }
}

fn head_of_tool_stream() -> Vec<u8> {
    let all = fixture("anthropic/tool_use_response.sse");
    all[..all.len() / 2].to_vec()
}

#[tokio::test]
async fn a_connection_dropped_mid_stream_is_a_transport_error_after_the_events_so_far() {
    let server = Server::start(vec![Reply::chunks(vec![head_of_tool_stream()], End::Drop)]).await;
    let provider = anthropic(&server);
    let mut stream = provider.stream(&options(), AbortSignal::never());
    let mut events = 0;
    let err = loop {
        match next(&mut stream).await {
            Some(Ok(_)) => events += 1,
            Some(Err(e)) => break e,
            None => panic!("a dropped stream must not end cleanly"),
        }
    };
    assert!(events > 0, "the events before the drop were delivered");
    assert_eq!(err.kind(), ErrorKind::Transport);
    assert!(err.is_retryable());
    assert!(next(&mut stream).await.is_none(), "nothing after the error");
}

/// A whole recorded answer in two chunks.
fn chunked_answer(end: End) -> Reply {
    let all = fixture("anthropic/tool_use_response.sse");
    let (a, b) = all.split_at(all.len() / 2);
    Reply::chunks(vec![a.to_vec(), b.to_vec()], end)
}

#[tokio::test]
async fn a_connection_the_server_closed_while_it_idled_is_replaced_and_a_live_one_reused() {
    let server = Server::start(vec![
        chunked_answer(End::Close),
        chunked_answer(End::Finish),
        chunked_answer(End::Finish),
    ])
    .await;
    let provider = anthropic(&server);
    for _ in 0..3 {
        let message = collect(&provider, &options()).await.unwrap();
        assert_eq!(message.tool_calls().count(), 1);
    }
    assert_eq!(server.accepts(), 2, "a new connection after the close, then reuse");
}

#[test]
fn a_streamed_http1_answer_is_read_by_the_reader_with_no_task_beside_it() {
    // The server runs on a runtime of its own, so the client's runtime holds
    // only what the client spawns.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let server = Server::start(vec![Reply::chunks(vec![head_of_tool_stream()], End::Hang)]).await;
            tx.send(server.url()).unwrap();
            std::future::pending::<()>().await
        });
    });
    let url = rx.recv().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let provider = AnthropicProvider::new(AnthropicConfig::new("sk-ant-test-secret").with_base_url(url)).unwrap();
        let mut stream = provider.stream(&options(), AbortSignal::never());
        assert!(matches!(next(&mut stream).await, Some(Ok(StreamEvent::Start { .. }))));
        let tasks = tokio::runtime::Handle::current().metrics().num_alive_tasks();
        assert_eq!(tasks, 0, "the connection is driven by the stream's reader");
    });
}

#[tokio::test]
async fn a_clean_end_before_message_stop_is_a_transport_error() {
    let server = Server::start(vec![Reply::chunks(vec![head_of_tool_stream()], End::Finish)]).await;
    let err = collect(&anthropic(&server), &options()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Transport);
    assert!(err.message().contains("before the response was complete"), "{err}");
}

#[tokio::test]
async fn malformed_lines_are_skipped_and_invalid_json_is_an_invalid_response() {
    let stream = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"x\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n\
                  this line has no colon at all\n:comment\n\n\
                  event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
                  event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n\
                  event: some_future_event\ndata: {\"type\":\"some_future_event\"}\n\n\
                  event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n\
                  event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    let broken = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n\
                  event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_de\n\n";
    let server = Server::start(vec![Reply::sse(stream), Reply::sse(broken)]).await;
    let provider = anthropic(&server);
    let message = collect(&provider, &options()).await.unwrap();
    assert_eq!(
        (message.text().as_str(), message.finish_reason, message.usage.output),
        ("ok", FinishReason::Stop, 2)
    );
    let err = collect(&provider, &options()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidResponse);
}

#[tokio::test]
async fn an_error_event_after_200_is_classified_and_retryable() {
    let stream = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":3}}}\n\n\
                  event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    let server = Server::start(vec![Reply::sse(stream)]).await;
    let err = collect(&anthropic(&server), &options()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Overloaded);
    assert!(err.is_retryable());
    assert_eq!(err.message(), "Overloaded");
}

#[tokio::test]
async fn a_server_that_omits_optional_events_still_yields_the_message() {
    // As llama.cpp's server streams: no ping, a tool_use block without `input`.
    let stream = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"local\",\"usage\":{\"input_tokens\":10,\"output_tokens\":0}}}\n\n\
                  event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"call_1\",\"name\":\"shell\"}}\n\n\
                  event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"cmd\\\": \\\"ls\\\"}\"}}\n\n\
                  event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
                  event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":9}}\n\n\
                  event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    let server = Server::start(vec![Reply::sse(stream)]).await;
    let message = collect(&anthropic(&server), &options()).await.unwrap();
    assert_eq!(message.finish_reason, FinishReason::ToolCalls);
    let calls: Vec<_> = message.tool_calls().collect();
    assert_eq!(calls, vec![("call_1", "shell", &json!({"cmd": "ls"}))]);
}

#[tokio::test]
async fn abort_ends_a_hanging_stream_at_once() {
    let server = Server::start(vec![Reply::chunks(vec![head_of_tool_stream()], End::Hang)]).await;
    let provider = anthropic(&server);
    let controller = AbortController::new();
    let mut stream = provider.stream(&options(), controller.signal());
    assert!(matches!(next(&mut stream).await, Some(Ok(StreamEvent::Start { .. }))));
    controller.abort(Some("user pressed ctrl-c"));
    let err = loop {
        match next(&mut stream).await {
            Some(Ok(_)) => {}
            Some(Err(e)) => break e,
            None => panic!("an aborted stream reports the abort"),
        }
    };
    assert_eq!(err.kind(), ErrorKind::Aborted);
    assert!(!err.is_retryable());
    assert_eq!(err.message(), "user pressed ctrl-c");
}

#[tokio::test]
async fn a_stream_dropped_halfway_closes_its_connection_and_the_next_request_gets_a_new_one() {
    let server = Server::start(vec![
        Reply::chunks(vec![head_of_tool_stream()], End::Hang),
        chunked_answer(End::Finish),
    ])
    .await;
    let provider = anthropic(&server);
    let mut stream = provider.stream(&options(), AbortSignal::never());
    assert!(matches!(next(&mut stream).await, Some(Ok(StreamEvent::Start { .. }))));
    drop(stream);
    // The half-read connection is not reused: its answer is still coming.
    let message = collect(&provider, &options()).await.unwrap();
    assert_eq!(message.tool_calls().count(), 1);
    assert_eq!(server.accepts(), 2);
}

#[tokio::test]
async fn concurrent_http1_requests_each_get_a_connection_and_all_are_kept_for_reuse() {
    let server = Server::start((0..6).map(|_| chunked_answer(End::Finish)).collect()).await;
    let provider = anthropic(&server);
    // Three requests at once, each answered with one tool call.
    let three_at_once = || async {
        let opts = options();
        let (a, b, c) = tokio::join!(
            collect(&provider, &opts),
            collect(&provider, &opts),
            collect(&provider, &opts)
        );
        for message in [a, b, c] {
            assert_eq!(message.unwrap().tool_calls().count(), 1);
        }
    };
    three_at_once().await;
    assert_eq!(server.accepts(), 3, "HTTP/1 carries one request at a time");
    three_at_once().await;
    assert_eq!(server.accepts(), 3, "the three idle connections are reused");
}

#[tokio::test]
async fn one_hour_cache_sends_its_beta_and_count_tokens_uses_its_endpoint() {
    let server = Server::start(vec![
        Reply::sse(fixture("anthropic/basic_response.sse")),
        Reply::json(200, &[], r#"{"input_tokens": 1234}"#),
    ])
    .await;
    let provider = anthropic(&server);
    let mut opts = options();
    opts.cache_ttl = Some(CacheTtl::OneHour);
    collect(&provider, &opts).await.unwrap();
    assert_eq!(provider.count_tokens(&opts).unwrap().await.unwrap(), 1234);
    let requests = server.requests();
    assert_eq!(
        requests[0].header("anthropic-beta").as_deref(),
        Some("extended-cache-ttl-2025-04-11")
    );
    assert_eq!(requests[1].path(), "/v1/messages/count_tokens");
    let body: serde_json::Value = serde_json::from_slice(&requests[1].body).unwrap();
    assert!(body.get("stream").is_none() && body.get("max_tokens").is_none());
}

#[tokio::test]
async fn an_unreachable_server_is_a_transport_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let provider = AnthropicProvider::new(AnthropicConfig::new("k").with_base_url(url)).unwrap();
    let err = collect(&provider, &options()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unreachable);
    assert!(!err.is_retryable());
    assert!(err.message().contains("could not connect"), "{err}");
}

#[tokio::test]
async fn a_200_that_is_not_an_event_stream_fails_at_once() {
    let server = Server::start(vec![Reply::json(200, &[], r#"{"hello": "a JSON page"}"#)]).await;
    let err = collect(&anthropic(&server), &options()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidRequest);
    assert!(!err.is_retryable(), "asking again gets the same answer");
    assert!(
        err.message()
            .starts_with("the server answered with `application/json`, not an event stream"),
        "{}",
        err.message()
    );
}

#[tokio::test]
async fn a_key_the_server_echoes_back_is_redacted_from_the_error() {
    let echo =
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key: sk-ant-test-secret"}}"#;
    let server = Server::start(vec![Reply::json(401, &[], echo)]).await;
    let err = collect(&anthropic(&server), &options()).await.unwrap_err();
    assert!(!err.to_string().contains("sk-ant-test-secret"), "{err}");
    assert!(err.to_string().contains("invalid x-api-key: [redacted]"), "{err}");

    let echo = r#"{"error":{"type":"invalid_request_error","message":"Incorrect API key provided: sk-test-secret."}}"#;
    let server = Server::start(vec![Reply::json(401, &[], echo)]).await;
    let err = collect(&openai(&server), &options()).await.unwrap_err();
    assert!(!err.to_string().contains("sk-test-secret"), "{err}");
    assert!(err.to_string().contains("[redacted]"), "{err}");

    // Also in an error event after a 200.
    let stream = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":3}}}\n\n\
                  event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"bad key sk-ant-test-secret\"}}\n\n";
    let server = Server::start(vec![Reply::sse(stream)]).await;
    let err = collect(&anthropic(&server), &options()).await.unwrap_err();
    assert_eq!(err.message(), "bad key [redacted]");
}

#[tokio::test]
async fn a_line_past_the_bound_is_refused_not_buffered_whole() {
    let mut chunks = vec![b"event: content_block_delta\ndata: ".to_vec()];
    chunks.extend(std::iter::repeat_n(vec![b'a'; 1 << 20], 40));
    let server = Server::start(vec![Reply::Chunked {
        status: 200,
        headers: vec![("content-type".into(), "text/event-stream".into())],
        chunks,
        end: End::Hang,
    }])
    .await;
    let err = collect(&anthropic(&server), &options()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidResponse);
    assert!(err.message().contains("larger than 32 MiB"), "{err}");
}

#[tokio::test]
async fn a_compatible_servers_flat_error_event_is_recognised_with_its_message() {
    // As llama.cpp's server sends it in the Anthropic format.
    let stream = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":3}}}\n\n\
                  event: error\ndata: {\"code\":500,\"message\":\"the model crashed while loading\",\"type\":\"server_error\"}\n\n";
    let server = Server::start(vec![Reply::sse(stream)]).await;
    let err = collect(&anthropic(&server), &options()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Server);
    assert_eq!(err.message(), "the model crashed while loading");
    assert_eq!(err.error_type(), Some("server_error"));
}

#[tokio::test]
async fn a_compatible_server_without_a_model_is_refused_before_any_request() {
    let server = Server::start(Vec::new()).await;
    let provider = OpenAiProvider::new(OpenAiConfig::compatible(server.url(), None)).unwrap();
    let err = collect(&provider, &StreamOptions::new("", vec![Message::user("hi")]))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidRequest);
    assert!(err.message().contains("with_model"), "{err}");
    assert_eq!(server.accepts(), 0, "nothing was sent");
}

#[tokio::test]
async fn both_providers_take_a_servers_root_with_or_without_v1() {
    for (base, label) in [("", "bare root"), ("/v1", "with /v1"), ("/v1/", "with /v1/")] {
        let anthropic_fixture = &fixture_files("anthropic")[0];
        let openai_fixture = &fixture_files("openai-chat")[0];
        let server = Server::start(vec![
            Reply::sse(fixture(&format!("anthropic/{anthropic_fixture}"))),
            Reply::sse(fixture(&format!("openai-chat/{openai_fixture}"))),
        ])
        .await;
        let url = format!("{}{base}", server.url());
        let anthropic = AnthropicProvider::new(AnthropicConfig::keyless(&url)).unwrap();
        collect(&anthropic, &options()).await.unwrap();
        let openai = OpenAiProvider::new(OpenAiConfig::keyless(&url, "qwen").with_api_key("sk-local")).unwrap();
        collect(&openai, &StreamOptions::new("", vec![Message::user("hi")]))
            .await
            .unwrap();
        let requests = server.requests();
        assert_eq!(requests[0].path(), "/v1/messages", "{label}");
        assert_eq!(requests[1].path(), "/v1/chat/completions", "{label}");
        assert!(String::from_utf8_lossy(&requests[1].body).contains(r#""model":"qwen""#));
        assert_eq!(requests[1].header("authorization").as_deref(), Some("Bearer sk-local"));
    }
}

#[tokio::test]
async fn a_connect_error_names_the_url_without_credentials() {
    // Bound, then closed: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let provider = AnthropicProvider::new(
        AnthropicConfig::new("sk-ant-test-secret").with_base_url(format!("http://user:pw@127.0.0.1:{port}")),
    )
    .unwrap();
    let err = collect(&provider, &options()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unreachable);
    let url = format!("http://127.0.0.1:{port}/v1/messages");
    assert_eq!(err.endpoint(), Some(url.as_str()));
    let shown = err.to_string();
    assert!(shown.contains(&url), "{shown}");
    assert!(!shown.contains("pw") && !shown.contains("sk-ant"), "{shown}");
}

#[tokio::test]
async fn an_http_error_names_the_url() {
    let server = Server::start(vec![Reply::json(
        404,
        &[],
        r#"{"type":"error","error":{"type":"not_found_error","message":"model: nope"}}"#,
    )])
    .await;
    let err = collect(&anthropic(&server), &options()).await.unwrap_err();
    assert_eq!(err.status(), Some(404));
    assert_eq!(err.endpoint(), Some(format!("{}/v1/messages", server.url()).as_str()));
}
