//! Messages, content blocks and session turns.

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
    /// A block of a type this crate does not model, preserved as sent.
    #[serde(untagged)]
    Unknown(Value),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text { text: text.into() }
    }
}

/// A message: a role and its blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// What it says.
    pub content: Vec<ContentBlock>,
}

impl Message {
    /// A user message with one text block.
    pub fn user(text: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: vec![ContentBlock::text(text)],
        }
    }

    /// An assistant message with one text block.
    pub fn assistant(text: impl Into<String>) -> Self {
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::text(text)],
        }
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
    /// What it says.
    pub content: Vec<ContentBlock>,
    /// Creation time, epoch milliseconds.
    pub created_at: u64,
    /// Usage of the request that produced an assistant turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<TurnUsage>,
}

impl SessionTurn {
    /// The turn as a plain message.
    pub fn to_message(&self) -> Message {
        Message {
            role: self.role,
            content: self.content.clone(),
        }
    }
}
