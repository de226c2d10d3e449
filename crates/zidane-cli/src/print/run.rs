//! `zidane -p "…"` (and any run without a terminal on both ends): one
//! prompt through the conversation, its events printed as they come, then
//! the tally.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::mpsc::UnboundedReceiver;
use zidane_app::{Conversation, Event, Events, Outcome, Question, Setup, Submission};

use super::Printer;
use super::ask::{self, Verdict};
use crate::cli::Output;
use crate::out::{Failure, emit};

/// Runs `prompt` once in session `session` (`--resume` alone: continues
/// the interrupted run), printing as it goes.
pub(crate) async fn one_shot(setup: Arc<Setup>, session: &str, prompt: String, output: &Output) -> Result<(), Failure> {
    let (events, rx) = Events::channel();
    let printer = Printer::new(
        output.json,
        std::io::IsTerminal::is_terminal(&std::io::stderr()) && !output.json,
    );
    let rendering = tokio::spawn(render(printer.clone(), rx));
    let conversation = Conversation::open(Arc::clone(&setup), session, events.clone(), true).await?;
    for note in conversation.notes() {
        eprintln!("zidane: {note}");
    }
    let interrupted = stop_on_signals(&conversation);
    let outcome = if prompt.trim().is_empty() {
        conversation.resume_interrupted().await
    } else {
        let submission = Submission {
            text: prompt,
            images: setup.settings.attach_images.clone(),
            ..Default::default()
        };
        match conversation.submit(submission).await {
            Ok(outcome) => outcome,
            Err(e) => {
                conversation.end().await;
                return Err(e.into());
            }
        }
    };
    let outcome = match outcome {
        Outcome::Ran(out) if conversation.planning() && out.completed() => {
            events.flush().await;
            carry_out_plan(&conversation, &printer, Outcome::Ran(out)).await
        }
        other => other,
    };
    conversation.end().await;
    events.flush().await;
    rendering.abort();
    finish(
        &conversation,
        &printer,
        outcome,
        output,
        interrupted.load(Ordering::SeqCst),
    )
}

/// `zidane --remote URL -p "…"`: the prompt in a new session of the
/// server, printed as a local one is. The session's id goes to standard
/// error first; stopping this process leaves the run going at the server.
pub(crate) async fn remote_one_shot(
    target: crate::remote::Target,
    opening: crate::remote::session::Opening,
    prompt: String,
    output: &Output,
) -> Result<(), Failure> {
    let (events, rx) = Events::channel();
    let printer = Printer::new(
        output.json,
        std::io::IsTerminal::is_terminal(&std::io::stderr()) && !output.json,
    );
    let rendering = tokio::spawn(render(printer.clone(), rx));
    let url = target.url.clone();
    // Without a terminal this client cannot answer, and says so: the
    // session's questions wait for a client that can.
    let answers = ask::terminal();
    let session = crate::remote::session::RemoteSession::open(target, opening, "zidane -p", events.clone(), answers)
        .await
        .map_err(Failure::run)?;
    let id = session.id().to_owned();
    eprintln!("zidane: session {id} at {url} (follow it elsewhere with `zidane attach --session {id}`)");
    let outcome = session.submit(&prompt).await?;
    session.detach();
    events.flush().await;
    rendering.abort();
    match outcome {
        Outcome::Ran(out) => {
            printer.finish(&out.stats, &id, None);
            if out.suspended {
                return Err(Failure::interrupted(format!(
                    "the run was suspended at the server (session {id})"
                )));
            }
            Ok(())
        }
        Outcome::Failed(message) | Outcome::Blocked(message) => {
            printer.failed(&message, &id);
            Err(Failure::run(message))
        }
        _ => Ok(()),
    }
}

/// Prints the events, answering questions on the terminal.
async fn render(printer: Printer, mut rx: UnboundedReceiver<Event>) {
    while let Some(event) = rx.recv().await {
        match event {
            Event::Flush(done) => {
                let _ = done.send(());
            }
            Event::Question(Question::Call(call)) => {
                printer.pause();
                let answer = tokio::task::spawn_blocking(move || {
                    let answer = ask::call(&call);
                    call.answer(answer);
                });
                let _ = answer.await;
            }
            Event::Question(Question::Form(form)) => {
                printer.pause();
                let _ = tokio::task::spawn_blocking(move || {
                    let answer = ask::form(&form);
                    form.answer(answer);
                })
                .await;
            }
            event => printer.show(&event),
        }
    }
}

