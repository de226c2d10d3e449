use serde_json::json;

use crate::{ContentBlock, Message, Role, SessionTurn, StreamOptions, ToolResultContent, TurnUsage};

#[test]
fn unknown_blocks_survive_a_round_trip() {
    let raw = json!({"type": "compaction", "content": "summary", "extra": [1, 2]});
    let block: ContentBlock = serde_json::from_value(raw.clone()).unwrap();
    assert_eq!(block, ContentBlock::Unknown(raw.clone()));
    assert_eq!(serde_json::to_value(&block).unwrap(), raw);
}

#[test]
fn known_blocks_use_the_wire_tags() {
    let blocks = vec![
        ContentBlock::text("hi"),
        ContentBlock::ToolUse {
            id: "t1".into(),
            name: "shell".into(),
            input: json!({"cmd": "ls"}),
        },
        ContentBlock::ToolResult {
            tool_use_id: "t1".into(),
            content: ToolResultContent::Text("a\nb".into()),
            is_error: true,
        },
        ContentBlock::Thinking {
            thinking: "hmm".into(),
            signature: Some("sig".into()),
        },
    ];
    let value = serde_json::to_value(&blocks).unwrap();
    assert_eq!(
        value,
        json!([
            {"type": "text", "text": "hi"},
            {"type": "tool_use", "id": "t1", "name": "shell", "input": {"cmd": "ls"}},
            {"type": "tool_result", "tool_use_id": "t1", "content": "a\nb", "is_error": true},
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
        ])
    );
    let back: Vec<ContentBlock> = serde_json::from_value(value).unwrap();
    assert_eq!(back, blocks);
}

#[test]
fn session_turns_serialize_in_camel_case() {
    let turn = SessionTurn {
        id: "turn-1".into(),
        role: Role::Assistant,
        content: Message::assistant("ok").into_content().into(),
        created_at: crate::Timestamp::from_millis(1_700_000_000_000),
        usage: Some(TurnUsage {
            input: 10,
            output: 2,
            cache_read: 5,
            ..Default::default()
        }),
    };
    let value = serde_json::to_value(&turn).unwrap();
    assert_eq!(value["createdAt"], json!(1_700_000_000_000u64));
    assert_eq!(value["usage"]["cacheRead"], json!(5));
    assert_eq!(serde_json::from_value::<SessionTurn>(value).unwrap(), turn);
}

#[test]
fn system_halves_split_at_the_boundary() {
    let mut opts = StreamOptions::new("m", vec![]);
    assert_eq!(opts.system_halves(), None);
    opts.system = Some("static".into());
    assert_eq!(opts.system_halves(), Some(("static", None)));
    opts.system = Some(format!("a{}b", crate::SYSTEM_PROMPT_BOUNDARY));
    assert_eq!(opts.system_halves(), Some(("a", Some("b"))));
}

mod memo {
    use crate::message::WireFormat;
    use crate::{Message, StreamOptions, anthropic, openai};

    #[test]
    fn unchanged_messages_keep_their_bytes_and_edits_drop_them() {
        let mut options = StreamOptions::new(
            "m",
            vec![Message::user("one"), Message::assistant("two"), Message::user("three")],
        );
        let _ = anthropic::request_body(&options);
        let memoized: Vec<bool> = options
            .messages
            .iter()
            .map(|m| m.has_wire_bytes(WireFormat::AnthropicMessages))
            .collect();
        // The newest user message carries the cache breakpoint and is rendered fresh.
        assert_eq!(memoized, vec![true, true, false]);

        let _ = openai::request_body(&options, openai::Dialect::default());
        assert!(
            options
                .messages
                .iter()
                .all(|m| m.has_wire_bytes(WireFormat::OpenAiChat))
        );

        // A clone shares the memo; an edit drops it on the edited copy only.
        let copy = options.messages[0].clone();
        options.messages[0]
            .content_mut()
            .push(crate::ContentBlock::text("more"));
        assert!(!options.messages[0].has_wire_bytes(WireFormat::AnthropicMessages));
        assert!(copy.has_wire_bytes(WireFormat::AnthropicMessages));
        options.messages[1].set_role(crate::Role::User);
        assert!(!options.messages[1].has_wire_bytes(WireFormat::OpenAiChat));
    }

