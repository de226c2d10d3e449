//! A review is read-only by construction: its requests offer plan mode's
//! read-only tools and `report_finding`, and any other call is refused;
//! outside a review, `report_finding` is neither offered nor run.

use zidane::agent::{ToolCall, ToolCallInterceptor, ToolCallVerdict};
use zidane::hooks::HookMap;
use zidane::providers::BoxFuture;

use super::finding::{Slot, TOOL};
use crate::plan::READ_ONLY;

/// The read-only tools that reach the network: a review leaves them out
/// unless it is allowed (`zidane review --network`).
const NETWORK: [&str; 1] = ["web_fetch"];

/// Whether a review (with the network allowed or not) may call `name`.
fn allowed(name: &str, network: bool) -> bool {
    name == TOOL || (READ_ONLY.contains(&name) && (network || !NETWORK.contains(&name)))
}

/// A review run's hooks: each request offers only the read-only tools
/// (those that reach the network only when `network`) and
/// `report_finding`.
pub(crate) fn hooks(network: bool) -> HookMap {
    HookMap::new().on_sync::<zidane::agent::events::TurnBefore, _>(move |ev, _| {
        ev.options.tools.retain(|t| allowed(&t.name, network));
        Ok(())
    })
}

/// Outside a review, requests do not offer `report_finding`.
pub(crate) fn hide_outside_reviews(bus: &zidane::hooks::HookBus, slot: Slot) -> impl Send + Sync + 'static {
    bus.on_sync::<zidane::agent::events::TurnBefore, _>(move |ev, _| {
        if slot.lock().is_none() {
            ev.options.tools.retain(|t| t.name != TOOL);
        }
        Ok(())
    })
}

/// Refuses, during a review, every call that could change something, and
/// `report_finding` outside one.
pub(crate) struct ReviewGate(pub(crate) Slot);

impl ToolCallInterceptor for ReviewGate {
    fn intercept<'a>(&'a self, call: &'a ToolCall) -> BoxFuture<'a, ToolCallVerdict> {
        let network = self.0.lock().as_ref().map(|c| c.network);
        let reviewing = network.is_some();
        let verdict = if let Some(network) = network
            && !allowed(&call.name, network)
        {
            ToolCallVerdict::Deny {
                reason: format!(
                    "review: `{}` is not available during a review, which only reads; report the problem with \
                     `{TOOL}` instead",
                    call.name
                ),
            }
        } else if !reviewing && call.name == TOOL {
            ToolCallVerdict::Deny {
                reason: format!("`{TOOL}` is only available during a review"),
            }
        } else {
            ToolCallVerdict::Allow
        };
        Box::pin(async move { verdict })
    }
}
