//! `web_fetch`: a web page as text (HTML as Markdown), over the providers'
//! HTTP client.
//!
//! What it never does: send credentials (no provider key, no cookie, no
//! `Authorization` header: each request is made afresh), follow more than
//! [`MAX_REDIRECTS`] redirects, or reach a loopback, private, link-local
//! or unspecified address unless the host says so
//! ([`WebFetchOptions::allow_private`]). Each hop of a redirect is checked
//! again. The address is checked when the name is resolved; the connection
//! resolves it again, so a name whose address changes in between (DNS
//! rebinding) is not caught.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::BodyExt;
use serde_json::json;
use zidane_core::tool::{FnTool, ToolOutput};
use zidane_provider::{AbortSignal, HttpClient, RequestBody, Timeouts};

use crate::fail;

/// Redirects followed before giving up.
pub const MAX_REDIRECTS: usize = 5;

/// Bytes read of a response before the rest is left unread.
const MAX_BODY: usize = 5 << 20;

/// Which hosts on private addresses may be fetched.
pub type HostFilter = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// How `web_fetch` behaves.
#[derive(Clone)]
pub struct WebFetchOptions {
    /// `false`: every call is refused (the run has no network).
    pub network: bool,
    /// Hosts on loopback or private addresses that may be fetched anyway
    /// (say, allowed by the user's rules). Default: none.
    pub allow_private: HostFilter,
    /// Characters of text returned; the rest is cut with a note.
    pub max_chars: usize,
    /// Connect and idle timeouts.
    pub timeouts: Timeouts,
}

impl Default for WebFetchOptions {
    fn default() -> Self {
        WebFetchOptions {
            network: true,
            allow_private: Arc::new(|_| false),
            max_chars: 60_000,
            timeouts: Timeouts {
                idle: Duration::from_secs(30),
                ..Timeouts::default()
            },
        }
    }
}

impl std::fmt::Debug for WebFetchOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebFetchOptions")
            .field("network", &self.network)
            .field("max_chars", &self.max_chars)
            .finish_non_exhaustive()
    }
}

/// Whether `ip` is one a page on the internet does not live at.
fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || (o[0] == 100 && (64..128).contains(&o[1]))
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_private(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            v6.is_loopback() || v6.is_unspecified() || (first & 0xfe00) == 0xfc00 || (first & 0xffc0) == 0xfe80
        }
    }
}

/// Refuses a URL whose host resolves to a private address (unless allowed).
async fn check_host(uri: &http::Uri, options: &WebFetchOptions) -> Result<(), String> {
    let host = uri.host().ok_or("the URL has no host")?;
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if (options.allow_private)(&bare.to_ascii_lowercase()) {
        return Ok(());
    }
    let port = uri
        .port_u16()
        .unwrap_or(if uri.scheme_str() == Some("https") { 443 } else { 80 });
    let addrs: Vec<IpAddr> = match bare.parse::<IpAddr>() {
        Ok(ip) => vec![ip],
        Err(_) => tokio::net::lookup_host((bare, port))
            .await
            .map_err(|e| format!("cannot resolve `{host}`: {e}"))?
            .map(|a| a.ip())
            .collect(),
    };
    match addrs.iter().find(|ip| is_private(**ip)) {
        Some(ip) => Err(format!(
            "`{host}` is at {ip}, a loopback or private address; web_fetch reaches only public addresses unless a rule allows the host (`web_fetch(domain:{bare})`)"
        )),
        None => Ok(()),
    }
}

fn parse_url(url: &str) -> Result<http::Uri, String> {
    let uri: http::Uri = url.trim().parse().map_err(|e| format!("`{url}` is not a URL: {e}"))?;
    match uri.scheme_str() {
        Some("http" | "https") if uri.host().is_some() => Ok(uri),
        _ => Err(format!("`{url}` is not an http or https URL")),
    }
}

/// The body, up to [`MAX_BODY`] bytes, and whether more was left unread.
async fn read_capped<B>(mut body: B, idle: Duration) -> Result<(Vec<u8>, bool), String>
where
    B: http_body::Body + Unpin,
    B::Data: bytes::Buf,
    B::Error: std::fmt::Display,
{
    let mut out = Vec::new();
    loop {
        let frame = tokio::time::timeout(idle, body.frame())
            .await
            .map_err(|_| format!("the page stalled for {} s", idle.as_secs()))?;
        let Some(frame) = frame else { return Ok((out, false)) };
        let frame = frame.map_err(|e| format!("the page broke off: {e}"))?;
        if let Ok(mut data) = frame.into_data() {
            while bytes::Buf::has_remaining(&data) {
                let chunk = bytes::Buf::chunk(&data);
                out.extend_from_slice(chunk);
                let n = chunk.len();
                bytes::Buf::advance(&mut data, n);
            }
            if out.len() >= MAX_BODY {
                out.truncate(MAX_BODY);
                return Ok((out, true));
            }
        }
    }
}

