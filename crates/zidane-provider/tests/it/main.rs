//! Integration tests of `zidane-provider`: one binary, one module per area.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod fixtures;
#[cfg(feature = "http")]
mod http;
mod requests;
mod responses;
mod schema;
#[cfg(feature = "http")]
mod server;
mod sse;
mod support;
#[cfg(feature = "http")]
mod tls;
