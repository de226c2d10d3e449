//! The Anthropic stream: its server-sent events turned into
//! [`StreamEvent`]s.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::{ErrorKind, ProviderError, classify_stream_error};
use crate::event::{ProviderDiagnostic, StreamEvent, UsageReport};
use crate::sse::SseEvent;
use crate::usage::FinishReason;
use crate::wire::WireDecoder;

// ---------------------------------------------------------------------------
// The streamed response.

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(rename = "type", borrow)]
    ty: Cow<'a, str>,
    index: Option<usize>,
    #[serde(borrow)]
    delta: Option<Delta<'a>>,
    #[serde(borrow)]
    content_block: Option<&'a RawValue>,
    #[serde(borrow)]
    message: Option<&'a RawValue>,
    usage: Option<WireUsage>,
    error: Option<WireError>,
    /// On the final `message_delta` too (after a server-side fallback,
    /// with the serving model's entries).
    #[serde(default)]
    input_transformations: Option<Vec<Value>>,
}

#[derive(Deserialize, Default)]
pub(crate) struct Delta<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: Option<Cow<'a, str>>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow)]
    signature: Option<Cow<'a, str>>,
    #[serde(borrow)]
    partial_json: Option<Cow<'a, str>>,
    #[serde(borrow)]
    stop_reason: Option<Cow<'a, str>>,
    /// Why a refusal happened (`type`, `category`, `explanation`).
    #[serde(default)]
    stop_details: Option<Value>,
}

