//! `zidane config` and `zidane context`: the settings in effect, and what
//! a session's context holds.

use std::sync::Arc;

use zidane_app::{Conversation, Events, Flags, Given, Setup};

use super::{Failure, emit};

/// The configuration in effect, each value with where it comes from.
pub(crate) fn show(flags: &Flags, given: &Given) -> Result<(), Failure> {
    // The trust question is for a run, not for a listing.
    let settings = super::settings(flags, given, false)?;
    emit(&zidane_app::config::show(&settings))
}

/// What the session's context holds before the next request, by category
/// and piece, the instruction files with their paths.
pub(crate) async fn context(flags: Flags, given: Given) -> Result<(), Failure> {
    let settings = super::settings(&flags, &given, true)?;
    let runtime = zidane_app::open_runtime(settings.store.as_deref())?;
    let session = zidane_app::session_id(&settings, runtime.sqlite()).await?;
    let setup = Setup::new(settings, runtime, false).await?;
    super::tell(&setup.notes);
    let (events, _ignored) = Events::channel();
    let conversation = Conversation::open(Arc::new(setup), &session, events, true).await?;
    super::tell(conversation.notes());
    let report = conversation.context_report().await;
    conversation.agent().destroy().await;
    let mut out = String::from("The context before the next request (estimated tokens):\n");
    for (name, tokens) in &report.categories {
        out.push_str(&format!("  {name:<20} {tokens:>8}\n"));
    }
    if !report.categories.is_empty() {
        out.push_str(&format!("  {:<20} {:>8}\n", "in all", report.used));
    }
    out.push_str("\nWhere it comes from:\n");
    for (what, tokens) in &report.pieces {
        out.push_str(&format!("  {what:<60} {tokens:>8}\n"));
    }
    emit(&out)
}
