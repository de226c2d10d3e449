//! `/memory` and `# FACT`: a fact remembered in the project's `AGENTS.md`
//! or the person's own, as they choose.

use crossterm::event::{KeyCode, KeyEvent};
use zidane_app::memory::{self, Scope};

use super::{Offer, Session};

impl Session {
    /// `/memory` (the files), `/memory [project|user] FACT`.
    pub(super) fn memory_command(&mut self, rest: &str) {
        let Some(paths) = self.link.local().map(|c| c.setup().settings.paths.clone()) else {
            return self.note(super::link::LOCAL_ONLY);
        };
        if rest.is_empty() {
            let mut lines =
                vec![self.paint.dim(
                    "remembered facts (`# FACT` or `/memory FACT` adds one; the files are plain, edit them freely):",
                )];
            for (scope, what) in [(Scope::Project, "this project"), (Scope::User, "all your projects")] {
                let Some(path) = memory::file(&paths, scope) else {
                    continue;
                };
                let count = std::fs::read_to_string(&path).map_or(0, |t| facts(&t));
                lines.push(
                    self.paint
                        .dim(&format!("  {what}: {} ({count} remembered)", path.display())),
                );
            }
            return self.say(lines);
        }
        let (first, fact) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        match Scope::from_name(first) {
            Some(scope) if !fact.trim().is_empty() => self.remember(scope, fact.trim()),
            _ => self.offer_memory(rest),
        }
    }

    /// Asks where `fact` goes.
    pub(super) fn offer_memory(&mut self, fact: &str) {
        if self.link.local().is_none() {
            return self.note(super::link::LOCAL_ONLY);
        }
        self.offer = Some(Offer::Memory(fact.to_owned()));
    }

    /// A key while a fact waits for its place: `p` the project, `u` the
    /// person's own, Esc neither.
    pub(super) fn memory_key(&mut self, fact: String, key: KeyEvent) {
        match key.code {
            KeyCode::Char('p' | 'P') => self.remember(Scope::Project, &fact),
            KeyCode::Char('u' | 'U') => self.remember(Scope::User, &fact),
            KeyCode::Esc | KeyCode::Char('n' | 'N') => self.note("not remembered"),
            _ => self.offer = Some(Offer::Memory(fact)),
        }
    }

    fn remember(&mut self, scope: Scope, fact: &str) {
        let Some(paths) = self.link.local().map(|c| c.setup().settings.paths.clone()) else {
            return self.note(super::link::LOCAL_ONLY);
        };
        let Some(path) = memory::file(&paths, scope) else {
            return self.note("no user folder is known (set ZIDANE_HOME or HOME)");
        };
        match memory::remember(&path, fact) {
            Ok(()) => self.note(&format!(
                "remembered in {} (the agent reads it from the next start of zidane on)",
                path.display()
            )),
            Err(e) => self.note(&format!("cannot write {}: {e}", path.display())),
        }
    }

    /// The lines of the offer.
    pub(super) fn memory_offer_lines(&self, fact: &str) -> Vec<String> {
        let p = self.paint;
        let paths = self.link.local().map(|c| c.setup().settings.paths.clone());
        let place = |scope| {
            paths
                .as_ref()
                .and_then(|paths| memory::file(paths, scope))
                .map_or_else(|| "unknown".to_owned(), |f| f.display().to_string())
        };
        vec![
            p.hue(super::screen::Hue::Yellow, &format!("? Remember \"{fact}\" where?")),
            format!(
                "  {} this project ({}) · {} all your projects ({}) · {} nowhere",
                p.bold("[p]"),
                place(Scope::Project),
                p.bold("[u]"),
                place(Scope::User),
                p.bold("[Esc]")
            ),
        ]
    }
}

/// How many facts a file holds under its heading.
fn facts(text: &str) -> usize {
    text.lines()
        .skip_while(|l| l.trim_end() != memory::HEADING)
        .skip(1)
        .take_while(|l| !l.starts_with('#'))
        .filter(|l| l.starts_with("- "))
        .count()
}
