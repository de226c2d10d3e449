//! Provider-neutral stream events and the accumulator that turns them into
//! the assistant message.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::message::{ContentBlock, Message, Role};
use crate::usage::{FinishReason, TurnUsage};

/// Token counts reported during a stream; each field, when present, is the
/// current total for the request (later reports replace earlier ones).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct UsageReport {
    /// Input tokens excluding cache reads and writes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<u64>,
    /// Output tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<u64>,
    /// Cache-read tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<u64>,
    /// Cache-write tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_creation: Option<u64>,
    /// Cache-write tokens with a 5-minute lifetime.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_creation_5m: Option<u64>,
    /// Cache-write tokens with a 1-hour lifetime.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_creation_1h: Option<u64>,
}

/// One event of a streamed response. `index` is the position of the content
/// block the event belongs to.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// The response started.
    Start {
        /// Provider's message id.
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// Model that serves the request.
        #[serde(skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    /// Text.
    TextDelta {
        /// Block index.
        index: usize,
        /// The new text.
        text: String,
    },
    /// Visible reasoning.
    ThinkingDelta {
        /// Block index.
        index: usize,
        /// The new reasoning text.
        text: String,
    },
    /// The signature closing a reasoning block.
    ThinkingSignature {
        /// Block index.
        index: usize,
        /// The signature, replayed verbatim later.
        signature: String,
    },
    /// An encrypted reasoning block.
    RedactedThinking {
        /// Block index.
        index: usize,
        /// Opaque data.
        data: String,
    },
    /// A client-side tool call begins.
    ToolCallStart {
        /// Block index.
        index: usize,
        /// Call id.
        id: String,
        /// Tool name as the model called it.
        name: String,
    },
    /// A fragment of a tool call's JSON arguments.
    ToolCallDelta {
        /// Block index.
        index: usize,
        /// The fragment.
        json: String,
    },
    /// A tool call's arguments are complete.
    ToolCallEnd {
        /// Block index.
        index: usize,
    },
    /// A server-side tool call, complete.
    ServerToolUse {
        /// Block index.
        index: usize,
        /// Call id.
        id: String,
        /// Server tool name.
        name: String,
        /// Arguments.
        input: Value,
    },
    /// A server-side tool result, complete.
    ServerToolResult {
        /// Block index.
        index: usize,
        /// Id of the server call it answers.
        tool_use_id: String,
        /// The provider's block type.
        kind: String,
        /// Raw payload.
        content: Value,
    },
    /// A block of a type this crate does not model, complete, as sent.
    OtherBlock {
        /// Block index.
        index: usize,
        /// The block.
        block: Value,
    },
    /// Token counts so far.
    Usage(UsageReport),
    /// The provider changed the request's input before the model saw it,
    /// one entry per change as the provider sent it (Anthropic's
    /// `input_transformations`: a replayed thinking block dropped, or kept
    /// despite a failed binding check). Nothing in the message changes.
    InputTransformations(Vec<Value>),
    /// Something the provider reported about the turn that is not part of
    /// the message: a refusal's details, a server-side model fallback, a
    /// content filter. The message is unchanged.
    Diagnostic(ProviderDiagnostic),
    /// The response ended.
    End {
        /// Why.
        finish_reason: FinishReason,
        /// The provider's own stop reason.
        #[serde(skip_serializing_if = "Option::is_none")]
        raw_reason: Option<String>,
    },
}

/// A provider-reported fact about a turn, as `provider:diagnostic` carries
/// it. What maps to one, by wire format:
///
/// | `kind` | Anthropic Messages | OpenAI Chat Completions |
/// |---|---|---|
/// | `refusal` | `message_delta.delta.stop_details` (its `category`, `explanation`) | `delta.refusal` text (the refusal as `message`) |
/// | `fallback` | a `fallback` content block (`from`, `to`, `trigger`) | — |
/// | `fallback-credit` | `usage.fallback_credit` on `message_delta` | — |
/// | `content-filter` | — | `finish_reason: "content_filter"` |
/// | `prompt-progress` | — | llama.cpp's `prompt_progress` (`total`, `cache`, `processed`, `time_ms`), asked with [`Dialect::prompt_progress`](crate::openai::Dialect::prompt_progress) |
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderDiagnostic {
    /// What was reported (see the table).
    pub kind: String,
    /// One line for a person.
    pub message: String,
    /// The wire object as the provider sent it.
    pub data: Value,
}

