//! What the agent's prompt cache holds and what a change would cost it.

use crate::agent::Agent;
use crate::cache::{estimate_tokens, prefix_layers};
use crate::run_options::{AgentCacheChange, AgentCacheImpact};

impl Agent {
    /// When the provider's prompt cache is estimated to expire
    /// the last request's time plus the cache lifetime it used (5 minutes
    /// unless set). `None` before any request.
    pub fn cache_expires_at(&self) -> Option<zidane_provider::Timestamp> {
        let (at, request) = self.inner.looped.last_request();
        let ttl = request
            .and_then(|r| r.cache_ttl)
            .or(self.inner.cache_ttl)
            .unwrap_or_default();
        at.map(|at| zidane_provider::Timestamp::from_millis(at + ttl.as_millis()))
    }

    /// What `change` would make the next request read again instead of from
    /// the cache. Literal: a model or thinking level different from the last
    /// request's counts (never before a request), and `system` / `tools`
    /// count when set. Tokens are the part of the last request from the
    /// first changed layer on (tools, then system, then messages).
    pub fn cache_impact(&self, change: &AgentCacheChange) -> AgentCacheImpact {
        let (_, request) = self.inner.looped.last_request();
        let mut changed = Vec::new();
        if let (Some(model), Some(last)) = (&change.model, &request)
            && model != &last.model
        {
            changed.push("model");
        }
        if let (Some(thinking), Some(last)) = (change.thinking, &request)
            && thinking != last.thinking
        {
            changed.push("thinking");
        }
        if change.system {
            changed.push("system");
        }
        if change.tools {
            changed.push("tools");
        }
        if changed.is_empty() {
            return AgentCacheImpact::default();
        }
        let layers = match &request {
            Some(r) => prefix_layers(r, self.last_input_total()),
            None => {
                let (system, tools) = self.config_layers();
                (tools, system, 0)
            }
        };
        let (tools, system, messages) = layers;
        let tokens = if changed.contains(&"model") || changed.contains(&"tools") {
            tools + system + messages
        } else if changed.contains(&"system") {
            system + messages
        } else {
            messages
        };
        AgentCacheImpact { tokens, changed }
    }

    /// Input tokens of the last turn (input + cache reads + cache writes).
    pub(crate) fn last_input_total(&self) -> Option<u64> {
        self.inner
            .looped
            .last_usage()
            .map(|u| u.input + u.cache_read + u.cache_creation)
    }

    pub(crate) fn config_layers(&self) -> (u64, u64) {
        let config = self.inner.looped.config();
        let system = config.system.as_deref().map_or(0, estimate_tokens);
        let tools = estimate_tokens(&serde_json::to_string(&config.tools.specs()).unwrap_or_default());
        (system, tools)
    }
}
