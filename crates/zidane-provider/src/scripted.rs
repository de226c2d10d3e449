//! A scripted provider for tests: each request plays the next script of
//! events, delays and errors. Delays use tokio's clock, so a test with a
//! paused clock runs them in virtual time.

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_core::Stream;
use serde_json::Value;

use crate::abort::AbortSignal;
use crate::error::{ErrorKind, ProviderError};
use crate::event::{StreamEvent, UsageReport};
use crate::options::StreamOptions;
use crate::provider::{Capabilities, EventStream, Provider, ProviderMeta};
use crate::usage::FinishReason;

/// One step of a script.
#[derive(Debug)]
pub enum Step {
    /// Yield an event.
    Event(StreamEvent),
    /// Wait (on tokio's clock).
    Delay(Duration),
    /// Fail the stream.
    Error(ProviderError),
    /// Never yield again (until aborted).
    Hang,
}

/// What one request answers.
#[derive(Debug, Default)]
pub struct Script {
    steps: Vec<Step>,
}

impl Script {
    /// An empty script.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a step.
    pub fn then(mut self, step: Step) -> Self {
        self.steps.push(step);
        self
    }

    /// Appends an event.
    pub fn event(self, event: StreamEvent) -> Self {
        self.then(Step::Event(event))
    }

    /// Appends a delay.
    pub fn delay(self, delay: Duration) -> Self {
        self.then(Step::Delay(delay))
    }

    /// Appends text, streamed in one delta.
    pub fn text(self, text: impl Into<String>) -> Self {
        self.event(StreamEvent::TextDelta {
            index: 0,
            text: text.into(),
        })
    }

    /// Appends a complete tool call at block `index`.
    pub fn tool_call(self, index: usize, id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        self.event(StreamEvent::ToolCallStart {
            index,
            id: id.into(),
            name: name.into(),
        })
        .event(StreamEvent::ToolCallDelta {
            index,
            json: input.to_string(),
        })
        .event(StreamEvent::ToolCallEnd { index })
    }

    /// Appends a usage report.
    pub fn usage(self, input: u64, output: u64) -> Self {
        self.event(StreamEvent::Usage(UsageReport {
            input: Some(input),
            output: Some(output),
            ..Default::default()
        }))
    }

    /// Appends the end of the response.
    pub fn end(self, finish_reason: FinishReason) -> Self {
        self.event(StreamEvent::End {
            finish_reason,
            raw_reason: None,
        })
    }

    /// Appends a failure.
    pub fn error(self, error: ProviderError) -> Self {
        self.then(Step::Error(error))
    }

    /// A whole plain answer: text, usage (10 in, 5 out), `stop`.
    pub fn answer(text: impl Into<String>) -> Self {
        Script::new().text(text).usage(10, 5).end(FinishReason::Stop)
    }

    /// A whole tool-calling turn: one call, usage, `tool-calls`.
    pub fn call(id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        Script::new()
            .tool_call(0, id, name, input)
            .usage(10, 5)
            .end(FinishReason::ToolCalls)
    }
}

#[derive(Default)]
struct State {
    scripts: VecDeque<Script>,
    requests: Vec<StreamOptions>,
}

/// A [`Provider`] that answers each request with the next [`Script`] and
/// records the requests it received.
#[derive(Clone)]
pub struct ScriptedProvider {
    name: String,
    meta: ProviderMeta,
    state: Arc<Mutex<State>>,
}

impl std::fmt::Debug for ScriptedProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedProvider")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl ScriptedProvider {
    /// A provider named `name` with the given scripts, in order.
    pub fn new(name: impl Into<String>, scripts: impl IntoIterator<Item = Script>) -> Self {
        let capabilities = Capabilities {
            thinking: true,
            cache_control: true,
            images: true,
            documents: true,
            count_tokens: false,
            decisions: true,
        };
        ScriptedProvider {
            name: name.into(),
            meta: ProviderMeta::new("scripted-model", 200_000, capabilities),
            state: Arc::new(Mutex::new(State {
                scripts: scripts.into_iter().collect(),
                requests: Vec::new(),
            })),
        }
    }

    /// The same provider with other metadata (a context window, the
    /// capabilities a test needs).
    pub fn with_meta(mut self, meta: ProviderMeta) -> Self {
        self.meta = meta;
        self
    }

    /// Queues another script.
    pub fn push(&self, script: Script) {
        self.lock().scripts.push_back(script);
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<StreamOptions> {
        self.lock().requests.clone()
    }

    /// Scripts not played yet.
    pub fn remaining(&self) -> usize {
        self.lock().scripts.len()
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, State> {
        self.state.lock()
    }
}

impl Provider for ScriptedProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn meta(&self) -> &ProviderMeta {
        &self.meta
    }

    fn stream(&self, options: &StreamOptions, signal: AbortSignal) -> EventStream {
        let mut state = self.lock();
        state.requests.push(options.clone());
        let steps = match state.scripts.pop_front() {
            Some(script) => script.steps.into(),
            None => VecDeque::from([Step::Error(ProviderError::new(
                ErrorKind::InvalidRequest,
                &self.name,
                "the script has no answer left for this request",
            ))]),
        };
        Box::pin(Play {
            provider: self.name.clone(),
            steps,
            sleep: None,
            signal,
            done: false,
        })
    }
}

struct Play {
    provider: String,
    steps: VecDeque<Step>,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    signal: AbortSignal,
    done: bool,
}

impl Stream for Play {
    type Item = Result<StreamEvent, ProviderError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if this.done {
                return Poll::Ready(None);
            }
            if this.signal.poll_aborted(cx).is_ready() {
                this.done = true;
                let reason = this.signal.reason().unwrap_or_else(|| "request aborted".to_owned());
                return Poll::Ready(Some(Err(ProviderError::new(
                    ErrorKind::Aborted,
                    &this.provider,
                    reason,
                ))));
            }
            if let Some(sleep) = &mut this.sleep {
                if sleep.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                this.sleep = None;
            }
            match this.steps.pop_front() {
                None => {
                    this.done = true;
                    return Poll::Ready(None);
                }
                Some(Step::Event(event)) => return Poll::Ready(Some(Ok(event))),
                Some(Step::Delay(delay)) => this.sleep = Some(Box::pin(tokio::time::sleep(delay))),
                Some(Step::Error(error)) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(error)));
                }
                Some(Step::Hang) => {
                    this.steps.push_front(Step::Hang);
                    return Poll::Pending;
                }
            }
        }
    }
}
