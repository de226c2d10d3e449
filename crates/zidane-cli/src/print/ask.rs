//! Questions asked on the terminal line by line, outside the interactive
//! session: a call to allow, an MCP server's form, a plan to carry out,
//! the trust question, a yes or no before an undo or a deletion.

use std::io::{BufRead, IsTerminal, Write};

use zidane::mcp::ElicitationAnswer;
use zidane_app::{Answer, Ask, Form, TrustQuestion};

/// Whether a person is at the terminal to answer (standard input and
/// standard error).
pub(crate) fn terminal() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

fn read_line() -> Option<String> {
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line),
    }
}

fn prompt(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}

/// A call to allow, asked and answered (on a blocking thread: the read
/// waits for the person).
pub(crate) fn call(ask: &Ask) -> Answer {
    let who = if ask.call.depth > 0 { "a sub-agent" } else { "zidane" };
    prompt(&format!(
        "\n⚠ {who} wants to {}{}  allow? [y]es / [n]o / [a]lways ({}) / always in this [p]roject / always for \
         this [u]ser (`{}`): ",
        zidane_app::ask::describe(&ask.call),
        ask.reason.as_deref().map(|r| format!("  ({r})\n")).unwrap_or_default(),
        ask.scope,
        ask.rule,
    ));
    let answer = read_line().unwrap_or_default();
    match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Answer::Yes,
        "a" | "always" => Answer::Always,
        "p" | "project" => Answer::Save { project: true },
        "u" | "user" => Answer::Save { project: false },
        _ => Answer::No(None),
    }
}

/// An MCP server's form, asked field by field: an empty line keeps the
/// default (or leaves the field out); `!` declines the whole form.
pub(crate) fn form(form: &Form) -> ElicitationAnswer {
    let request = &form.request;
    prompt(&format!(
        "\n? MCP server `{}` asks: {}  (Enter keeps a default, `!` declines)\n",
        request.server, request.message
    ));
    let mut content = serde_json::Map::new();
    for (name, kind, default) in form.fields() {
        let default = default.map(|d| format!(" [{d}]")).unwrap_or_default();
        prompt(&format!("  {name} ({kind}){default}: "));
        let Some(line) = read_line() else {
            return ElicitationAnswer::Decline;
        };
        let line = line.trim();
        if line == "!" {
            return ElicitationAnswer::Decline;
        }
        if line.is_empty() {
            continue;
        }
        content.insert(name, zidane_app::ask::field_value(&kind, line));
    }
    ElicitationAnswer::Accept(content)
}

/// The trust question, on a terminal; `None` without one.
pub(crate) fn trust(question: &TrustQuestion) -> Option<bool> {
    trust_text(&question.message())
}

/// The trust question a server put (its `message`), on a terminal;
/// `None` without one.
pub(crate) fn trust_text(message: &str) -> Option<bool> {
    if !terminal() {
        return None;
    }
    prompt(&format!("\n{message}Trust this folder and use them? [y]es / [n]o: "));
    Some(zidane_app::config::TrustAnswer::parse(&read_line().unwrap_or_default()))
}

/// A yes/no question on the terminal (no is the default).
pub(crate) fn yes(question: &str) -> bool {
    prompt(&format!("{question} [y/N] "));
    matches!(read_line().as_deref().map(str::trim), Some("y" | "Y" | "yes"))
}

/// A number from 1 to `max`, asked with `question`.
pub(crate) fn number(question: &str, max: usize) -> Option<usize> {
    prompt(question);
    read_line()?
        .trim()
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=max).contains(n))
}

/// What the person said about a plan.
pub(crate) enum Verdict {
    /// Carry it out (as written, or as edited).
    Approved(String),
    Rejected,
}

/// Asks whether to carry out `plan`; `None` without a terminal.
pub(crate) fn plan(plan: &str) -> Option<Verdict> {
    if !terminal() {
        return None;
    }
    loop {
        prompt("\nCarry out this plan? [y]es / [e]dit it first / [n]o: ");
        let Some(line) = read_line() else {
            return Some(Verdict::Rejected);
        };
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
    edit_text(plan, "plan")
}

/// `text` after `$VISUAL` / `$EDITOR` (else `vi`) had it, in a temporary
/// Markdown file named after `what`.
pub(crate) fn edit_text(text: &str, what: &str) -> std::io::Result<String> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let file = std::env::temp_dir().join(format!("zidane-{what}-{}-{stamp:x}.md", std::process::id()));
    std::fs::write(&file, text)?;
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
