//! Spans as the exporter keeps them, and their OTLP/HTTP JSON form
//! (`ExportTraceServiceRequest`: hex ids, string-encoded nanoseconds,
//! numeric enums).

use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

/// A trace id.
pub type TraceId = [u8; 16];
/// A span id.
pub type SpanId = [u8; 8];

/// `SPAN_KIND_INTERNAL`.
pub const KIND_INTERNAL: u8 = 1;
/// `SPAN_KIND_CLIENT`.
pub const KIND_CLIENT: u8 = 3;

/// An attribute value.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    /// A string.
    Str(String),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// A list of strings.
    Strs(Vec<String>),
}

impl From<&str> for AttrValue {
    fn from(s: &str) -> Self {
        AttrValue::Str(s.to_owned())
    }
}

impl From<String> for AttrValue {
    fn from(s: String) -> Self {
        AttrValue::Str(s)
    }
}

impl From<u64> for AttrValue {
    fn from(n: u64) -> Self {
        AttrValue::Int(i64::try_from(n).unwrap_or(i64::MAX))
    }
}

impl From<u32> for AttrValue {
    fn from(n: u32) -> Self {
        AttrValue::Int(i64::from(n))
    }
}

impl From<f64> for AttrValue {
    fn from(n: f64) -> Self {
        AttrValue::Float(n)
    }
}

impl From<bool> for AttrValue {
    fn from(b: bool) -> Self {
        AttrValue::Bool(b)
    }
}

/// One span, open or finished.
#[derive(Debug, Clone)]
pub struct SpanData {
    pub trace_id: TraceId,
    pub span_id: SpanId,
    pub parent: Option<SpanId>,
    pub name: String,
    pub kind: u8,
    pub start_ns: u64,
    pub end_ns: u64,
    pub attributes: Vec<(&'static str, AttrValue)>,
    /// `Some(message)` marks the span failed.
    pub error: Option<String>,
}

impl SpanData {
    /// A span starting now.
    pub fn start(trace_id: TraceId, parent: Option<SpanId>, name: String, kind: u8) -> SpanData {
        SpanData {
            trace_id,
            span_id: new_span_id(),
            parent,
            name,
            kind,
            start_ns: now_ns(),
            end_ns: 0,
            attributes: Vec::new(),
            error: None,
        }
    }

    /// Sets `key`, replacing an earlier value.
    pub fn set(&mut self, key: &'static str, value: impl Into<AttrValue>) {
        let value = value.into();
        match self.attributes.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.attributes.push((key, value)),
        }
    }

    /// Ends the span now (once).
    pub fn end(&mut self) {
        if self.end_ns == 0 {
            self.end_ns = now_ns().max(self.start_ns);
        }
    }

    /// The W3C `traceparent` naming this span as the parent.
    pub fn traceparent(&self) -> String {
        format!("00-{}-{}-01", hex(&self.trace_id), hex(&self.span_id))
    }

    fn to_json(&self) -> Value {
        let mut span = json!({
            "traceId": hex(&self.trace_id),
            "spanId": hex(&self.span_id),
            "name": self.name,
            "kind": self.kind,
            "startTimeUnixNano": self.start_ns.to_string(),
            "endTimeUnixNano": self.end_ns.to_string(),
            "attributes": attributes(&self.attributes),
            "status": match &self.error {
                Some(message) => json!({"code": 2, "message": message}),
                None => json!({"code": 0}),
            },
        });
        if let Some(parent) = &self.parent {
            span["parentSpanId"] = hex(parent).into();
        }
        span
    }
}

/// The body of one export: every span under one resource and scope.
pub fn export_body(service_name: &str, spans: &[SpanData]) -> Value {
    json!({
        "resourceSpans": [{
            "resource": {"attributes": attributes(&[("service.name", service_name.into())])},
            "scopeSpans": [{
                "scope": {"name": "zidane", "version": env!("CARGO_PKG_VERSION")},
                "spans": spans.iter().map(SpanData::to_json).collect::<Vec<_>>(),
            }],
        }],
    })
}

fn attributes(attrs: &[(&'static str, AttrValue)]) -> Value {
    attrs
        .iter()
        .map(|(key, value)| json!({"key": key, "value": any_value(value)}))
        .collect()
}

fn any_value(value: &AttrValue) -> Value {
    match value {
        AttrValue::Str(s) => json!({"stringValue": s}),
        // OTLP JSON carries 64-bit integers as strings.
        AttrValue::Int(n) => json!({"intValue": n.to_string()}),
        AttrValue::Float(n) => json!({"doubleValue": n}),
        AttrValue::Bool(b) => json!({"boolValue": b}),
        AttrValue::Strs(items) => json!({"arrayValue": {
            "values": items.iter().map(|s| json!({"stringValue": s})).collect::<Vec<_>>()
        }}),
    }
}

/// `(trace id, parent span id)` from a W3C `traceparent`; `None` when it is
/// malformed or all zeros.
pub fn parse_traceparent(value: &str) -> Option<(TraceId, SpanId)> {
    let mut parts = value.trim().split('-');
    let (version, trace, parent, _flags) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if version.len() != 2 || version == "ff" {
        return None;
    }
    let trace: TraceId = unhex(trace)?;
    let parent: SpanId = unhex(parent)?;
    if trace == [0; 16] || parent == [0; 8] {
        return None;
    }
    Some((trace, parent))
}

fn unhex<const N: usize>(s: &str) -> Option<[u8; N]> {
    if s.len() != N * 2 {
        return None;
    }
    let mut out = [0u8; N];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(s.get(i * 2..i * 2 + 2)?, 16).ok()?;
    }
    Some(out)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// 64 unpredictable-enough bits: a randomly keyed hash of a process-wide
/// counter and the time. Trace ids need uniqueness, not secrecy.
fn random_u64() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    RandomState::new().hash_one((n, now_ns(), std::process::id()))
}

/// A fresh trace id.
pub fn new_trace_id() -> TraceId {
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&random_u64().to_be_bytes());
    id[8..].copy_from_slice(&random_u64().to_be_bytes());
    id
}

fn new_span_id() -> SpanId {
    loop {
        let id = random_u64().to_be_bytes();
        if id != [0; 8] {
            return id;
        }
    }
}
