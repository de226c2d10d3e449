//! What the agent does, taken off its bus as messages for the interface
//! (the hooks only send; the interface's loop draws).

use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;
use zidane::agent::events::{
    BackgroundExit, BackgroundStall, BackgroundStart, CacheBreak, ChildStreamEnd, ChildToolAfter, ChildToolDispatched,
    CompactEnd, CompactStart, McpBootstrapEnd, McpBootstrapOutcome, ModelFallback, ProviderDiagnostic, SkillsActivate,
    SteerInject, StreamProgress, StreamRetry, StreamStart, StreamText, StreamThinking, ToolAfter, ToolCancelled,
    ToolDispatched, ToolOutcome, TurnAfter, TurnBefore,
};
use zidane::hooks::{HookBus, HookScope};
use zidane::providers::ToolResultContent;

/// One thing to show.
#[derive(Debug)]
pub(crate) enum Feed {
    /// The model started a request of about this many prompt tokens.
    Waiting(u64),
    /// The server has read `done` of the prompt's `total` tokens
    /// (llama.cpp's progress reports).
    Reading {
        done: u64,
        total: u64,
    },
    /// The model writes something not shown yet (a tool call's arguments).
    Writing(u64),
    Text(String),
    Thinking(String),
    /// A turn ended (its usage, for the status line).
    TurnEnd {
        input: u64,
        output: u64,
        cache_read: u64,
        cost: Option<f64>,
        model: Option<String>,
    },
    ToolStart {
        id: String,
        name: String,
        input: Value,
        /// Why it did not run (blocked, unknown, bad input).
        refusal: Option<String>,
        depth: u32,
    },
    ToolEnd {
        id: String,
        name: String,
        input: Value,
        text: String,
        is_error: bool,
        depth: u32,
    },
    ToolCancelled {
        id: String,
        reason: String,
    },
    /// A sub-agent's text at the end of its turn.
    ChildText {
        depth: u32,
        text: String,
    },
    TaskStart {
        id: String,
        command: String,
        output: String,
    },
    TaskEnd {
        id: String,
        line: String,
    },
    /// A steering or follow-up message reached the model.
    Injected(Option<String>),
    /// A dim line: a retry, a note, a skill, a cache break, a compaction.
    Note(String),
    Fallback(String),
    Mcp {
        name: String,
        state: String,
    },
    /// Answered when everything sent before it was handled (what a reply
    /// waits for, so it follows the updates of its turn).
    Barrier(tokio::sync::oneshot::Sender<()>),
}

