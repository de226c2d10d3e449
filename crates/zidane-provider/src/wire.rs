//! What a model API's wire protocol is, apart from the HTTP that carries
//! it: the request a [`StreamOptions`] becomes (path, headers, body in
//! pieces), the decoder its event stream goes through, and what the API can
//! do. With the `http` feature, [`HttpProvider`](crate::HttpProvider) runs
//! any protocol over the pooled HTTP client; a new API is a protocol (its
//! request body and decoder) and a config.

use std::borrow::Cow;

use bytes::Bytes;

use crate::error::ProviderError;
use crate::event::StreamEvent;
use crate::options::StreamOptions;
use crate::provider::Capabilities;
use crate::sse::SseEvent;

/// A model API's wire protocol.
pub trait WireProtocol: Send + Sync + std::fmt::Debug + 'static {
    /// The decoder of one streamed answer.
    type Decoder: WireDecoder;

    /// The streamed request for `options` (whose model is set).
    fn request(&self, options: &StreamOptions) -> WireRequest;

    /// A decoder for one answer of provider `provider` (named in its
    /// errors).
    fn decoder(&self, provider: &str) -> Self::Decoder;

    /// What the API can do.
    fn capabilities(&self) -> Capabilities;

    /// The header an API key goes in (`x-api-key`); `None`: it is sent as
    /// a bearer token (`Authorization: Bearer …`).
    fn key_header(&self) -> Option<&'static str> {
        None
    }
}

/// A request as a protocol writes it.
#[derive(Debug, Clone)]
pub struct WireRequest {
    /// The path under the provider's base URL (`/v1/messages`).
    pub path: &'static str,
    /// Headers of this request (beside the content type, the credentials
    /// and the provider's configured headers).
    pub headers: Vec<(&'static str, Cow<'static, str>)>,
    /// The JSON body, in pieces sent one after another.
    pub body: Vec<Bytes>,
}

/// A protocol's event decoder, as the SSE stream drives it.
pub trait WireDecoder: Send + Unpin + 'static {
    /// Decodes one server-sent event into stream events.
    fn decode(&mut self, sse: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError>;

    /// Called at the clean end of the body; `false` when the answer was not
    /// complete.
    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> bool;
}
