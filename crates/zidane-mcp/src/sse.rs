//! The legacy HTTP + SSE transport (MCP 2024-11-05), which rmcp no longer
//! ships: a long-lived `GET` event stream whose first `endpoint` event names
//! the URL to `POST` messages to; answers come back as `message` events.
//! Runs on zidane-provider's hyper + rustls client, like streamable HTTP.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use http::header::{ACCEPT, CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderName, HeaderValue, Method, Request, StatusCode, Uri};
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use sse_stream::{Sse, SseStream};
use zidane_provider::{AbortSignal, ErrorKind, HttpClient, ProviderError, RequestBody};

use crate::error::McpError;

const PROVIDER: &str = "mcp";

/// A connected legacy SSE session.
pub(crate) struct LegacySse {
    http: HttpClient,
    headers: Arc<Vec<(HeaderName, HeaderValue)>>,
    endpoint: Arc<str>,
    events: BoxStream<'static, Result<Sse, sse_stream::Error>>,
}

fn headers_of(headers: &BTreeMap<String, String>) -> Result<Vec<(HeaderName, HeaderValue)>, McpError> {
    headers
        .iter()
        .map(|(name, value)| {
            let bad = |what: &str| McpError::spawn_msg(format!("header `{name}`: {what}"));
            let header = HeaderName::try_from(name.as_str()).map_err(|_| bad("not a valid header name"))?;
            if header == ACCEPT || header == CONTENT_TYPE {
                return Err(bad("set by the transport itself"));
            }
            let value = HeaderValue::try_from(value.as_str()).map_err(|_| bad("not a valid header value"))?;
            Ok((header, value))
        })
        .collect()
}

/// Where `endpoint` (absolute, absolute-path or relative) points from `base`.
fn resolve(base: &Uri, endpoint: &str) -> Result<String, McpError> {
    let endpoint = endpoint.trim();
    if endpoint.parse::<Uri>().is_ok_and(|u| u.scheme().is_some()) {
        return Ok(endpoint.to_owned());
    }
    let (Some(scheme), Some(authority)) = (base.scheme_str(), base.authority()) else {
        return Err(McpError::protocol_msg(format!("`{base}` is not an absolute URL")));
    };
    if endpoint.starts_with('/') {
        return Ok(format!("{scheme}://{authority}{endpoint}"));
    }
    let path = base.path();
    let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
    let dir = if dir.is_empty() { "/" } else { dir };
    Ok(format!("{scheme}://{authority}{dir}{endpoint}"))
}

/// Opens the event stream of `url` and waits for its `endpoint` event.
pub(crate) async fn connect(
    url: &str,
    headers: &BTreeMap<String, String>,
    connect: Duration,
    call: Duration,
) -> Result<LegacySse, McpError> {
    let base: Uri = url
        .parse()
        .map_err(|e| McpError::spawn(format!("`{url}` is not a URL"), e))?;
    let headers = headers_of(headers)?;
    let http = crate::http::http_client(connect, call)?;
    let mut request = Request::builder()
        .method(Method::GET)
        .uri(url)
        .header(ACCEPT, "text/event-stream");
    for (name, value) in &headers {
        request = request.header(name, value);
    }
    let request = request
        .body(RequestBody::from(Bytes::new()))
        .map_err(|e| McpError::spawn("cannot build the request", e))?;
    let opening = async {
        let response = http
            .send_raw(PROVIDER, request, &AbortSignal::never())
            .await
            .map_err(|e| McpError::spawn("cannot open the event stream", e))?;
        let status = response.status();
        if status == StatusCode::UNAUTHORIZED {
            let challenge = response
                .headers()
                .get(WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("no challenge");
            return Err(McpError::AuthRequired(challenge.to_owned()));
        }
        if !status.is_success() {
            return Err(McpError::protocol_msg(format!(
                "opening the event stream returned HTTP {status}"
            )));
        }
        let mut events = SseStream::new(response.into_body()).boxed();
        // The endpoint comes first; anything before it has no session yet.
        loop {
            match events.next().await {
                Some(Ok(event)) if event.event.as_deref() == Some("endpoint") => {
                    let endpoint = resolve(&base, event.data.as_deref().unwrap_or_default())?;
                    return Ok((endpoint, events));
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(McpError::protocol("the event stream broke", e)),
                None => {
                    return Err(McpError::protocol_msg(
                        "the event stream ended before naming its endpoint",
                    ));
                }
            }
        }
    };
    let (endpoint, events) = tokio::time::timeout(connect, opening)
        .await
        .map_err(|_| McpError::Timeout(connect.as_secs()))??;
    Ok(LegacySse {
        http,
        headers: Arc::new(headers),
        endpoint: endpoint.into(),
        events,
    })
}

impl Transport<RoleClient> for LegacySse {
    type Error = ProviderError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), ProviderError>> + Send + 'static {
        let (http, headers, endpoint) = (self.http.clone(), Arc::clone(&self.headers), Arc::clone(&self.endpoint));
        async move {
            let body = serde_json::to_vec(&item).map_err(|e| {
                ProviderError::new(ErrorKind::InvalidRequest, PROVIDER, "cannot serialize a message").with_source(e)
            })?;
            let mut request = Request::builder()
                .method(Method::POST)
                .uri(&*endpoint)
                .header(CONTENT_TYPE, "application/json");
            for (name, value) in headers.iter() {
                request = request.header(name, value);
            }
            let request = request
                .body(RequestBody::from(Bytes::from(body)))
                .map_err(|e| ProviderError::new(ErrorKind::InvalidRequest, PROVIDER, e.to_string()))?;
            // The answer comes on the event stream; the POST only says accepted.
            http.send(PROVIDER, request, &AbortSignal::never()).await.map(drop)
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let event = self.events.next().await?.ok()?;
            if !matches!(event.event.as_deref(), None | Some("message")) {
                continue;
            }
            // A message that is not JSON-RPC is skipped: nothing waits for it.
            if let Some(Ok(message)) = event.data.as_deref().map(serde_json::from_str) {
                return Some(message);
            }
        }
    }

    async fn close(&mut self) -> Result<(), ProviderError> {
        self.events = futures::stream::empty().boxed();
        Ok(())
    }
}

#[cfg(test)]
mod tests;