/// A tool call the stream cut off before its arguments were complete. It is
/// never part of the message's content, so it can never be dispatched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IncompleteToolCall {
    /// Call id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// The arguments received so far.
    pub partial_json: String,
}

/// The assistant message a stream produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessage {
    /// Provider's message id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Model that served it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Content blocks, in order (empty text blocks dropped).
    pub content: Vec<ContentBlock>,
    /// Tool calls cut off mid-arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub incomplete_tool_calls: Vec<IncompleteToolCall>,
    /// Why it ended (`error` when the stream stopped without saying).
    pub finish_reason: FinishReason,
    /// The provider's own stop reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_reason: Option<String>,
    /// Token usage.
    pub usage: TurnUsage,
}

impl AssistantMessage {
    /// The message as a conversation entry.
    pub fn to_message(&self) -> Message {
        Message::new(Role::Assistant, self.content.clone())
    }

    /// The text blocks joined.
    pub fn text(&self) -> String {
        crate::message::text_of(&self.content)
    }

    /// The dispatchable tool calls: `(id, name, input)`.
    pub fn tool_calls(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        self.content.iter().filter_map(|b| match b {
            ContentBlock::ToolUse { id, name, input } => Some((id.as_str(), name.as_str(), input)),
            _ => None,
        })
    }
}

#[derive(Debug)]
enum Builder {
    Text(String),
    Thinking {
        text: String,
        signature: Option<String>,
    },
    Redacted(String),
    Tool {
        id: String,
        name: String,
        json: String,
        ended: bool,
    },
    Done(ContentBlock),
}

/// Folds stream events into an [`AssistantMessage`].
#[derive(Debug, Default)]
pub struct MessageAccumulator {
    id: Option<String>,
    model: Option<String>,
    blocks: BTreeMap<usize, Builder>,
    usage: UsageReport,
    finish: Option<(FinishReason, Option<String>)>,
}