    #[test]
    fn a_request_is_sent_as_the_memos_themselves() {
        let options = StreamOptions::new(
            "m",
            vec![
                Message::user("one"),
                Message::assistant("two \"quoted\""),
                Message::assistant(""),
                Message::user("three"),
                Message::assistant("four"),
            ],
        );
        let parts = anthropic::request_parts(&options);
        let joined: Vec<u8> = parts.chunks.iter().flat_map(|c| c.iter().copied()).collect();
        assert_eq!(joined, anthropic::request_body(&options).body);
        let body: serde_json::Value = serde_json::from_slice(&joined).unwrap();
        assert_eq!(
            body["messages"].as_array().unwrap().len(),
            4,
            "the empty message is left out"
        );

        // head, four messages, the closing brackets.
        assert_eq!(parts.chunks.len(), 6);
        let memo = |i: usize| options.messages[i].wire_chunk(WireFormat::AnthropicMessages, |_| unreachable!());
        // The first message's piece is its memo without the leading comma;
        // the others are their memos. No byte was copied.
        assert_eq!(parts.chunks[1].as_ptr(), memo(0)[1..].as_ptr());
        assert_eq!(parts.chunks[2].as_ptr(), memo(1).as_ptr());
        assert_eq!(parts.chunks[4].as_ptr(), memo(4).as_ptr());
        // The newest user message carries the cache breakpoint: rendered fresh.
        assert!(!options.messages[3].has_wire_bytes(WireFormat::AnthropicMessages));
        assert!(parts.chunks[3].starts_with(b",{\"role\":\"user\""));

        // Chat Completions: the system message goes with the head, and a
        // message of several wire messages (tool results) is one piece.
        let mut options = options;
        options.system = Some("Be brief.".into());
        options.messages.push(Message::new(
            crate::Role::User,
            ["t1", "t2"]
                .map(|id| crate::ContentBlock::ToolResult {
                    tool_use_id: id.into(),
                    content: crate::ToolResultContent::Text("done".into()),
                    is_error: false,
                })
                .to_vec(),
        ));
        let dialect = openai::Dialect::default();
        let chunks = openai::request_parts(&options, dialect);
        let joined: Vec<u8> = chunks.iter().flat_map(|c| c.iter().copied()).collect();
        assert_eq!(joined, openai::request_body(&options, dialect));
        let body: serde_json::Value = serde_json::from_slice(&joined).unwrap();
        let roles: Vec<&str> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(
            roles,
            ["system", "user", "assistant", "user", "assistant", "tool", "tool"]
        );
        let memo = |i: usize| options.messages[i].wire_chunk(WireFormat::OpenAiChat, |_| unreachable!());
        assert_eq!(
            chunks[1].as_ptr(),
            memo(0).as_ptr(),
            "after the system message, the first keeps its comma"
        );
        assert_eq!(chunks[5].as_ptr(), memo(5).as_ptr());
    }
}

mod errors {
    use std::time::{Duration, SystemTime};

    use crate::{
        ErrorKind, classify_status, classify_stream_error, retry_after_from_headers, retry_after_from_message,
    };

