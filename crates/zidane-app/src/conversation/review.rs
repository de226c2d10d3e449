//! A review run: the diff from git, one read-only run that reports its
//! findings through `report_finding` (or, for a diff the window cannot
//! hold, one sub-review per group of files, each in a session of its own),
//! the findings merged, and what was covered.

use std::time::Instant;

use zidane::agent::AgentRunOptions;

use super::Conversation;
use crate::Error;
use crate::event::{Events, Outcome};
use crate::review::diff::Diff;
use crate::review::finding::{Collector, Finding, merge};
use crate::review::{FileDiff, Report, Request, Reviewed, SkipReason, Skipped, Summary, prompt, run_hooks, split};

/// The note a review run's system prompt carries.
const NOTE: &str = "Review mode: read the change and report problems with `report_finding`; nothing can be changed \
                    or run now (those tools are not available).";

/// What one (sub-)review gave: its findings and figures, and why it
/// failed when it did (a run stopped at the cost limit keeps the findings
/// it reported).
struct Part {
    findings: Vec<Finding>,
    input: u64,
    output: u64,
    cost: Option<f64>,
    note: String,
    failed: Option<String>,
}

impl Conversation {
    /// Reviews the change `request` names: read-only, its findings
    /// reported through `report_finding`, checked against the diff and
    /// merged. A diff larger than a share of the window is split by file
    /// into sub-reviews (each a session of its own); `--max-cost` stops
    /// further sub-reviews once reached.
    pub async fn review(&self, request: &Request) -> Result<Report, Error> {
        let started = Instant::now();
        let settings = &self.inner.setup.settings;
        let diff = crate::review::diff::collect(&settings.cwd, &request.target).await?;
        let rules = std::fs::read_to_string(settings.cwd.join("REVIEW.md")).unwrap_or_default();
        let (groups, too_large) = split(&diff, self.review_budget());
        let mut summary = Summary {
            skipped: diff
                .skipped
                .iter()
                .map(|(path, reason)| Skipped {
                    path: path.clone(),
                    reason: *reason,
                })
                .chain(too_large.iter().map(|f| Skipped {
                    path: f.path.clone(),
                    reason: SkipReason::TooLarge,
                }))
                .collect(),
            sub_reviews: groups.len(),
            ..Default::default()
        };
        let mut findings = Vec::new();
        let mut reviewed: Vec<&FileDiff> = Vec::new();
        if groups.len() == 1 {
            let text = prompt(request, &groups[0], None, &rules);
            let part = self.review_part(&diff, text, request.network).await?;
            if let Some(why) = &part.failed
                && part.findings.is_empty()
            {
                return Err(Error::run(why.clone()));
            }
            reviewed.extend(&groups[0]);
            add(&mut summary, &mut findings, part);
        }
        if groups.len() > 1 {
            let of = groups.len();
            for (i, group) in groups.iter().enumerate() {
                let spent = summary.cost_usd.unwrap_or(0.0);
                if settings.max_cost.is_some_and(|max| spent >= max) {
                    skip(&mut summary, group, SkipReason::Budget);
                    continue;
                }
                let text = prompt(request, group, Some((i + 1, of)), &rules);
                match self.sub_review(&diff, text, i + 1, request.network).await {
                    Ok(part) => {
                        if let Some(why) = &part.failed {
                            self.inner.events.notice(format!("sub-review {} of {of}: {why}", i + 1));
                            skip(&mut summary, group, SkipReason::Failed);
                        } else {
                            reviewed.extend(group);
                        }
                        add(&mut summary, &mut findings, part);
                    }
                    Err(e) => {
                        self.inner
                            .events
                            .notice(format!("sub-review {} of {of} failed: {e}", i + 1));
                        skip(&mut summary, group, SkipReason::Failed);
                    }
                }
            }
        }
        summary.reviewed = reviewed
            .into_iter()
            .map(|f| Reviewed {
                path: f.path.clone(),
                added: f.added,
                removed: f.removed,
                renamed_from: f.renamed_from.clone(),
            })
            .collect();
        summary.duration_ms = started.elapsed().as_millis() as u64;
        Ok(Report {
            target: request.target.clone(),
            findings: merge(findings),
            summary,
        })
    }

    /// The bytes of diff one (sub-)review's prompt may hold: about half
    /// the window, less what the system prompt and tools take (no limit
    /// when the window is unknown).
    fn review_budget(&self) -> usize {
        match self.inner.setup.window_tokens() {
            Some(tokens) => ((tokens / 2).saturating_sub(1500).max(1000) as usize) * 4,
            None => usize::MAX,
        }
    }

    /// One sub-review, in a session of its own beside this one.
    async fn sub_review(&self, diff: &Diff, text: String, n: usize, network: bool) -> Result<Part, Error> {
        let (events, mut rx) = Events::channel();
        // The sub-review's events are its own; its questions (none are
        // expected: it only reads) are declined by dropping them.
        let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
        let id = format!("{}-review-{n}", self.inner.id);
        let sub = Conversation::open(std::sync::Arc::clone(&self.inner.setup), &id, events, false).await?;
        let part = sub.review_part(diff, text, network).await;
        sub.end().await;
        drop(sub);
        drain.abort();
        part
    }

    /// One review run in this conversation.
    async fn review_part(&self, diff: &Diff, text: String, network: bool) -> Result<Part, Error> {
        let cwd = self.inner.setup.settings.cwd.clone();
        *self.inner.review.lock() = Some(Collector::new(diff.clone(), cwd, network));
        let mut options = AgentRunOptions::prompt(text);
        {
            let state = self.inner.state.lock();
            options.thinking = state.thinking;
            if let Some(model) = &state.model {
                options.model = vec![model.as_str().into()];
            }
        }
        options.hooks = run_hooks(network);
        options.system_notes.push(NOTE.into());
        let before = self.cost();
        let outcome = self.run(options).await;
        let after = self.cost();
        let collected = self.inner.review.lock().take();
        let findings = collected.map(|c| c.findings).unwrap_or_default();
        let (note, failed) = match outcome {
            Outcome::Ran(out) => (out.text.trim().to_owned(), None),
            Outcome::Failed(m) | Outcome::InUse(m) | Outcome::Blocked(m) => (String::new(), Some(m)),
            _ => (String::new(), Some("the review did not run".to_owned())),
        };
        Ok(Part {
            findings,
            input: after.input.saturating_sub(before.input),
            output: after.output.saturating_sub(before.output),
            cost: after.cost.map(|c| c - before.cost.unwrap_or(0.0)),
            note,
            failed,
        })
    }
}

fn add(summary: &mut Summary, findings: &mut Vec<Finding>, part: Part) {
    findings.extend(part.findings);
    summary.input_tokens += part.input;
    summary.output_tokens += part.output;
    if let Some(cost) = part.cost {
        summary.cost_usd = Some(summary.cost_usd.unwrap_or(0.0) + cost);
    }
    if !part.note.is_empty() {
        summary.notes.push(part.note);
    }
}

fn skip(summary: &mut Summary, group: &[&FileDiff], reason: SkipReason) {
    summary.skipped.extend(group.iter().map(|f| Skipped {
        path: f.path.clone(),
        reason,
    }));
}
