//! What a turn costs: per-model prices and the cost of a turn's usage.

use crate::usage::TurnUsage;

/// USD per million tokens of one model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelPrice {
    /// Input tokens (not cached).
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Cache writes with a 5-minute lifetime.
    pub cache_write_5m: f64,
    /// Cache writes with a 1-hour lifetime.
    pub cache_write_1h: f64,
    /// Cache reads.
    pub cache_read: f64,
}

impl ModelPrice {
    const fn anthropic(input: f64, output: f64) -> Self {
        // Anthropic bills 5-minute writes at 1.25x input, 1-hour writes at 2x,
        // and reads at 0.1x.
        ModelPrice {
            input,
            output,
            cache_write_5m: input * 1.25,
            cache_write_1h: input * 2.0,
            cache_read: input * 0.1,
        }
    }

    const fn openai(input: f64, cached: f64, output: f64) -> Self {
        // OpenAI caches automatically: writes cost plain input.
        ModelPrice {
            input,
            output,
            cache_write_5m: input,
            cache_write_1h: input,
            cache_read: cached,
        }
    }

    /// The cost of `usage` at these prices. Cache writes split by lifetime
    /// when the provider reported the split, else all at the 5-minute rate.
    pub fn cost(&self, usage: &TurnUsage) -> f64 {
        let per = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        let writes = match (usage.cache_creation_5m, usage.cache_creation_1h) {
            (None, None) => per(usage.cache_creation, self.cache_write_5m),
            (m5, h1) => per(m5.unwrap_or(0), self.cache_write_5m) + per(h1.unwrap_or(0), self.cache_write_1h),
        };
        per(usage.input, self.input) + per(usage.output, self.output) + per(usage.cache_read, self.cache_read) + writes
    }
}

/// Built-in prices, matched by model-id prefix (dated ids such as
/// `claude-sonnet-4-5-20250929` match `claude-sonnet-4-5`); the longest
/// prefix wins.
const BUILT_IN: &[(&str, ModelPrice)] = &[
    ("claude-opus-4-5", ModelPrice::anthropic(5.0, 25.0)),
    ("claude-opus-4-1", ModelPrice::anthropic(15.0, 75.0)),
    ("claude-opus-4", ModelPrice::anthropic(15.0, 75.0)),
    ("claude-sonnet-4-5", ModelPrice::anthropic(3.0, 15.0)),
    ("claude-sonnet-4", ModelPrice::anthropic(3.0, 15.0)),
    ("claude-3-7-sonnet", ModelPrice::anthropic(3.0, 15.0)),
    ("claude-3-5-sonnet", ModelPrice::anthropic(3.0, 15.0)),
    ("claude-haiku-4-5", ModelPrice::anthropic(1.0, 5.0)),
    ("claude-3-5-haiku", ModelPrice::anthropic(0.8, 4.0)),
    ("claude-3-haiku", ModelPrice::anthropic(0.25, 1.25)),
    ("gpt-5-nano", ModelPrice::openai(0.05, 0.005, 0.4)),
    ("gpt-5-mini", ModelPrice::openai(0.25, 0.025, 2.0)),
    ("gpt-5", ModelPrice::openai(1.25, 0.125, 10.0)),
    ("gpt-4.1-nano", ModelPrice::openai(0.1, 0.025, 0.4)),
    ("gpt-4.1-mini", ModelPrice::openai(0.4, 0.1, 1.6)),
    ("gpt-4.1", ModelPrice::openai(2.0, 0.5, 8.0)),
    ("gpt-4o-mini", ModelPrice::openai(0.15, 0.075, 0.6)),
    ("gpt-4o", ModelPrice::openai(2.5, 1.25, 10.0)),
    ("o4-mini", ModelPrice::openai(1.1, 0.275, 4.4)),
    ("o3-mini", ModelPrice::openai(1.1, 0.55, 4.4)),
    ("o3", ModelPrice::openai(2.0, 0.5, 8.0)),
];

/// A price table: the built-in prices plus the host's overrides, which win.
#[derive(Debug, Clone, Default)]
pub struct Pricing {
    overrides: Vec<(String, ModelPrice)>,
}

impl Pricing {
    /// The built-in table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the price of every model id starting with `prefix`.
    pub fn with(mut self, prefix: impl Into<String>, price: ModelPrice) -> Self {
        self.overrides.push((prefix.into(), price));
        self
    }

    /// The price of `model`, when known. Provider prefixes such as
    /// `anthropic/` or `openai/` (OpenRouter ids) are ignored.
    pub fn price(&self, model: &str) -> Option<ModelPrice> {
        let model = model.rsplit('/').next().unwrap_or(model);
        let overridden = self
            .overrides
            .iter()
            .filter(|(p, _)| model.starts_with(p.as_str()))
            .max_by_key(|(p, _)| p.len())
            .map(|(_, price)| *price);
        overridden.or_else(|| {
            BUILT_IN
                .iter()
                .filter(|(p, _)| model.starts_with(p))
                .max_by_key(|(p, _)| p.len())
                .map(|(_, price)| *price)
        })
    }

    /// The cost of `usage` for `model`; `None` when the model's price is
    /// unknown (absent, not zero).
    pub fn cost(&self, model: &str, usage: &TurnUsage) -> Option<f64> {
        self.price(model).map(|p| p.cost(usage))
    }
}
