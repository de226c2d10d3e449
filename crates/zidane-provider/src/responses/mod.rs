//! The OpenAI Responses API wire format (`POST /v1/responses`, streamed):
//! the request body and the decoder of its semantic events.
//!
//! Requests are stateless (`store: false`): the whole conversation goes in
//! `input` each turn. Reasoning items come back with their
//! `encrypted_content` (asked for with `include`), are kept in the
//! conversation as [`ContentBlock::Unknown`] holding the item, and are sent
//! back verbatim, so a reasoning model keeps its reasoning across turns and
//! tool calls. Their summaries stream as thinking.

use bytes::Bytes;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::error::{ErrorKind, ProviderError, classify_stream_error};
use crate::event::{ProviderDiagnostic, StreamEvent, UsageReport};
use crate::message::{ContentBlock, DocumentSource, ImageSource, Role, ToolResultContent};
use crate::options::{StreamOptions, ThinkingLevel, ToolChoice};
use crate::provider::Capabilities;
use crate::sse::SseEvent;
use crate::usage::FinishReason;
use crate::wire::{WireDecoder, WireProtocol, WireRequest};

/// Whether a block is a Responses reasoning item kept for replay.
pub fn is_reasoning_item(block: &ContentBlock) -> bool {
    matches!(block, ContentBlock::Unknown(raw) if raw["type"] == "reasoning")
}

/// The JSON body of a streamed `POST /responses`.
pub fn request_body(options: &StreamOptions) -> Bytes {
    let mut body = Map::new();
    body.insert("model".into(), options.model.clone().into());
    body.insert("stream".into(), true.into());
    body.insert("store".into(), false.into());
    if let Some((head, tail)) = options.system_halves() {
        body.insert(
            "instructions".into(),
            format!("{head}{}", tail.unwrap_or_default()).into(),
        );
    }
    body.insert("input".into(), Value::Array(input_items(options)));
    if !options.tools.is_empty() {
        let tools: Vec<Value> = options
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.input_schema,
                    "strict": false,
                })
            })
            .collect();
        body.insert("tools".into(), tools.into());
    }
    if let Some(choice) = &options.tool_choice {
        let choice = match choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::Any => json!("required"),
            ToolChoice::None => json!("none"),
            ToolChoice::Tool { name } => json!({"type": "function", "name": name}),
        };
        body.insert("tool_choice".into(), choice);
    }
    if let Some(max) = options.max_tokens {
        body.insert("max_output_tokens".into(), max.into());
    }
    if let Some(t) = options.temperature {
        body.insert("temperature".into(), f64::from(t).into());
    }
    if let Some(effort) = effort(options.thinking) {
        body.insert("reasoning".into(), json!({"effort": effort, "summary": "auto"}));
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    if let Some(schema) = &options.response_schema {
        body.insert(
            "text".into(),
            json!({"format": {"type": "json_schema", "name": "output", "schema": schema, "strict": true}}),
        );
    }
    Bytes::from(Value::Object(body).to_string())
}

fn effort(level: ThinkingLevel) -> Option<&'static str> {
    match level {
        ThinkingLevel::Off => None,
        ThinkingLevel::Minimal => Some("minimal"),
        ThinkingLevel::Low => Some("low"),
        ThinkingLevel::Medium => Some("medium"),
        ThinkingLevel::High => Some("high"),
    }
}

/// The conversation as `input` items: messages, function calls and their
/// outputs, and reasoning items, in order.
fn input_items(options: &StreamOptions) -> Vec<Value> {
    let mut items = Vec::new();
    for message in &options.messages {
        match message.role() {
            Role::User => {
                let mut parts = Vec::new();
                for block in message.content() {
                    match block {
                        ContentBlock::ToolResult {
                            tool_use_id, content, ..
                        } => items.push(json!({
                            "type": "function_call_output",
                            "call_id": tool_use_id,
                            "output": result_output(content),
                        })),
                        other => parts.extend(user_part(other)),
                    }
                }
                if !parts.is_empty() {
                    items.push(json!({"type": "message", "role": "user", "content": parts}));
                }
            }
            Role::Assistant => {
                let mut text = String::new();
                let flush = |text: &mut String, items: &mut Vec<Value>| {
                    if !text.is_empty() {
                        items.push(json!({"type": "message", "role": "assistant", "content": std::mem::take(text)}));
                    }
                };
                for block in message.content() {
                    match block {
                        ContentBlock::Text { text: t } => text.push_str(t),
                        ContentBlock::ToolUse { id, name, input } => {
                            flush(&mut text, &mut items);
                            items.push(json!({
                                "type": "function_call",
                                "call_id": id,
                                "name": name,
                                "arguments": input.to_string(),
                            }));
                        }
                        ContentBlock::Unknown(raw) if raw["type"] == "reasoning" => {
                            flush(&mut text, &mut items);
                            items.push(raw.clone());
                        }
                        // Another provider's reasoning cannot be replayed here.
                        _ => {}
                    }
                }
                flush(&mut text, &mut items);
            }
        }
    }
    items
}

