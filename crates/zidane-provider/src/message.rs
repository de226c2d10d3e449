//! Messages, content blocks and session turns.

use std::fmt;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::usage::TurnUsage;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The person or host driving the agent (tool results travel as user turns).
    User,
    /// The model.
    Assistant,
}

/// Where an image's bytes come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ImageSource {
    /// Inline base64 bytes.
    Base64 {
        /// MIME type, e.g. `image/png`.
        media_type: String,
        /// Base64 data.
        data: String,
    },
    /// A URL the provider fetches.
    Url {
        /// The image URL.
        url: String,
    },
}

/// Where a document's bytes come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DocumentSource {
    /// Inline base64 bytes (PDF).
    Base64 {
        /// MIME type, e.g. `application/pdf`.
        media_type: String,
        /// Base64 data.
        data: String,
    },
    /// Plain text.
    Text {
        /// MIME type, `text/plain`.
        media_type: String,
        /// The text.
        data: String,
    },
    /// A URL the provider fetches.
    Url {
        /// The document URL.
        url: String,
    },
}

/// The content of a tool result: plain text, or parts (text, images).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolResultContent {
    /// A plain string.
    Text(String),
    /// Content parts.
    Parts(Vec<ContentBlock>),
}

impl Default for ToolResultContent {
    fn default() -> Self {
        ToolResultContent::Text(String::new())
    }
}

impl From<String> for ToolResultContent {
    fn from(s: String) -> Self {
        ToolResultContent::Text(s)
    }
}

impl From<&str> for ToolResultContent {
    fn from(s: &str) -> Self {
        ToolResultContent::Text(s.to_owned())
    }
}

impl ToolResultContent {
    /// The text: the string, or the text parts joined (images and other
    /// parts are left out).
    pub fn text(&self) -> String {
        match self {
            ToolResultContent::Text(s) => s.clone(),
            ToolResultContent::Parts(parts) => text_of(parts),
        }
    }

    /// Bytes of the textual payload (text parts only; images count as zero).
    pub fn text_len(&self) -> usize {
        match self {
            ToolResultContent::Text(s) => s.len(),
            ToolResultContent::Parts(parts) => parts
                .iter()
                .map(|p| match p {
                    ContentBlock::Text { text } => text.len(),
                    _ => 0,
                })
                .sum(),
        }
    }
}

/// One block of a message, provider-neutral.
///
/// Blocks this crate does not know are kept as [`ContentBlock::Unknown`] with
/// their JSON intact, so a round trip through a session never drops them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// Its bytes or URL.
        source: ImageSource,
    },
    /// A document (PDF or text).
    Document {
        /// Its bytes or URL.
        source: DocumentSource,
        /// Optional title shown to the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
    },
    /// A call of a client-side tool by the model.
    ToolUse {
        /// Call id, echoed by the matching result.
        id: String,
        /// Canonical tool name.
        name: String,
        /// Arguments.
        input: Value,
    },
    /// The result of a client-side tool call.
    ToolResult {
        /// Id of the call this answers.
        tool_use_id: String,
        /// What the tool returned.
        content: ToolResultContent,
        /// Whether the result reports a failure.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
    /// The model's visible reasoning.
    Thinking {
        /// The reasoning text.
        thinking: String,
        /// Provider signature, replayed verbatim on later turns.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// Reasoning the provider returned encrypted.
    RedactedThinking {
        /// Opaque data, replayed verbatim.
        data: String,
    },
    /// A tool the provider ran itself (e.g. web search).
    ServerToolUse {
        /// Call id.
        id: String,
        /// Server tool name.
        name: String,
        /// Arguments.
        input: Value,
    },
    /// The result of a server tool, kept as the provider sent it.
    ServerToolResult {
        /// Id of the server call this answers.
        tool_use_id: String,
        /// The provider's block type, e.g. `web_search_tool_result`.
        kind: String,
        /// The raw result payload.
        content: Value,
    },
    /// A large image or document kept out of the conversation, by
    /// reference: a run resolves it into its bytes on the way to the
    /// provider only (`content-ref:resolve`), and the stored turn keeps the
    /// reference. One that reaches a wire format unresolved is sent as a
    /// line of text saying it is not available.
    ContentRef {
        /// The reference (a blob key, a path, a URL the host understands).
        #[serde(rename = "ref")]
        reference: String,
        /// `image` or `document`.
        kind: String,
        /// MIME type, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        media_type: Option<String>,
    },
    /// A block of a type this crate does not model, preserved as sent.
    #[serde(untagged)]
    Unknown(Value),
}

/// What a wire format sends for a reference nobody resolved.
pub fn unresolved_ref_text(reference: &str, kind: &str) -> String {
    format!("[{kind} `{reference}` is not available]")
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text { text: text.into() }
    }
}

