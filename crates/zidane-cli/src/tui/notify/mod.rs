//! Notifications: when a turn ends or a question waits while the terminal
//! is not focused (it reports focus, mode 1004), a desktop notification
//! where the terminal shows one (OSC 9: iTerm2, WezTerm, Ghostty, kitty;
//! OSC 777: foot), the bell elsewhere; and the `Notification` command hooks
//! told. `notifications = "off"` turns it off.

use super::Session;

impl Session {
    /// Notifies that `message` waits, unless the terminal is focused (or
    /// notifications are off); `kind` is what the `Notification` hooks are
    /// told.
    pub(super) fn notify(&mut self, kind: &'static str, message: &str) {
        if self.focused || !self.notifications {
            return;
        }
        let sequence = sequence(&Terminal::from_env(), message);
        self.screen.raw(&sequence);
        if kind != "permission_prompt"
            && let Some(conversation) = self.link.local().cloned()
        {
            // Approvals tell the hooks themselves, focused or not.
            let message = message.to_owned();
            tokio::spawn(async move { conversation.notification(kind, &message).await });
        }
    }
}

/// What the terminal is, as far as notifications go.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Terminal {
    /// `$TERM_PROGRAM`.
    pub(super) program: String,
    /// `$TERM`.
    pub(super) term: String,
    /// Whether `$KITTY_WINDOW_ID` is set.
    pub(super) kitty: bool,
    /// Whether inside tmux (`$TMUX`).
    pub(super) tmux: bool,
}

impl Terminal {
    fn from_env() -> Terminal {
        let var = |k: &str| std::env::var(k).unwrap_or_default();
        Terminal {
            program: var("TERM_PROGRAM"),
            term: var("TERM"),
            kitty: std::env::var_os("KITTY_WINDOW_ID").is_some(),
            tmux: std::env::var_os("TMUX").is_some(),
        }
    }
}

/// The escape sequence that notifies `message` on `terminal`.
pub(super) fn sequence(terminal: &Terminal, message: &str) -> String {
    let text: String = message
        .chars()
        .filter(|c| !c.is_control() && *c != ';')
        .take(200)
        .collect();
    if terminal.tmux {
        // tmux passes the bell on to the terminal as an alert.
        return "\x07".to_owned();
    }
    let osc9 = matches!(terminal.program.as_str(), "iTerm.app" | "WezTerm" | "ghostty")
        || terminal.kitty
        || terminal.term == "xterm-kitty"
        || terminal.term == "xterm-ghostty";
    if osc9 {
        format!("\x1b]9;{text}\x07")
    } else if terminal.term.starts_with("foot") {
        format!("\x1b]777;notify;zidane;{text}\x07")
    } else {
        "\x07".to_owned()
    }
}

#[cfg(test)]
mod tests;