fn result_text(content: &ToolResultContent) -> String {
    match content {
        ToolResultContent::Text(t) => t.clone(),
        ToolResultContent::Parts(parts) => parts
            .iter()
            .filter_map(|p| match p {
                zidane::providers::ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// Sends what the interface shows to `tx`, for as long as the scope lives.
pub(crate) fn install(hooks: &HookBus, tx: &UnboundedSender<Feed>) -> HookScope {
    let scope = hooks.scope();
    let send = |tx: &UnboundedSender<Feed>| tx.clone();
    // The prompt's size, estimated at four bytes a token, for the line that
    // says the model is reading it.
    let prompt = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let size = std::sync::Arc::clone(&prompt);
    scope.on_sync::<TurnBefore, _>(move |ev, _| {
        let tokens = crate::window::request_bytes(&ev.options).div_ceil(4) as u64;
        size.store(tokens, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    });
    let t = send(tx);
    scope.on_sync::<StreamStart, _>(move |_, _| {
        let _ = t.send(Feed::Waiting(prompt.load(std::sync::atomic::Ordering::Relaxed)));
        Ok(())
    });
    let t = send(tx);
    scope.on_sync::<StreamProgress, _>(move |ev, _| {
        let _ = t.send(Feed::Writing(ev.tokens()));
        Ok(())
    });
    let t = send(tx);
    scope.on_sync::<StreamText, _>(move |ev, _| {
        let _ = t.send(Feed::Text(ev.delta().to_owned()));
        Ok(())
    });
    let t = send(tx);
    scope.on_sync::<StreamThinking, _>(move |ev, _| {
        let _ = t.send(Feed::Thinking(ev.delta().to_owned()));
        Ok(())
    });
    let t = send(tx);
    scope.on_sync::<TurnAfter, _>(move |ev, _| {
        let usage = ev.usage();
        let _ = t.send(Feed::TurnEnd {
            input: usage.input,
            output: usage.output,
            cache_read: usage.cache_read,
            cost: usage.cost,
            model: usage.model_id.clone(),
        });
        Ok(())
    });
    let t = send(tx);
    scope.on_sync::<ToolDispatched, _>(move |ev, _| {
        let refusal = match ev.outcome() {
            ToolOutcome::GateBlock => Some(format!("blocked: {}", ev.reason().unwrap_or_default())),
            ToolOutcome::Unknown => Some("unknown tool".to_owned()),
            ToolOutcome::InvalidInput => Some(format!(
                "invalid input: {}",
                ev.reason().unwrap_or_default().chars().take(160).collect::<String>()
            )),
            ToolOutcome::Execute | ToolOutcome::GateSubstitute => None,
        };
        let _ = t.send(Feed::ToolStart {
            id: ev.call_id().to_owned(),
            name: ev.name().to_owned(),
            input: ev.input().clone(),
            refusal,
            depth: 0,
        });
        Ok(())
    });
    let t = send(tx);
    scope.on_sync::<ToolAfter, _>(move |ev, _| {
        let _ = t.send(Feed::ToolEnd {
            id: ev.call_id().to_owned(),
            name: ev.name().to_owned(),
            input: ev.input().clone(),
            text: result_text(ev.result()),
            is_error: ev.is_error(),
            depth: 0,
        });
        Ok(())
    });
    let t = send(tx);
    scope.on_sync::<ToolCancelled, _>(move |ev, _| {
        let _ = t.send(Feed::ToolCancelled {
            id: ev.call_id().to_owned(),
            reason: ev.reason().to_owned(),
        });
        Ok(())
    });
    install_children(&scope, tx);
    install_notes(&scope, tx);
    scope
}

fn install_children(scope: &HookScope, tx: &UnboundedSender<Feed>) {
    let t = tx.clone();
    scope.on_sync::<ChildToolDispatched, _>(move |ev, _| {
        let refusal =
            (ev.outcome() == ToolOutcome::GateBlock).then(|| format!("blocked: {}", ev.reason().unwrap_or_default()));
        let _ = t.send(Feed::ToolStart {
            id: ev.call_id().to_owned(),
            name: ev.name().to_owned(),
            input: ev.input().clone(),
            refusal,
            depth: ev.depth(),
        });
        Ok(())
    });
    let t = tx.clone();
    scope.on_sync::<ChildToolAfter, _>(move |ev, _| {
        let _ = t.send(Feed::ToolEnd {
            id: ev.call_id().to_owned(),
            name: ev.name().to_owned(),
            input: Value::Null,
            text: result_text(ev.result()),
            is_error: ev.is_error(),
            depth: ev.depth(),
        });
        Ok(())
    });
    let t = tx.clone();
    scope.on_sync::<ChildStreamEnd, _>(move |ev, _| {
        let text = ev.text().trim();
        if !text.is_empty() {
            let _ = t.send(Feed::ChildText {
                depth: ev.depth(),
                text: text.to_owned(),
            });
        }
        Ok(())
    });
}

fn install_notes(scope: &HookScope, tx: &UnboundedSender<Feed>) {
    let t = tx.clone();
    scope.on_sync::<BackgroundStart, _>(move |ev, _| {
        let _ = t.send(Feed::TaskStart {
            id: ev.task_id().to_owned(),
            command: ev.command().to_owned(),
            output: ev.output_path().to_owned(),
        });
        Ok(())
    });
    let t = tx.clone();
    scope.on_sync::<BackgroundExit, _>(move |ev, _| {
        let _ = t.send(Feed::TaskEnd {
            id: ev.task_id().to_owned(),
            line: crate::output::task_exit(ev),
        });
        Ok(())
    });
    let t = tx.clone();
    scope.on_sync::<BackgroundStall, _>(move |ev, _| {
        let _ = t.send(Feed::Note(crate::output::task_stall(ev)));
        Ok(())
    });
    let t = tx.clone();
    scope.on_sync::<SkillsActivate, _>(move |ev, _| {
        let _ = t.send(Feed::Note(format!("✦ skill `{}` is active", ev.skill().name)));
        Ok(())
    });
    let t = tx.clone();
    scope.on_sync::<ProviderDiagnostic, _>(move |ev, _| {
        let feed = match crate::output::prompt_progress(ev) {
            Some((done, total)) => Feed::Reading { done, total },
            None => Feed::Note(format!("ⓘ provider ({}): {}", ev.kind(), ev.message())),
        };
        let _ = t.send(feed);
        Ok(())
    });
    let t = tx.clone();
    scope.on_sync::<StreamRetry, _>(move |ev, _| {
        let discarded = if ev.discarded_text() {
            " (the text above is discarded; the answer starts again)"
        } else {
            ""
        };
        let _ = t.send(Feed::Note(format!(
            "↻ {} — retrying in {:.1}s (attempt {} of {}){discarded}",
            ev.err(),
            ev.delay_ms() as f64 / 1000.0,
            ev.next_attempt(),
            ev.max_attempts()
        )));
        Ok(())
    });
    let t = tx.clone();
    scope.on_sync::<ModelFallback, _>(move |ev, _| {
        let _ = t.send(Feed::Note(format!(
            "↪ {}/{} failed; continuing on {}/{}",
            ev.from().provider,
            ev.from().model,
            ev.to().provider,
            ev.to().model
        )));
        let _ = t.send(Feed::Fallback(ev.to().model.clone()));
        Ok(())
    });
    let t = tx.clone();
    scope.on_sync::<CacheBreak, _>(move |ev, _| {
        let info = ev.info();
        let changed: Vec<String> = info
            .changed
            .iter()
            .map(|d| {
                serde_json::to_value(d)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            })
            .collect();
        let what = if changed.is_empty() {
            "the prefix expired or was evicted".to_owned()
        } else {
            format!("{} changed", changed.join(", "))
        };
        let _ = t.send(Feed::Note(format!(
            "cache:break turn {}: {what}; {} tokens read again",
            info.turn, info.rebilled_tokens
        )));
        Ok(())
    });
    let t = tx.clone();
    scope.on_sync::<CompactStart, _>(move |_, _| {
        let _ = t.send(Feed::Note("⇣ compacting the older turns…".to_owned()));
        Ok(())
    });
    let t = tx.clone();
    scope.on_sync::<CompactEnd, _>(move |ev, _| {
        let line = match ev.error() {
            Some(e) => format!("⇣ compaction failed: {e}"),
            None => format!(
                "⇣ compacted: {} turns summarized{}",
                ev.replaced(),
                ev.effective_tokens()
                    .map(|t| format!(", ~{t} tokens now"))
                    .unwrap_or_default()
            ),
        };
        let _ = t.send(Feed::Note(line));
        Ok(())
    });
    let t = tx.clone();
    scope.on_sync::<SteerInject, _>(move |ev, _| {
        let _ = t.send(Feed::Injected(ev.id().map(str::to_owned)));
        Ok(())
    });
    let t = tx.clone();
    scope.on_sync::<McpBootstrapEnd, _>(move |ev, _| {
        let state = match ev.outcome() {
            McpBootstrapOutcome::Ok { tool_count, lazy, .. } => {
                format!(
                    "{}{tool_count} tools",
                    if *lazy { "registered, " } else { "connected, " }
                )
            }
            McpBootstrapOutcome::Failed { error, .. } => format!(
                "unavailable: {}",
                error.as_ref().map_or_else(|| "skipped".to_owned(), ToString::to_string)
            ),
        };
        let _ = t.send(Feed::Mcp {
            name: ev.name().to_owned(),
            state,
        });
        Ok(())
    });
}
