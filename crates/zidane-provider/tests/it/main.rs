//! Integration tests of `zidane-provider`: one binary, one module per area.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod fixtures;
mod requests;
mod sse;
mod support;
