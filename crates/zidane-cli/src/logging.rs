//! Diagnostics: a `tracing` subscriber, off unless `RUST_LOG` asks for it,
//! writing to standard error (or `ZIDANE_LOG_FILE`), with the provider
//! credentials of the environment masked in every line.

use std::io::Write;
use std::sync::Arc;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

use zidane_app::Error;

/// The variables whose values never reach a log line.
const SECRETS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "OPENROUTER_API_KEY",
];

/// Installs the subscriber when `RUST_LOG` is set (e.g. `RUST_LOG=zidane=debug`).
pub(crate) fn init() -> Result<(), Error> {
    let Some(spec) = std::env::var("RUST_LOG").ok().filter(|s| !s.trim().is_empty()) else {
        return Ok(());
    };
    let filter =
        EnvFilter::try_new(&spec).map_err(|e| Error::usage(format!("RUST_LOG `{spec}` is not a filter: {e}")))?;
    let secrets: Arc<Vec<String>> = Arc::new(
        SECRETS
            .iter()
            .filter_map(|name| std::env::var(name).ok())
            .filter(|v| v.len() >= 8)
            .collect(),
    );
    let sink = match std::env::var_os("ZIDANE_LOG_FILE").filter(|p| !p.is_empty()) {
        Some(path) => {
            // Traces may carry prompts and paths: the file is the user's alone.
            let _ = zidane::tools::tighten(std::path::Path::new(&path), 0o600);
            let file = zidane::tools::private_options()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(|e| {
                    Error::usage(format!(
                        "cannot open the log file {}: {e}",
                        std::path::Path::new(&path).display()
                    ))
                })?;
            Sink::File(Arc::new(parking_lot::Mutex::new(file)))
        }
        None => Sink::Stderr,
    };
    let writer = Masked { sink, secrets };
    // A subscriber already set (never, in the program) keeps its place.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(writer)
        .try_init();
    Ok(())
}

#[derive(Clone)]
enum Sink {
    Stderr,
    File(Arc<parking_lot::Mutex<std::fs::File>>),
}

/// Makes a writer per event; each line is masked before it is written.
#[derive(Clone)]
struct Masked {
    sink: Sink,
    secrets: Arc<Vec<String>>,
}

impl<'a> MakeWriter<'a> for Masked {
    type Writer = Masked;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

impl Write for Masked {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut text = String::from_utf8_lossy(buf).into_owned();
        for secret in self.secrets.iter() {
            if text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), "[redacted]");
            }
        }
        match &self.sink {
            Sink::Stderr => std::io::stderr().lock().write_all(text.as_bytes())?,
            Sink::File(file) => file.lock().write_all(text.as_bytes())?,
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
