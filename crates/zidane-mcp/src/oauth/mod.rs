//! OAuth 2.1 for HTTP MCP servers, as the MCP authorization spec lays it
//! out: protected-resource metadata (RFC 9728), authorization-server
//! metadata (RFC 8414, with OpenID Connect discovery), client registration
//! (pre-registered, a client ID metadata document, or dynamic registration,
//! RFC 7591), the authorization code grant with PKCE (S256) through a
//! loopback redirect, resource indicators (RFC 8707), refresh, and the scope
//! step-up of a 403 `insufficient_scope`.
//!
//! Tokens live in an [`OAuthStore`]; nothing here prints one. The flow
//! itself (`OAuthFlow`) needs the `http` feature.

#[cfg(feature = "http")]
mod flow;

#[cfg(feature = "http")]
pub use flow::{OAuthFlow, PendingLogin, pkce_challenge};

use parking_lot::Mutex;
use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// How a server's OAuth client is set up (`oauth` in the configuration).
#[derive(Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct OAuthConfig {
    /// A client registered in advance with the authorization server.
    pub client_id: Option<String>,
    /// Its secret, for a confidential pre-registered client.
    pub client_secret: Option<String>,
    /// The URL of this client's metadata document, used as its client ID
    /// where the authorization server accepts one.
    pub client_metadata_url: Option<String>,
    /// Scopes to ask for instead of the ones the server suggests.
    pub scopes: Option<Vec<String>>,
    /// The loopback port of the redirect (any free one when unset).
    pub callback_port: Option<u16>,
    /// The client name sent with a dynamic registration.
    pub client_name: Option<String>,
    /// `client_credentials` for a machine client that needs no person (its
    /// tokens are fetched at connect); the authorization code grant
    /// otherwise, unless the authorization server offers only this one.
    pub grant_type: Option<String>,
    /// A PKCS#8 PEM private key: the client authenticates with a signed JWT
    /// assertion (`private_key_jwt`) instead of a secret.
    pub private_key_pem: Option<String>,
    /// `ES256` (the default) or `RS256`, for `private_key_pem`.
    pub signing_algorithm: Option<String>,
    /// Enterprise-managed authorization (cross-app access): the ID token
    /// the person got from the organisation's identity provider, exchanged
    /// there for an identity assertion grant (RFC 8693), which the MCP
    /// server's authorization server takes as a JWT bearer grant (RFC 7523)
    /// from this confidential client.
    pub id_token: Option<String>,
    /// The identity provider's token endpoint, for `id_token`.
    pub idp_token_endpoint: Option<String>,
    /// This client's ID at the identity provider.
    pub idp_client_id: Option<String>,
}

impl OAuthConfig {
    /// Whether the client-credentials grant is configured.
    pub fn machine(&self) -> bool {
        self.grant_type.as_deref() == Some("client_credentials")
    }

    /// Whether enterprise-managed authorization (an ID token to exchange)
    /// is configured.
    pub fn cross_app(&self) -> bool {
        self.id_token.is_some() && self.idp_token_endpoint.is_some()
    }
}

impl fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "***"))
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .field("callback_port", &self.callback_port)
            .field("grant_type", &self.grant_type)
            .field("private_key_pem", &self.private_key_pem.as_ref().map(|_| "***"))
            .field("id_token", &self.id_token.as_ref().map(|_| "***"))
            .field("idp_token_endpoint", &self.idp_token_endpoint)
            .finish()
    }
}

/// A registered client, as the token endpoint authenticates it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OAuthClient {
    /// The client ID.
    pub client_id: String,
    /// The secret of a confidential client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// `client_secret_basic`, `client_secret_post` or `none`.
    pub auth_method: String,
}

/// What is stored per server after a login: the client, where to refresh,
/// and the tokens.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct OAuthTokens {
    /// The MCP server's URL the tokens are for.
    pub server_url: String,
    /// The resource indicator the tokens were issued for.
    pub resource: String,
    /// The token endpoint.
    pub token_endpoint: String,
    /// The client.
    pub client: OAuthClient,
    /// The access token.
    pub access_token: String,
    /// The refresh token, when one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// Expiry, epoch milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The granted scopes, space-separated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

