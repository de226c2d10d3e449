//! The context window's part in a run: each request's output cap fits the
//! window, and a retry against a local server waits for its slot.

use std::time::Duration;

use crate::event::Events;

/// A request's size in bytes: the system prompt, and the messages and tools
/// as JSON (counted as they are written, not kept).
pub(crate) fn request_bytes(options: &zidane::providers::StreamOptions) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(options.system.as_ref().map_or(0, String::len));
    let _ = serde_json::to_writer(&mut count, &options.messages);
    let _ = serde_json::to_writer(&mut count, &options.tools);
    count.0
}

/// Each request's output cap: never more than the window leaves after the
/// request's input (estimated at four bytes a token), and at least 256.
pub(crate) fn clamp_output(hooks: &zidane::hooks::HookBus, window: u32) -> zidane::hooks::HookHandle {
    hooks.on_sync::<zidane::agent::events::TurnBefore, _>(move |ev, _| {
        let input = u32::try_from(request_bytes(&ev.options) / 4).unwrap_or(u32::MAX);
        let room = window.saturating_sub(input).max(256);
        let cap = ev.options.max_tokens.unwrap_or(room).min(room);
        ev.options.max_tokens = Some(cap);
        Ok(())
    })
}

/// Before a retry against a local server, waits (up to ten minutes) while
/// llama.cpp's `/slots` says a slot is still working: an abandoned answer
/// keeps the server's only slot busy, and a retry sent now would queue
/// behind it. Servers without `/slots` are not waited for.
pub(crate) fn wait_for_free_slots(
    hooks: &zidane::hooks::HookBus,
    base_url: &str,
    events: &Events,
) -> zidane::hooks::HookHandle {
    let url = base_url.to_owned();
    let events = events.clone();
    hooks.on::<zidane::agent::events::StreamRetry, _>(move |_, _| {
        let (url, events) = (url.clone(), events.clone());
        Box::pin(async move {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(600);
            let mut told = false;
            while tokio::time::Instant::now() < deadline && zidane::providers::slots_busy(&url).await {
                if !told {
                    events.notice("the server is still writing the abandoned answer; the retry waits for its slot");
                    told = true;
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            Ok(())
        })
    })
}
