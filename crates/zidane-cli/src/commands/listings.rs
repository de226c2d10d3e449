//! `zidane skills` and `zidane commands`: what a run in this folder would
//! find.

use zidane_app::{Flags, Given};

use super::{Failure, emit};

/// The skills the agent would offer, and those that cannot be read.
pub(crate) fn skills(flags: &Flags, given: &Given) -> Result<(), Failure> {
    let settings = super::settings(flags, given, false)?;
    let folders = zidane_app::paths::skill_folders(&settings.skills, &settings.cwd);
    let (skills, problems) = zidane::agent::load_skill_folders(&folders);
    let mut listing = String::new();
    for skill in &skills {
        let at = skill
            .folder
            .as_ref()
            .map(|f| f.display().to_string())
            .unwrap_or_default();
        listing.push_str(&format!("{}  {}  ({at})\n", skill.name, skill.description));
    }
    if skills.is_empty() {
        listing.push_str("No skills found (put them in .zidane/skills/<name>/SKILL.md, or pass --skills <dir>).\n");
    }
    for problem in problems {
        eprintln!("zidane: skipped {problem}");
    }
    emit(&listing)
}

/// The folder's and the user's custom commands.
pub(crate) fn commands(flags: &Flags, given: &Given) -> Result<(), Failure> {
    let settings = super::settings(flags, given, false)?;
    let folders = zidane_app::commands::folders(&settings.paths, settings.trusted);
    let (found, problems) = zidane_app::commands::list(&folders);
    let mut listing = String::new();
    for c in &found {
        let hint = c.argument_hint.as_deref().map(|h| format!(" {h}")).unwrap_or_default();
        let about = c.description.as_deref().unwrap_or("");
        listing.push_str(&format!("/{}{hint}  {about}  ({})\n", c.name, c.path.display()));
    }
    if found.is_empty() {
        listing.push_str("No custom commands (put them in .zidane/commands/<name>.md).\n");
    }
    for problem in problems {
        eprintln!("zidane: skipped {problem}");
    }
    emit(&listing)
}