fn user_part(block: &ContentBlock) -> Option<Value> {
    Some(match block {
        ContentBlock::Text { text } if !text.is_empty() => json!({"type": "input_text", "text": text}),
        ContentBlock::Image { source } => {
            let url = match source {
                ImageSource::Url { url } => url.clone(),
                ImageSource::Base64 { media_type, data } => format!("data:{media_type};base64,{data}"),
            };
            json!({"type": "input_image", "image_url": url, "detail": "auto"})
        }
        ContentBlock::Document { source, title } => match source {
            DocumentSource::Base64 { media_type, data } => json!({
                "type": "input_file",
                "filename": title.clone().unwrap_or_else(|| "document.pdf".into()),
                "file_data": format!("data:{media_type};base64,{data}"),
            }),
            DocumentSource::Url { url } => json!({"type": "input_file", "file_url": url}),
            DocumentSource::Text { data, .. } => json!({"type": "input_text", "text": data}),
        },
        ContentBlock::ContentRef { reference, kind, .. } => {
            json!({"type": "input_text", "text": crate::message::unresolved_ref_text(reference, kind)})
        }
        _ => return None,
    })
}

/// A tool's output: its text, or (when it holds an image) its parts as
/// `input_text` / `input_image` items.
fn result_output(content: &ToolResultContent) -> Value {
    match content {
        ToolResultContent::Parts(parts) if parts.iter().any(|p| matches!(p, ContentBlock::Image { .. })) => {
            Value::Array(parts.iter().filter_map(user_part).collect())
        }
        other => Value::String(result_text(other)),
    }
}