/// The three deltas that make up nearly all of a stream (text, reasoning
/// and tool input), read straight from the compact layout the API writes:
/// `{"type":"content_block_delta","index":N,"delta":{"type":"text_delta","text":"…"}}`.
/// Anything else, the same event laid out another way included, gives
/// `None` and goes through the general envelope, so both paths agree on
/// every input.
pub(crate) fn compact_delta(data: &[u8]) -> Option<(usize, Delta<'_>)> {
    const HEAD: &[u8] = br#"{"type":"content_block_delta","index":"#;
    const KINDS: [(&str, &[u8]); 3] = [
        ("text_delta", br#"text_delta","text":"#),
        ("input_json_delta", br#"input_json_delta","partial_json":"#),
        ("thinking_delta", br#"thinking_delta","thinking":"#),
    ];
    let rest = data.strip_prefix(HEAD)?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    // JSON numbers carry no leading zero.
    if digits == 0 || digits > 9 || (digits > 1 && rest[0] == b'0') {
        return None;
    }
    let index = rest[..digits]
        .iter()
        .fold(0usize, |n, d| n * 10 + usize::from(d - b'0'));
    let rest = rest[digits..].strip_prefix(br#","delta":{"type":""#)?;
    let (ty, rest) = KINDS
        .iter()
        .find_map(|(ty, tag)| rest.strip_prefix(*tag).map(|rest| (*ty, rest)))?;
    let quoted = rest.strip_suffix(b"}}")?;
    let inner = quoted.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    let value = if inner.iter().all(|&b| b != b'"' && b != b'\\' && b >= 0x20) {
        Cow::Borrowed(std::str::from_utf8(inner).ok()?)
    } else {
        // Escapes; or a quote that ends the string early, which the parser
        // refuses as trailing characters.
        Cow::Owned(serde_json::from_slice::<String>(quoted).ok()?)
    };
    let mut delta = Delta {
        ty: Some(Cow::Borrowed(ty)),
        ..Delta::default()
    };
    match ty {
        "text_delta" => delta.text = Some(value),
        "input_json_delta" => delta.partial_json = Some(value),
        _ => delta.thinking = Some(value),
    }
    Some((index, delta))
}

#[derive(Deserialize, Default)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    cache_creation: Option<WireCacheCreation>,
    /// The state of the credit a server-side fallback earned.
    #[serde(default)]
    fallback_credit: Option<Value>,
}

#[derive(Deserialize, Default)]
struct WireCacheCreation {
    ephemeral_5m_input_tokens: Option<u64>,
    ephemeral_1h_input_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct WireError {
    #[serde(rename = "type")]
    ty: Option<String>,
    message: Option<String>,
}

#[derive(Deserialize)]
struct WireMessage {
    id: Option<String>,
    model: Option<String>,
    usage: Option<WireUsage>,
    /// What the API changed in the request's input before sampling.
    #[serde(default)]
    input_transformations: Option<Vec<Value>>,
}

impl WireUsage {
    fn report(&self) -> UsageReport {
        UsageReport {
            input: self.input_tokens,
            output: self.output_tokens,
            cache_read: self.cache_read_input_tokens,
            cache_creation: self.cache_creation_input_tokens,
            cache_creation_5m: self.cache_creation.as_ref().and_then(|c| c.ephemeral_5m_input_tokens),
            cache_creation_1h: self.cache_creation.as_ref().and_then(|c| c.ephemeral_1h_input_tokens),
        }
    }
}

#[derive(Debug)]
enum Block {
    Text,
    Thinking,
    Tool,
    ServerTool {
        id: String,
        name: String,
        input: Value,
        json: String,
    },
    ServerResult {
        tool_use_id: String,
        kind: String,
        content: Value,
    },
    Other(Value),
    Ignored,
}

/// Turns the Anthropic event stream into [`StreamEvent`]s.
#[derive(Debug, Default)]
pub struct Decoder {
    provider: String,
    blocks: Vec<(usize, Block)>,
    stop_reason: Option<String>,
    ended: bool,
}

impl Decoder {
    /// A decoder for a stream of `provider` (the name errors carry).
    pub fn new(provider: impl Into<String>) -> Self {
        Decoder {
            provider: provider.into(),
            ..Default::default()
        }
    }

    /// Whether `message_stop` arrived.
    pub fn is_ended(&self) -> bool {
        self.ended
    }

    /// Decodes one server-sent event, appending what it means to `out`.
    ///
    /// Unknown event and block types are skipped; an `error` event becomes a
    /// classified error; data that is not JSON is an
    /// [`ErrorKind::InvalidResponse`] error.
    pub fn decode(&mut self, sse: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if sse.event.as_deref() != Some(b"error")
            && let Some((index, delta)) = compact_delta(&sse.data)
        {
            self.delta(index, Some(delta), &sse.data, out);
            return Ok(());
        }
        let env: Envelope<'_> = serde_json::from_slice(&sse.data).map_err(|e| {
            ProviderError::new(
                ErrorKind::InvalidResponse,
                &self.provider,
                format!("event data is not valid JSON: {e}"),
            )
        })?;
        // An `error` event in the flat shape compatible servers send
        // (llama.cpp: `{"code":500,"message":"…","type":"server_error"}`).
        if sse.event_type() == "error" && env.ty != "error" {
            let message = env
                .message
                .and_then(|m| serde_json::from_str::<String>(m.get()).ok())
                .unwrap_or_else(|| String::from_utf8_lossy(&sse.data).into_owned());
            let ty = Some(env.ty.into_owned());
            let kind = classify_stream_error(ty.as_deref(), &message);
            return Err(ProviderError::new(kind, &self.provider, message).with_error_type(ty));
        }
        match env.ty.as_ref() {
            "content_block_delta" => self.delta(env.index.unwrap_or(0), env.delta, &sse.data, out),
            "message_start" => {
                if let Some(raw) = env.message
                    && let Ok(message) = serde_json::from_str::<WireMessage>(raw.get())
                {
                    out.push(StreamEvent::Start {
                        id: message.id,
                        model: message.model,
                    });
                    if let Some(usage) = message.usage {
                        out.push(StreamEvent::Usage(usage.report()));
                    }
                    if let Some(changes) = message.input_transformations.filter(|c| !c.is_empty()) {
                        out.push(StreamEvent::InputTransformations(changes));
                    }
                }
            }
            "content_block_start" => {
                if let Some(raw) = env.content_block {
                    self.start(env.index.unwrap_or(0), raw, out);
                }
            }
            "content_block_stop" => self.stop(env.index.unwrap_or(0), out),
            "message_delta" => {
                if let Some(delta) = env.delta {
                    if let Some(reason) = delta.stop_reason {
                        self.stop_reason = Some(reason.into_owned());
                    }
                    if let Some(details) = delta.stop_details.filter(Value::is_object) {
                        out.push(StreamEvent::Diagnostic(stop_details(details)));
                    }
                }
                if let Some(mut usage) = env.usage {
                    out.push(StreamEvent::Usage(usage.report()));
                    if let Some(credit) = usage.fallback_credit.take().filter(|c| !c.is_null()) {
                        let status = credit["status"]["type"].as_str().unwrap_or("reported");
                        out.push(StreamEvent::Diagnostic(ProviderDiagnostic {
                            kind: "fallback-credit".into(),
                            message: format!("fallback credit {status}"),
                            data: credit,
                        }));
                    }
                }
                if let Some(changes) = env.input_transformations.filter(|c| !c.is_empty()) {
                    out.push(StreamEvent::InputTransformations(changes));
                }
            }
            "message_stop" => {
                self.ended = true;
                let raw = self.stop_reason.take();
                out.push(StreamEvent::End {
                    finish_reason: finish_reason(raw.as_deref()),
                    raw_reason: raw,
                });
            }
            "error" => {
                let (ty, message) = env.error.map(|e| (e.ty, e.message)).unwrap_or((None, None));
                let message = message.unwrap_or_default();
                let kind = classify_stream_error(ty.as_deref(), &message);
                return Err(ProviderError::new(kind, &self.provider, message).with_error_type(ty));
            }
            _ => {} // ping and future event types
        }
        Ok(())
    }

    fn block(&mut self, index: usize) -> Option<&mut Block> {
        self.blocks.iter_mut().rev().find(|(i, _)| *i == index).map(|(_, b)| b)
    }

    fn start(&mut self, index: usize, raw: &RawValue, out: &mut Vec<StreamEvent>) {
        let Ok(Value::Object(mut block)) = serde_json::from_str::<Value>(raw.get()) else {
            return;
        };
        let ty = block.get("type").and_then(Value::as_str).unwrap_or_default().to_owned();
        let take_str = |block: &mut serde_json::Map<String, Value>, key: &str| match block.remove(key) {
            Some(Value::String(s)) => s,
            _ => String::new(),
        };
        let state = match ty.as_str() {
            "text" => {
                let text = take_str(&mut block, "text");
                if !text.is_empty() {
                    out.push(StreamEvent::TextDelta { index, text });
                }
                Block::Text
            }
            "thinking" => {
                let text = take_str(&mut block, "thinking");
                if !text.is_empty() {
                    out.push(StreamEvent::ThinkingDelta { index, text });
                }
                let signature = take_str(&mut block, "signature");
                if !signature.is_empty() {
                    out.push(StreamEvent::ThinkingSignature { index, signature });
                }
                Block::Thinking
            }
            "redacted_thinking" => {
                out.push(StreamEvent::RedactedThinking {
                    index,
                    data: take_str(&mut block, "data"),
                });
                Block::Ignored
            }
            "tool_use" => {
                let id = take_str(&mut block, "id");
                let name = take_str(&mut block, "name");
                out.push(StreamEvent::ToolCallStart { index, id, name });
                // Some servers send the whole input here instead of deltas.
                match block.remove("input") {
                    Some(Value::Object(input)) if !input.is_empty() => {
                        out.push(StreamEvent::ToolCallDelta {
                            index,
                            json: Value::Object(input).to_string(),
                        });
                    }
                    _ => {}
                }
                Block::Tool
            }
            "server_tool_use" => Block::ServerTool {
                id: take_str(&mut block, "id"),
                name: take_str(&mut block, "name"),
                input: block.remove("input").unwrap_or(Value::Null),
                json: String::new(),
            },
            t if t.ends_with("_tool_result") => Block::ServerResult {
                tool_use_id: take_str(&mut block, "tool_use_id"),
                kind: ty.clone(),
                content: block.remove("content").unwrap_or(Value::Null),
            },
            _ => Block::Other(Value::Object(block)),
        };
        self.blocks.push((index, state));
    }

    fn delta(&mut self, index: usize, delta: Option<Delta<'_>>, raw: &[u8], out: &mut Vec<StreamEvent>) {
        let Some(delta) = delta else { return };
        match delta.ty.as_deref() {
            Some("text_delta") => {
                if let Some(text) = delta.text {
                    out.push(StreamEvent::TextDelta {
                        index,
                        text: text.into_owned(),
                    });
                }
            }
            Some("thinking_delta") => {
                if let Some(text) = delta.thinking {
                    out.push(StreamEvent::ThinkingDelta {
                        index,
                        text: text.into_owned(),
                    });
                }
            }
            Some("signature_delta") => {
                if let Some(signature) = delta.signature {
                    out.push(StreamEvent::ThinkingSignature {
                        index,
                        signature: signature.into_owned(),
                    });
                }
            }
            Some("input_json_delta") => {
                let json = delta.partial_json.unwrap_or_default();
                match self.block(index) {
                    Some(Block::ServerTool { json: buf, .. }) => buf.push_str(&json),
                    Some(Block::Tool) | None => {
                        if !json.is_empty() {
                            out.push(StreamEvent::ToolCallDelta {
                                index,
                                json: json.into_owned(),
                            });
                        }
                    }
                    Some(_) => {}
                }
            }
            _ => {
                // A delta for a block we keep as raw JSON: merge its fields,
                // appending strings (the way `compaction_delta` streams).
                if let Some(Block::Other(Value::Object(block))) = self.block(index)
                    && let Ok(Value::Object(env)) = serde_json::from_slice::<Value>(raw)
                    && let Some(Value::Object(fields)) = env.get("delta")
                {
                    for (key, value) in fields {
                        if key == "type" {
                            continue;
                        }
                        match (block.get_mut(key), value) {
                            (Some(Value::String(have)), Value::String(more)) => have.push_str(more),
                            _ => {
                                block.insert(key.clone(), value.clone());
                            }
                        }
                    }
                }
            }
        }
    }

    fn stop(&mut self, index: usize, out: &mut Vec<StreamEvent>) {
        let Some(pos) = self.blocks.iter().rposition(|(i, _)| *i == index) else {
            return;
        };
        let (_, block) = self.blocks.swap_remove(pos);
        match block {
            Block::Tool => out.push(StreamEvent::ToolCallEnd { index }),
            Block::ServerTool { id, name, input, json } => {
                let input = if json.trim().is_empty() {
                    input
                } else {
                    serde_json::from_str(&json).unwrap_or(Value::String(json))
                };
                out.push(StreamEvent::ServerToolUse { index, id, name, input });
            }
            Block::ServerResult {
                tool_use_id,
                kind,
                content,
            } => {
                out.push(StreamEvent::ServerToolResult {
                    index,
                    tool_use_id,
                    kind,
                    content,
                });
            }
            Block::Other(block) => {
                if block["type"] == "fallback" {
                    out.push(StreamEvent::Diagnostic(fallback(&block)));
                }
                out.push(StreamEvent::OtherBlock { index, block });
            }
            Block::Text | Block::Thinking | Block::Ignored => {}
        }
    }
}

/// `stop_details` as a diagnostic: a refusal's category and explanation.
fn stop_details(details: Value) -> ProviderDiagnostic {
    let kind = details["type"].as_str().unwrap_or("stop-details").to_owned();
    let mut message = match details["explanation"].as_str() {
        Some(explanation) => explanation.to_owned(),
        None if kind == "refusal" => "the model refused".to_owned(),
        None => format!("the model stopped ({kind})"),
    };
    if let Some(category) = details["category"].as_str() {
        message.push_str(&format!(" (category: {category})"));
    }
    ProviderDiagnostic {
        kind,
        message,
        data: details,
    }
}

/// A `fallback` block as a diagnostic: the server handed the turn to
/// another model.
fn fallback(block: &Value) -> ProviderDiagnostic {
    let model = |side: &str| block[side]["model"].as_str().unwrap_or("?").to_owned();
    let mut message = format!("the server handed the turn from {} to {}", model("from"), model("to"));
    if let Some(trigger) = block["trigger"]["type"].as_str() {
        message.push_str(&format!(" after a {trigger}"));
    }
    ProviderDiagnostic {
        kind: "fallback".into(),
        message,
        data: block.clone(),
    }
}

/// Maps an Anthropic `stop_reason`.
pub fn finish_reason(raw: Option<&str>) -> FinishReason {
    match raw {
        Some("tool_use") => FinishReason::ToolCalls,
        Some("max_tokens" | "model_context_window_exceeded") => FinishReason::Length,
        Some("pause_turn") => FinishReason::Pause,
        Some("refusal") => FinishReason::Refusal,
        _ => FinishReason::Stop,
    }
}

impl WireDecoder for Decoder {
    fn decode(&mut self, sse: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        Decoder::decode(self, sse, out)
    }

    fn finish(&mut self, _out: &mut Vec<StreamEvent>) -> bool {
        self.is_ended()
    }
}
