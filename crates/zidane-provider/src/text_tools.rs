//! Tool calls written in the text, for servers that do not parse them
//! (or fail to): [`TextToolCalls`] wraps a provider, describes the tools in
//! the system prompt instead of sending them, writes earlier calls and
//! results into the conversation as text, and reads the calls back out of
//! the answer: Qwen / Hermes `<tool_call>{…}</tool_call>` tags, or an
//! answer that is nothing but `{"name": …, "arguments": …}` (fenced or
//! not). The answer's text is held back until it ends (a call cannot be
//! told from text before that).
//!
//! In [`TextToolMode::Auto`] requests go out as they are until the server
//! fails to parse a tool call the model wrote (llama.cpp: "does not match
//! the expected … format"); that request is sent again in text mode at
//! once, and the rest of the session stays in it (a `text-tool-calls`
//! diagnostic says so, once).

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use futures_core::Stream;
use serde_json::{Value, json};

use crate::FinishReason;
use crate::abort::AbortSignal;
use crate::error::ProviderError;
use crate::event::{ProviderDiagnostic, StreamEvent};
use crate::message::{ContentBlock, Message};
use crate::options::StreamOptions;
use crate::provider::{EventStream, Provider, ProviderMeta};

/// When tool calls go in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextToolMode {
    /// Always.
    Always,
    /// After the server first fails to parse a call.
    Auto,
}

/// A provider whose tool calls can travel as text (see the module docs).
pub struct TextToolCalls {
    inner: Arc<dyn Provider>,
    text: Arc<AtomicBool>,
}

impl std::fmt::Debug for TextToolCalls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextToolCalls")
            .field("inner", &self.inner.name())
            .field("text", &self.text.load(Ordering::Relaxed))
            .finish()
    }
}

impl TextToolCalls {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn Provider>, mode: TextToolMode) -> Self {
        TextToolCalls {
            inner,
            text: Arc::new(AtomicBool::new(mode == TextToolMode::Always)),
        }
    }

    /// Whether calls travel as text now.
    pub fn in_text_mode(&self) -> bool {
        self.text.load(Ordering::Acquire)
    }
}

/// Whether `error` is a server failing to parse the model's tool call.
pub fn is_tool_parse_failure(error: &ProviderError) -> bool {
    let m = error.message().to_ascii_lowercase();
    m.contains("does not match the expected")
        || m.contains("failed to parse tool call")
        || m.contains("tool call parse")
}

impl Provider for TextToolCalls {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn meta(&self) -> &ProviderMeta {
        self.inner.meta()
    }

    fn stream(&self, options: &StreamOptions, signal: AbortSignal) -> EventStream {
        if options.tools.is_empty() {
            return self.inner.stream(options, signal);
        }
        if self.in_text_mode() {
            return text_stream(&self.inner, options, signal);
        }
        Box::pin(Native {
            inner: self.inner.stream(options, signal.clone()),
            started: false,
            switch: Some((Arc::clone(&self.inner), options.clone(), signal, Arc::clone(&self.text))),
            queued: None,
        })
    }

    fn count_tokens<'a>(
        &'a self,
        options: &'a StreamOptions,
    ) -> Option<crate::provider::BoxFuture<'a, Result<u64, ProviderError>>> {
        self.inner.count_tokens(options)
    }
}

type Switch = (Arc<dyn Provider>, StreamOptions, AbortSignal, Arc<AtomicBool>);

/// The request as it is, turned into text mode when the server fails to
/// parse a call before it sent anything.
struct Native {
    inner: EventStream,
    started: bool,
    switch: Option<Switch>,
    queued: Option<StreamEvent>,
}

impl Stream for Native {
    type Item = Result<StreamEvent, ProviderError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some(event) = self.queued.take() {
            return Poll::Ready(Some(Ok(event)));
        }
        let polled = self.inner.as_mut().poll_next(cx);
        match polled {
            Poll::Ready(Some(Err(error))) if is_tool_parse_failure(&error) => {
                let Some((provider, options, signal, text)) = self.switch.take() else {
                    return Poll::Ready(Some(Err(error)));
                };
                text.store(true, Ordering::Release);
                if self.started {
                    // Part of the answer is out: the loop retries the turn,
                    // which goes out in text mode.
                    return Poll::Ready(Some(Err(error)));
                }
                self.inner = text_stream(&provider, &options, signal);
                self.started = true;
                self.queued = None;
                Poll::Ready(Some(Ok(StreamEvent::Diagnostic(ProviderDiagnostic {
                    kind: "text-tool-calls".into(),
                    message: "the server could not parse the model's tool call; tools are described in the prompt and calls read from the text for the rest of the session".into(),
                    data: json!({ "error": error.message() }),
                }))))
            }
            Poll::Ready(Some(Ok(event))) => {
                self.started = true;
                Poll::Ready(Some(Ok(event)))
            }
            other => other,
        }
    }
}

