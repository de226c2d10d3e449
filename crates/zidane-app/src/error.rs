//! What can go wrong, and how a program built on the core should end.

use std::fmt;

/// A failure of the program's core, with its kind: the flags, the
/// configuration or the environment ([`Error::Usage`]), a run or an
/// operation ([`Error::Run`]), or a run interrupted on purpose
/// ([`Error::Interrupted`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The flags, the configuration or the environment are wrong; nothing
    /// ran.
    Usage(String),
    /// A run or an operation failed.
    Run(String),
    /// A run was interrupted (Ctrl-C, a signal); the session is saved.
    Interrupted(String),
}

impl Error {
    /// A usage error.
    pub fn usage(message: impl Into<String>) -> Self {
        Error::Usage(message.into())
    }

    /// A failed run or operation.
    pub fn run(message: impl Into<String>) -> Self {
        Error::Run(message.into())
    }

    /// An interrupted run.
    pub fn interrupted(message: impl Into<String>) -> Self {
        Error::Interrupted(message.into())
    }

    /// What a person reads.
    pub fn message(&self) -> &str {
        match self {
            Error::Usage(m) | Error::Run(m) | Error::Interrupted(m) => m,
        }
    }

    /// The exit code a command-line program ends with: 2 for usage, 1 for
    /// a failed run, 130 (the shell's code for SIGINT) for an interrupted
    /// one.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Usage(_) => 2,
            Error::Run(_) => 1,
            Error::Interrupted(_) => 130,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for Error {}
