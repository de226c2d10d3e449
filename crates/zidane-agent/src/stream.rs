//! A run as a stream of events: [`Agent::run_stream`].

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::Value;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use crate::agent::Agent;
use zidane_core::events::{StreamText, StreamThinking, ToolResultsAfter, TurnAfter};
use zidane_hooks::HookMap;
use zidane_provider::{ContentBlock, ToolResultContent, TurnUsage};

use crate::error::AgentError;
use crate::output::RunOutput;
use crate::run_options::AgentRunOptions;

/// One event of a streamed run, in the order the run makes them.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RunEvent {
    /// A piece of the answer's text, as the model streams it.
    TextDelta(String),
    /// A piece of the model's reasoning, where the model shows it.
    ThinkingDelta(String),
    /// A tool call of the turn that just ended (before it runs).
    ToolCall {
        /// The call's id.
        call_id: String,
        /// The tool's name.
        name: String,
        /// Its arguments.
        input: Value,
    },
    /// An assistant turn ended (its tool calls, if any, were just listed).
    TurnEnd {
        /// The turn's index within the run (from 1).
        turn: u32,
        /// What it cost.
        usage: TurnUsage,
    },
    /// The result the model gets for a call: run, blocked, refused,
    /// unknown, invalid or cancelled.
    ToolResult {
        /// The call's id.
        call_id: String,
        /// The tool's name.
        name: String,
        /// What the model reads.
        content: ToolResultContent,
        /// Whether it reports a failure.
        is_error: bool,
    },
    /// The run ended: the last event of the stream.
    Done(RunOutput),
}

type RunFuture = Pin<Box<dyn Future<Output = Result<RunOutput, AgentError>> + Send>>;

/// A run as a stream of [`RunEvent`]s ([`Agent::run_stream`]): it yields
/// each event as the run makes it, then `Ok(RunEvent::Done(output))`, or
/// the run's error, and then ends.
///
/// It is a [`futures_core::Stream`] (`while let Some(event) =
/// stream.next().await` with `futures::StreamExt` or `tokio_stream`), and
/// has an inherent [`next`](RunStream::next) for callers with neither.
///
/// The run advances only while the stream is polled. Dropping the stream
/// stops the run as dropping [`Agent::run`]'s future does: what was
/// recorded stays, and a durable agent's run can be resumed.
#[must_use = "a stream does nothing unless polled"]
pub struct RunStream {
    events: UnboundedReceiver<RunEvent>,
    run: Option<RunFuture>,
    end: Option<Result<RunOutput, AgentError>>,
}

impl std::fmt::Debug for RunStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunStream")
            .field("running", &self.run.is_some())
            .finish_non_exhaustive()
    }
}

impl RunStream {
    /// The next event; `None` after the last.
    pub async fn next(&mut self) -> Option<Result<RunEvent, AgentError>> {
        std::future::poll_fn(|cx| Pin::new(&mut *self).poll_event(cx)).await
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<RunEvent, AgentError>>> {
        if let Some(run) = &mut self.run
            && let Poll::Ready(result) = run.as_mut().poll(cx)
        {
            self.run = None;
            self.end = Some(result);
        }
        if let Poll::Ready(Some(event)) = self.events.poll_recv(cx) {
            return Poll::Ready(Some(Ok(event)));
        }
        if self.run.is_some() {
            return Poll::Pending;
        }
        // The run ended and every event before its end was given.
        Poll::Ready(self.end.take().map(|end| end.map(RunEvent::Done)))
    }
}

impl futures_core::Stream for RunStream {
    type Item = Result<RunEvent, AgentError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().poll_event(cx)
    }
}

/// Starts `options` on `agent` with its events sent to a stream.
pub(crate) fn start(agent: Agent, mut options: AgentRunOptions) -> RunStream {
    let (tx, events) = unbounded_channel();
    let hooks = std::mem::take(&mut options.hooks);
    options.hooks = forward(hooks, &tx);
    RunStream {
        events,
        run: Some(Box::pin(async move { agent.run(options).await })),
        end: None,
    }
}

/// `hooks` with handlers that send the run's events to `tx`.
fn forward(hooks: HookMap, tx: &UnboundedSender<RunEvent>) -> HookMap {
    let (text, thinking, turns, results) = (tx.clone(), tx.clone(), tx.clone(), tx.clone());
    hooks
        .on_sync::<StreamText, _>(move |ev, _| {
            let _ = text.send(RunEvent::TextDelta(ev.delta().to_owned()));
            Ok(())
        })
        .on_sync::<StreamThinking, _>(move |ev, _| {
            let _ = thinking.send(RunEvent::ThinkingDelta(ev.delta().to_owned()));
            Ok(())
        })
        .on_sync::<TurnAfter, _>(move |ev, _| {
            for block in ev.message().content.iter() {
                if let ContentBlock::ToolUse { id, name, input } = block {
                    let _ = turns.send(RunEvent::ToolCall {
                        call_id: id.clone(),
                        name: name.clone(),
                        input: input.clone(),
                    });
                }
            }
            let _ = turns.send(RunEvent::TurnEnd {
                turn: ev.turn(),
                usage: ev.usage().clone(),
            });
            Ok(())
        })
        .on_sync::<ToolResultsAfter, _>(move |ev, _| {
            for result in ev.results() {
                let _ = results.send(RunEvent::ToolResult {
                    call_id: result.call_id.clone(),
                    name: result.name.clone(),
                    content: result.content.clone(),
                    is_error: result.is_error,
                });
            }
            Ok(())
        })
}
