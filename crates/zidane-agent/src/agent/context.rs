//! The context breakdown: what each part of the conversation costs.

use crate::agent::{Agent, estimate_tokens};
use crate::context::{ContextBreakdown, ContextCategory, ContextOptions, ContextSegment, SegmentSource};
use zidane_provider::{Message, StreamOptions};

impl Agent {
    /// Per-category token counts of the context: heuristic counts (four
    /// characters a token) reconciled so the live categories sum to the last
    /// real request total, with exact system and tool counts when asked and
    /// the provider can count. `None` after `destroy`.
    pub async fn get_context_breakdown(&self, options: &ContextOptions) -> Option<ContextBreakdown> {
        if self.is_destroyed() {
            return None;
        }
        let config = self.run_loop().config();
        let mut system_text = config.system.clone().unwrap_or_default();
        let rules_text = options.rules_block.clone().filter(|r| system_text.contains(r.as_str()));
        if let Some(rules) = &rules_text {
            system_text = system_text.replace(rules.as_str(), "");
        }
        let specs = config.tools.specs();
        let tools_json = serde_json::to_string(&specs).unwrap_or_default();
        let turns = self.turns();
        let conversation_json =
            serde_json::to_string(&turns.iter().map(|t| t.to_message()).collect::<Vec<_>>()).unwrap_or_default();

        let mut system = estimate_tokens(&system_text);
        let rules = rules_text.as_deref().map_or(0, estimate_tokens);
        let mut tools = if specs.is_empty() {
            0
        } else {
            estimate_tokens(&tools_json)
        };
        let mut conversation = estimate_tokens(&conversation_json);
        // The skills bucket: the catalog and the active skills' text (also
        // before the first run: the skills resolve here).
        let skills = if self.inner.skills.enabled() {
            self.inner.skills.resolve(&self.inner.hooks).await;
            estimate_tokens(&self.inner.skills.context_text())
        } else {
            0
        };
        let mut exact = false;

        if options.exact
            && let Some((exact_system, exact_tools)) =
                self.exact_scaffold(&specs, system + rules + tools, system, tools).await
        {
            (system, tools) = (exact_system, exact_tools);
            exact = true;
        }
        // Reconcile the estimates to the real total of the last request.
        if let Some(real) = self.last_input_total() {
            let fixed = system + rules + tools + skills;
            conversation = real
                .saturating_sub(fixed)
                .max(if real > fixed { 0 } else { conversation });
        }
        let used = system + rules + tools + skills + conversation;
        let mut categories = vec![
            ContextCategory {
                name: "system",
                tokens: system,
                estimated: !exact,
            },
            ContextCategory {
                name: "rules",
                tokens: rules,
                estimated: true,
            },
            ContextCategory {
                name: "tools",
                tokens: tools,
                estimated: !exact,
            },
            ContextCategory {
                name: "conversation",
                tokens: conversation,
                estimated: self.last_input_total().is_none(),
            },
        ];
        // An agent with skills has a bucket for them, before the conversation.
        if self.inner.skills.enabled() {
            categories.insert(
                3,
                ContextCategory {
                    name: "skills",
                    tokens: skills,
                    estimated: true,
                },
            );
        }
        // Extensions' own sections, before the buffer and what is free.
        for section in &self.inner.transforms.context {
            categories.extend(section());
        }
        Some(self.with_window(categories, used, options))
    }

    /// The system and tool counts the provider gives (the scaffold of a
    /// one-word request, shared in the estimates' proportions), when it
    /// counts tokens.
    async fn exact_scaffold(
        &self,
        specs: &[zidane_provider::ToolSpec],
        estimated: u64,
        system: u64,
        tools: u64,
    ) -> Option<(u64, u64)> {
        let config = self.run_loop().config();
        let provider = self.inner.providers.first()?;
        if !provider.meta().capabilities.count_tokens {
            return None;
        }
        let model = config.default_model_for(provider.as_ref());
        let probe = vec![Message::user(".")];
        let mut with = StreamOptions::new(model.clone(), probe.clone());
        with.system = config.system.clone();
        with.tools = specs.to_vec();
        let bare = StreamOptions::new(model, probe);
        let (Some(a), Some(b)) = (provider.count_tokens(&with), provider.count_tokens(&bare)) else {
            return None;
        };
        let (Ok(full), Ok(base)) = (a.await, b.await) else {
            return None;
        };
        let scaffold = full.saturating_sub(base);
        let estimated = estimated.max(1);
        Some((scaffold * system / estimated, scaffold * tools / estimated))
    }

    /// The breakdown with the window's part: the auto-compaction buffer and
    /// what is free.
    fn with_window(
        &self,
        mut categories: Vec<ContextCategory>,
        used: u64,
        options: &ContextOptions,
    ) -> ContextBreakdown {
        let buffer = self
            .inner
            .compaction_threshold()
            .zip(options.effective_window)
            .map(|(threshold, window)| (window as f64 * (1.0 - threshold)).round() as u64);
        if let Some(buffer) = buffer {
            categories.push(ContextCategory {
                name: "autocompact buffer",
                tokens: buffer,
                estimated: true,
            });
        }
        if let Some(window) = options.effective_window {
            let free = window.saturating_sub(used + buffer.unwrap_or(0));
            categories.push(ContextCategory {
                name: "free",
                tokens: free,
                estimated: true,
            });
        }
        ContextBreakdown {
            categories,
            used,
            effective_window: options.effective_window,
            fraction: options
                .effective_window
                .filter(|w| *w > 0)
                .map(|w| used as f64 / w as f64),
        }
    }

    /// The text of every chunk of the context, tagged with its origin; no
    /// provider round trip. `None` after `destroy`.
    pub fn get_context_segments(&self, options: &ContextOptions) -> Option<Vec<ContextSegment>> {
        if self.is_destroyed() {
            return None;
        }
        let config = self.run_loop().config();
        let mut segments = Vec::new();
        if let Some(system) = &config.system {
            let base = match &options.rules_block {
                Some(rules) => system.replace(rules.as_str(), ""),
                None => system.clone(),
            };
            segments.push(ContextSegment {
                source: SegmentSource::System,
                text: base,
            });
        }
        for (path, text) in &options.rules_files {
            segments.push(ContextSegment {
                source: SegmentSource::RulesFile { path: path.clone() },
                text: text.clone(),
            });
        }
        for spec in config.tools.specs() {
            segments.push(ContextSegment {
                source: SegmentSource::Tool { name: spec.name },
                text: spec.description,
            });
        }
        for turn in self.turns() {
            let text = turn
                .content
                .iter()
                .map(|b| match b {
                    zidane_provider::ContentBlock::Text { text } => text.clone(),
                    other => serde_json::to_string(other).unwrap_or_default(),
                })
                .collect::<Vec<_>>()
                .join("\n");
            segments.push(ContextSegment {
                source: SegmentSource::Turn {
                    id: turn.id,
                    role: turn.role,
                },
                text,
            });
        }
        Some(segments)
    }
}