fn result_text(content: &ToolResultContent) -> String {
    match content {
        ToolResultContent::Text(text) => text.clone(),
        ToolResultContent::Parts(parts) => parts
            .iter()
            .filter_map(|p| match p {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type", default)]
    ty: String,
    output_index: Option<usize>,
    delta: Option<String>,
    item: Option<Value>,
    response: Option<Value>,
    code: Option<Value>,
    message: Option<String>,
}

/// Turns the Responses event stream into [`StreamEvent`]s. `index` is the
/// output item's `output_index`.
#[derive(Debug, Default)]
pub struct Decoder {
    provider: String,
    started: bool,
    calls: Vec<usize>,
    refusal: Option<String>,
    ended: bool,
}

impl Decoder {
    /// A decoder for a stream of `provider`.
    pub fn new(provider: impl Into<String>) -> Self {
        Decoder {
            provider: provider.into(),
            ..Default::default()
        }
    }

    /// Whether `response.completed` (or `response.incomplete`) arrived.
    pub fn is_ended(&self) -> bool {
        self.ended
    }

    /// Decodes one server-sent event into `out`. Unknown event types are
    /// skipped; `error` and `response.failed` become classified errors.
    pub fn decode(&mut self, sse: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let ev: Event = serde_json::from_slice(&sse.data).map_err(|e| {
            ProviderError::new(
                ErrorKind::InvalidResponse,
                &self.provider,
                format!("event data is not valid JSON: {e}"),
            )
        })?;
        let index = ev.output_index.unwrap_or(0);
        match ev.ty.as_str() {
            "response.created" => {
                let response = ev.response.unwrap_or_default();
                self.start(&response, out);
            }
            "response.output_item.added" => {
                let item = ev.item.unwrap_or_default();
                if item["type"] == "function_call" {
                    self.calls.push(index);
                    out.push(StreamEvent::ToolCallStart {
                        index,
                        id: str_of(&item, "call_id"),
                        name: str_of(&item, "name"),
                    });
                    if let Some(args) = item["arguments"].as_str().filter(|a| !a.is_empty()) {
                        out.push(StreamEvent::ToolCallDelta {
                            index,
                            json: args.to_owned(),
                        });
                    }
                }
            }
            "response.output_text.delta" => {
                if let Some(text) = ev.delta.filter(|t| !t.is_empty()) {
                    out.push(StreamEvent::TextDelta { index, text });
                }
            }
            "response.refusal.delta" => {
                if let Some(text) = ev.delta.filter(|t| !t.is_empty()) {
                    self.refusal.get_or_insert_default().push_str(&text);
                    out.push(StreamEvent::TextDelta { index, text });
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                if let Some(text) = ev.delta.filter(|t| !t.is_empty()) {
                    out.push(StreamEvent::ThinkingDelta { index, text });
                }
            }
            "response.function_call_arguments.delta" => {
                if let Some(json) = ev.delta.filter(|t| !t.is_empty()) {
                    out.push(StreamEvent::ToolCallDelta { index, json });
                }
            }
            "response.output_item.done" => {
                let item = ev.item.unwrap_or_default();
                match item["type"].as_str() {
                    Some("function_call") => out.push(StreamEvent::ToolCallEnd { index }),
                    Some("reasoning") => out.push(StreamEvent::OtherBlock {
                        index,
                        block: replayable_reasoning(item),
                    }),
                    _ => {}
                }
            }
            "response.completed" | "response.incomplete" => {
                let response = ev.response.unwrap_or_default();
                self.start(&response, out);
                self.end(&response, out);
            }
            "response.failed" => {
                let response = ev.response.unwrap_or_default();
                let error = &response["error"];
                let code = error["code"].as_str().map(str::to_owned);
                let message = error["message"].as_str().unwrap_or("the response failed").to_owned();
                let kind = classify_stream_error(code.as_deref(), &message);
                return Err(ProviderError::new(kind, &self.provider, message).with_error_type(code));
            }
            "error" => {
                let code = ev.code.as_ref().and_then(Value::as_str).map(str::to_owned);
                let message = ev.message.unwrap_or_default();
                let kind = classify_stream_error(code.as_deref(), &message);
                return Err(ProviderError::new(kind, &self.provider, message).with_error_type(code));
            }
            _ => {}
        }
        Ok(())
    }

    fn start(&mut self, response: &Value, out: &mut Vec<StreamEvent>) {
        if self.started {
            return;
        }
        self.started = true;
        out.push(StreamEvent::Start {
            id: response["id"].as_str().map(str::to_owned),
            model: response["model"].as_str().map(str::to_owned),
        });
    }

    fn end(&mut self, response: &Value, out: &mut Vec<StreamEvent>) {
        if self.ended {
            return;
        }
        self.ended = true;
        let usage = &response["usage"];
        if usage.is_object() {
            let cached = usage["input_tokens_details"]["cached_tokens"].as_u64().unwrap_or(0);
            out.push(StreamEvent::Usage(UsageReport {
                input: usage["input_tokens"].as_u64().map(|i| i.saturating_sub(cached)),
                output: usage["output_tokens"].as_u64(),
                cache_read: Some(cached),
                cache_creation: Some(
                    usage["input_tokens_details"]["cache_write_tokens"]
                        .as_u64()
                        .unwrap_or(0),
                ),
                ..Default::default()
            }));
        }
        let incomplete = response["incomplete_details"]["reason"].as_str();
        let finish_reason = match incomplete {
            Some("max_output_tokens") => FinishReason::Length,
            Some("content_filter") => FinishReason::Refusal,
            _ if self.refusal.is_some() => FinishReason::Refusal,
            _ if !self.calls.is_empty() => FinishReason::ToolCalls,
            _ => FinishReason::Stop,
        };
        if let Some(refusal) = self.refusal.take() {
            out.push(StreamEvent::Diagnostic(ProviderDiagnostic {
                kind: "refusal".into(),
                message: refusal,
                data: json!({"refusal": true}),
            }));
        }
        if incomplete == Some("content_filter") {
            out.push(StreamEvent::Diagnostic(ProviderDiagnostic {
                kind: "content-filter".into(),
                message: "the provider's content filter stopped the answer".into(),
                data: response["incomplete_details"].clone(),
            }));
        }
        let raw = incomplete
            .map(str::to_owned)
            .or_else(|| response["status"].as_str().map(str::to_owned));
        out.push(StreamEvent::End {
            finish_reason,
            raw_reason: raw,
        });
    }
}

/// A finished reasoning item as it can go back in `input`: its id, summary
/// and encrypted content (the status and any raw text stay behind).
fn replayable_reasoning(item: Value) -> Value {
    let mut kept = Map::new();
    kept.insert("type".into(), "reasoning".into());
    for key in ["id", "summary", "encrypted_content"] {
        if let Some(value) = item.get(key).filter(|v| !v.is_null()) {
            kept.insert(key.into(), value.clone());
        }
    }
    kept.entry("summary").or_insert_with(|| json!([]));
    Value::Object(kept)
}

fn str_of(item: &Value, key: &str) -> String {
    item[key].as_str().unwrap_or_default().to_owned()
}

impl WireDecoder for Decoder {
    fn decode(&mut self, sse: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        Decoder::decode(self, sse, out)
    }

    fn finish(&mut self, _out: &mut Vec<StreamEvent>) -> bool {
        self.is_ended()
    }
}

/// OpenAI's Responses API (`POST {base}/responses`, streamed, stateless).
#[derive(Debug, Clone, Copy, Default)]
pub struct Responses;

impl WireProtocol for Responses {
    type Decoder = Decoder;

    fn request(&self, options: &StreamOptions) -> WireRequest {
        WireRequest {
            path: "/responses",
            headers: Vec::new(),
            body: vec![request_body(options)],
        }
    }

    fn decoder(&self, provider: &str) -> Decoder {
        Decoder::new(provider)
    }

    fn capabilities(&self) -> Capabilities {
        crate::openai::CAPABILITIES
    }
}