/// The system prompt's tools section.
fn tools_prompt(options: &StreamOptions) -> String {
    // A small model copies a placeholder name as it is: the example names a
    // real tool, with its required arguments.
    let example = options.tools.first().map_or_else(String::new, |tool| {
        let args: serde_json::Map<String, Value> = tool.input_schema["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(|name| {
                let value = match tool.input_schema["properties"][name]["type"].as_str() {
                    Some("integer" | "number") => json!(1),
                    Some("boolean") => json!(true),
                    Some("array") => json!([]),
                    Some("object") => json!({}),
                    _ => json!("…"),
                };
                (name.to_owned(), value)
            })
            .collect();
        format!(
            "For example:\n<tool_call>\n{{\"name\": {}, \"arguments\": {}}}\n</tool_call>\n",
            json!(tool.name),
            Value::Object(args)
        )
    });
    let mut out = format!(
        "# Tools\n\nYou can call these tools. To call one, answer with exactly\n<tool_call>\n{{\"name\": \"<a tool's name from the list below>\", \"arguments\": {{…}}}}\n</tool_call>\n(one block per call, the arguments as a JSON object) and stop; the result comes back in <tool_response>. Without a call, answer normally. {example}",
    );
    for tool in &options.tools {
        out.push_str(&format!(
            "\n## {}\n{}\nArguments (JSON schema): {}\n",
            tool.name, tool.description, tool.input_schema
        ));
    }
    out
}

/// Earlier calls and results as text.
fn as_text(message: &Message) -> Message {
    let blocks: Vec<ContentBlock> = message
        .content()
        .iter()
        .map(|block| match block {
            ContentBlock::ToolUse { name, input, .. } => ContentBlock::text(format!(
                "<tool_call>\n{}\n</tool_call>",
                json!({ "name": name, "arguments": input })
            )),
            ContentBlock::ToolResult { content, is_error, .. } => {
                let text = content.text();
                let error = if *is_error { " error=\"true\"" } else { "" };
                ContentBlock::text(format!("<tool_response{error}>\n{text}\n</tool_response>"))
            }
            other => other.clone(),
        })
        .collect();
    Message::new(message.role(), blocks)
}

/// The request in text mode.
pub(crate) fn text_request(options: &StreamOptions) -> StreamOptions {
    let mut request = options.clone();
    let tools = tools_prompt(options);
    request.system = Some(match &options.system {
        Some(system) => format!("{system}\n\n{tools}"),
        None => tools,
    });
    request.tools.clear();
    request.tool_choice = None;
    request.messages = options.messages.iter().map(as_text).collect();
    request
}

fn text_stream(provider: &Arc<dyn Provider>, options: &StreamOptions, signal: AbortSignal) -> EventStream {
    Box::pin(TextMode {
        inner: provider.stream(&text_request(options), signal),
        names: options.tools.iter().map(|t| t.name.clone()).collect(),
        text: String::new(),
        out: std::collections::VecDeque::new(),
        done: false,
    })
}

/// Numbers the answers whose calls are read from text, in this process.
static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// What makes this process's call ids its own: a random value drawn once.
/// A counter alone starts again at 0 in every process, so a session
/// resumed by another process (or served by another replica) would hold
/// two calls of one id, and a sub-agent or a step record keyed by the call
/// would be taken for an earlier one.
fn process_nonce() -> u64 {
    static NONCE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *NONCE.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        // `RandomState` is seeded from the operating system's randomness;
        // the process id and the time only add to it.
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        if let Ok(since) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
            hasher.write_u128(since.as_nanos());
        }
        hasher.finish()
    })
}

/// The id of the `n`th call read from an answer (`stamp` numbers the
/// answer in this process): unique across processes and replicas.
pub(crate) fn text_call_id(stamp: u64, n: usize) -> String {
    format!("text_call_{:012x}_{stamp}_{n}", process_nonce() & 0xFFFF_FFFF_FFFF)
}

/// Holds the text back, then gives it and the calls found in it.
struct TextMode {
    inner: EventStream,
    /// The tools offered: a "call" of anything else is text.
    names: Vec<String>,
    text: String,
    out: std::collections::VecDeque<StreamEvent>,
    done: bool,
}

