//! Where a connection's messages go: a queue of serialized messages its
//! writer empties. A bounded queue (a socket) holds at most so many
//! messages and so many bytes; one that would overflow (a client that
//! stopped reading) closes the connection rather than growing the server's
//! memory. What must arrive whole however long it is (a conversation
//! replayed on attach) waits for room instead.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde_json::Value;
use tokio::sync::Notify;
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender, unbounded_channel};

/// The most bytes a bounded queue holds.
const MAX_BYTES: usize = 32 << 20;

/// A connection's outgoing queue (cloned by whoever sends on it).
#[derive(Clone)]
pub(crate) struct Outbox {
    sender: Sender,
    bytes: Arc<AtomicUsize>,
    closed: Arc<AtomicBool>,
    closing: Arc<Notify>,
}

#[derive(Clone)]
enum Sender {
    Unbounded(UnboundedSender<String>),
    Bounded(mpsc::Sender<String>),
}

/// The writer's end of an [`Outbox`].
pub(crate) struct OutboxReceiver {
    receiver: Receiver,
    bytes: Arc<AtomicUsize>,
}

enum Receiver {
    Unbounded(UnboundedReceiver<String>),
    Bounded(mpsc::Receiver<String>),
}

impl OutboxReceiver {
    /// The next message, as text (`None`: every sender is gone).
    pub(crate) async fn recv(&mut self) -> Option<String> {
        let text = match &mut self.receiver {
            Receiver::Unbounded(rx) => rx.recv().await,
            Receiver::Bounded(rx) => rx.recv().await,
        }?;
        self.bytes.fetch_sub(text.len(), Ordering::SeqCst);
        Some(text)
    }

    /// Takes no more messages (those queued are still received).
    pub(crate) fn close(&mut self) {
        match &mut self.receiver {
            Receiver::Unbounded(rx) => rx.close(),
            Receiver::Bounded(rx) => rx.close(),
        }
    }
}

impl Outbox {
    /// An unbounded queue (standard output: the client's pipe).
    pub(crate) fn unbounded() -> (Outbox, OutboxReceiver) {
        let (tx, rx) = unbounded_channel();
        Outbox::pair(Sender::Unbounded(tx), Receiver::Unbounded(rx))
    }

    /// A queue of at most `capacity` messages and [`MAX_BYTES`] (a socket).
    pub(crate) fn bounded(capacity: usize) -> (Outbox, OutboxReceiver) {
        let (tx, rx) = mpsc::channel(capacity);
        Outbox::pair(Sender::Bounded(tx), Receiver::Bounded(rx))
    }

    fn pair(sender: Sender, receiver: Receiver) -> (Outbox, OutboxReceiver) {
        let bytes = Arc::new(AtomicUsize::new(0));
        let outbox = Outbox {
            sender,
            bytes: Arc::clone(&bytes),
            closed: Arc::default(),
            closing: Arc::default(),
        };
        (outbox, OutboxReceiver { receiver, bytes })
    }

    /// Queues `message`; a full queue closes the connection.
    pub(crate) fn send(&self, message: &Value) {
        if self.is_closed() {
            return;
        }
        let text = message.to_string();
        let len = text.len();
        // Counted before it is queued: the writer may take it at once.
        let before = self.bytes.fetch_add(len, Ordering::SeqCst);
        let sent = match &self.sender {
            Sender::Unbounded(tx) => tx.send(text).is_ok(),
            Sender::Bounded(tx) => before + len <= MAX_BYTES && tx.try_send(text).is_ok(),
        };
        if !sent {
            self.bytes.fetch_sub(len, Ordering::SeqCst);
            self.close();
        }
    }

    /// Queues `message`, waiting for room (for what the client asked for
    /// and reads: a replay); `false` when the connection closed.
    pub(crate) async fn send_waiting(&self, message: &Value) -> bool {
        if self.is_closed() {
            return false;
        }
        let text = message.to_string();
        let len = text.len();
        self.bytes.fetch_add(len, Ordering::SeqCst);
        let sent = match &self.sender {
            Sender::Unbounded(tx) => tx.send(text).is_ok(),
            Sender::Bounded(tx) => tokio::select! {
                sent = tx.send(text) => sent.is_ok(),
                () = self.closed() => false,
            },
        };
        if !sent {
            self.bytes.fetch_sub(len, Ordering::SeqCst);
        }
        sent
    }

    /// Marks the connection closed (its writer ends it).
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.closing.notify_waiters();
        self.closing.notify_one();
    }

    /// Whether the connection is closed.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Resolves once the connection is closed.
    pub(crate) async fn closed(&self) {
        while !self.is_closed() {
            self.closing.notified().await;
        }
    }
}
