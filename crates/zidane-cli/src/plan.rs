//! Plan mode (`--plan`): the run sees only the read-only tools and a note
//! to investigate and propose a plan; nothing is written or executed. The
//! person then approves the plan (or edits it first) and the session goes
//! on in the normal mode, with the plan in context.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use zidane::agent::{ToolCall, ToolCallInterceptor, ToolCallVerdict};
use zidane::hooks::HookMap;
use zidane::providers::BoxFuture;

/// The tools a plan may use: they read, or keep the plan itself.
pub(crate) const READ_ONLY: [&str; 9] = [
    "read_file",
    "list_files",
    "glob",
    "grep",
    "todowrite",
    "todoread",
    "web_fetch",
    "skill",
    "tool_search",
];

/// The note the planning run's prompt carries.
pub(crate) const NOTE: &str = "Plan mode: investigate with the read-only tools and propose a plan; do not change \
     files or run commands (those tools are not available now). Write the steps with `todowrite`, then answer \
     with the plan. The user approves it before anything is done.";

/// This run's hooks: each request offers only the read-only tools.
pub(crate) fn hooks() -> HookMap {
    HookMap::new().on_sync::<zidane::agent::events::TurnBefore, _>(|ev, _| {
        ev.options.tools.retain(|t| READ_ONLY.contains(&t.name.as_str()));
        Ok(())
    })
}

/// Refuses every other call while planning (a model may call a tool it
/// remembers from earlier turns).
pub(crate) struct PlanGate(pub(crate) Arc<AtomicBool>);

impl ToolCallInterceptor for PlanGate {
    fn intercept<'a>(&'a self, call: &'a ToolCall) -> BoxFuture<'a, ToolCallVerdict> {
        let verdict = if self.0.load(Ordering::SeqCst) && !READ_ONLY.contains(&call.name.as_str()) {
            ToolCallVerdict::Deny {
                reason: format!(
                    "plan mode: `{}` is not available while planning; propose it as a step of the plan",
                    call.name
                ),
            }
        } else {
            ToolCallVerdict::Allow
        };
        Box::pin(async move { verdict })
    }
}

/// What the person said about the plan.
pub(crate) enum Verdict {
    /// Carry it out (as written, or as edited).
    Approved(String),
    Rejected,
}

/// Asks on the terminal; `None` without one.
pub(crate) fn ask(plan: &str) -> Option<Verdict> {
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return None;
    }
    loop {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\nCarry out this plan? [y]es / [e]dit it first / [n]o: ");
        let _ = err.flush();
        drop(err);
        let mut line = String::new();
        if std::io::stdin().lock().read_line(&mut line).ok()? == 0 {
            return Some(Verdict::Rejected);
        }
        match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => return Some(Verdict::Approved(plan.to_owned())),
            "e" | "edit" => match edit(plan) {
                Ok(edited) => return Some(Verdict::Approved(edited)),
                Err(e) => eprintln!("zidane: the editor failed: {e}"),
            },
            "n" | "no" => return Some(Verdict::Rejected),
            _ => {}
        }
    }
}

/// The plan after `$VISUAL` / `$EDITOR` (else `vi`) had it.
fn edit(plan: &str) -> std::io::Result<String> {
    let file = tempfile_path();
    std::fs::write(&file, plan)?;
    let editor = ["VISUAL", "EDITOR"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|e| !e.trim().is_empty()))
        .unwrap_or_else(|| "vi".into());
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(&file)
        .status()?;
    let edited = std::fs::read_to_string(&file);
    let _ = std::fs::remove_file(&file);
    if !status.success() {
        return Err(std::io::Error::other(format!("`{editor}` exited with {status}")));
    }
    edited
}

fn tempfile_path() -> std::path::PathBuf {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    std::env::temp_dir().join(format!("zidane-plan-{}-{stamp:x}.md", std::process::id()))
}

/// The prompt that carries out an approved plan.
pub(crate) fn go_ahead(plan: &str) -> String {
    format!(
        "The plan is approved. Carry it out now (all tools are available again).\n\n<plan>\n{}\n</plan>",
        plan.trim()
    )
}
