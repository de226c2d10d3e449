//! Control messages as the driver takes them: journaled once (a retry
//! with the client's id answered as the first), told to the inbox, and
//! applied to the run.

use super::*;

impl Driver {
    /// A control message: handed to the run, then journaled with whether
    /// the run took it (what the inbox answers). One that arrives while the
    /// invocation replays waits until it goes live (an entry cannot be
    /// written before the journal's end).
    pub(super) async fn control(&mut self, ctx: &ObjectContext<'_>, received: Received) {
        if self.check_suspended() {
            return;
        }
        if !self.live {
            self.pending_controls.push(received);
            return;
        }
        self.take_control(ctx, received).await;
    }

    /// Hands a control message to the run and journals it. A message whose
    /// id a run of the session took before is not handed over again: it
    /// is answered as that one was.
    pub(super) async fn take_control(&mut self, ctx: &ObjectContext<'_>, received: Received) {
        let Received {
            control,
            seq,
            reply_to,
            id,
        } = received;
        if self.already_journaled(seq) {
            return;
        }
        let earlier = id
            .as_deref()
            .and_then(|id| self.control_ids.iter().find(|(known, _)| known == id))
            .map(|(_, accepted)| *accepted);
        let (accepted, again) = match earlier {
            Some(accepted) => (accepted, true),
            None => (self.apply.as_ref().is_some_and(|apply| apply(&control)), false),
        };
        let entry = Entry::Control {
            control,
            seq,
            reply_to,
            id,
            accepted,
            again,
        };
        if self.write(ctx, entry).await.is_err() {
            tracing::warn!(target: "zidane", "a control message could not be journaled");
        }
    }

    /// Whether the inbox message `seq` is in the journal already (a replay
    /// receives the signals of earlier attempts again).
    pub(super) fn already_journaled(&self, seq: Option<u64>) -> bool {
        matches!((seq, self.journaled_seq), (Some(seq), Some(last)) if seq <= last)
    }

    pub(super) async fn flush_controls(&mut self, ctx: &ObjectContext<'_>) {
        for received in std::mem::take(&mut self.pending_controls) {
            self.take_control(ctx, received).await;
        }
    }

    /// A control message's entry. Handed to the run before it was written
    /// (live), and again on each replay when the run took it then (each
    /// attempt's run is a new one); a suspend stopped only the attempt it
    /// reached.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn apply_control(
        &mut self,
        ctx: &ObjectContext<'_>,
        control: Control,
        seq: Option<u64>,
        reply_to: Option<String>,
        id: Option<String>,
        accepted: bool,
        again: bool,
    ) {
        if let Some(seq) = seq {
            self.journaled_seq = Some(self.journaled_seq.map_or(seq, |last| last.max(seq)));
        }
        if let Some(id) = id.filter(|_| !again) {
            self.control_ids.push_back((id, accepted));
            while self.control_ids.len() > CONTROL_IDS_KEPT {
                self.control_ids.pop_front();
            }
            ctx.set(CONTROL_IDS_KEY, Json(self.control_ids.clone()));
        }
        // The inbox answers its caller whether the run took the message
        // (issued again, as a replayed command, on a replay).
        if let Some(inbox) = reply_to {
            ctx.invocation_handle(inbox).signal(TAKEN_SIGNAL).resolve(accepted);
        }
        let replayed = !self.live && accepted && !again && control != Control::Suspend;
        if let (true, Some(apply)) = (replayed, &self.apply) {
            apply(&control);
        }
    }
}