    #[test]
    fn retry_after_in_every_form() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(
            retry_after_from_headers(Some("250"), Some("7"), now),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            retry_after_from_headers(None, Some("7"), now),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            retry_after_from_headers(None, Some("1.5"), now),
            Some(Duration::from_millis(1500))
        );
        let date = httpdate::fmt_http_date(now + Duration::from_secs(42));
        assert_eq!(
            retry_after_from_headers(None, Some(&date), now),
            Some(Duration::from_secs(42))
        );
        let past = httpdate::fmt_http_date(now - Duration::from_secs(42));
        assert_eq!(retry_after_from_headers(None, Some(&past), now), Some(Duration::ZERO));
        assert_eq!(retry_after_from_headers(None, Some("soon"), now), None);
        assert_eq!(retry_after_from_headers(Some("-1"), None, now), None);
        assert_eq!(
            retry_after_from_message("Please try again in 20ms."),
            Some(Duration::from_millis(20))
        );
        assert_eq!(
            retry_after_from_message("Please try again in 6.5s."),
            Some(Duration::from_millis(6500))
        );
        assert_eq!(
            retry_after_from_message("Please try again in 1m."),
            Some(Duration::from_secs(60))
        );
        assert_eq!(retry_after_from_message("no hint here"), None);
    }

    #[test]
    fn classification() {
        assert_eq!(classify_status(429, None, ""), ErrorKind::RateLimited);
        assert_eq!(classify_status(529, None, ""), ErrorKind::Overloaded);
        // Ollama's unknown model: the 404 wins over the body's `api_error`.
        assert_eq!(
            classify_status(404, Some("api_error"), "model \"nope\" not found, try pulling it first"),
            ErrorKind::InvalidRequest
        );
        assert_eq!(classify_status(503, None, ""), ErrorKind::Server);
        assert_eq!(
            classify_status(400, Some("invalid_request_error"), "prompt is too long"),
            ErrorKind::ContextExceeded
        );
        assert_eq!(
            classify_status(400, Some("context_length_exceeded"), ""),
            ErrorKind::ContextExceeded
        );
        // llama.cpp's server, as it answered a prompt past its window here.
        assert_eq!(
            classify_status(
                400,
                Some("exceed_context_size_error"),
                "request (8759 tokens) exceeds the available context size (8192 tokens), try increasing it"
            ),
            ErrorKind::ContextExceeded
        );
        assert_eq!(classify_status(429, Some("insufficient_quota"), ""), ErrorKind::Quota);
        assert_eq!(
            classify_status(404, Some("not_found_error"), "model: nope"),
            ErrorKind::InvalidRequest
        );
        assert_eq!(
            classify_stream_error(Some("overloaded_error"), "Overloaded"),
            ErrorKind::Overloaded
        );
        assert_eq!(classify_stream_error(Some("api_error"), ""), ErrorKind::Server);
        assert!(ErrorKind::Transport.is_retryable() && !ErrorKind::Auth.is_retryable());
    }
}

mod pricing {
    use crate::{ModelPrice, Pricing, TurnUsage};

    #[test]
    fn cost_by_model_prefix_and_unknown_models_have_none() {
        let pricing = Pricing::new();
        let usage = TurnUsage {
            input: 1_000_000,
            output: 100_000,
            cache_read: 2_000_000,
            cache_creation: 400_000,
            ..Default::default()
        };
        // Sonnet: 3 in, 15 out, 0.30 read, 3.75 write (5m).
        let cost = pricing.cost("claude-sonnet-4-5-20250929", &usage).unwrap();
        assert!((cost - (3.0 + 1.5 + 0.6 + 1.5)).abs() < 1e-9, "{cost}");
        let split = TurnUsage {
            cache_creation_5m: Some(100_000),
            cache_creation_1h: Some(300_000),
            ..usage.clone()
        };
        let cost = pricing.cost("claude-sonnet-4-5", &split).unwrap();
        assert!((cost - (3.0 + 1.5 + 0.6 + 0.375 + 1.8)).abs() < 1e-9, "{cost}");
        assert!(pricing.price("gpt-4o-mini-2024-07-18").unwrap().input < pricing.price("gpt-4o").unwrap().input);
        assert!(pricing.price("openai/gpt-4o").is_some(), "OpenRouter ids match");
        assert_eq!(pricing.cost("my-local-llama", &usage), None);
        let custom = Pricing::new().with(
            "my-local",
            ModelPrice {
                input: 0.0,
                output: 0.0,
                cache_write_5m: 0.0,
                cache_write_1h: 0.0,
                cache_read: 0.0,
            },
        );
        assert_eq!(custom.cost("my-local-llama", &usage), Some(0.0));
    }
}

mod abort {
    use crate::AbortController;

    #[test]
    fn children_follow_their_parent_but_not_the_reverse() {
        let run = AbortController::new();
        let call = run.signal().child();
        let other = run.signal().child();
        assert!(call.abort(Some("cancel one call")));
        assert!(call.signal().is_aborted() && !run.signal().is_aborted() && !other.signal().is_aborted());
        assert!(run.abort(None));
        assert!(!run.abort(Some("late")), "the first abort wins");
        assert!(other.signal().is_aborted());
        assert_eq!(other.signal().reason(), None);
        assert_eq!(call.signal().reason().as_deref(), Some("cancel one call"));
        let late_child = run.signal().child();
        assert!(
            late_child.signal().is_aborted(),
            "a child of an aborted signal starts aborted"
        );
    }
}

#[cfg(feature = "test-util")]
mod scripted {
    use std::time::Duration;

    use futures_core::Stream;
    use serde_json::json;
    use tokio::time::Instant;

    use crate::scripted::{Script, ScriptedProvider, Step};
    use crate::{
        AbortController, ErrorKind, FinishReason, Message, MessageAccumulator, Provider, ProviderError, StreamOptions,
    };

