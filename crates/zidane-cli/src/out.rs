//! What the program writes and how it ends: [`Failure`] (a message and
//! an exit code), [`emit`] to standard output, [`tell`] on standard error.

use std::io::Write;

/// How the program ends: a message and an exit code (2 for usage and
/// configuration, 1 for runs, 130 for an interrupted run; 0 with no
/// message: a closed output pipe).
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) message: String,
    pub(crate) code: u8,
}

impl Failure {
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: 2,
        }
    }

    pub(crate) fn run(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: 1,
        }
    }

    /// An interrupted run (Ctrl-C, SIGTERM, SIGHUP): the shell's convention
    /// for a program stopped by SIGINT.
    pub(crate) fn interrupted(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: 130,
        }
    }
}

impl From<zidane_app::Error> for Failure {
    fn from(e: zidane_app::Error) -> Self {
        Failure {
            code: e.exit_code(),
            message: e.message().to_owned(),
        }
    }
}

/// Writes `text` to standard output; a closed pipe (`zidane … | head`) is a
/// quiet end, not a panic.
pub(crate) fn emit(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Failure {
            message: String::new(),
            code: 0,
        }),
        Err(e) => Err(Failure::run(format!("cannot write the output: {e}"))),
    }
}

/// Prints lines for the person on standard error.
pub(crate) fn tell(notes: &[String]) {
    for note in notes {
        eprintln!("zidane: {note}");
    }
}
