//! Prompt-cache estimates: when the cache expires and what a change would
//! make the next request read again.

use zidane_provider::StreamOptions;

/// Token split of a request's prefix: tools, system, messages (estimates
/// reconciled to the real total when one is known).
pub(crate) fn prefix_layers(request: &StreamOptions, real_total: Option<u64>) -> (u64, u64, u64) {
    let tools = estimate_tokens(&serde_json::to_string(&request.tools).unwrap_or_default());
    let system = request.system.as_deref().map_or(0, estimate_tokens);
    let messages = estimate_tokens(&serde_json::to_string(&request.messages).unwrap_or_default());
    match real_total {
        Some(total) if total > 0 => {
            let estimated = (tools + system + messages).max(1);
            let scale = |x: u64| (x as f64 * total as f64 / estimated as f64).round() as u64;
            let (t, s) = (scale(tools), scale(system));
            (t, s, total.saturating_sub(t + s))
        }
        _ => (tools, system, messages),
    }
}

/// The usual rough estimate: four characters a token.
pub(crate) fn estimate_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}