    async fn drain(
        provider: &ScriptedProvider,
        signal: crate::AbortSignal,
    ) -> Result<crate::AssistantMessage, ProviderError> {
        let mut stream = provider.stream(&StreamOptions::new("m", vec![Message::user("hi")]), signal);
        let mut acc = MessageAccumulator::new();
        while let Some(event) = std::future::poll_fn(|cx| std::pin::Pin::new(&mut stream).poll_next(cx)).await {
            acc.push(&event?);
        }
        Ok(acc.finish())
    }

    #[tokio::test(start_paused = true)]
    async fn scripts_play_in_order_with_virtual_delays() {
        let provider = ScriptedProvider::new(
            "mock",
            [
                Script::new()
                    .delay(Duration::from_secs(3))
                    .text("slow")
                    .end(FinishReason::Stop),
                Script::call("c1", "shell", json!({"cmd": "ls"})),
                Script::new()
                    .text("partial")
                    .error(ProviderError::new(ErrorKind::Overloaded, "mock", "Overloaded")),
            ],
        );
        let t0 = Instant::now();
        assert_eq!(
            drain(&provider, crate::AbortSignal::never()).await.unwrap().text(),
            "slow"
        );
        assert_eq!(t0.elapsed(), Duration::from_secs(3));
        let call = drain(&provider, crate::AbortSignal::never()).await.unwrap();
        assert_eq!(call.tool_calls().count(), 1);
        assert_eq!(
            drain(&provider, crate::AbortSignal::never()).await.unwrap_err().kind(),
            ErrorKind::Overloaded
        );
        assert_eq!(
            drain(&provider, crate::AbortSignal::never()).await.unwrap_err().kind(),
            ErrorKind::InvalidRequest
        );
        assert_eq!(provider.requests().len(), 4);
    }

    #[tokio::test(start_paused = true)]
    async fn a_hanging_script_ends_on_abort() {
        let provider = ScriptedProvider::new("mock", [Script::new().text("a").then(Step::Hang)]);
        let controller = AbortController::new();
        let signal = controller.signal();
        let aborter = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(60)).await;
            controller.abort(Some("stop"));
        });
        let err = drain(&provider, signal).await.unwrap_err();
        assert_eq!((err.kind(), err.message()), (ErrorKind::Aborted, "stop"));
        aborter.await.unwrap();
    }
}

#[test]
fn a_turn_and_its_message_share_one_copy_of_the_blocks() {
    let turn = SessionTurn {
        id: "t".into(),
        role: Role::User,
        content: vec![ContentBlock::text("a long tool result")].into(),
        created_at: crate::Timestamp::EPOCH,
        usage: None,
    };
    let message = turn.to_message();
    assert!(message.shared_content().ptr_eq(&turn.content), "no block was copied");
    let copy = turn.clone();
    assert!(copy.content.ptr_eq(&turn.content), "a copy of a turn copies no block");
    // Editing copies first, so the original stays as it was.
    let mut edited = message.clone();
    edited.content_mut().push(ContentBlock::text("more"));
    assert_eq!(turn.content.len(), 1);
    assert_eq!(
        serde_json::to_value(&turn.content).unwrap(),
        serde_json::json!([{"type": "text", "text": "a long tool result"}])
    );
}

mod accumulator {
    use crate::{ContentBlock, FinishReason, MessageAccumulator, StreamEvent};

    #[test]
    fn text_kept_elsewhere_returns_to_its_blocks_in_order() {
        let mut acc = MessageAccumulator::new();
        acc.push_text_elsewhere(0);
        acc.push(&StreamEvent::ToolCallStart {
            index: 1,
            id: "c1".into(),
            name: "echo".into(),
        });
        acc.push(&StreamEvent::ToolCallDelta {
            index: 1,
            json: "{}".into(),
        });
        acc.push(&StreamEvent::ToolCallEnd { index: 1 });
        acc.push_text_elsewhere(2);
        acc.push(&StreamEvent::End {
            finish_reason: FinishReason::ToolCalls,
            raw_reason: None,
        });
        let message = acc.finish_with_text(vec![(0, "before".into()), (2, "after".into())]);
        assert_eq!(
            message.content,
            vec![
                ContentBlock::text("before"),
                ContentBlock::ToolUse {
                    id: "c1".into(),
                    name: "echo".into(),
                    input: serde_json::json!({})
                },
                ContentBlock::text("after"),
            ]
        );
    }
}

