//! The OpenAI Chat Completions wire format (and the many servers that speak
//! it): request bodies and the streamed response, independent of any HTTP
//! client.

#[cfg(feature = "http")]
mod provider;

#[cfg(feature = "http")]
pub use provider::{OpenAiApi, OpenAiConfig, OpenAiProvider};

use std::borrow::Cow;

use bytes::Bytes;
use serde::Deserialize;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;

use crate::error::{ErrorKind, ProviderError, classify_stream_error};
use crate::event::{ProviderDiagnostic, StreamEvent, UsageReport};
use crate::message::{ContentBlock, DocumentSource, ImageSource, Message, Role, ToolResultContent, WireFormat};
use crate::options::{StreamOptions, ThinkingLevel, ToolChoice};
use crate::provider::Capabilities;
use crate::sse::SseEvent;
use crate::usage::FinishReason;
use crate::wire::{WireDecoder, WireProtocol, WireRequest};

/// Which field carries the output token limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MaxTokensField {
    /// `max_completion_tokens`, what OpenAI's reasoning models require.
    #[default]
    MaxCompletionTokens,
    /// `max_tokens`, what most compatible servers read.
    MaxTokens,
}

/// Wire choices that differ between OpenAI and compatible servers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dialect {
    /// The output-limit field.
    pub max_tokens_field: MaxTokensField,
    /// Whether `reasoning_effort` is sent for thinking levels.
    pub reasoning_effort: bool,
    /// Whether `return_progress: true` is sent: llama.cpp's server then
    /// streams how much of the prompt it has read (`prompt_progress`), each
    /// report a `prompt-progress` diagnostic. Other servers may refuse the
    /// field.
    pub prompt_progress: bool,
}

/// Builds the body of `POST {base}/chat/completions` with `stream: true` and
/// usage reporting. Every message reuses its memoized bytes.
pub fn request_body(options: &StreamOptions, dialect: Dialect) -> Bytes {
    let chunks = request_parts(options, dialect);
    let mut body = Vec::with_capacity(chunks.iter().map(Bytes::len).sum());
    for chunk in &chunks {
        body.extend_from_slice(chunk);
    }
    Bytes::from(body)
}

/// The body of [`request_body`] as its pieces, for sending without joining
/// them: the head (with the system message), each message's memoized bytes
/// as shared handles, and the closing brackets.
pub(crate) fn request_parts(options: &StreamOptions, dialect: Dialect) -> Vec<Bytes> {
    let header = Header {
        model: &options.model,
        stream: true,
        stream_options: StreamUsage { include_usage: true },
        max_completion_tokens: options
            .max_tokens
            .filter(|_| dialect.max_tokens_field == MaxTokensField::MaxCompletionTokens),
        max_tokens: options
            .max_tokens
            .filter(|_| dialect.max_tokens_field == MaxTokensField::MaxTokens),
        temperature: options.temperature,
        reasoning_effort: if dialect.reasoning_effort {
            reasoning_effort(options.thinking)
        } else {
            None
        },
        tools: ToolsWire(options),
        tool_choice: options.tool_choice.as_ref().map(ToolChoiceWire),
        response_format: options.response_schema.as_ref().map(ResponseFormat),
        return_progress: dialect.prompt_progress,
    };
    let mut body = Vec::with_capacity(4096);
    if serde_json::to_writer(&mut body, &header).is_err() {
        body.clear();
        body.extend_from_slice(b"{}");
    }
    body.pop();
    body.extend_from_slice(b",\"messages\":[");
    let mut first = true;
    if let Some((head, tail)) = options.system_halves() {
        let system = match tail {
            Some(tail) => Cow::Owned(format!("{head}{tail}")),
            None => Cow::Borrowed(head),
        };
        if !system.is_empty() {
            let _ = serde_json::to_writer(
                &mut body,
                &TextMessage {
                    role: "system",
                    content: &system,
                },
            );
            first = false;
        }
    }
    let mut chunks = Vec::with_capacity(options.messages.len() + 2);
    chunks.push(Bytes::from(body));
    for message in &options.messages {
        let part = message.wire_chunk(WireFormat::OpenAiChat, render_message);
        if part.is_empty() {
            continue;
        }
        chunks.push(if first { part.slice(1..) } else { part });
        first = false;
    }
    chunks.push(Bytes::from_static(b"]}"));
    chunks
}

