//! Where the loop's turns go as they are produced: the session the agent
//! binds a run to.

use zidane_provider::{BoxFuture, SessionTurn};

use crate::events::SharedError;

/// An artifact a tool result declared (its `metadata.artifacts`), with the
/// call that declared it.
#[derive(Debug, Clone, PartialEq)]
pub struct ArtifactRecord {
    /// The artifact.
    pub artifact: crate::events::SessionArtifact,
    /// The call whose result declared it.
    pub call_id: String,
    /// The tool's canonical name.
    pub name: String,
    /// The turn of the call.
    pub turn_id: String,
}

/// Receives turns as the loop produces them. A tool-calling assistant turn
/// arrives together with its tool-results turn, so a store never holds a
/// call without its result.
pub trait TurnSink: Send + Sync {
    /// Persists `turns` (in order), produced by `mark`'s run up to the end
    /// of its loop turn `mark.turn` (0 for the prompt).
    fn flush<'a>(&'a self, turns: &'a [SessionTurn], mark: TurnMark<'a>) -> BoxFuture<'a, Result<(), SharedError>>;

    /// Replaces the whole conversation kept so far with `turns` (a
    /// repaired history). The default keeps nothing.
    fn replace<'a>(&'a self, turns: &'a [SessionTurn]) -> BoxFuture<'a, Result<(), SharedError>> {
        let _ = turns;
        Box::pin(async { Ok(()) })
    }

    /// Keeps the artifacts a batch's results declared, once the batch's
    /// turns are flushed. The default keeps none.
    fn artifacts<'a>(&'a self, records: &'a [ArtifactRecord], mark: TurnMark<'a>) -> BoxFuture<'a, ()> {
        let _ = (records, mark);
        Box::pin(async {})
    }

    /// The session the turns go to, holding `turns` (the conversation as
    /// the loop has it), for the hook payloads that carry it
    /// (`system:transform`, `run:beforeEnd`). `None` (the default): no
    /// session.
    fn session(&self, turns: Vec<SessionTurn>) -> Option<crate::session::Session> {
        let _ = turns;
        None
    }
}

/// Where in a run a flush happens: a checkpoint store keeps it with the
/// turns, so a resume knows which loop turn the saved turns end at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnMark<'a> {
    /// The run that produced the turns.
    pub run_id: &'a str,
    /// The loop turn the flushed turns complete (0: the prompt, or
    /// messages queued before the first request).
    pub turn: u32,
}
