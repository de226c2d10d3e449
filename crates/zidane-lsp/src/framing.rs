//! JSON-RPC messages framed with `Content-Length` headers, as the
//! language-server protocol sends them over standard input and output.

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};

use crate::error::LspError;

/// The largest message taken (a workspace's symbols can be large, but a
/// header announcing more than this is a broken server).
pub(crate) const MAX_MESSAGE: usize = 64 * 1024 * 1024;

/// One message as sent: its header and its JSON body.
pub(crate) fn encode(message: &Value) -> Vec<u8> {
    let body = message.to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

/// The next message, or `None` at the end of the stream.
pub(crate) async fn read<R: AsyncBufRead + Unpin>(reader: &mut R) -> Result<Option<Value>, LspError> {
    let mut length: Option<usize> = None;
    let mut line = String::new();
    let mut first = true;
    loop {
        line.clear();
        let n = reader.read_line(&mut line).await.map_err(LspError::Io)?;
        if n == 0 {
            return if first {
                Ok(None)
            } else {
                Err(LspError::Protocol("the stream ended inside a header".into()))
            };
        }
        first = false;
        let header = line.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            break;
        }
        let Some((name, value)) = header.split_once(':') else {
            return Err(LspError::Protocol(format!("a header without a colon: {header:?}")));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            let parsed = value
                .trim()
                .parse::<usize>()
                .map_err(|_| LspError::Protocol(format!("a Content-Length that is not a number: {value:?}")))?;
            length = Some(parsed);
        }
    }
    let length = length.ok_or_else(|| LspError::Protocol("a message without Content-Length".into()))?;
    if length > MAX_MESSAGE {
        return Err(LspError::Protocol(format!(
            "a message of {length} bytes (at most {MAX_MESSAGE} are taken)"
        )));
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await.map_err(LspError::Io)?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| LspError::Protocol(format!("a body that is not JSON: {e}")))
}

#[cfg(test)]
mod tests;
