//! Fuzzes the SSE decoder and the wire decoders behind it.
//!
//! `cargo +nightly fuzz run sse` from this folder. The first input byte picks
//! a split point; the decoder must produce the same events whether the rest
//! arrives whole or in two reads, and nothing may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zidane_provider::sse::SseDecoder;
use zidane_provider::{anthropic, openai};

fn decode(parts: &[&[u8]]) -> Vec<zidane_provider::sse::SseEvent> {
    let mut decoder = SseDecoder::new();
    let mut out = Vec::new();
    for part in parts {
        decoder.feed(part, &mut out);
    }
    decoder.finish(&mut out);
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&split, rest)) = data.split_first() else { return };
    let at = usize::from(split).min(rest.len());
    let whole = decode(&[rest]);
    let halves = decode(&[&rest[..at], &rest[at..]]);
    assert_eq!(whole, halves);

    let mut events = Vec::new();
    let mut a = anthropic::Decoder::new("fuzz");
    let mut o = openai::Decoder::new("fuzz");
    for frame in &whole {
        let _ = a.decode(frame, &mut events);
        let _ = o.decode(frame, &mut events);
    }
    o.finish(&mut events);
});