fn reasoning_effort(level: ThinkingLevel) -> Option<&'static str> {
    match level {
        ThinkingLevel::Off => None,
        ThinkingLevel::Minimal => Some("minimal"),
        ThinkingLevel::Low => Some("low"),
        ThinkingLevel::Medium => Some("medium"),
        ThinkingLevel::High => Some("high"),
    }
}

#[derive(serde::Serialize)]
struct Header<'a> {
    model: &'a str,
    stream: bool,
    stream_options: StreamUsage,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'static str>,
    #[serde(skip_serializing_if = "ToolsWire::is_empty")]
    tools: ToolsWire<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<ToolChoiceWire<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<ResponseFormat<'a>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    return_progress: bool,
}

#[derive(serde::Serialize)]
struct StreamUsage {
    include_usage: bool,
}

#[derive(serde::Serialize)]
struct TextMessage<'a> {
    role: &'a str,
    content: &'a str,
}

struct ToolsWire<'a>(&'a StreamOptions);

impl ToolsWire<'_> {
    fn is_empty(&self) -> bool {
        self.0.tools.is_empty()
    }
}

impl serde::Serialize for ToolsWire<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.tools.len()))?;
        for tool in &self.0.tools {
            seq.serialize_element(&FunctionTool {
                kind: "function",
                function: Function { tool },
            })?;
        }
        seq.end()
    }
}

#[derive(serde::Serialize)]
struct FunctionTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

struct Function<'a> {
    tool: &'a crate::options::ToolSpec,
}

impl serde::Serialize for Function<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("name", &self.tool.name)?;
        if !self.tool.description.is_empty() {
            map.serialize_entry("description", &self.tool.description)?;
        }
        map.serialize_entry("parameters", &self.tool.input_schema)?;
        map.end()
    }
}

struct ToolChoiceWire<'a>(&'a ToolChoice);

impl serde::Serialize for ToolChoiceWire<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            ToolChoice::Auto => s.serialize_str("auto"),
            ToolChoice::Any => s.serialize_str("required"),
            ToolChoice::None => s.serialize_str("none"),
            ToolChoice::Tool { name } => {
                let mut map = s.serialize_map(None)?;
                map.serialize_entry("type", "function")?;
                map.serialize_entry("function", &serde_json::json!({ "name": name }))?;
                map.end()
            }
        }
    }
}

struct ResponseFormat<'a>(&'a Value);

impl serde::Serialize for ResponseFormat<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("type", "json_schema")?;
        map.serialize_entry(
            "json_schema",
            &serde_json::json!({ "name": "output", "schema": self.0 }),
        )?;
        map.end()
    }
}

/// One conversation message becomes zero or more wire messages: tool results
/// travel as `tool` messages (first, so they follow the assistant's calls),
/// the rest as one `user` or `assistant` message.
fn render_message(message: &Message) -> Bytes {
    // Each message with its leading separator (see `request_parts`).
    let mut out = Vec::new();
    let mut push = |value: &dyn erased::Json| {
        out.push(b',');
        value.write(&mut out);
    };
    match message.role() {
        Role::User => {
            for block in message.content() {
                if let ContentBlock::ToolResult {
                    tool_use_id, content, ..
                } = block
                {
                    push(&ToolMessage {
                        role: "tool",
                        tool_call_id: tool_use_id,
                        content: tool_text(content),
                    });
                }
            }
            // A `tool` message holds text only: images a tool returned go
            // in the user message that follows the results.
            let tool_images: Vec<&ContentBlock> = message
                .content()
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolResult {
                        content: ToolResultContent::Parts(parts),
                        ..
                    } => Some(parts),
                    _ => None,
                })
                .flatten()
                .filter(|p| matches!(p, ContentBlock::Image { .. }))
                .collect();
            let mut parts: Vec<&ContentBlock> = Vec::new();
            if !tool_images.is_empty() {
                parts.push(&TOOL_IMAGES);
                parts.extend(tool_images);
            }
            parts.extend(message.content().iter().filter(|b| match b {
                ContentBlock::Text { text } => !text.is_empty(),
                ContentBlock::Image { .. } | ContentBlock::Document { .. } | ContentBlock::ContentRef { .. } => true,
                _ => false,
            }));
            if !parts.is_empty() {
                push(&UserMessage { parts: &parts });
            }
        }
        Role::Assistant => {
            let text: String = message
                .content()
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            let calls: Vec<(&str, &str, &Value)> = message
                .content()
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolUse { id, name, input } => Some((id.as_str(), name.as_str(), input)),
                    _ => None,
                })
                .collect();
            if !text.is_empty() || !calls.is_empty() {
                push(&AssistantMessage {
                    text: &text,
                    calls: &calls,
                });
            }
        }
    }
    Message::exact(out)
}

