//! The Anthropic Messages wire format: request bodies and the streamed
//! response, independent of any HTTP client.

#[cfg(feature = "http")]
mod provider;

mod decode;

#[cfg(test)]
pub(crate) use decode::compact_delta;
pub use decode::{Decoder, finish_reason};
#[cfg(feature = "http")]
pub use provider::{AnthropicConfig, AnthropicProvider};

use std::borrow::Cow;

use bytes::Bytes;
use serde::ser::{SerializeMap, Serializer};

use serde_json::Value;

use crate::message::{ContentBlock, DocumentSource, ImageSource, Message, Role, ToolResultContent, WireFormat};
use crate::options::{CacheTtl, StreamOptions, ThinkingLevel, ToolChoice};
use crate::provider::Capabilities;
use crate::wire::{WireProtocol, WireRequest};

/// The `anthropic-version` header value this crate speaks.
pub const API_VERSION: &str = "2023-06-01";

/// Beta flag for one-hour cache lifetimes.
pub const BETA_EXTENDED_CACHE_TTL: &str = "extended-cache-ttl-2025-04-11";

/// Output tokens requested when the options give no limit.
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

/// The thinking budget of a level, when the options give no exact budget.
pub fn thinking_budget(level: ThinkingLevel) -> Option<u32> {
    match level {
        ThinkingLevel::Off => None,
        ThinkingLevel::Minimal => Some(1024),
        ThinkingLevel::Low => Some(4096),
        ThinkingLevel::Medium => Some(10_240),
        ThinkingLevel::High => Some(24_576),
    }
}

/// A request body and the beta flags it needs.
#[derive(Debug, Clone)]
pub struct Request {
    /// The JSON body.
    pub body: Bytes,
    /// Values for the `anthropic-beta` header.
    pub betas: Vec<&'static str>,
}

/// Builds the body of `POST /v1/messages` with `stream: true`.
///
/// Cache breakpoints: one on the static half of the system prompt (or, with
/// no system prompt, on the last tool), covering tools and system; one on the
/// last block of the newest user message. Every message except the one that
/// carries a breakpoint reuses its memoized bytes.
pub fn request_body(options: &StreamOptions) -> Request {
    let parts = request_parts(options);
    let mut body = Vec::with_capacity(parts.chunks.iter().map(Bytes::len).sum());
    for chunk in &parts.chunks {
        body.extend_from_slice(chunk);
    }
    Request {
        body: Bytes::from(body),
        betas: parts.betas,
    }
}

/// The body of [`request_body`] as the pieces it is made of, for sending
/// without joining them: the head (everything before the first message),
/// each message's memoized bytes as shared handles, and the closing
/// brackets. Joined, they are exactly [`request_body`]'s bytes.
pub(crate) struct RequestParts {
    pub(crate) chunks: Vec<Bytes>,
    pub(crate) betas: Vec<&'static str>,
}

/// The `anthropic-beta` flags a request needs.
fn request_betas(options: &StreamOptions) -> Vec<&'static str> {
    let mut betas = Vec::new();
    if options.cache_ttl.unwrap_or_default() == CacheTtl::OneHour {
        betas.push(BETA_EXTENDED_CACHE_TTL);
    }
    betas
}

