//! The agent's bus, turned into the conversation's [`Event`]s: each handler
//! only sends; the front end's own loop draws.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use zidane::agent::events::{
    BackgroundExit, BackgroundStall, BackgroundStart, CacheBreak, ChildStreamEnd, ChildToolAfter, ChildToolCancelled,
    ChildToolDispatched, CompactEnd, CompactStart, McpAuthRequired, McpBootstrapEnd, McpBootstrapOutcome,
    ModelFallback, ProviderDiagnostic, SkillsActivate, SpawnError, SpawnQueued, SteerInject, StreamProgress,
    StreamRetry, StreamStart, StreamText, StreamThinking, ToolAfter, ToolCancelled, ToolDispatched, TurnAfter,
    TurnBefore,
};
use zidane::hooks::{HookBus, HookScope};

use crate::event::{ChildRef, Event, Events, McpState, Retry, TaskEnd, ToolCallEvent, ToolResultEvent, TurnFigures};

/// A `prompt-progress` diagnostic's tokens read and total.
fn prompt_progress(ev: &ProviderDiagnostic) -> Option<(u64, u64)> {
    if ev.kind() != "prompt-progress" {
        return None;
    }
    Some((ev.data()["processed"].as_u64()?, ev.data()["total"].as_u64()?))
}

/// Sends what the agent does to `events`, for as long as the scope lives.
pub(crate) fn install(hooks: &HookBus, events: &Events) -> HookScope {
    let scope = hooks.scope();
    install_model(&scope, events);
    install_tools(&scope, events);
    install_children(&scope, events);
    install_background(&scope, events);
    install_notes(&scope, events);
    scope
}

fn install_model(scope: &HookScope, events: &Events) {
    // The prompt's size, estimated at four bytes a token, for the line that
    // says the model is reading it.
    let prompt = Arc::new(AtomicU64::new(0));
    let size = Arc::clone(&prompt);
    scope.on_sync::<TurnBefore, _>(move |ev, _| {
        let tokens = crate::window::request_bytes(&ev.options).div_ceil(4) as u64;
        size.store(tokens, Ordering::Relaxed);
        Ok(())
    });
    let e = events.clone();
    scope.on_sync::<StreamStart, _>(move |_, _| {
        e.send(Event::RequestStart {
            prompt_tokens: prompt.load(Ordering::Relaxed),
        });
        Ok(())
    });
    let e = events.clone();
    scope.on_sync::<StreamProgress, _>(move |ev, _| {
        e.send(Event::Writing { tokens: ev.tokens() });
        Ok(())
    });
    let e = events.clone();
    scope.on_sync::<StreamText, _>(move |ev, _| {
        e.send(Event::Text(ev.delta().to_owned()));
        Ok(())
    });
    let e = events.clone();
    scope.on_sync::<StreamThinking, _>(move |ev, _| {
        e.send(Event::Thinking(ev.delta().to_owned()));
        Ok(())
    });
    let e = events.clone();
    scope.on_sync::<TurnAfter, _>(move |ev, _| {
        let usage = ev.usage();
        e.send(Event::TurnEnd(TurnFigures {
            input: usage.input,
            output: usage.output,
            cache_read: usage.cache_read,
            cache_creation: usage.cache_creation,
            cost: usage.cost,
            model: usage.model_id.clone(),
        }));
        Ok(())
    });
    let e = events.clone();
    scope.on_sync::<StreamRetry, _>(move |ev, _| {
        e.send(Event::Retry(Retry {
            attempt: ev.attempt(),
            next_attempt: ev.next_attempt(),
            max_attempts: ev.max_attempts(),
            delay_ms: ev.delay_ms(),
            error: ev.err().to_string(),
            discarded_text: ev.discarded_text(),
        }));
        Ok(())
    });
    let e = events.clone();
    scope.on_sync::<ModelFallback, _>(move |ev, _| {
        e.send(Event::Fallback {
            from: ev.from().clone(),
            to: ev.to().clone(),
        });
        Ok(())
    });
    let e = events.clone();
    scope.on_sync::<ProviderDiagnostic, _>(move |ev, _| {
        e.send(match prompt_progress(ev) {
            Some((done, total)) => Event::PromptProgress { done, total },
            None => Event::ProviderNote {
                kind: ev.kind().to_owned(),
                message: ev.message().to_owned(),
            },
        });
        Ok(())
    });
}