impl fmt::Debug for OAuthTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthTokens")
            .field("server_url", &self.server_url)
            .field("resource", &self.resource)
            .field("client_id", &self.client.client_id)
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

impl OAuthTokens {
    /// Whether the access token has expired at `now` (epoch ms), or will
    /// within a minute.
    pub fn expired(&self, now: u64) -> bool {
        // A minute early: a token about to expire fails mid-call otherwise.
        self.expires_at.is_some_and(|at| now + 60_000 >= at)
    }
}

/// Where tokens are kept between runs. Implementations must never log a
/// token.
pub trait OAuthStore: Send + Sync + fmt::Debug {
    /// The tokens of `server`, if any.
    fn load(&self, server: &str) -> Result<Option<OAuthTokens>, String>;
    /// Replaces the tokens of `server`.
    fn save(&self, server: &str, tokens: &OAuthTokens) -> Result<(), String>;
    /// Forgets the tokens of `server`.
    fn remove(&self, server: &str) -> Result<(), String>;
}

/// Tokens in memory, for tests and for hosts without a store.
#[derive(Debug, Default)]
pub struct MemoryOAuthStore {
    tokens: Mutex<HashMap<String, OAuthTokens>>,
}

impl OAuthStore for MemoryOAuthStore {
    fn load(&self, server: &str) -> Result<Option<OAuthTokens>, String> {
        Ok(self.tokens.lock().get(server).cloned())
    }

    fn save(&self, server: &str, tokens: &OAuthTokens) -> Result<(), String> {
        self.tokens.lock().insert(server.to_owned(), tokens.clone());
        Ok(())
    }

    fn remove(&self, server: &str) -> Result<(), String> {
        self.tokens.lock().remove(server);
        Ok(())
    }
}

/// Why a login or a refresh failed.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    /// A metadata document, a registration or a token answer was unusable.
    #[error("{0}")]
    Protocol(String),
    /// The server's metadata names another resource than the server.
    #[error("the server's metadata is for `{resource}`, not for `{server}`: refusing to log in")]
    ResourceMismatch {
        /// The resource the metadata names.
        resource: String,
        /// The server's URL.
        server: String,
    },
    /// The authorization server refused (`error` / `error_description`).
    #[error("the authorization server refused: {0}")]
    Refused(String),
    /// No way to register a client: no registration endpoint, no client
    /// metadata document support, no configured client ID.
    #[error("the authorization server offers no client registration; configure `oauth.clientId`")]
    NoRegistration,
    /// The redirect did not come back in time, or came back wrong.
    #[error("{0}")]
    Redirect(String),
    /// The HTTP exchange failed.
    #[error("{0}")]
    Http(String),
    /// The token store failed.
    #[error("the token store failed: {0}")]
    Store(String),
}

/// A parsed `WWW-Authenticate: Bearer …` challenge.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    /// RFC 9728 `resource_metadata`.
    pub resource_metadata: Option<String>,
    /// The scopes the server asks for.
    pub scope: Option<String>,
    /// `error`, e.g. `insufficient_scope`.
    pub error: Option<String>,
}

impl Challenge {
    /// Reads the parameters of a Bearer challenge.
    pub fn parse(header: &str) -> Challenge {
        let mut challenge = Challenge::default();
        let rest = header.trim();
        let rest = rest
            .strip_prefix("Bearer")
            .or_else(|| rest.strip_prefix("bearer"))
            .unwrap_or(rest);
        let mut chars = rest.chars().peekable();
        loop {
            while chars.peek().is_some_and(|c| *c == ',' || c.is_whitespace()) {
                chars.next();
            }
            let key: String = chars.by_ref().take_while(|c| *c != '=').collect();
            if key.is_empty() {
                break;
            }
            let value: String = if chars.peek() == Some(&'"') {
                chars.next();
                let mut value = String::new();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => value.extend(chars.next()),
                        '"' => break,
                        c => value.push(c),
                    }
                }
                value
            } else {
                chars
                    .by_ref()
                    .take_while(|c| *c != ',')
                    .collect::<String>()
                    .trim()
                    .to_owned()
            };
            match key.trim() {
                "resource_metadata" => challenge.resource_metadata = Some(value),
                "scope" => challenge.scope = Some(value),
                "error" => challenge.error = Some(value),
                _ => {}
            }
        }
        challenge
    }
}
