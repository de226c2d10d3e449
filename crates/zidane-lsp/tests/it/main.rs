//! Language servers nobody here wrote (pyright and
//! typescript-language-server from npm, python-lsp-server from PyPI, installed by `cargo xtask lsp-servers` into
//! `target/lsp-servers`), and small scripts that misbehave.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout, missing_docs)]

mod edits;
mod failures;
mod support;
mod tool;
mod typescript;
