//! Integration tests of `zidane-loop`: scenarios on the scripted provider.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod harness;
mod scenarios;
mod tools;
