//! Shared helpers: the recorded fixtures and replaying them.

use std::path::PathBuf;

use bytes::Bytes;
use zidane_provider::sse::{SseDecoder, SseEvent};
use zidane_provider::{AssistantMessage, MessageAccumulator, ProviderError, StreamEvent, anthropic, openai};

/// `../shared/fixtures/<rel>` beside the checkout.
pub fn fixture_path(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/fixtures")
        .join(rel)
}

/// What a test says when `../shared` is not beside the checkout.
pub fn missing_shared(path: &std::path::Path, error: &std::io::Error) -> String {
    format!(
        "cannot read {}: {error}. These tests read the recorded provider streams and the specs from the `shared/` \
         folder beside the checkout (`../shared`); put it there to run them (`cargo xtask ci` expects it too)",
        path.display()
    )
}

pub fn fixture(rel: &str) -> Vec<u8> {
    std::fs::read(fixture_path(rel)).unwrap_or_else(|e| panic!("{}", missing_shared(&fixture_path(rel), &e)))
}

/// Every file of a fixture folder, sorted.
pub fn fixture_files(dir: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixture_path(dir))
        .unwrap_or_else(|e| panic!("{}", missing_shared(&fixture_path(dir), &e)))
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".sse"))
        .collect();
    names.sort();
    names
}

/// Splits `bytes` at `cuts` and runs the pieces through the SSE decoder.
pub fn sse_events(bytes: &[u8], cuts: &[usize]) -> Vec<SseEvent> {
    let [copied, kept] = [false, true].map(|keep| {
        let mut decoder = SseDecoder::new();
        let mut out = Vec::new();
        let mut start = 0;
        for &cut in cuts.iter().chain(std::iter::once(&bytes.len())) {
            let cut = cut.clamp(start, bytes.len());
            if keep {
                decoder.feed_bytes(Bytes::copy_from_slice(&bytes[start..cut]), &mut out);
            } else {
                decoder.feed(&bytes[start..cut], &mut out);
            }
            start = cut;
        }
        decoder.finish(&mut out);
        out
    });
    assert_eq!(copied, kept, "feed and feed_bytes disagree at cuts {cuts:?}");
    copied
}

#[derive(Clone, Copy, Debug)]
pub enum Wire {
    Anthropic,
    OpenAi,
}

/// The stream events a recorded response decodes to.
pub fn stream_events(wire: Wire, bytes: &[u8]) -> Result<Vec<StreamEvent>, ProviderError> {
    let mut events = Vec::new();
    match wire {
        Wire::Anthropic => {
            let mut d = anthropic::Decoder::new("anthropic");
            for sse in sse_events(bytes, &[]) {
                d.decode(&sse, &mut events)?;
            }
        }
        Wire::OpenAi => {
            let mut d = openai::Decoder::new("openai");
            for sse in sse_events(bytes, &[]) {
                d.decode(&sse, &mut events)?;
            }
            d.finish(&mut events);
        }
    }
    Ok(events)
}

/// Replays a recorded response into the message it accumulates to.
pub fn replay(wire: Wire, bytes: &[u8]) -> Result<AssistantMessage, ProviderError> {
    let mut acc = MessageAccumulator::new();
    for event in stream_events(wire, bytes)? {
        acc.push(&event);
    }
    Ok(acc.finish())
}