pub(crate) fn request_parts(options: &StreamOptions) -> RequestParts {
    let ttl = options.cache_ttl.unwrap_or_default();
    let betas = request_betas(options);
    let budget = options.thinking_budget.or_else(|| thinking_budget(options.thinking));
    let mut max_tokens = options.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    if let Some(budget) = budget
        && max_tokens <= budget
    {
        max_tokens = budget + DEFAULT_MAX_TOKENS;
    }

    let halves = options.system_halves();
    let mut system = Vec::new();
    if let Some((head, tail)) = halves {
        if !head.is_empty() {
            system.push(SystemBlock {
                text: head,
                cache: Some(ttl),
            });
        }
        if let Some(tail) = tail.filter(|t| !t.is_empty()) {
            system.push(SystemBlock {
                text: tail,
                cache: None,
            });
        }
    }
    let cache_last_tool = system.is_empty();
    let tools: Vec<ToolWire<'_>> = options
        .tools
        .iter()
        .enumerate()
        .map(|(i, t)| ToolWire {
            name: &t.name,
            description: &t.description,
            schema: &t.input_schema,
            cache: (cache_last_tool && i + 1 == options.tools.len()).then_some(ttl),
        })
        .collect();
    let header = Header {
        model: &options.model,
        max_tokens,
        stream: true,
        system,
        tools,
        tool_choice: options.tool_choice.as_ref().map(ToolChoiceWire),
        thinking: budget.map(|budget| ThinkingWire { budget }),
        // The API refuses a temperature alongside extended thinking.
        temperature: options.temperature.filter(|_| budget.is_none()),
    };
    let mut body = Vec::with_capacity(4096);
    if serde_json::to_writer(&mut body, &header).is_err() {
        body.clear();
        body.extend_from_slice(b"{}");
    }
    // Splice the messages in as bytes: `{...}` becomes `{...,"messages":[..]}`.
    // Each message's bytes start with the comma that separates it from the
    // one before, so the pieces are the memos themselves (shared handles)
    // and only the first loses its comma.
    let breakpoint = options.messages.iter().rposition(|m| m.role() == Role::User);
    body.pop();
    body.extend_from_slice(b",\"messages\":[");
    let mut chunks = Vec::with_capacity(options.messages.len() + 2);
    chunks.push(Bytes::from(body));
    for (i, message) in options.messages.iter().enumerate() {
        let part = if Some(i) == breakpoint {
            render_message(message, Some(ttl))
        } else {
            message.wire_chunk(WireFormat::AnthropicMessages, |m| render_message(m, None))
        };
        if part.is_empty() {
            continue;
        }
        chunks.push(if chunks.len() == 1 { part.slice(1..) } else { part });
    }
    chunks.push(Bytes::from_static(b"]}"));
    RequestParts { chunks, betas }
}

fn render_message(message: &Message, cache: Option<CacheTtl>) -> Bytes {
    let blocks: Vec<&ContentBlock> = message.content().iter().filter(|b| sendable(b)).collect();
    if blocks.is_empty() {
        return Bytes::new();
    }
    let wire = MessageWire {
        role: message.role(),
        blocks: &blocks,
        cache,
    };
    // With its leading separator (see `request_parts`).
    let mut bytes = vec![b','];
    match serde_json::to_writer(&mut bytes, &wire) {
        Ok(()) => Message::exact(bytes),
        Err(_) => Bytes::new(),
    }
}

/// Blocks the API would refuse are left out: empty text, and reasoning
/// without a signature (produced by another provider).
fn sendable(block: &ContentBlock) -> bool {
    match block {
        ContentBlock::Text { text } => !text.is_empty(),
        ContentBlock::Thinking { signature, .. } => signature.as_deref().is_some_and(|s| !s.is_empty()),
        // OpenAI's reasoning, kept for the Responses API, means nothing here.
        block if crate::responses::is_reasoning_item(block) => false,
        _ => true,
    }
}

#[derive(serde::Serialize)]
struct Header<'a> {
    model: &'a str,
    max_tokens: u32,
    stream: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    system: Vec<SystemBlock<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ToolWire<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<ToolChoiceWire<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<ThinkingWire>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
}

struct CacheControl(CacheTtl);

impl serde::Serialize for CacheControl {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("type", "ephemeral")?;
        if self.0 == CacheTtl::OneHour {
            map.serialize_entry("ttl", "1h")?;
        }
        map.end()
    }
}

struct SystemBlock<'a> {
    text: &'a str,
    cache: Option<CacheTtl>,
}

impl serde::Serialize for SystemBlock<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("type", "text")?;
        map.serialize_entry("text", self.text)?;
        if let Some(ttl) = self.cache {
            map.serialize_entry("cache_control", &CacheControl(ttl))?;
        }
        map.end()
    }
}

struct ToolWire<'a> {
    name: &'a str,
    description: &'a str,
    schema: &'a Value,
    cache: Option<CacheTtl>,
}

