//! The `zidane` command-line agent.
//!
//! Architecture invariant: the program uses only the `zidane` facade, like
//! any application would.
//!
//! Status: the binary is not written yet; this crate builds no executable.