fn install_tools(scope: &HookScope, events: &Events) {
    // The language server's report rides the result's metadata, which the
    // `tool:after` event does not carry: kept by call until then.
    let reports: Arc<parking_lot::Mutex<std::collections::HashMap<String, zidane::lsp::EditReport>>> = Arc::default();
    let kept = Arc::clone(&reports);
    scope.on_sync::<zidane::agent::events::ToolTransform, _>(move |ev, _| {
        if let Some(report) = ev
            .metadata
            .get(zidane::lsp::METADATA_KEY)
            .and_then(|v| serde_json::from_value(v.clone()).ok())
        {
            kept.lock().insert(ev.call_id().to_owned(), report);
        }
        Ok(())
    });
    let e = events.clone();
    scope.on_sync::<ToolDispatched, _>(move |ev, _| {
        e.send(Event::ToolCall(ToolCallEvent {
            id: ev.call_id().to_owned(),
            name: ev.name().to_owned(),
            input: ev.input().clone(),
            outcome: ev.outcome(),
            reason: ev.reason().map(str::to_owned),
            child: None,
        }));
        Ok(())
    });
    let e = events.clone();
    scope.on_sync::<ToolAfter, _>(move |ev, _| {
        e.send(Event::ToolResult(ToolResultEvent {
            id: ev.call_id().to_owned(),
            name: ev.name().to_owned(),
            input: ev.input().clone(),
            content: ev.result().clone(),
            is_error: ev.is_error(),
            child: None,
            diagnostics: reports.lock().remove(ev.call_id()),
        }));
        Ok(())
    });
    let e = events.clone();
    scope.on_sync::<ToolCancelled, _>(move |ev, _| {
        e.send(Event::ToolCancelled {
            id: ev.call_id().to_owned(),
            reason: ev.reason().to_owned(),
            child: None,
        });
        Ok(())
    });
}

fn install_children(scope: &HookScope, events: &Events) {
    let e = events.clone();
    scope.on_sync::<ChildToolDispatched, _>(move |ev, _| {
        e.send(Event::ToolCall(ToolCallEvent {
            id: ev.call_id().to_owned(),
            name: ev.name().to_owned(),
            input: ev.input().clone(),
            outcome: ev.outcome(),
            reason: ev.reason().map(str::to_owned),
            child: Some(ChildRef {
                id: ev.child_id().to_owned(),
                depth: ev.depth(),
            }),
        }));
        Ok(())
    });
    let e = events.clone();
    scope.on_sync::<ChildToolAfter, _>(move |ev, _| {
        e.send(Event::ToolResult(ToolResultEvent {
            id: ev.call_id().to_owned(),
            name: ev.name().to_owned(),
            input: serde_json::Value::Null,
            content: ev.result().clone(),
            is_error: ev.is_error(),
            child: Some(ChildRef {
                id: ev.child_id().to_owned(),
                depth: ev.depth(),
            }),
            diagnostics: None,
        }));
        Ok(())
    });
    let e = events.clone();
    scope.on_sync::<ChildToolCancelled, _>(move |ev, _| {
        e.send(Event::ToolCancelled {
            id: ev.call_id().to_owned(),
            reason: ev.reason().to_owned(),
            child: Some(ChildRef {
                id: ev.child_id().to_owned(),
                depth: ev.depth(),
            }),
        });
        Ok(())
    });
    let e = events.clone();
    scope.on_sync::<ChildStreamEnd, _>(move |ev, _| {
        let text = ev.text().trim();
        if !text.is_empty() {
            e.send(Event::ChildText {
                child: ChildRef {
                    id: ev.child_id().to_owned(),
                    depth: ev.depth(),
                },
                text: text.to_owned(),
            });
        }
        Ok(())
    });
    let e = events.clone();
    scope.on_sync::<SpawnQueued, _>(move |ev, _| {
        e.send(Event::SpawnQueued {
            child_id: ev.child_id().to_owned(),
            running: ev.running(),
            limit: ev.limit(),
        });
        Ok(())
    });
    let e = events.clone();
    scope.on_sync::<SpawnError, _>(move |ev, _| {
        e.send(Event::SpawnError {
            child_id: ev.spawn().child_id.clone(),
            error: ev.error().to_string(),
        });
        Ok(())
    });
}