/// Ctrl-C (or SIGTERM, SIGHUP) suspends the run: the model stream stops, a
/// running tool call is cut off and stays pending, and `--resume`
/// continues from there. A second one exits at once (the session is
/// consistent either way: every saved write is a whole step).
fn stop_on_signals(conversation: &Conversation) -> Arc<AtomicBool> {
    let interrupted = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&interrupted);
    let stopping = conversation.clone();
    let mut signals = crate::signals::StopSignals::listen();
    tokio::spawn(async move {
        if signals.next().await {
            flag.store(true, Ordering::SeqCst);
            eprintln!("\nzidane: suspending the run (press Ctrl-C again to quit now)");
            let suspending = stopping.clone();
            tokio::spawn(async move { suspending.suspend().await });
            if signals.next().await {
                // Quitting now: what the command started ends with it.
                zidane::tools::stop_command_processes();
                std::process::exit(130);
            }
        }
    });
    interrupted
}

/// After a planning run: the person approves the plan (or edits it) and
/// the conversation goes on in the normal mode; without a terminal the
/// plan waits for `--resume`.
async fn carry_out_plan(conversation: &Conversation, printer: &Printer, planned: Outcome) -> Outcome {
    let plan = conversation.last_answer();
    printer.pause();
    let verdict = tokio::task::spawn_blocking(move || ask::plan(&plan))
        .await
        .ok()
        .flatten();
    match verdict {
        Some(Verdict::Approved(plan)) => conversation.carry_out(&plan).await,
        Some(Verdict::Rejected) => {
            eprintln!("zidane: the plan was not carried out; nothing was changed");
            planned
        }
        None => {
            eprintln!(
                "zidane: plan mode changed nothing; to carry out the plan: zidane --resume --session {} \"Go ahead with the plan.\"",
                conversation.id()
            );
            planned
        }
    }
}

/// The tally, the summary, and how the program ends.
fn finish(
    conversation: &Conversation,
    printer: &Printer,
    outcome: Outcome,
    output: &Output,
    interrupted: bool,
) -> Result<(), Failure> {
    let session = conversation.id();
    match outcome {
        Outcome::Ran(out) => {
            if out.completed()
                && conversation
                    .agent()
                    .turns()
                    .last()
                    .is_some_and(|t| t.role == zidane::providers::Role::User)
            {
                eprintln!("zidane: the model ended its turn without an answer");
            }
            printer.finish(&out.stats, session, conversation.last_summary().map(|s| s.diagnostics));
            if output.summary
                && let Some(summary) = conversation.last_summary()
            {
                // One line, so `--json --summary` stays JSON lines.
                emit(&format!("{}\n", serde_json::to_string(&summary).unwrap_or_default()))?;
            }
            if interrupted || out.suspended {
                return Err(Failure::interrupted(format!(
                    "interrupted; the session is saved and the run suspended (continue with `zidane --resume --session {session}`)"
                )));
            }
            report_goal(conversation, output)
        }
        Outcome::NothingToContinue => {
            eprintln!("zidane: session {session} has no interrupted run to continue");
            Ok(())
        }
        Outcome::InUse(message) => Err(Failure::usage(message)),
        Outcome::Blocked(message) => Err(Failure::run(message)),
        Outcome::Failed(message) => {
            printer.failed(&message, session);
            Err(Failure::run(message))
        }
        _ => Ok(()),
    }
}

/// A run on a goal: what the goal came to (a line on standard error, or a
/// `goal` line with `--json`); a goal left unmet fails the program.
fn report_goal(conversation: &Conversation, output: &Output) -> Result<(), Failure> {
    let Some(progress) = conversation.goal() else {
        return Ok(());
    };
    // A goal given now, or the goal of the run a resume continued.
    let last_run = conversation
        .agent()
        .session()
        .and_then(|s| s.runs.last().map(|r| r.id.clone()));
    if conversation.setup().settings.goal.is_none() && last_run.as_deref() != Some(progress.run_id.as_str()) {
        return Ok(());
    }
    if output.json {
        super::json::line(serde_json::json!({ "type": "goal", "goal": progress }));
    } else {
        eprintln!("zidane: {}", progress.summary());
    }
    match progress.status {
        zidane::agent::GoalStatus::Unmet => {
            Err(Failure::run(progress.stopped.unwrap_or_else(|| {
                format!("the goal \"{}\" is not met", progress.goal.condition)
            })))
        }
        _ => Ok(()),
    }
}
