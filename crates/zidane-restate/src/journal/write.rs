//! Entries written: turns appended or replaced, a live step probed
//! against the journal, and entries held back until the next write.

use super::*;

impl Driver {
    pub(super) async fn append(
        &mut self,
        ctx: &ObjectContext<'_>,
        turns: Vec<SessionTurn>,
    ) -> Result<(), JournalError> {
        let from = self.handed_turns;
        let end = from + turns.len();
        loop {
            if self.stored_turns >= end {
                self.handed_turns = end;
                return Ok(());
            }
            let skip = self.stored_turns.saturating_sub(from);
            let entry = Entry::Turns {
                from: from + skip,
                turns: self.journal_turns(&turns[skip..]),
                replace: false,
            };
            if self.live {
                self.write(ctx, entry).await?;
            } else if !self.probe(ctx, entry).await? {
                continue;
            }
            self.handed_turns = end;
            return Ok(());
        }
    }

    pub(super) async fn replace(
        &mut self,
        ctx: &ObjectContext<'_>,
        turns: Vec<SessionTurn>,
    ) -> Result<(), JournalError> {
        self.replaces_asked += 1;
        let len = turns.len();
        loop {
            if self.replaces_read >= self.replaces_asked {
                self.handed_turns = len;
                return Ok(());
            }
            let entry = Entry::Turns {
                from: 0,
                turns: turns.iter().cloned().map(JournalTurn::Whole).collect(),
                replace: true,
            };
            if self.live {
                self.write(ctx, entry).await?;
            } else if !self.probe(ctx, entry).await? {
                continue;
            }
            self.handed_turns = len;
            return Ok(());
        }
    }

    /// Asks the journal for its next entry with `live_entry` as the closure:
    /// a replayed entry is applied (`Ok(false)`); when the journal has no
    /// more, `live_entry` is written and applied and the invocation is live
    /// (`Ok(true)`).
    pub(super) async fn probe(&mut self, ctx: &ObjectContext<'_>, live_entry: Entry) -> Result<bool, JournalError> {
        let ran = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&ran);
        let entry = live_entry;
        let read = ctx
            .run(move || async move {
                flag.store(true, Ordering::Release);
                Ok(Json(entry))
            })
            .name(ENTRY_NAME)
            .await
            .map_err(|e| JournalError::Refused(e.to_string()))?
            .into_inner();
        let went_live = ran.load(Ordering::Acquire);
        if went_live {
            self.written += 1;
            self.live = true;
        } else {
            self.replayed += 1;
        }
        let wrote_state = went_live && sends_with_next(&read);
        // A replayed step's value waits here for the step to ask.
        if let Some((key, value)) = self.apply(ctx, settled(read)) {
            self.done.insert(key, *value);
        }
        if wrote_state {
            self.unsent_since.get_or_insert_with(tokio::time::Instant::now);
        }
        if went_live {
            if let Some(on_live) = self.on_live.take() {
                on_live(std::mem::take(&mut self.replayed_meta));
            }
            self.flush_controls(ctx).await;
        }
        Ok(went_live)
    }

    /// Writes `entry` (live only) and applies it; a `Done` entry's value
    /// comes back to the step that wrote it (nothing asks for it again).
    pub(super) async fn write(
        &mut self,
        ctx: &ObjectContext<'_>,
        entry: Entry,
    ) -> Result<Option<Box<StepValue>>, JournalError> {
        debug_assert!(
            self.live,
            "entries are written only once the journal is read to its end"
        );
        let entry = if self.held.is_empty() {
            entry
        } else {
            self.held_since = None;
            let mut entries = std::mem::take(&mut self.held);
            entries.push(entry);
            Entry::Batch { entries }
        };
        // This entry carries the K/V writes made since the last one.
        self.unsent_since = None;
        let written = ctx
            .run(move || async move { Ok(Json(entry)) })
            .name(ENTRY_NAME)
            .await
            .map_err(|e| JournalError::Refused(e.to_string()))?
            .into_inner();
        self.written += 1;
        let wrote_state = sends_with_next(&written);
        // The inbox's caller waits for its answer: it goes out now.
        let answers_inbox = answers_inbox(&written);
        let value = self.apply(ctx, settled(written)).map(|(_, value)| value);
        if answers_inbox {
            self.stored(ctx).await?;
        } else if wrote_state {
            self.unsent_since = Some(tokio::time::Instant::now());
        }
        Ok(value)
    }

    /// Journals the values held, on their own.
    pub(super) async fn write_held(&mut self, ctx: &ObjectContext<'_>) {
        if let Err(e) = self.flush_held(ctx).await {
            tracing::warn!(target: "zidane", "finished steps' values could not be journaled: {e}");
        }
    }

    /// Journals the values held: the last one as the entry, with the others
    /// batched in front of it.
    pub(super) async fn flush_held(&mut self, ctx: &ObjectContext<'_>) -> Result<(), JournalError> {
        let mut held = std::mem::take(&mut self.held);
        self.held_since = None;
        let Some(last) = held.pop() else {
            return Ok(());
        };
        self.held = held;
        self.write(ctx, last).await.map(drop)
    }

    /// Sends the K/V writes made so far, with a `Stored` entry.
    pub(super) async fn stored(&mut self, ctx: &ObjectContext<'_>) -> Result<(), JournalError> {
        self.unsent_since = None;
        ctx.run(|| async { Ok(Json(Entry::Stored)) })
            .name(ENTRY_NAME)
            .await
            .map_err(|e| JournalError::Refused(e.to_string()))?;
        self.written += 1;
        Ok(())
    }
}
