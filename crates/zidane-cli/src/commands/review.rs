//! `zidane review`: a read-only review of a change, its findings on the
//! terminal grouped by priority (or as JSON with `--json`), in SARIF and
//! Markdown files, and an exit code for CI (`--fail-on`).

use std::path::Path;
use std::sync::Arc;

use zidane_app::review::{Priority, Report, Request, Target, markdown, sarif};
use zidane_app::{Conversation, Event, Events, Flags, Given, Question, Setup};

use super::{Failure, emit};
use crate::cli::ReviewArgs;

/// The exit code of a review with findings at or above `--fail-on`.
pub(crate) const FINDINGS_EXIT: u8 = 3;

/// The target the arguments name (clap lets exactly one through).
fn target(args: &ReviewArgs) -> Result<Target, Failure> {
    if let Some(branch) = &args.base {
        return Ok(Target::Base(branch.clone()));
    }
    if let Some(sha) = &args.commit {
        return Ok(Target::Commit(sha.clone()));
    }
    if let Some(range) = &args.range {
        return Target::range(range).map_err(Failure::from);
    }
    Ok(Target::Uncommitted)
}

/// Runs the review and writes what was asked.
pub(crate) async fn run(args: ReviewArgs, flags: Flags, given: Given, json: bool) -> Result<(), Failure> {
    let target = target(&args)?;
    let fail_on = match &args.fail_on {
        Some(text) => Some(
            Priority::parse(text)
                .ok_or_else(|| Failure::usage(format!("--fail-on {text}: give one of P0, P1, P2, P3")))?,
        ),
        None => None,
    };
    let instructions = match &args.instructions {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .map_err(|e| Failure::usage(format!("--instructions {}: {e}", path.display())))?,
        ),
        None => None,
    };
    let request = Request {
        target,
        focus: args.focus.clone(),
        instructions,
        network: args.network,
    };
    let settings = super::settings(&flags, &given, true)?;
    let runtime = zidane_app::open_runtime(settings.store.as_deref())?;
    let answers = crate::print::ask::terminal();
    let setup = Arc::new(Setup::new(settings, runtime, answers).await?);
    super::tell(&setup.notes);
    let (events, rx) = Events::channel();
    let shown = tokio::spawn(progress(rx));
    let session = zidane_app::new_session_id();
    let conversation = Conversation::open(setup, &session, events, true).await?;
    super::tell(conversation.notes());
    let report = conversation.review(&request).await;
    conversation.end().await;
    drop(conversation);
    let _ = shown.await;
    let report = report?;
    if let Some(path) = &args.sarif {
        let text = serde_json::to_string_pretty(&sarif::to_sarif(&report)).unwrap_or_default();
        write(path, &text)?;
    }
    if let Some(path) = &args.markdown {
        write(path, &markdown::to_markdown(&report))?;
    }
    if json {
        emit(&format!(
            "{}\n",
            serde_json::to_string_pretty(&report.to_json()).unwrap_or_default()
        ))?;
    } else {
        emit(&terminal(&report))?;
    }
    match fail_on {
        Some(threshold) if report.at_or_above(threshold) > 0 => Err(Failure {
            message: format!(
                "{} finding(s) at {} or above",
                report.at_or_above(threshold),
                threshold.name()
            ),
            code: FINDINGS_EXIT,
        }),
        _ => Ok(()),
    }
}

fn write(path: &Path, text: &str) -> Result<(), Failure> {
    std::fs::write(path, text).map_err(|e| Failure::run(format!("cannot write {}: {e}", path.display())))
}

/// What the review does, on standard error: its notices and the files it
/// reads; questions are declined (a review asks none).
async fn progress(mut rx: tokio::sync::mpsc::UnboundedReceiver<Event>) {
    while let Some(event) = rx.recv().await {
        match event {
            Event::Flush(done) => {
                let _ = done.send(());
            }
            Event::Notice(line) => eprintln!("zidane: {line}"),
            Event::ToolCall(call) if call.name != zidane_app::review::finding::TOOL => {
                eprintln!("  · {} {}", call.name, crate::brief::brief(&call.name, &call.input));
            }
            Event::Question(Question::Call(call)) => {
                call.answer(zidane_app::Answer::No(Some("a review changes nothing".to_owned())));
            }
            _ => {}
        }
    }
}

/// The report for a person: findings grouped by priority, each with its
/// place and excerpt, then what was reviewed and skipped.
pub(crate) fn terminal(report: &Report) -> String {
    let mut out = format!("Review of {}\n", report.target.describe());
    if report.findings.is_empty() {
        out.push_str("\nNo findings.\n");
    }
    for priority in Priority::ALL {
        let group: Vec<_> = report.findings.iter().filter(|f| f.priority == priority).collect();
        if group.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "\n{} ({}): {}\n",
            priority.name(),
            priority.meaning(),
            group.len()
        ));
        for f in group {
            out.push_str(&format!(
                "\n  {}:{}-{}  {}  [{}, confidence {:.2}]\n",
                f.path,
                f.start_line,
                f.end_line,
                f.title,
                f.category.name(),
                f.confidence
            ));
            for line in f.body.lines() {
                out.push_str(&format!("    {line}\n"));
            }
            if let Some(reason) = &f.outside_diff_reason {
                out.push_str(&format!("    (outside the diff: {reason})\n"));
            }
            for (n, line) in (f.start_line..).zip(f.excerpt.lines()) {
                out.push_str(&format!("    {n:>5} │ {line}\n"));
            }
        }
    }
    let s = &report.summary;
    out.push_str(&format!(
        "\nReviewed {} file(s) in {} sub-review(s); {} tokens in, {} out",
        s.reviewed.len(),
        s.sub_reviews,
        s.input_tokens,
        s.output_tokens
    ));
    if let Some(cost) = s.cost_usd {
        out.push_str(&format!(", ${cost:.4}"));
    }
    out.push_str(&format!(", {:.1}s.\n", s.duration_ms as f64 / 1000.0));
    for skipped in &s.skipped {
        out.push_str(&format!("  skipped {}: {}\n", skipped.path, skipped.reason.describe()));
    }
    out
}
