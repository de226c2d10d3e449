//! What takes the terminal from the session for a while: the external
//! editor (Ctrl-G) and the shell (Ctrl-Z). The terminal is given back as it
//! was, the key reader is stopped (so the editor or the shell gets every
//! key), and the area is drawn again on return.

use super::Session;
use super::screen::Screen;

/// Where the terminal goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outside {
    /// `$VISUAL` / `$EDITOR` with the input.
    Editor,
    /// The shell: the program stops (SIGTSTP) until `fg`.
    Suspend,
}

impl Session {
    /// Gives the terminal to `what`, then takes it back and redraws.
    pub(super) async fn go_outside(&mut self, what: Outside) {
        self.screen.leave();
        match what {
            Outside::Editor => {
                let text = self.editor.expanded();
                let edited = tokio::task::spawn_blocking(move || crate::print::ask::edit_text(&text, "prompt")).await;
                if !self.take_terminal() {
                    return;
                }
                match edited {
                    Ok(Ok(text)) => {
                        let text = text.trim_end().to_owned();
                        self.editor.set(&text);
                        self.editor.clear();
                        if text.trim().is_empty() {
                            self.note("the editor left nothing to send");
                        } else {
                            self.submit(text).await;
                        }
                    }
                    Ok(Err(e)) => self.note(&format!("the editor failed: {e} (the input is kept)")),
                    Err(e) => self.note(&format!("the editor failed: {e} (the input is kept)")),
                }
            }
            Outside::Suspend => {
                stop_here();
                if !self.take_terminal() {
                    return;
                }
            }
        }
        self.draw(Vec::new());
    }

    /// The terminal taken again; `false` (and the session ends) when it
    /// cannot be.
    fn take_terminal(&mut self) -> bool {
        match Screen::enter() {
            Ok(screen) => {
                self.screen = screen;
                self.screen_changed();
                true
            }
            Err(e) => {
                eprintln!("zidane: cannot take the terminal back: {e}");
                self.quit = true;
                false
            }
        }
    }

    /// The terminal's size may have changed meanwhile.
    fn screen_changed(&mut self) {
        self.md.set_width(usize::from(self.screen.cols));
    }
}

/// Stops this process as Ctrl-Z would have in a shell (SIGTSTP); returns
/// once it is continued (`fg`, SIGCONT). Commands the run started are in
/// process groups of their own and go on meanwhile.
fn stop_here() {
    #[cfg(unix)]
    {
        let _ = rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::TSTP);
    }
}