fn install_background(scope: &HookScope, events: &Events) {
    let e = events.clone();
    scope.on_sync::<BackgroundStart, _>(move |ev, _| {
        e.send(Event::TaskStart {
            id: ev.task_id().to_owned(),
            command: ev.command().to_owned(),
            pid: ev.pid(),
            output: ev.output_path().to_owned(),
        });
        Ok(())
    });
    let e = events.clone();
    scope.on_sync::<BackgroundExit, _>(move |ev, _| {
        e.send(Event::TaskEnd(TaskEnd {
            id: ev.task_id().to_owned(),
            command: ev.command().to_owned(),
            status: ev.status(),
            exit_code: ev.exit_code(),
            signal: ev.signal().map(str::to_owned),
            duration_ms: ev.duration_ms(),
        }));
        Ok(())
    });
    let e = events.clone();
    scope.on_sync::<BackgroundStall, _>(move |ev, _| {
        e.send(Event::TaskStall {
            id: ev.task_id().to_owned(),
            command: ev.command().to_owned(),
            stalled_ms: ev.stalled_for_ms(),
        });
        Ok(())
    });
}

fn install_notes(scope: &HookScope, events: &Events) {
    let e = events.clone();
    scope.on_sync::<SkillsActivate, _>(move |ev, _| {
        e.send(Event::Skill {
            name: ev.skill().name.clone(),
            via: ev.via(),
        });
        Ok(())
    });
    let e = events.clone();
    scope.on_sync::<CacheBreak, _>(move |ev, _| {
        let info = ev.info();
        let changed = info
            .changed
            .iter()
            .map(|d| {
                serde_json::to_value(d)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            })
            .collect();
        e.send(Event::CacheBreak {
            turn: info.turn,
            changed,
            rebilled_tokens: info.rebilled_tokens,
        });
        Ok(())
    });
    let e = events.clone();
    scope.on_sync::<CompactStart, _>(move |_, _| {
        e.send(Event::CompactStart);
        Ok(())
    });
    let e = events.clone();
    scope.on_sync::<CompactEnd, _>(move |ev, _| {
        e.send(Event::CompactEnd {
            replaced: ev.replaced(),
            effective_tokens: ev.effective_tokens(),
            error: ev.error().as_ref().map(ToString::to_string),
        });
        Ok(())
    });
    let e = events.clone();
    scope.on_sync::<SteerInject, _>(move |ev, _| {
        e.send(Event::Injected {
            id: ev.id().map(str::to_owned),
        });
        Ok(())
    });
    let e = events.clone();
    scope.on_sync::<McpBootstrapEnd, _>(move |ev, _| {
        let state = match ev.outcome() {
            McpBootstrapOutcome::Ok { tool_count, lazy, .. } => McpState::Ready {
                tools: *tool_count as usize,
                lazy: *lazy,
            },
            McpBootstrapOutcome::Failed { error, .. } => {
                McpState::Unavailable(error.as_ref().map_or_else(|| "skipped".to_owned(), ToString::to_string))
            }
        };
        e.send(Event::Mcp {
            name: ev.name().to_owned(),
            state,
        });
        Ok(())
    });
    let e = events.clone();
    scope.on_sync::<McpAuthRequired, _>(move |ev, _| {
        e.send(Event::McpLoginNeeded {
            name: ev.name().to_owned(),
        });
        Ok(())
    });
}
