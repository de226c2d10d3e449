//! A server-sent-events decoder following the WHATWG event-stream rules.
//!
//! Bytes go in as they arrive, in chunks of any size; events come out when
//! their blank line arrives. Lines end in CR, LF or CRLF (a CRLF split across
//! two chunks counts once), a leading byte-order mark is dropped, comment
//! lines are skipped, and a field line without a colon is a field with an
//! empty value. At a clean end of body the pending event is dispatched (see
//! [`SseDecoder::finish`]). Lines are only ever split at ASCII bytes, so a multi-byte
//! UTF-8 character split across reads arrives whole. An event whose data is a
//! single `data:` line (every provider's case) borrows its bytes from the read
//! buffer without copying.

use bytes::{Buf, Bytes, BytesMut};

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field; `None` stands for the default type, `message`.
    pub event: Option<Bytes>,
    /// The data lines joined by `\n`.
    pub data: Bytes,
    /// The last `id:` seen on the stream, if any.
    pub id: Option<Bytes>,
    /// A `retry:` value (milliseconds) given with this event.
    pub retry: Option<u64>,
}

impl SseEvent {
    /// The event type as text (`message` when the stream gave none).
    pub fn event_type(&self) -> &str {
        self.event
            .as_deref()
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or("message")
    }
}

#[derive(Debug, Default)]
enum Data {
    #[default]
    None,
    One(Bytes),
    Many(BytesMut),
}

/// The decoder's state between chunks.
#[derive(Debug, Default)]
pub struct SseDecoder {
    buf: BytesMut,
    /// Bytes of `buf` already scanned without finding a line end.
    scanned: usize,
    /// The previous chunk ended in CR: a leading LF of the next one belongs to it.
    skip_lf: bool,
    /// The byte-order mark check is done.
    started: bool,
    event: Option<Bytes>,
    data: Data,
    last_id: Option<Bytes>,
    retry: Option<u64>,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes held for a line or an event not yet complete (what one
    /// over-long line or event costs in memory).
    pub fn pending_bytes(&self) -> usize {
        let data = match &self.data {
            Data::None => 0,
            Data::One(b) => b.len(),
            Data::Many(b) => b.len(),
        };
        self.buf.len() + data
    }

    /// Feeds a chunk, appending the events it completes to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) {
        let mut chunk = chunk;
        if self.skip_lf && !chunk.is_empty() {
            self.skip_lf = false;
            if chunk[0] == b'\n' {
                chunk = &chunk[1..];
            }
        }
        self.buf.extend_from_slice(chunk);
        self.scan(out);
    }

    /// Feeds a chunk the decoder may keep: the lines it holds whole are
    /// sliced out of it without a copy, and only a line still unfinished
    /// at its end is copied into the decoder's buffer. Same events as
    /// [`SseDecoder::feed`].
    pub fn feed_bytes(&mut self, mut chunk: Bytes, out: &mut Vec<SseEvent>) {
        if self.skip_lf && !chunk.is_empty() {
            self.skip_lf = false;
            if chunk[0] == b'\n' {
                chunk.advance(1);
            }
        }
        if !self.started || !self.buf.is_empty() {
            // A line (or the byte-order-mark check) is pending in the
            // buffer: finish it there, with its line end.
            let Some(end) = memchr::memchr2(b'\n', b'\r', &chunk) else {
                self.buf.extend_from_slice(&chunk);
                return self.scan(out);
            };
            let crlf = chunk[end] == b'\r' && chunk.get(end + 1) == Some(&b'\n');
            let take = end + 1 + usize::from(crlf);
            self.buf.extend_from_slice(&chunk[..take]);
            chunk.advance(take);
            self.scan(out);
            if !chunk.is_empty() {
                // A CR that ended the buffer is followed by something else.
                self.skip_lf = false;
            }
            if !self.started || !self.buf.is_empty() {
                self.buf.extend_from_slice(&chunk);
                return self.scan(out);
            }
        }
        loop {
            let Some(end) = memchr::memchr2(b'\n', b'\r', &chunk) else {
                self.buf.extend_from_slice(&chunk);
                self.scanned = self.buf.len();
                return;
            };
            let line = chunk.slice(..end);
            let mut next = end + 1;
            if chunk[end] == b'\r' {
                if chunk.get(next) == Some(&b'\n') {
                    next += 1;
                } else if next == chunk.len() {
                    self.skip_lf = true;
                }
            }
            chunk.advance(next);
            self.line(line, out);
        }
    }