impl Stream for TextMode {
    type Item = Result<StreamEvent, ProviderError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if let Some(event) = self.out.pop_front() {
                return Poll::Ready(Some(Ok(event)));
            }
            if self.done {
                return Poll::Ready(None);
            }
            match self.inner.as_mut().poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => self.done = true,
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
                Poll::Ready(Some(Ok(StreamEvent::TextDelta { text, .. }))) => self.text.push_str(&text),
                Poll::Ready(Some(Ok(StreamEvent::End {
                    finish_reason,
                    raw_reason,
                }))) => {
                    let (text, calls) = parse_calls(&self.text, &self.names);
                    let mut index = 0;
                    if !text.trim().is_empty() {
                        self.out.push_back(StreamEvent::TextDelta {
                            index,
                            text: text.trim().to_owned(),
                        });
                        index += 1;
                    }
                    let called = !calls.is_empty();
                    let stamp = CALLS.fetch_add(1, Ordering::Relaxed);
                    for (n, (name, arguments)) in calls.into_iter().enumerate() {
                        self.out.push_back(StreamEvent::ToolCallStart {
                            index,
                            id: text_call_id(stamp, n),
                            name,
                        });
                        self.out
                            .push_back(StreamEvent::ToolCallDelta { index, json: arguments });
                        self.out.push_back(StreamEvent::ToolCallEnd { index });
                        index += 1;
                    }
                    self.out.push_back(StreamEvent::End {
                        finish_reason: if called { FinishReason::ToolCalls } else { finish_reason },
                        raw_reason,
                    });
                    self.done = true;
                }
                Poll::Ready(Some(Ok(other))) => return Poll::Ready(Some(Ok(other))),
            }
        }
    }
}

/// The text without its calls, and each call's name and arguments (as
/// written: the loop repairs near-misses).
pub(crate) fn parse_calls(text: &str, names: &[String]) -> (String, Vec<(String, String)>) {
    let known = |call: &(String, String)| names.contains(&call.0);
    let mut calls = Vec::new();
    let mut rest = String::new();
    let mut remaining = text;
    while let Some(start) = remaining.find("<tool_call>") {
        rest.push_str(&remaining[..start]);
        let after = &remaining[start + "<tool_call>".len()..];
        let (body, next) = match after.find("</tool_call>") {
            Some(end) => (&after[..end], &after[end + "</tool_call>".len()..]),
            None => (after, ""),
        };
        match call_of(body).filter(known) {
            Some(call) => calls.push(call),
            None => rest.push_str(&remaining[start..remaining.len() - next.len()]),
        }
        remaining = next;
    }
    rest.push_str(remaining);
    if calls.is_empty()
        && let Some(call) = call_of(text).filter(known)
    {
        return (String::new(), vec![call]);
    }
    (rest, calls)
}

/// `{"name": …, "arguments": …}` (fenced or not, arguments as an object
/// or as a JSON string).
fn call_of(body: &str) -> Option<(String, String)> {
    let mut body = body.trim();
    if let Some(fenced) = body.strip_prefix("```") {
        let inner = fenced.split_once('\n').map_or(fenced, |(_, b)| b);
        body = inner.trim_end().strip_suffix("```").unwrap_or(inner).trim();
    }
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return loose_call(body);
    };
    let name = value.get("name")?.as_str()?.to_owned();
    let arguments = match value.get("arguments").or_else(|| value.get("parameters")) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => "{}".to_owned(),
    };
    let keys = value.as_object().map_or(0, |o| o.len());
    (keys <= 2).then_some((name, arguments))
}

/// `{"name": "X", "arguments": …}` whose arguments are not quite JSON: the
/// name, and the arguments as written (the loop repairs what it can).
fn loose_call(body: &str) -> Option<(String, String)> {
    let inner = body.strip_prefix('{')?.strip_suffix('}')?.trim();
    let rest = inner
        .strip_prefix("\"name\"")?
        .trim_start()
        .strip_prefix(':')?
        .trim_start();
    let rest = rest.strip_prefix('"')?;
    let (name, rest) = rest.split_once('"')?;
    let rest = rest.trim_start().strip_prefix(',')?.trim_start();
    let rest = rest
        .strip_prefix("\"arguments\"")
        .or_else(|| rest.strip_prefix("\"parameters\""))?
        .trim_start()
        .strip_prefix(':')?;
    let arguments = rest.trim().trim_end_matches(',').trim();
    (!name.is_empty() && arguments.starts_with(['{', '"'])).then(|| (name.to_owned(), arguments.to_owned()))
}

#[cfg(test)]
mod tests;