impl serde::Serialize for ToolWire<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("name", self.name)?;
        if !self.description.is_empty() {
            map.serialize_entry("description", self.description)?;
        }
        map.serialize_entry("input_schema", self.schema)?;
        if let Some(ttl) = self.cache {
            map.serialize_entry("cache_control", &CacheControl(ttl))?;
        }
        map.end()
    }
}

struct ToolChoiceWire<'a>(&'a ToolChoice);

impl serde::Serialize for ToolChoiceWire<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        match self.0 {
            ToolChoice::Auto => map.serialize_entry("type", "auto")?,
            ToolChoice::Any => map.serialize_entry("type", "any")?,
            ToolChoice::None => map.serialize_entry("type", "none")?,
            ToolChoice::Tool { name } => {
                map.serialize_entry("type", "tool")?;
                map.serialize_entry("name", name)?;
            }
        }
        map.end()
    }
}

struct ThinkingWire {
    budget: u32,
}

impl serde::Serialize for ThinkingWire {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("type", "enabled")?;
        map.serialize_entry("budget_tokens", &self.budget)?;
        map.end()
    }
}

struct MessageWire<'a> {
    role: Role,
    blocks: &'a [&'a ContentBlock],
    cache: Option<CacheTtl>,
}

impl serde::Serialize for MessageWire<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("role", &self.role)?;
        let last = self.blocks.len().saturating_sub(1);
        let blocks: Vec<BlockWire<'_>> = self
            .blocks
            .iter()
            .enumerate()
            .map(|(i, b)| BlockWire {
                block: b,
                cache: self.cache.filter(|_| i == last),
            })
            .collect();
        map.serialize_entry("content", &blocks)?;
        map.end()
    }
}

struct BlockWire<'a> {
    block: &'a ContentBlock,
    cache: Option<CacheTtl>,
}

impl serde::Serialize for BlockWire<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let ContentBlock::Unknown(raw) = self.block {
            // Blocks we do not model go back exactly as they came.
            return raw.serialize(s);
        }
        let mut map = s.serialize_map(None)?;
        match self.block {
            ContentBlock::Text { text } => {
                map.serialize_entry("type", "text")?;
                map.serialize_entry("text", text)?;
            }
            ContentBlock::Image { source } => {
                map.serialize_entry("type", "image")?;
                map.serialize_entry("source", &ImageSourceWire(source))?;
            }
            ContentBlock::ContentRef { reference, kind, .. } => {
                map.serialize_entry("type", "text")?;
                map.serialize_entry("text", &crate::message::unresolved_ref_text(reference, kind))?;
            }
            ContentBlock::Document { source, title } => {
                map.serialize_entry("type", "document")?;
                map.serialize_entry("source", &DocumentSourceWire(source))?;
                if let Some(title) = title {
                    map.serialize_entry("title", title)?;
                }
            }
            ContentBlock::ToolUse { id, name, input } => {
                map.serialize_entry("type", "tool_use")?;
                map.serialize_entry("id", id)?;
                map.serialize_entry("name", name)?;
                map.serialize_entry("input", input)?;
            }
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                map.serialize_entry("type", "tool_result")?;
                map.serialize_entry("tool_use_id", tool_use_id)?;
                match content {
                    ToolResultContent::Text(text) => map.serialize_entry("content", text)?,
                    ToolResultContent::Parts(parts) => {
                        let parts: Vec<BlockWire<'_>> = parts
                            .iter()
                            .filter(|p| sendable(p))
                            .map(|p| BlockWire { block: p, cache: None })
                            .collect();
                        map.serialize_entry("content", &parts)?;
                    }
                }
                if *is_error {
                    map.serialize_entry("is_error", &true)?;
                }
            }
            ContentBlock::Thinking { thinking, signature } => {
                map.serialize_entry("type", "thinking")?;
                map.serialize_entry("thinking", thinking)?;
                map.serialize_entry("signature", signature.as_deref().unwrap_or_default())?;
            }
            ContentBlock::RedactedThinking { data } => {
                map.serialize_entry("type", "redacted_thinking")?;
                map.serialize_entry("data", data)?;
            }
            ContentBlock::ServerToolUse { id, name, input } => {
                map.serialize_entry("type", "server_tool_use")?;
                map.serialize_entry("id", id)?;
                map.serialize_entry("name", name)?;
                map.serialize_entry("input", input)?;
            }
            ContentBlock::ServerToolResult {
                tool_use_id,
                kind,
                content,
            } => {
                map.serialize_entry("type", kind)?;
                map.serialize_entry("tool_use_id", tool_use_id)?;
                map.serialize_entry("content", content)?;
            }
            ContentBlock::Unknown(_) => {}
        }
        if let Some(ttl) = self.cache {
            map.serialize_entry("cache_control", &CacheControl(ttl))?;
        }
        map.end()
    }
}