/// Fetches `url`, following redirects: the final URL, its content type and
/// its bytes.
async fn fetch(
    client: &HttpClient,
    url: &str,
    options: &WebFetchOptions,
    signal: &AbortSignal,
) -> Result<(String, String, Vec<u8>, bool), String> {
    let mut uri = parse_url(url)?;
    for _ in 0..=MAX_REDIRECTS {
        check_host(&uri, options).await?;
        let request = http::Request::get(uri.clone())
            .header(http::header::USER_AGENT, concat!("zidane/", env!("CARGO_PKG_VERSION")))
            .header(
                http::header::ACCEPT,
                "text/markdown, text/html;q=0.9, text/plain;q=0.8, */*;q=0.5",
            )
            .body(RequestBody::chunks([]))
            .map_err(|e| e.to_string())?;
        let response = client
            .send_raw("web_fetch", request, signal)
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status();
        if status.is_redirection() {
            let location = response
                .headers()
                .get(http::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .ok_or_else(|| format!("{status} without a Location"))?;
            let next = resolve(&uri, location)?;
            uri = parse_url(&next)?;
            continue;
        }
        if !status.is_success() {
            return Err(format!("{uri} answered {status}"));
        }
        let kind = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let (bytes, cut) = read_capped(response.into_body(), options.timeouts.idle).await?;
        return Ok((uri.to_string(), kind, bytes, cut));
    }
    Err(format!("more than {MAX_REDIRECTS} redirects from {url}"))
}

/// A `Location` against the URL it came from.
fn resolve(base: &http::Uri, location: &str) -> Result<String, String> {
    if location.starts_with("http://") || location.starts_with("https://") {
        return Ok(location.to_owned());
    }
    let scheme = base.scheme_str().unwrap_or("http");
    let authority = base.authority().map(|a| a.as_str()).unwrap_or_default();
    if let Some(rest) = location.strip_prefix("//") {
        return Ok(format!("{scheme}://{rest}"));
    }
    if location.starts_with('/') {
        return Ok(format!("{scheme}://{authority}{location}"));
    }
    let path = base.path();
    let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
    let dir = if dir.is_empty() { "/" } else { dir };
    Ok(format!("{scheme}://{authority}{dir}{location}"))
}

/// The page as text: HTML as Markdown, other text as it is.
fn to_text(kind: &str, bytes: &[u8]) -> Result<String, String> {
    let kind = kind.to_ascii_lowercase();
    let text = String::from_utf8_lossy(bytes);
    let looks_html = text.trim_start().starts_with('<') && text.to_ascii_lowercase().contains("<html");
    if kind.contains("html") || (kind.is_empty() && looks_html) {
        return htmd::HtmlToMarkdown::builder()
            .skip_tags(vec!["script", "style", "noscript", "iframe", "svg", "head"])
            .build()
            .convert(&text)
            .map_err(|e| format!("cannot convert the page to Markdown: {e}"));
    }
    let textual = kind.is_empty()
        || kind.starts_with("text/")
        || kind.contains("json")
        || kind.contains("xml")
        || kind.contains("javascript");
    if !textual || bytes.iter().take(8192).any(|b| *b == 0) {
        return Err(format!("the page is not text (`{kind}`, {} bytes)", bytes.len()));
    }
    Ok(text.into_owned())
}

/// The `web_fetch` tool.
pub fn web_fetch(options: WebFetchOptions) -> FnTool {
    let client = HttpClient::new(options.timeouts).ok();
    let options = Arc::new(options);
    FnTool::new(
        "web_fetch",
        "Fetch a web page (http or https) and return its text; HTML comes back as Markdown. Long pages are cut \
         with a note. Public addresses only.",
        json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "The page's URL."}
            },
            "required": ["url"]
        }),
        move |input, cx| {
            let options = Arc::clone(&options);
            let client = client.clone();
            async move {
                let url = input["url"].as_str().unwrap_or_default().to_owned();
                if !options.network {
                    return Err(fail("web_fetch is off: this run has no network access (--no-network)"));
                }
                let client = client.ok_or_else(|| fail("the HTTP client could not be set up"))?;
                let (final_url, kind, bytes, cut_bytes) =
                    fetch(&client, &url, &options, cx.signal()).await.map_err(fail)?;
                let text = to_text(&kind, &bytes).map_err(fail)?;
                let total = text.chars().count();
                let mut out: String = text.chars().take(options.max_chars).collect();
                if total > options.max_chars || cut_bytes {
                    out.push_str(&format!(
                        "\n\n[… cut: {} of {total} characters shown{}]",
                        options.max_chars.min(total),
                        if cut_bytes {
                            ", the page was longer than 5 MB"
                        } else {
                            ""
                        }
                    ));
                }
                let header = if final_url == url {
                    format!("{final_url}\n\n")
                } else {
                    format!("{final_url} (redirected from {url})\n\n")
                };
                Ok(ToolOutput::text(format!("{header}{out}")))
            }
        },
    )
    .safe()
}

#[cfg(test)]
mod tests;
