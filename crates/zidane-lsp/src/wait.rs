//! Waiting for a document's diagnostics: asked (`textDocument/diagnostic`)
//! where the server offers it, else the next publication after the change,
//! with a short quiet spell for servers that publish in several passes.

use std::time::Duration;

use lsp_types::{Diagnostic, Uri};
use tokio::time::Instant;

use crate::client::Client;
use crate::error::LspError;

/// The quiet spell after a publication before its list is taken.
const QUIET: Duration = Duration::from_millis(250);

/// Asks for the document's diagnostics.
pub(crate) async fn pull(client: &Client, uri: &Uri, settle: Duration) -> Result<Vec<Diagnostic>, LspError> {
    let params = lsp_types::DocumentDiagnosticParams {
        text_document: lsp_types::TextDocumentIdentifier { uri: uri.clone() },
        identifier: None,
        previous_result_id: None,
        work_done_progress_params: lsp_types::WorkDoneProgressParams::default(),
        partial_result_params: lsp_types::PartialResultParams::default(),
    };
    let report = client
        .request::<lsp_types::request::DocumentDiagnosticRequest>(params, settle)
        .await?;
    Ok(match report {
        lsp_types::DocumentDiagnosticReportResult::Report(lsp_types::DocumentDiagnosticReport::Full(full)) => {
            full.full_document_diagnostic_report.items
        }
        // Unchanged since a result id this client never sends, or partial
        // results it does not ask for: what was published is the answer.
        _ => client.published(uri).diagnostics,
    })
}

/// Waits for the server to publish for `uri` after its version `version`
/// was sent (`before` publications had been seen), then for a quiet spell.
///
/// With `clean_silence`, a file the server last called clean is taken to
/// be clean still after that long without a publication for it.
pub(crate) async fn push(
    client: &Client,
    uri: &Uri,
    before: u64,
    version: i32,
    settle: Duration,
    clean_silence: Option<Duration>,
) -> Result<Vec<Diagnostic>, LspError> {
    let deadline = Instant::now() + settle;
    let was_clean = {
        let last = client.published(uri);
        last.count > 0 && last.diagnostics.is_empty()
    };
    let clean_by = clean_silence
        .filter(|_| was_clean)
        .map(|silence| (Instant::now() + silence).min(deadline));
    let mut changes = client.changes.clone();
    loop {
        let published = client.published(uri);
        if published.count > before && published.version.is_none_or(|v| v >= version) {
            break;
        }
        if !client.is_alive() {
            return Err(LspError::Exited(uri.as_str().to_owned()));
        }
        match tokio::time::timeout_at(clean_by.unwrap_or(deadline), changes.changed()).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return Err(LspError::Exited(uri.as_str().to_owned())),
            Err(_) if clean_by.is_some_and(|at| at < deadline) => return Ok(Vec::new()),
            Err(_) => {
                return Err(LspError::Timeout {
                    method: "textDocument/publishDiagnostics".into(),
                    after: settle,
                });
            }
        }
    }
    // Some servers publish again shortly (a fast pass, then a full one).
    loop {
        let count = client.published(uri).count;
        let until = (Instant::now() + QUIET).min(deadline);
        let mut newer = false;
        while Instant::now() < until {
            match tokio::time::timeout_at(until, changes.changed()).await {
                Ok(Ok(())) if client.published(uri).count > count => {
                    newer = true;
                    break;
                }
                Ok(Ok(())) => {}
                _ => break,
            }
        }
        if !newer || Instant::now() >= deadline {
            break;
        }
    }
    Ok(client.published(uri).diagnostics)
}