mod erased {
    /// Writes one value as JSON; lets `render_message` push different
    /// message shapes through one closure.
    pub(super) trait Json {
        fn write(&self, out: &mut Vec<u8>);
    }

    impl<T: serde::Serialize> Json for T {
        fn write(&self, out: &mut Vec<u8>) {
            let _ = serde_json::to_writer(out, self);
        }
    }
}

/// The text before the images of tool results (see `render_message`).
static TOOL_IMAGES: std::sync::LazyLock<ContentBlock> = std::sync::LazyLock::new(|| ContentBlock::Text {
    text: "The images the tool results above returned:".into(),
});

fn tool_text(content: &ToolResultContent) -> Cow<'_, str> {
    match content {
        ToolResultContent::Text(text) => Cow::Borrowed(text),
        ToolResultContent::Parts(parts) => Cow::Owned(
            parts
                .iter()
                .filter_map(|p| match p {
                    ContentBlock::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        ),
    }
}

#[derive(serde::Serialize)]
struct ToolMessage<'a> {
    role: &'static str,
    tool_call_id: &'a str,
    content: Cow<'a, str>,
}

struct UserMessage<'a> {
    parts: &'a [&'a ContentBlock],
}

impl serde::Serialize for UserMessage<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("role", "user")?;
        match self.parts {
            [ContentBlock::Text { text }] => map.serialize_entry("content", text)?,
            parts => {
                let parts: Vec<PartWire<'_>> = parts.iter().map(|p| PartWire(p)).collect();
                map.serialize_entry("content", &parts)?;
            }
        }
        map.end()
    }
}

struct PartWire<'a>(&'a ContentBlock);

impl serde::Serialize for PartWire<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        match self.0 {
            ContentBlock::Image { source } => {
                map.serialize_entry("type", "image_url")?;
                let url = match source {
                    ImageSource::Base64 { media_type, data } => {
                        format!("data:{media_type};base64,{data}")
                    }
                    ImageSource::Url { url } => url.clone(),
                };
                map.serialize_entry("image_url", &serde_json::json!({ "url": url }))?;
            }
            ContentBlock::Document { source, title } => match source {
                DocumentSource::Base64 { media_type, data } => {
                    map.serialize_entry("type", "file")?;
                    let mut file = serde_json::Map::new();
                    file.insert(
                        "file_data".into(),
                        Value::String(format!("data:{media_type};base64,{data}")),
                    );
                    file.insert(
                        "filename".into(),
                        Value::String(title.clone().unwrap_or_else(|| "document.pdf".into())),
                    );
                    map.serialize_entry("file", &file)?;
                }
                DocumentSource::Text { data, .. } => {
                    map.serialize_entry("type", "text")?;
                    map.serialize_entry("text", data)?;
                }
                DocumentSource::Url { url } => {
                    map.serialize_entry("type", "text")?;
                    map.serialize_entry("text", url)?;
                }
            },
            ContentBlock::Text { text } => {
                map.serialize_entry("type", "text")?;
                map.serialize_entry("text", text)?;
            }
            ContentBlock::ContentRef { reference, kind, .. } => {
                map.serialize_entry("type", "text")?;
                map.serialize_entry("text", &crate::message::unresolved_ref_text(reference, kind))?;
            }
            _ => {}
        }
        map.end()
    }
}

struct AssistantMessage<'a> {
    text: &'a str,
    calls: &'a [(&'a str, &'a str, &'a Value)],
}

impl serde::Serialize for AssistantMessage<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("role", "assistant")?;
        if self.text.is_empty() {
            map.serialize_entry("content", &Value::Null)?;
        } else {
            map.serialize_entry("content", self.text)?;
        }
        if !self.calls.is_empty() {
            let calls: Vec<Value> = self
                .calls
                .iter()
                .map(|(id, name, input)| {
                    serde_json::json!({
                        "id": id,
                        "type": "function",
                        "function": { "name": name, "arguments": input.to_string() },
                    })
                })
                .collect();
            map.serialize_entry("tool_calls", &calls)?;
        }
        map.end()
    }
}

// ---------------------------------------------------------------------------
// The streamed response.

#[derive(Deserialize)]
struct Chunk<'a> {
    id: Option<String>,
    model: Option<String>,
    #[serde(default, borrow)]
    choices: Vec<Choice<'a>>,
    usage: Option<WireUsage>,
    error: Option<WireError>,
    prompt_progress: Option<PromptProgress>,
}

