//! Deferred tools: when the tools' schemas would take more than a share of
//! the context window (`defer_tools_above`, 10 % by default), each request
//! offers the built-in tools, the three most used others, the ones the
//! model has asked for, and `tool_search`, which finds the rest by name and
//! description and brings their schemas into the next requests. Tools
//! brought in go after the stable ones, so the prompt cache keeps the
//! prefix it has (the telemetry's `cache:drift` names the tools change).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::json;
use zidane::providers::ToolSpec;
use zidane::tools::{FnTool, ToolOutput};

/// The share of the window the tools may take before some are deferred.
pub(crate) const DEFAULT_SHARE: f64 = 0.10;

/// How many of the most used deferred tools stay offered.
const MOST_USED: usize = 3;

#[derive(Default)]
struct State {
    /// Every tool offered to the agent, by name (what `tool_search` reads).
    catalog: BTreeMap<String, ToolSpec>,
    /// Tools the model asked for, in the order it did.
    brought: Vec<String>,
    /// Calls per tool.
    used: BTreeMap<String, u32>,
    /// Tools left out of the last request.
    deferred: BTreeSet<String>,
}

/// The shared state of the hook and the tool.
#[derive(Clone)]
pub(crate) struct Deferral {
    state: Arc<Mutex<State>>,
    budget_tokens: u64,
    /// Names always offered (the program's own tools).
    builtin: Arc<BTreeSet<String>>,
    savings: crate::savings::Savings,
}

fn tokens(spec: &ToolSpec) -> u64 {
    (spec.name.len() + spec.description.len() + spec.input_schema.to_string().len()).div_ceil(4) as u64
}

impl Deferral {
    pub(crate) fn new(
        window: u32,
        share: f64,
        builtin: impl IntoIterator<Item = String>,
        savings: crate::savings::Savings,
    ) -> Deferral {
        let mut builtin: BTreeSet<String> = builtin.into_iter().collect();
        builtin.insert("tool_search".into());
        Deferral {
            state: Arc::default(),
            budget_tokens: (f64::from(window) * share) as u64,
            builtin: Arc::new(builtin),
            savings,
        }
    }

    /// Narrows each request's tools when they would take too much.
    pub(crate) fn install(&self, hooks: &zidane::hooks::HookBus) -> Vec<zidane::hooks::HookHandle> {
        let this = self.clone();
        let narrow = hooks.on_sync::<zidane::agent::events::TurnBefore, _>(move |ev, _| {
            this.narrow(&mut ev.options.tools);
            Ok(())
        });
        let this = self.clone();
        let count = hooks.on_sync::<zidane::agent::events::ToolAfter, _>(move |ev, _| {
            *this.state.lock().used.entry(ev.name().to_owned()).or_insert(0) += 1;
            Ok(())
        });
        vec![narrow, count]
    }

    fn narrow(&self, tools: &mut Vec<ToolSpec>) {
        let mut state = self.state.lock();
        for spec in tools.iter() {
            state.catalog.entry(spec.name.clone()).or_insert_with(|| spec.clone());
        }
        let total: u64 = tools.iter().map(tokens).sum();
        if total <= self.budget_tokens {
            state.deferred.clear();
            tools.retain(|t| t.name != "tool_search");
            return;
        }
        let mut used: Vec<(&String, &u32)> = state
            .used
            .iter()
            .filter(|(name, _)| !self.builtin.contains(*name))
            .collect();
        used.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let most_used: BTreeSet<String> = used.into_iter().take(MOST_USED).map(|(n, _)| n.clone()).collect();
        let (stable, rest): (Vec<ToolSpec>, Vec<ToolSpec>) = tools
            .drain(..)
            .partition(|t| self.builtin.contains(&t.name) || most_used.contains(&t.name));
        let mut deferred = BTreeSet::new();
        let mut brought = Vec::new();
        let mut left_out = 0;
        for spec in rest {
            match state.brought.iter().position(|b| *b == spec.name) {
                Some(i) => brought.push((i, spec)),
                None => {
                    left_out += tokens(&spec);
                    deferred.insert(spec.name.clone());
                }
            }
        }
        self.savings.deferred(left_out);
        // Brought-in tools after the stable ones, in the order asked for.
        brought.sort_by_key(|(i, _)| *i);
        tools.extend(stable);
        if deferred.is_empty() {
            // Nothing waits: nothing to search for.
            tools.retain(|t| t.name != "tool_search");
        }
        tools.extend(brought.into_iter().map(|(_, s)| s));
        state.deferred = deferred;
    }

    /// `tool_search`: finds deferred tools by words of their name or
    /// description and brings them into the next requests.
    pub(crate) fn tool(&self) -> FnTool {
        let this = self.clone();
        FnTool::new(
            "tool_search",
            "Find tools that are available but not listed yet (to save context), by words of their name or \
             description; the tools found can be called from the next turn on.",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Words to look for, e.g. `github issue` or `echo`."}
                },
                "required": ["query"]
            }),
            move |input, _cx| {
                let this = this.clone();
                async move {
                    let query = input["query"].as_str().unwrap_or_default().to_ascii_lowercase();
                    let words: Vec<&str> = query.split_whitespace().collect();
                    let mut state = this.state.lock();
                    let mut found: Vec<(usize, String, String)> = state
                        .deferred
                        .iter()
                        .filter_map(|name| state.catalog.get(name))
                        .map(|spec| {
                            let hay = format!("{} {}", spec.name, spec.description).to_ascii_lowercase();
                            let score = words.iter().filter(|w| hay.contains(*w)).count();
                            (score, spec.name.clone(), spec.description.clone())
                        })
                        .filter(|(score, _, _)| *score > 0 || words.is_empty())
                        .collect();
                    found.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
                    found.truncate(5);
                    if found.is_empty() {
                        let names: Vec<&String> = state.deferred.iter().collect();
                        return Ok(ToolOutput::text(format!(
                            "No listed-later tool matches `{query}`. They are: {}",
                            names.iter().map(|n| n.as_str()).collect::<Vec<_>>().join(", ")
                        )));
                    }
                    let mut out = String::from("These tools can be called from the next turn on:\n");
                    for (_, name, description) in &found {
                        if !state.brought.contains(name) {
                            state.brought.push(name.clone());
                        }
                        let first = description.lines().next().unwrap_or_default();
                        out.push_str(&format!("- {name}: {first}\n"));
                    }
                    Ok(ToolOutput::text(out))
                }
            },
        )
        .safe()
    }
}