impl MessageAccumulator {
    /// An empty accumulator.
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies one event.
    pub fn push(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::Start { id, model } => {
                self.id.clone_from(id);
                self.model.clone_from(model);
            }
            StreamEvent::TextDelta { index, text } => {
                if let Builder::Text(buf) = self
                    .blocks
                    .entry(*index)
                    .or_insert_with(|| Builder::Text(String::new()))
                {
                    buf.push_str(text);
                }
            }
            StreamEvent::ThinkingDelta { index, text } => {
                if let Builder::Thinking { text: buf, .. } = self.thinking(*index) {
                    buf.push_str(text);
                }
            }
            StreamEvent::ThinkingSignature { index, signature } => {
                if let Builder::Thinking { signature: sig, .. } = self.thinking(*index) {
                    sig.get_or_insert_with(String::new).push_str(signature);
                }
            }
            StreamEvent::RedactedThinking { index, data } => {
                self.blocks.insert(*index, Builder::Redacted(data.clone()));
            }
            StreamEvent::ToolCallStart { index, id, name } => {
                self.blocks.insert(
                    *index,
                    Builder::Tool {
                        id: id.clone(),
                        name: name.clone(),
                        json: String::new(),
                        ended: false,
                    },
                );
            }
            StreamEvent::ToolCallDelta { index, json } => {
                if let Some(Builder::Tool { json: buf, .. }) = self.blocks.get_mut(index) {
                    buf.push_str(json);
                }
            }
            StreamEvent::ToolCallEnd { index } => {
                if let Some(Builder::Tool { ended, .. }) = self.blocks.get_mut(index) {
                    *ended = true;
                }
            }
            StreamEvent::ServerToolUse { index, id, name, input } => {
                let block = ContentBlock::ServerToolUse {
                    id: id.clone(),
                    name: name.clone(),
                    input: input.clone(),
                };
                self.blocks.insert(*index, Builder::Done(block));
            }
            StreamEvent::ServerToolResult {
                index,
                tool_use_id,
                kind,
                content,
            } => {
                let block = ContentBlock::ServerToolResult {
                    tool_use_id: tool_use_id.clone(),
                    kind: kind.clone(),
                    content: content.clone(),
                };
                self.blocks.insert(*index, Builder::Done(block));
            }
            StreamEvent::OtherBlock { index, block } => {
                let block =
                    serde_json::from_value(block.clone()).unwrap_or_else(|_| ContentBlock::Unknown(block.clone()));
                self.blocks.insert(*index, Builder::Done(block));
            }
            StreamEvent::Usage(report) => merge_usage(&mut self.usage, report),
            StreamEvent::InputTransformations(_) | StreamEvent::Diagnostic(_) => {}
            StreamEvent::End {
                finish_reason,
                raw_reason,
            } => {
                self.finish = Some((*finish_reason, raw_reason.clone()));
            }
        }
    }

    /// Holds the place of text block `index` whose text the caller keeps
    /// itself (a buffer it shares with observers): the block stays empty
    /// until [`finish_with_text`](Self::finish_with_text) fills it, so the
    /// text is held once, not twice.
    pub fn push_text_elsewhere(&mut self, index: usize) {
        self.blocks.entry(index).or_insert_with(|| Builder::Text(String::new()));
    }

    /// [`finish`](Self::finish), with the text of the blocks kept elsewhere
    /// (by block index, in order).
    pub fn finish_with_text(mut self, texts: Vec<(usize, String)>) -> AssistantMessage {
        for (index, text) in texts {
            if let Some(Builder::Text(buf)) = self.blocks.get_mut(&index) {
                if buf.is_empty() {
                    *buf = text;
                } else {
                    buf.push_str(&text);
                }
            }
        }
        self.finish()
    }

    fn thinking(&mut self, index: usize) -> &mut Builder {
        self.blocks.entry(index).or_insert_with(|| Builder::Thinking {
            text: String::new(),
            signature: None,
        })
    }

    /// Usage reported so far.
    pub fn usage(&self) -> &UsageReport {
        &self.usage
    }

    /// Whether the stream has said how it ended.
    pub fn is_finished(&self) -> bool {
        self.finish.is_some()
    }

    /// The message. A tool call is kept only when its arguments were closed
    /// and parse as a JSON object (empty arguments count as `{}`); any other
    /// becomes an [`IncompleteToolCall`].
    pub fn finish(self) -> AssistantMessage {
        let (finish_reason, raw_reason) = self.finish.unwrap_or((FinishReason::Error, None));
        let mut content = Vec::with_capacity(self.blocks.len());
        let mut incomplete_tool_calls = Vec::new();
        for builder in self.blocks.into_values() {
            match builder {
                Builder::Text(text) if text.is_empty() => {}
                // The text lives on in the conversation: without the
                // buffer's growth slack.
                Builder::Text(mut text) => {
                    text.shrink_to_fit();
                    content.push(ContentBlock::Text { text });
                }
                Builder::Thinking { mut text, signature } => {
                    text.shrink_to_fit();
                    content.push(ContentBlock::Thinking {
                        thinking: text,
                        signature,
                    });
                }
                Builder::Redacted(data) => content.push(ContentBlock::RedactedThinking { data }),
                Builder::Tool { id, name, json, ended } => match parse_arguments(&json).filter(|_| ended) {
                    Some(input) => content.push(ContentBlock::ToolUse { id, name, input }),
                    None => incomplete_tool_calls.push(IncompleteToolCall {
                        id,
                        name,
                        partial_json: json,
                    }),
                },
                Builder::Done(block) => content.push(block),
            }
        }
        let u = self.usage;
        AssistantMessage {
            id: self.id,
            model: self.model.clone(),
            content,
            incomplete_tool_calls,
            finish_reason,
            raw_reason,
            usage: TurnUsage {
                input: u.input.unwrap_or(0),
                output: u.output.unwrap_or(0),
                cache_read: u.cache_read.unwrap_or(0),
                cache_creation: u.cache_creation.unwrap_or(0),
                cache_creation_5m: u.cache_creation_5m,
                cache_creation_1h: u.cache_creation_1h,
                cost: None,
                model_id: self.model,
                finish_reason: Some(finish_reason),
            },
        }
    }
}

fn parse_arguments(json: &str) -> Option<Value> {
    if json.trim().is_empty() {
        return Some(Value::Object(Map::new()));
    }
    match serde_json::from_str::<Value>(json) {
        Ok(v @ Value::Object(_)) => Some(v),
        _ => None,
    }
}

fn merge_usage(into: &mut UsageReport, report: &UsageReport) {
    let fields = [
        (&mut into.input, report.input),
        (&mut into.output, report.output),
        (&mut into.cache_read, report.cache_read),
        (&mut into.cache_creation, report.cache_creation),
        (&mut into.cache_creation_5m, report.cache_creation_5m),
        (&mut into.cache_creation_1h, report.cache_creation_1h),
    ];
    for (slot, value) in fields {
        if value.is_some() {
            *slot = value;
        }
    }
}