/// llama.cpp's report on reading the prompt (`processed` counts the tokens
/// taken from its cache too).
#[derive(Deserialize, serde::Serialize)]
struct PromptProgress {
    #[serde(default)]
    total: u64,
    #[serde(default)]
    cache: u64,
    #[serde(default)]
    processed: u64,
    #[serde(default)]
    time_ms: u64,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(default)]
    index: u32,
    #[serde(borrow)]
    delta: Option<Delta<'a>>,
    #[serde(borrow)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(borrow)]
    refusal: Option<Cow<'a, str>>,
    #[serde(borrow)]
    reasoning_content: Option<Cow<'a, str>>,
    #[serde(borrow)]
    reasoning: Option<Cow<'a, str>>,
    #[serde(borrow)]
    tool_calls: Option<Vec<ToolCallDelta<'a>>>,
}

#[derive(Deserialize)]
struct ToolCallDelta<'a> {
    #[serde(default)]
    index: usize,
    id: Option<String>,
    #[serde(borrow)]
    function: Option<FunctionDelta<'a>>,
}

#[derive(Deserialize)]
struct FunctionDelta<'a> {
    name: Option<String>,
    #[serde(borrow)]
    arguments: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct WireUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    cached_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct WireError {
    message: Option<String>,
    #[serde(rename = "type")]
    ty: Option<String>,
    code: Option<Value>,
}

/// Block indexes: reasoning first, then text, then each tool call.
const THINKING_INDEX: usize = 0;
const TEXT_INDEX: usize = 1;
const FIRST_TOOL_INDEX: usize = 2;

/// Turns the Chat Completions chunk stream into [`StreamEvent`]s. Only the
/// first choice is read (requests ask for one).
#[derive(Debug, Default)]
pub struct Decoder {
    provider: String,
    started: bool,
    open_tools: Vec<usize>,
    finish: Option<String>,
    refused: bool,
    /// The refusal's text, for its diagnostic.
    refusal: String,
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

    /// Whether the stream's end was decoded.
    pub fn is_ended(&self) -> bool {
        self.ended
    }