struct ImageSourceWire<'a>(&'a ImageSource);

impl serde::Serialize for ImageSourceWire<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        match self.0 {
            ImageSource::Base64 { media_type, data } => {
                map.serialize_entry("type", "base64")?;
                map.serialize_entry("media_type", media_type)?;
                map.serialize_entry("data", data)?;
            }
            ImageSource::Url { url } => {
                map.serialize_entry("type", "url")?;
                map.serialize_entry("url", url)?;
            }
        }
        map.end()
    }
}

struct DocumentSourceWire<'a>(&'a DocumentSource);

impl serde::Serialize for DocumentSourceWire<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        match self.0 {
            DocumentSource::Base64 { media_type, data } => {
                map.serialize_entry("type", "base64")?;
                map.serialize_entry("media_type", media_type)?;
                map.serialize_entry("data", data)?;
            }
            DocumentSource::Text { media_type, data } => {
                map.serialize_entry("type", "text")?;
                map.serialize_entry("media_type", media_type)?;
                map.serialize_entry("data", data)?;
            }
            DocumentSource::Url { url } => {
                map.serialize_entry("type", "url")?;
                map.serialize_entry("url", url)?;
            }
        }
        map.end()
    }
}

/// The `count_tokens` body for `options`: the request without the streaming
/// and sampling fields.
pub fn count_tokens_body(options: &StreamOptions) -> Bytes {
    let request = request_body(options);
    let Ok(Value::Object(mut body)) = serde_json::from_slice::<Value>(&request.body) else {
        return request.body;
    };
    for key in ["max_tokens", "stream", "temperature"] {
        body.remove(key);
    }
    serde_json::to_vec(&body).map(Bytes::from).unwrap_or_default()
}

/// The Messages API (`POST /v1/messages`, streamed), with the
/// `anthropic-beta` flags every request carries.
#[derive(Debug, Clone, Default)]
pub struct Messages {
    /// Flags sent with every request, beside the ones a request needs.
    pub betas: Vec<String>,
}

impl Messages {
    /// The headers of a request that needs `betas`: the API version and
    /// every beta flag (these and the configured ones).
    fn headers(&self, betas: &[&'static str]) -> Vec<(&'static str, Cow<'static, str>)> {
        let mut headers = vec![("anthropic-version", Cow::Borrowed(API_VERSION))];
        let all: Vec<&str> = self
            .betas
            .iter()
            .map(String::as_str)
            .chain(betas.iter().copied())
            .collect();
        if !all.is_empty() {
            headers.push(("anthropic-beta", Cow::Owned(all.join(","))));
        }
        headers
    }

    /// The request of `POST /v1/messages/count_tokens` for `options`: the
    /// same headers as the request it counts, and the counting body.
    pub fn count_tokens_request(&self, options: &StreamOptions) -> WireRequest {
        WireRequest {
            path: "/v1/messages/count_tokens",
            headers: self.headers(&request_betas(options)),
            body: vec![count_tokens_body(options)],
        }
    }
}

impl WireProtocol for Messages {
    type Decoder = Decoder;

    fn request(&self, options: &StreamOptions) -> WireRequest {
        let parts = request_parts(options);
        WireRequest {
            path: "/v1/messages",
            headers: self.headers(&parts.betas),
            body: parts.chunks,
        }
    }

    fn decoder(&self, provider: &str) -> Decoder {
        Decoder::new(provider)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            thinking: true,
            cache_control: true,
            images: true,
            documents: true,
            count_tokens: true,
            decisions: true,
        }
    }

    fn key_header(&self) -> Option<&'static str> {
        Some("x-api-key")
    }
}
