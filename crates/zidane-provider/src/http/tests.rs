use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_core::Stream;
use http_body::{Body, Frame};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::SseBody;
use crate::{AbortSignal, ErrorKind, ProviderError, StreamEvent, anthropic};

/// A response body fed by a channel: silent while nothing is sent, ended when
/// the sender is dropped.
struct ChannelBody(mpsc::Receiver<Bytes>);

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        self.0.poll_recv(cx).map(|chunk| chunk.map(|c| Ok(Frame::data(c))))
    }
}

type Body_ = SseBody<ChannelBody, anthropic::Decoder>;

fn body(idle: Duration) -> (mpsc::Sender<Bytes>, Body_) {
    let (tx, rx) = mpsc::channel(8);
    let body = SseBody::new(
        ChannelBody(rx),
        anthropic::Decoder::new("anthropic"),
        idle,
        AbortSignal::never(),
        "anthropic".into(),
        None,
    );
    (tx, body)
}

async fn next(body: &mut Body_) -> Option<Result<StreamEvent, ProviderError>> {
    std::future::poll_fn(|cx| Pin::new(&mut *body).poll_next(cx)).await
}

const START: &str = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":1}}}\n\n";
const PING: &str = "event: ping\ndata: {\"type\":\"ping\"}\n\n";

#[tokio::test(start_paused = true)]
async fn silence_past_the_idle_timeout_is_a_transport_error() {
    let (tx, mut body) = body(Duration::from_secs(30));
    tx.send(Bytes::from_static(START.as_bytes())).await.unwrap();
    assert!(matches!(next(&mut body).await, Some(Ok(StreamEvent::Start { .. }))));
    assert!(matches!(next(&mut body).await, Some(Ok(StreamEvent::Usage(_)))));
    let silent_since = Instant::now();
    let err = next(&mut body).await.unwrap().unwrap_err();
    assert_eq!(
        silent_since.elapsed(),
        Duration::from_secs(30),
        "virtual time: exactly the idle timeout"
    );
    assert_eq!(err.kind(), ErrorKind::Transport);
    assert_eq!(err.message(), "the model sent nothing for 30s");
    assert_eq!(
        err.silence(),
        Some(Duration::from_secs(30)),
        "the loop's silence budget reads it"
    );
    assert!(next(&mut body).await.is_none());
    drop(tx);
}

#[tokio::test(start_paused = true)]
async fn a_slow_but_steady_stream_never_times_out() {
    let (tx, mut body) = body(Duration::from_secs(30));
    tokio::spawn(async move {
        tx.send(Bytes::from_static(START.as_bytes())).await.unwrap();
        for _ in 0..5 {
            tokio::time::sleep(Duration::from_secs(20)).await;
            tx.send(Bytes::from_static(PING.as_bytes())).await.unwrap();
        }
        tokio::time::sleep(Duration::from_secs(20)).await;
        let stop = "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
        tx.send(Bytes::from_static(stop.as_bytes())).await.unwrap();
    });
    let started = Instant::now();
    let mut last = None;
    while let Some(event) = next(&mut body).await {
        last = Some(event.unwrap());
    }
    assert!(matches!(last, Some(StreamEvent::End { .. })));
    assert_eq!(started.elapsed(), Duration::from_secs(120));
}

/// A configured header a request cannot carry fails the request, naming the
/// header, whichever protocol the provider speaks (before, one provider
/// dropped it without a word).
#[tokio::test]
async fn a_configured_header_that_cannot_be_sent_fails_the_request_for_every_provider() {
    use crate::provider::Provider;
    use crate::{AnthropicConfig, AnthropicProvider, OpenAiConfig, OpenAiProvider, StreamOptions};

    let bad = vec![("x-team".to_owned(), "line\nbreak".to_owned())];
    let mut anthropic = AnthropicConfig::new("sk-test").with_base_url("http://127.0.0.1:9");
    anthropic.headers = bad.clone();
    let mut openai = OpenAiConfig::compatible("http://127.0.0.1:9/v1", None);
    openai.headers = bad;
    let providers: Vec<Box<dyn Provider>> = vec![
        Box::new(AnthropicProvider::new(anthropic).unwrap()),
        Box::new(OpenAiProvider::new(openai).unwrap()),
    ];
    for provider in providers {
        let mut stream = provider.stream(&StreamOptions::new("m", Vec::new()), AbortSignal::never());
        let first = std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)).await;
        let error = match first {
            Some(Err(error)) => error,
            other => panic!("{}: expected the request to fail, got {other:?}", provider.name()),
        };
        assert_eq!(error.kind(), ErrorKind::InvalidRequest, "{}", provider.name());
        assert!(error.message().contains("`x-team`"), "{}: {error}", provider.name());
    }
}

/// A server that says it is still working `yes` times, then that it is not;
/// it counts the questions.
#[derive(Debug)]
struct Vouches {
    yes: usize,
    asked: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl super::Liveness for Vouches {
    fn working(&self) -> crate::BoxFuture<'static, bool> {
        let n = self.asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let yes = n < self.yes;
        Box::pin(async move { yes })
    }
}

fn vouched(
    idle: Duration,
    yes: usize,
) -> (
    mpsc::Sender<Bytes>,
    Body_,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
) {
    let (tx, body) = body(idle);
    let asked = std::sync::Arc::default();
    let liveness = Vouches {
        yes,
        asked: std::sync::Arc::clone(&asked),
    };
    (tx, body.with_liveness(Some(std::sync::Arc::new(liveness))), asked)
}

/// A silence the server vouches for (llama.cpp holding back a tool call
/// while `/slots` says the slot works) is not a failure: the server is
/// asked again every recheck, and the stream fails only once it says it is
/// no longer working, the message naming the whole silence.
#[tokio::test(start_paused = true)]
async fn a_silence_the_server_vouches_for_is_waited_out() {
    let (tx, mut body, asked) = vouched(Duration::from_secs(30), 3);
    tx.send(Bytes::from_static(START.as_bytes())).await.unwrap();
    assert!(matches!(next(&mut body).await, Some(Ok(StreamEvent::Start { .. }))));
    assert!(matches!(next(&mut body).await, Some(Ok(StreamEvent::Usage(_)))));
    let silent_since = Instant::now();
    let err = next(&mut body).await.unwrap().unwrap_err();
    // 30 s, then three vouched rechecks of 15 s each.
    assert_eq!(silent_since.elapsed(), Duration::from_secs(75));
    assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 4);
    assert_eq!(err.kind(), ErrorKind::Transport);
    assert_eq!(err.message(), "the model sent nothing for 75s");
    drop(tx);
}

/// Data after a vouched silence continues the stream, and the next silence
/// gets the whole idle timeout again.
#[tokio::test(start_paused = true)]
async fn data_after_a_vouched_silence_continues_the_stream() {
    let (tx, mut body, asked) = vouched(Duration::from_secs(30), 2);
    tokio::spawn(async move {
        tx.send(Bytes::from_static(START.as_bytes())).await.unwrap();
        // Silent past the idle timeout, vouched for twice.
        tokio::time::sleep(Duration::from_secs(50)).await;
        tx.send(Bytes::from_static(PING.as_bytes())).await.unwrap();
        tokio::time::sleep(Duration::from_secs(25)).await;
        let stop = "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
        tx.send(Bytes::from_static(stop.as_bytes())).await.unwrap();
    });
    let mut last = None;
    while let Some(event) = next(&mut body).await {
        last = Some(event.unwrap());
    }
    assert!(matches!(last, Some(StreamEvent::End { .. })));
    assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 2);
}