mod compact_delta {
    use bytes::Bytes;

    use crate::StreamEvent;
    use crate::anthropic::{Decoder, compact_delta};
    use crate::sse::SseEvent;

    fn decode(data: &str) -> Vec<StreamEvent> {
        let mut decoder = Decoder::new("anthropic");
        let start = r#"{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"t1","name":"echo","input":{}}}"#;
        let mut out = Vec::new();
        for data in [start, data] {
            let sse = SseEvent {
                event: Some(Bytes::from_static(b"content_block_delta")),
                data: Bytes::copy_from_slice(data.as_bytes()),
                id: None,
                retry: None,
            };
            decoder.decode(&sse, &mut out).unwrap();
        }
        out.remove(0);
        out
    }

    /// The same event with a space after each comma: valid JSON the fast
    /// path never takes.
    fn spaced(data: &str) -> String {
        data.replacen(",\"", ", \"", 2)
    }

    #[test]
    fn the_compact_layout_is_read_directly_and_agrees_with_the_envelope() {
        let cases = [
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello there!"}}"#,
            r#"{"type":"content_block_delta","index":12,"delta":{"type":"text_delta","text":"caf\u00e9 \"quoted\"\n\\ é 𝄞"}}"#,
            r#"{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"text\": \"a"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me see."}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""}}"#,
        ];
        for data in cases {
            assert!(compact_delta(data.as_bytes()).is_some(), "{data}");
            let spaced = spaced(data);
            assert!(compact_delta(spaced.as_bytes()).is_none(), "{spaced}");
            assert_eq!(decode(data), decode(&spaced), "{data}");
        }
        assert_eq!(
            decode(cases[1]),
            vec![StreamEvent::TextDelta {
                index: 12,
                text: "café \"quoted\"\n\\ é 𝄞".into()
            }]
        );
    }

    #[test]
    fn anything_else_takes_the_envelope() {
        for data in [
            // A quote that closes the string early, then more fields.
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a","extra":"b"}}"#,
            // A leading zero, which JSON does not allow.
            r#"{"type":"content_block_delta","index":01,"delta":{"type":"text_delta","text":"a"}}"#,
            // A raw control character, which JSON does not allow in a string.
            "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\tb\"}}",
            // A string that never ends.
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2ln"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}} "#,
        ] {
            assert!(compact_delta(data.as_bytes()).is_none(), "{data}");
        }
    }
}

mod prompt_progress {
    use bytes::Bytes;
    use serde_json::{Value, json};

    use crate::sse::SseEvent;
    use crate::{Message, ProviderDiagnostic, StreamEvent, StreamOptions, openai};

    /// llama.cpp is asked for its prompt progress only when the dialect says
    /// so, and each report (a chunk with no choices, as the server sends it)
    /// becomes a `prompt-progress` diagnostic with the numbers.
    #[test]
    fn asked_for_and_read() {
        let options = StreamOptions::new("m", vec![Message::user("hi")]);
        let plain: Value = serde_json::from_slice(&openai::request_body(&options, openai::Dialect::default())).unwrap();
        assert!(plain.get("return_progress").is_none());
        let dialect = openai::Dialect {
            prompt_progress: true,
            ..openai::Dialect::default()
        };
        let asked: Value = serde_json::from_slice(&openai::request_body(&options, dialect)).unwrap();
        assert_eq!(asked["return_progress"], json!(true));

        let mut decoder = openai::Decoder::new("local");
        let mut out = Vec::new();
        let chunk = r#"{"choices":[],"created":1,"id":"c","model":"q","object":"chat.completion.chunk","prompt_progress":{"total":4187,"cache":1024,"processed":2048,"time_ms":5120}}"#;
        decoder
            .decode(
                &SseEvent {
                    event: None,
                    data: Bytes::from_static(chunk.as_bytes()),
                    id: None,
                    retry: None,
                },
                &mut out,
            )
            .unwrap();
        assert_eq!(
            out[1],
            StreamEvent::Diagnostic(ProviderDiagnostic {
                kind: "prompt-progress".into(),
                message: "read 2048 of 4187 prompt tokens (1024 from the cache)".into(),
                data: json!({"total": 4187, "cache": 1024, "processed": 2048, "time_ms": 5120}),
            })
        );
    }
}
