//! `/init`: a read-only exploring run writes the repository's `AGENTS.md`;
//! the change is shown and written only after a yes, keeping what a person
//! wrote in the file.

use std::path::Path;

use zidane::checkpoints::FileChange;

use super::{Offer, Session, changes};

impl Session {
    /// `/init`: the exploring run.
    pub(super) fn init(&mut self) {
        if self.busy("/init") {
            return;
        }
        let Some(conversation) = self.link.local().cloned() else {
            return self.note(super::link::LOCAL_ONLY);
        };
        self.note("exploring the repository with read-only tools to write AGENTS.md…");
        self.initing = true;
        self.start_with(async move { Ok(conversation.explore_for_init().await) });
    }

    /// The run ended: the new file shown as a change, and offered.
    pub(super) async fn on_init_end(&mut self) {
        let path = zidane_app::init::path(&self.link.cwd());
        let answer = self.link.last_answer().await;
        let Some(generated) = zidane_app::init::extract(&answer) else {
            return self.note("the model wrote no AGENTS.md; nothing changes");
        };
        let existing = std::fs::read_to_string(&path).ok();
        let text = zidane_app::init::merge(existing.as_deref(), &generated);
        if existing.as_deref() == Some(text.as_str()) {
            return self.note("AGENTS.md is up to date");
        }
        let diff = zidane_app::diff::file_diff(&FileChange {
            path: "AGENTS.md".to_owned(),
            before: existing.map(String::into_bytes),
            after: Some(text.clone().into_bytes()),
        });
        let lines = changes::render(&self.paint, &[diff]);
        self.say(lines);
        self.offer = Some(Offer::Init(path, text));
    }

    /// `/init`'s file written (`yes`), or not.
    pub(super) fn init_offer(&mut self, path: &Path, text: &str, yes: bool) {
        if !yes {
            return self.note("AGENTS.md is left as it was");
        }
        match zidane_app::init::write(path, text) {
            Ok(()) => self.note(&format!(
                "wrote {} (what you write outside the generated part is kept by the next /init)",
                path.display()
            )),
            Err(e) => self.note(&format!("cannot write {}: {e}", path.display())),
        }
    }
}