    /// Checks the byte-order mark, then dispatches the lines `buf` holds.
    fn scan(&mut self, out: &mut Vec<SseEvent>) {
        if !self.started {
            let n = self.buf.len().min(BOM.len());
            if self.buf[..n] != BOM[..n] {
                self.started = true;
            } else if n == BOM.len() {
                let _ = self.buf.split_to(BOM.len());
                self.started = true;
            } else {
                return; // a BOM may still be arriving
            }
        }
        loop {
            let Some(rel) = memchr::memchr2(b'\n', b'\r', &self.buf[self.scanned..]) else {
                self.scanned = self.buf.len();
                return;
            };
            let end = self.scanned + rel;
            let is_cr = self.buf[end] == b'\r';
            let line = self.buf.split_to(end).freeze();
            // Drop the terminator: CR, LF, or CRLF.
            let _ = self.buf.split_to(1);
            if is_cr {
                if self.buf.first() == Some(&b'\n') {
                    let _ = self.buf.split_to(1);
                } else if self.buf.is_empty() {
                    self.skip_lf = true;
                }
            }
            self.scanned = 0;
            self.line(line, out);
        }
    }

    /// Ends the stream at a clean end of body: a last line without its line
    /// end, and a last event without its blank line, are still dispatched.
    ///
    /// This departs from the browser `EventSource` rule (which drops them, as
    /// it will reconnect and resume) in the way the providers' own SDKs do: a
    /// response body that ended cleanly is complete, and servers commonly
    /// omit the final blank line. A body that broke off is reported by the
    /// transport instead, and never reaches this call.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if !self.started && !self.buf.is_empty() && BOM.starts_with(&self.buf) {
            self.buf.clear(); // only part of a byte-order mark ever arrived
        }
        self.started = true;
        if !self.buf.is_empty() {
            let line = self.buf.split().freeze();
            self.line(line, out);
        }
        self.scanned = 0;
        self.skip_lf = false;
        self.dispatch(out);
        self.event = None;
    }

    fn line(&mut self, line: Bytes, out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return; // comment
        }
        let (name, value) = match memchr::memchr(b':', &line) {
            Some(colon) => {
                let value_start = if line.get(colon + 1) == Some(&b' ') {
                    colon + 2
                } else {
                    colon + 1
                };
                (line.slice(..colon), line.slice(value_start..))
            }
            None => (line.clone(), Bytes::new()),
        };
        match &name[..] {
            b"event" => self.event = Some(value),
            b"data" => {
                self.data = match std::mem::take(&mut self.data) {
                    Data::None => Data::One(value),
                    Data::One(first) => {
                        let mut joined = BytesMut::with_capacity(first.len() + 1 + value.len());
                        joined.extend_from_slice(&first);
                        joined.extend_from_slice(b"\n");
                        joined.extend_from_slice(&value);
                        Data::Many(joined)
                    }
                    Data::Many(mut joined) => {
                        joined.extend_from_slice(b"\n");
                        joined.extend_from_slice(&value);
                        Data::Many(joined)
                    }
                }
            }
            b"id" if !value.contains(&0) => self.last_id = Some(value),
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                self.retry = std::str::from_utf8(&value).ok().and_then(|v| v.parse().ok());
            }
            _ => {} // unknown fields are ignored
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        let retry = self.retry.take();
        let data = match std::mem::take(&mut self.data) {
            Data::None => return, // no data field: nothing to dispatch
            Data::One(data) => data,
            Data::Many(data) => data.freeze(),
        };
        out.push(SseEvent {
            event,
            data,
            id: self.last_id.clone(),
            retry,
        });
    }
}