/// A message: a role and its blocks.
///
/// Cloning is cheap (the blocks are shared until one side mutates them), and
/// a message remembers its serialized wire form per provider format, so the
/// request of turn N+1 copies the bytes of the N messages that did not change
/// instead of serializing them again. [`Message::content_mut`] and
/// [`Message::set_role`] drop that memo.
#[derive(Clone)]
pub struct Message {
    role: Role,
    content: Content,
    wire: WireMemo,
}

/// Content blocks shared copy-on-write: cloning costs a reference count, so
/// a session turn and the message the loop sends share one copy of their
/// blocks, and a copy of a transcript copies no block. Reads go through
/// `Deref` (`&[ContentBlock]` and `Vec` methods); [`Content::make_mut`]
/// copies the blocks first when they are shared. Serializes as the plain
/// list.
#[derive(Clone, Default, PartialEq)]
pub struct Content(Arc<Vec<ContentBlock>>);

/// The text blocks of `blocks`, joined.
pub(crate) fn text_of(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

impl Content {
    /// The text blocks joined (tool calls, images and other blocks are left
    /// out).
    pub fn text(&self) -> String {
        text_of(&self.0)
    }

    /// Content of `blocks`.
    pub fn new(blocks: Vec<ContentBlock>) -> Self {
        Content(Arc::new(blocks))
    }

    /// The blocks, for editing (copied first when shared).
    pub fn make_mut(&mut self) -> &mut Vec<ContentBlock> {
        Arc::make_mut(&mut self.0)
    }

    /// The blocks, owned (copied only when shared).
    pub fn into_vec(self) -> Vec<ContentBlock> {
        Arc::unwrap_or_clone(self.0)
    }

    /// Whether both are the same shared blocks (a pointer comparison).
    pub fn ptr_eq(&self, other: &Content) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::ops::Deref for Content {
    type Target = Vec<ContentBlock>;

    fn deref(&self) -> &Vec<ContentBlock> {
        &self.0
    }
}

impl From<Vec<ContentBlock>> for Content {
    fn from(blocks: Vec<ContentBlock>) -> Self {
        Content::new(blocks)
    }
}

impl FromIterator<ContentBlock> for Content {
    fn from_iter<I: IntoIterator<Item = ContentBlock>>(iter: I) -> Self {
        Content::new(iter.into_iter().collect())
    }
}

impl<'a> IntoIterator for &'a Content {
    type Item = &'a ContentBlock;
    type IntoIter = std::slice::Iter<'a, ContentBlock>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl PartialEq<Vec<ContentBlock>> for Content {
    fn eq(&self, other: &Vec<ContentBlock>) -> bool {
        *self.0 == *other
    }
}

impl fmt::Debug for Content {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Serialize for Content {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<ContentBlock>::deserialize(deserializer).map(Content::new)
    }
}

/// Serialized forms of one message, one slot per wire format, and its
/// content fingerprint.
#[derive(Clone, Default)]
struct WireMemo(Arc<([OnceLock<Bytes>; WIRE_FORMATS], OnceLock<u32>)>);

/// How many wire formats memoize message bytes.
pub(crate) const WIRE_FORMATS: usize = 2;

/// A wire format that memoizes per-message bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WireFormat {
    AnthropicMessages = 0,
    OpenAiChat = 1,
}

impl Message {
    /// A message of `role` with `content`.
    pub fn new(role: Role, content: impl Into<Content>) -> Self {
        Message {
            role,
            content: content.into(),
            wire: WireMemo::default(),
        }
    }

    /// The shared blocks (cloning them costs a reference count).
    pub fn shared_content(&self) -> &Content {
        &self.content
    }

    /// A user message with one text block.
    pub fn user(text: impl Into<String>) -> Self {
        Message::new(Role::User, vec![ContentBlock::text(text)])
    }

    /// An assistant message with one text block.
    pub fn assistant(text: impl Into<String>) -> Self {
        Message::new(Role::Assistant, vec![ContentBlock::text(text)])
    }

    /// Who wrote it.
    pub fn role(&self) -> Role {
        self.role
    }

    /// What it says.
    pub fn content(&self) -> &[ContentBlock] {
        &self.content
    }

    /// Its text blocks joined.
    pub fn text(&self) -> String {
        self.content.text()
    }

    /// Changes the role (and forgets the serialized forms).
    pub fn set_role(&mut self, role: Role) {
        self.role = role;
        self.wire = WireMemo::default();
    }

    /// The blocks, for editing (copied first if shared; forgets the
    /// serialized forms).
    pub fn content_mut(&mut self) -> &mut Vec<ContentBlock> {
        self.wire = WireMemo::default();
        self.content.make_mut()
    }

    /// Whether `other` is this very message (shares its blocks), not merely an
    /// equal one: a check that costs a pointer comparison.
    pub fn same_as(&self, other: &Message) -> bool {
        self.role == other.role && self.content.ptr_eq(&other.content)
    }

    /// Takes the blocks out.
    pub fn into_content(self) -> Vec<ContentBlock> {
        self.content.into_vec()
    }

    /// `bytes` without the growth slack of the buffer they were written
    /// into: a memo lives as long as the conversation, and a serializer's
    /// doubling buffer is up to twice the size of what it holds.
    pub(crate) fn exact(mut bytes: Vec<u8>) -> Bytes {
        bytes.shrink_to_fit();
        Bytes::from(bytes)
    }

    /// The memoized wire bytes of this message in `format`, computed once,
    /// as a shared handle a request body holds without copying them.
    pub(crate) fn wire_chunk(&self, format: WireFormat, render: impl FnOnce(&Message) -> Bytes) -> Bytes {
        self.wire.0.0[format as usize].get_or_init(|| render(self)).clone()
    }

    /// A fingerprint of this message computed once by `compute` and kept
    /// until the message changes (cache telemetry hashes each message once).
    /// Every caller must pass the same function.
    pub fn fingerprint(&self, compute: impl FnOnce(&Message) -> u32) -> u32 {
        *self.wire.0.1.get_or_init(|| compute(self))
    }

    /// Whether this message's bytes in `format` are memoized.
    #[cfg(test)]
    pub(crate) fn has_wire_bytes(&self, format: WireFormat) -> bool {
        self.wire.0.0[format as usize].get().is_some()
    }
}

impl PartialEq for Message {
    fn eq(&self, other: &Self) -> bool {
        self.role == other.role && self.content == other.content
    }
}

impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Message")
            .field("role", &self.role)
            .field("content", &self.content)
            .finish()
    }
}

#[derive(Serialize, Deserialize)]
struct MessageRepr<C> {
    role: Role,
    content: C,
}

impl Serialize for Message {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        MessageRepr {
            role: self.role,
            content: &*self.content,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let repr = MessageRepr::<Vec<ContentBlock>>::deserialize(deserializer)?;
        Ok(Message::new(repr.role, repr.content))
    }
}

/// A message as a session stores it: with an id, a creation stamp and, for
/// assistant turns, the usage of the request that produced it.
///
/// Serializes with camelCase names (`createdAt`), the shape hosts in other
/// languages read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionTurn {
    /// Turn id.
    pub id: String,
    /// Who wrote it.
    pub role: Role,
    /// What it says (shared with the message built from it).
    pub content: Content,
    /// When it was written (epoch milliseconds in JSON).
    pub created_at: crate::time::Timestamp,
    /// Usage of the request that produced an assistant turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<TurnUsage>,
}

impl SessionTurn {
    /// The turn's text blocks joined.
    pub fn text(&self) -> String {
        self.content.text()
    }

    /// The turn as a plain message, sharing its blocks (no block is copied).
    pub fn to_message(&self) -> Message {
        Message::new(self.role, self.content.clone())
    }
}
