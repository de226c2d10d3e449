//! The SSE decoder: the WHATWG rules, and any byte split.

use bytes::Bytes;
use proptest::prelude::*;
use zidane_provider::sse::SseEvent;

use crate::support::{fixture, sse_events};

fn ev(event: Option<&str>, data: &str) -> SseEvent {
    SseEvent {
        event: event.map(|e| Bytes::copy_from_slice(e.as_bytes())),
        data: Bytes::copy_from_slice(data.as_bytes()),
        id: None,
        retry: None,
    }
}

#[test]
fn fields_comments_and_multi_line_data() {
    let input = b"\xEF\xBB\xBF: a comment\r\nevent: one\r\ndata: a\r\ndata:b\r\ndata\r\n\r\ndata: no type\n\nevent: no-data\n\nid: 7\nretry: 1500\ndata: last\r\r";
    let events = sse_events(input, &[]);
    assert_eq!(events.len(), 3);
    assert_eq!(events[0], ev(Some("one"), "a\nb\n"));
    assert_eq!(events[1], ev(None, "no type"));
    assert_eq!(events[1].event_type(), "message");
    assert_eq!(events[2].data, "last");
    assert_eq!(events[2].id.as_deref(), Some(&b"7"[..]));
    assert_eq!(events[2].retry, Some(1500));
}

#[test]
fn a_final_event_without_blank_line_is_flushed_and_utf8_survives_any_split() {
    let input = "data: caf\u{e9} \u{2028} \u{1F600}\n\nevent: last\ndata: unterminated".as_bytes();
    for cut in 0..input.len() {
        let events = sse_events(input, &[cut]);
        assert_eq!(events.len(), 2, "cut at {cut}");
        assert_eq!(
            std::str::from_utf8(&events[0].data).unwrap(),
            "caf\u{e9} \u{2028} \u{1F600}"
        );
        assert_eq!(
            (events[1].event_type(), &events[1].data[..]),
            ("last", &b"unterminated"[..])
        );
    }
}

#[test]
fn crlf_split_across_reads_is_one_line_end() {
    let input = b"data: a\r\n\r\ndata: b\r\n\r\n";
    for cut in 0..input.len() {
        let events = sse_events(input, &[cut]);
        assert_eq!(
            events.iter().map(|e| e.data.clone()).collect::<Vec<_>>(),
            vec!["a", "b"],
            "cut at {cut}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Any split of a recorded stream yields the same events as no split.
    #[test]
    fn any_split_yields_the_same_events(
        name in prop::sample::select(vec![
            "anthropic/tool_use_response.sse",
            "anthropic/stream-a-refusal.sse",
            "anthropic/compaction_response.sse",
            "openai-chat/f82268f2fefd.sse",
            "openai-chat/a491adda08c3.sse",
        ]),
        mut cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..24),
        crlf in any::<bool>(),
    ) {
        let mut bytes = fixture(name);
        if crlf {
            let text = String::from_utf8(bytes).unwrap().replace('\n', "\r\n");
            bytes = text.into_bytes();
        }
        let whole = sse_events(&bytes, &[]);
        let mut cuts: Vec<usize> = cuts.drain(..).map(|i| i.index(bytes.len() + 1)).collect();
        cuts.sort_unstable();
        prop_assert_eq!(sse_events(&bytes, &cuts), whole);
    }

    /// Arbitrary bytes never panic the decoder, whatever the split.
    #[test]
    fn arbitrary_bytes_are_safe(bytes in prop::collection::vec(any::<u8>(), 0..512), cut in any::<prop::sample::Index>()) {
        let at = cut.index(bytes.len() + 1);
        let _ = sse_events(&bytes, &[at]);
    }
}