    /// Decodes one server-sent event, appending what it means to `out`.
    pub fn decode(&mut self, sse: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if sse.data.as_ref() == b"[DONE]" {
            self.end(out);
            return Ok(());
        }
        let chunk: Chunk<'_> = serde_json::from_slice(&sse.data).map_err(|e| {
            ProviderError::new(
                ErrorKind::InvalidResponse,
                &self.provider,
                format!("chunk is not valid JSON: {e}"),
            )
        })?;
        if let Some(error) = chunk.error {
            let message = error.message.unwrap_or_default();
            let ty = error
                .ty
                .or_else(|| error.code.as_ref().and_then(Value::as_str).map(str::to_owned));
            let kind = classify_stream_error(ty.as_deref(), &message);
            return Err(ProviderError::new(kind, &self.provider, message).with_error_type(ty));
        }
        if !self.started {
            self.started = true;
            out.push(StreamEvent::Start {
                id: chunk.id,
                model: chunk.model,
            });
        }
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            if let Some(delta) = choice.delta {
                self.delta(delta, out);
            }
            if let Some(reason) = choice.finish_reason {
                self.close_tools(out);
                self.finish = Some(reason.into_owned());
            }
        }
        if let Some(progress) = chunk.prompt_progress {
            out.push(StreamEvent::Diagnostic(ProviderDiagnostic {
                kind: "prompt-progress".into(),
                message: format!(
                    "read {} of {} prompt tokens ({} from the cache)",
                    progress.processed, progress.total, progress.cache
                ),
                data: serde_json::to_value(&progress).unwrap_or(Value::Null),
            }));
        }
        if let Some(usage) = chunk.usage {
            let cached = usage.prompt_tokens_details.and_then(|d| d.cached_tokens).unwrap_or(0);
            out.push(StreamEvent::Usage(UsageReport {
                input: usage.prompt_tokens.map(|p| p.saturating_sub(cached)),
                output: usage.completion_tokens,
                cache_read: Some(cached),
                cache_creation: Some(0),
                ..Default::default()
            }));
        }
        Ok(())
    }

    /// The body ended. Compatible servers that skip `[DONE]` still end
    /// cleanly once they sent a finish reason; `false` means the stream was
    /// cut short.
    pub fn finish(&mut self, out: &mut Vec<StreamEvent>) -> bool {
        if !self.ended && self.finish.is_some() {
            self.end(out);
        }
        self.ended
    }

    fn delta(&mut self, delta: Delta<'_>, out: &mut Vec<StreamEvent>) {
        if let Some(text) = delta.reasoning_content.or(delta.reasoning).filter(|t| !t.is_empty()) {
            out.push(StreamEvent::ThinkingDelta {
                index: THINKING_INDEX,
                text: text.into_owned(),
            });
        }
        if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
            out.push(StreamEvent::TextDelta {
                index: TEXT_INDEX,
                text: text.into_owned(),
            });
        }
        if let Some(text) = delta.refusal.filter(|t| !t.is_empty()) {
            self.refused = true;
            self.refusal.push_str(&text);
            out.push(StreamEvent::TextDelta {
                index: TEXT_INDEX,
                text: text.into_owned(),
            });
        }
        for call in delta.tool_calls.into_iter().flatten() {
            let index = FIRST_TOOL_INDEX + call.index;
            let (name, arguments) = match call.function {
                Some(f) => (f.name, f.arguments),
                None => (None, None),
            };
            if !self.open_tools.contains(&index) {
                self.open_tools.push(index);
                out.push(StreamEvent::ToolCallStart {
                    index,
                    id: call.id.unwrap_or_default(),
                    name: name.unwrap_or_default(),
                });
            }
            if let Some(json) = arguments.filter(|a| !a.is_empty()) {
                out.push(StreamEvent::ToolCallDelta {
                    index,
                    json: json.into_owned(),
                });
            }
        }
    }

    fn close_tools(&mut self, out: &mut Vec<StreamEvent>) {
        for index in self.open_tools.drain(..) {
            out.push(StreamEvent::ToolCallEnd { index });
        }
    }

    fn end(&mut self, out: &mut Vec<StreamEvent>) {
        if self.ended {
            return;
        }
        self.ended = true;
        let raw = self.finish.take();
        let mut finish_reason = finish_reason(raw.as_deref());
        if self.refused && finish_reason == FinishReason::Stop {
            finish_reason = FinishReason::Refusal;
        }
        if self.refused {
            out.push(StreamEvent::Diagnostic(ProviderDiagnostic {
                kind: "refusal".into(),
                message: std::mem::take(&mut self.refusal),
                data: serde_json::json!({ "refusal": true }),
            }));
        }
        if raw.as_deref() == Some("content_filter") {
            out.push(StreamEvent::Diagnostic(ProviderDiagnostic {
                kind: "content-filter".into(),
                message: "the provider's content filter stopped the answer".into(),
                data: serde_json::json!({ "finish_reason": "content_filter" }),
            }));
        }
        // Tools still open when the stream ended were cut off; leave them
        // unclosed so the accumulator reports them incomplete.
        out.push(StreamEvent::End {
            finish_reason,
            raw_reason: raw,
        });
    }
}

/// Maps a Chat Completions `finish_reason`.
pub fn finish_reason(raw: Option<&str>) -> FinishReason {
    match raw {
        Some("tool_calls" | "function_call") => FinishReason::ToolCalls,
        Some("length") => FinishReason::Length,
        Some("content_filter") => FinishReason::Refusal,
        _ => FinishReason::Stop,
    }
}

impl WireDecoder for Decoder {
    fn decode(&mut self, sse: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        Decoder::decode(self, sse, out)
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> bool {
        Decoder::finish(self, out)
    }
}

/// What OpenAI's APIs (Chat Completions and Responses) can do here.
pub(crate) const CAPABILITIES: Capabilities = Capabilities {
    thinking: false,
    cache_control: false,
    images: true,
    documents: true,
    count_tokens: false,
    decisions: true,
};

/// The Chat Completions API (`POST {base}/chat/completions`, streamed) in
/// a server's dialect.
#[derive(Debug, Clone, Copy)]
pub struct ChatCompletions {
    /// The server's wire choices.
    pub dialect: Dialect,
}

impl WireProtocol for ChatCompletions {
    type Decoder = Decoder;

    fn request(&self, options: &StreamOptions) -> WireRequest {
        WireRequest {
            path: "/chat/completions",
            headers: Vec::new(),
            body: request_parts(options, self.dialect),
        }
    }

    fn decoder(&self, provider: &str) -> Decoder {
        Decoder::new(provider)
    }

    fn capabilities(&self) -> Capabilities {
        CAPABILITIES
    }
}
