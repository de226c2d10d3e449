//! The OAuth flow over HTTP: discovery, registration, the authorization
//! code grant with PKCE through a loopback redirect, refresh.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Limited};
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use zidane_provider::{AbortSignal, HttpClient, RequestBody};

use super::{Challenge, OAuthClient, OAuthConfig, OAuthError, OAuthStore, OAuthTokens};

/// What discovery found out about a server.
#[derive(Debug, Clone, Default)]
struct Discovery {
    issuer: String,
    grant_types: Option<Vec<String>>,
    resource: String,
    scopes_supported: Option<Vec<String>>,
    authorization_endpoint: String,
    token_endpoint: String,
    registration_endpoint: Option<String>,
    as_scopes_supported: Option<Vec<String>>,
    auth_methods: Vec<String>,
    client_id_metadata_document_supported: bool,
}

/// A login waiting for the browser: the URL to open, the redirect
/// listening.
pub struct PendingLogin {
    flow: OAuthFlow,
    url: String,
    listener: TcpListener,
    redirect_uri: String,
    verifier: String,
    state: String,
    client: OAuthClient,
    scope: Option<String>,
    discovery: Discovery,
}

impl fmt::Debug for PendingLogin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingLogin")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl PendingLogin {
    /// The authorization URL to open.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Waits for the redirect, exchanges the code and stores the tokens.
    pub async fn finish(self) -> Result<OAuthTokens, OAuthError> {
        let flow = &self.flow;
        let code = tokio::time::timeout(flow.redirect_timeout, wait_for_code(self.listener, &self.state))
            .await
            .map_err(|_| {
                OAuthError::Redirect(format!(
                    "the browser did not come back within {}s",
                    flow.redirect_timeout.as_secs()
                ))
            })??;
        let mut pairs = vec![
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", self.redirect_uri.as_str()),
            ("code_verifier", self.verifier.as_str()),
            ("resource", self.discovery.resource.as_str()),
        ];
        let answer = flow
            .token_request(&self.discovery.token_endpoint, &self.client, &mut pairs)
            .await?;
        flow.keep(&self.discovery, self.client.clone(), self.scope.clone(), &answer)
    }
}

/// The OAuth client of one MCP server.
#[derive(Clone)]
pub struct OAuthFlow {
    http: HttpClient,
    server: String,
    server_url: String,
    config: OAuthConfig,
    store: Arc<dyn OAuthStore>,
    redirect_timeout: Duration,
}

impl fmt::Debug for OAuthFlow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthFlow")
            .field("server", &self.server)
            .field("server_url", &self.server_url)
            .finish_non_exhaustive()
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// What `application/x-www-form-urlencoded` leaves as it is: letters,
/// digits and `-._~` (RFC 3986's unreserved characters).
const FORM: &percent_encoding::AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

fn encode(s: &str) -> String {
    utf8_percent_encode(s, FORM).to_string()
}

fn form(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

fn random_token() -> String {
    use ring::rand::SecureRandom as _;
    let mut bytes = [0u8; 32];
    // The system's random source; it does not fail on a running Linux.
    let _ = ring::rand::SystemRandom::new().fill(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The PKCE S256 challenge of `verifier`.
pub fn pkce_challenge(verifier: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.as_ref())
}

/// `scheme://host[:port]` of a URL.
fn origin(url: &str) -> Option<(String, String)> {
    let uri: http::Uri = url.parse().ok()?;
    let scheme = uri.scheme_str()?;
    let authority = uri.authority()?;
    let path = uri.path().trim_end_matches('/').to_owned();
    Some((format!("{scheme}://{authority}"), path))
}

/// Whether metadata naming `resource` may be used for `server`: the same
/// origin, and the server's path at or below the resource's.
fn resource_matches(resource: &str, server: &str) -> bool {
    let (Some((ro, rp)), Some((so, sp))) = (origin(resource), origin(server)) else {
        return false;
    };
    ro.eq_ignore_ascii_case(&so) && (sp == rp || sp.starts_with(&format!("{rp}/")) || rp.is_empty())
}

impl OAuthFlow {
    /// The flow of `server` (its configuration name) at `server_url`.
    pub fn new(
        server: impl Into<String>,
        server_url: impl Into<String>,
        config: OAuthConfig,
        store: Arc<dyn OAuthStore>,
        http: HttpClient,
    ) -> Self {
        OAuthFlow {
            http,
            server: server.into(),
            server_url: server_url.into(),
            config,
            store,
            redirect_timeout: Duration::from_secs(300),
        }
    }

    /// How long a login waits for the browser to come back (5 minutes).
    pub fn with_redirect_timeout(mut self, timeout: Duration) -> Self {
        self.redirect_timeout = timeout;
        self
    }

    /// The server's configuration name.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The stored tokens, if any.
    pub fn stored(&self) -> Result<Option<OAuthTokens>, OAuthError> {
        self.store.load(&self.server).map_err(OAuthError::Store)
    }

    /// A usable access token: the stored one, refreshed first when it has
    /// expired. `Ok(None)` when nothing is stored. The bool says whether a
    /// refresh happened.
    pub async fn access_token(&self) -> Result<Option<(OAuthTokens, bool)>, OAuthError> {
        let Some(tokens) = self.stored()? else {
            return Ok(None);
        };
        if tokens.expired(now_ms()) && tokens.refresh_token.is_some() {
            return self.refresh(&tokens).await.map(|t| Some((t, true)));
        }
        Ok(Some((tokens, false)))
    }

    /// Exchanges the refresh token for new tokens and stores them.
    pub async fn refresh(&self, tokens: &OAuthTokens) -> Result<OAuthTokens, OAuthError> {
        let Some(refresh) = &tokens.refresh_token else {
            return Err(OAuthError::Protocol("no refresh token was issued".into()));
        };
        let mut pairs = vec![
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh.as_str()),
            ("resource", tokens.resource.as_str()),
        ];
        let answer = self
            .token_request(&tokens.token_endpoint, &tokens.client, &mut pairs)
            .await?;
        let mut fresh = tokens.clone();
        apply_token_answer(&mut fresh, &answer)?;
        self.store.save(&self.server, &fresh).map_err(OAuthError::Store)?;
        Ok(fresh)
    }

    /// Probes the server without credentials for its challenge.
    pub async fn probe(&self) -> Result<Option<Challenge>, OAuthError> {
        let body = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"zidane","version":"0"}}}"#;
        let request = Request::post(&self.server_url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(RequestBody::from(Bytes::from_static(body.as_bytes())))
            .map_err(|e| OAuthError::Http(e.to_string()))?;
        let response = self
            .http
            .send_raw("mcp-oauth", request, &AbortSignal::never())
            .await
            .map_err(|e| OAuthError::Http(e.to_string()))?;
        let challenge = response
            .headers()
            .get(http::header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(Challenge::parse);
        Ok(match response.status() {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => Some(challenge.unwrap_or_default()),
            _ => challenge,
        })
    }

    /// Starts an interactive login: discovery from `challenge`, client
    /// registration and the authorization URL, with the loopback redirect
    /// listening. `scope` overrides the scope choice (a step-up). Open
    /// [`PendingLogin::url`], then await [`PendingLogin::finish`].
    pub async fn begin(&self, challenge: &Challenge, scope: Option<String>) -> Result<PendingLogin, OAuthError> {
        let discovery = self.discover(challenge).await?;
        let listener = TcpListener::bind(("127.0.0.1", self.config.callback_port.unwrap_or(0)))
            .await
            .map_err(|e| OAuthError::Redirect(format!("cannot listen for the redirect: {e}")))?;
        let port = listener
            .local_addr()
            .map_err(|e| OAuthError::Redirect(e.to_string()))?
            .port();
        let redirect_uri = format!("http://127.0.0.1:{port}/callback");
        let client = self.client(&discovery, &redirect_uri).await?;
        let scope = scope.or_else(|| self.choose_scope(challenge, &discovery));
        let verifier = random_token();
        let state = random_token();
        let mut query = vec![
            ("response_type", "code".to_owned()),
            ("client_id", client.client_id.clone()),
            ("redirect_uri", redirect_uri.clone()),
            ("state", state.clone()),
            ("code_challenge", pkce_challenge(&verifier)),
            ("code_challenge_method", "S256".to_owned()),
            ("resource", discovery.resource.clone()),
        ];
        if let Some(scope) = &scope {
            query.push(("scope", scope.clone()));
        }
        let pairs: Vec<(&str, &str)> = query.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let separator = if discovery.authorization_endpoint.contains('?') {
            '&'
        } else {
            '?'
        };
        let url = format!("{}{separator}{}", discovery.authorization_endpoint, form(&pairs));
        Ok(PendingLogin {
            flow: self.clone(),
            url,
            listener,
            redirect_uri,
            verifier,
            state,
            client,
            scope,
            discovery,
        })
    }

    /// Whether this server's login is the client-credentials grant:
    /// configured so, or the only grant the authorization server offers to
    /// a client with credentials.
    pub async fn uses_client_credentials(&self, challenge: &Challenge) -> Result<bool, OAuthError> {
        if self.config.machine() {
            return Ok(true);
        }
        if self.config.client_id.is_none() {
            return Ok(false);
        }
        let discovery = self.discover(challenge).await?;
        Ok(discovery.grant_types.is_some_and(|g| {
            g.iter().any(|g| g == "client_credentials") && !g.iter().any(|g| g == "authorization_code")
        }))
    }

    /// The client-credentials grant (no person involved): the configured
    /// client authenticates with its secret or a signed JWT assertion; the
    /// tokens are stored.
    pub async fn client_credentials(&self, challenge: &Challenge) -> Result<OAuthTokens, OAuthError> {
        let discovery = self.discover(challenge).await?;
        let Some(client_id) = &self.config.client_id else {
            return Err(OAuthError::Protocol(
                "the client-credentials grant needs `oauth.clientId`".into(),
            ));
        };
        let method = match &self.config.private_key_pem {
            Some(_) => "private_key_jwt",
            None => Self::secret_method(&discovery, self.config.client_secret.as_ref()),
        };
        let client = OAuthClient {
            client_id: client_id.clone(),
            client_secret: self.config.client_secret.clone(),
            auth_method: method.into(),
        };
        let scope = self.choose_scope(challenge, &discovery);
        let assertion = match &self.config.private_key_pem {
            Some(pem) => Some(sign_assertion(
                pem,
                self.config.signing_algorithm.as_deref().unwrap_or("ES256"),
                client_id,
                &discovery.issuer,
            )?),
            None => None,
        };
        let mut pairs = vec![
            ("grant_type", "client_credentials"),
            ("resource", discovery.resource.as_str()),
        ];
        if let Some(scope) = &scope {
            pairs.push(("scope", scope.as_str()));
        }
        if let Some(assertion) = &assertion {
            pairs.push((
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            ));
            pairs.push(("client_assertion", assertion.as_str()));
        }
        let answer = self
            .token_request(&discovery.token_endpoint, &client, &mut pairs)
            .await?;
        self.keep(&discovery, client, scope, &answer)
    }

    /// Enterprise-managed authorization: the configured ID token is
    /// exchanged at the identity provider for an identity assertion grant
    /// for this server, which the server's authorization server turns into
    /// an access token (JWT bearer grant, this client authenticated by its
    /// secret). No person, no URL; the tokens are stored.
    pub async fn cross_app_access(&self, challenge: &Challenge) -> Result<OAuthTokens, OAuthError> {
        let (Some(id_token), Some(idp_endpoint)) = (&self.config.id_token, &self.config.idp_token_endpoint) else {
            return Err(OAuthError::Protocol(
                "cross-app access needs `oauth.idToken` and `oauth.idpTokenEndpoint`".into(),
            ));
        };
        let Some(client_id) = &self.config.client_id else {
            return Err(OAuthError::Protocol("cross-app access needs `oauth.clientId`".into()));
        };
        let discovery = self.discover(challenge).await?;
        let mut exchange = vec![
            ("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"),
            ("subject_token", id_token.as_str()),
            ("subject_token_type", "urn:ietf:params:oauth:token-type:id_token"),
            ("requested_token_type", "urn:ietf:params:oauth:token-type:id-jag"),
            ("audience", discovery.issuer.as_str()),
            ("resource", discovery.resource.as_str()),
        ];
        let idp_client = OAuthClient {
            client_id: self.config.idp_client_id.clone().unwrap_or_else(|| client_id.clone()),
            client_secret: None,
            auth_method: "none".into(),
        };
        let grant = self.token_request(idp_endpoint, &idp_client, &mut exchange).await?;
        let Some(assertion) = grant["access_token"].as_str() else {
            return Err(OAuthError::Protocol(
                "the identity provider's answer has no access_token".into(),
            ));
        };
        let client = OAuthClient {
            client_id: client_id.clone(),
            client_secret: self.config.client_secret.clone(),
            auth_method: Self::secret_method(&discovery, self.config.client_secret.as_ref()).into(),
        };
        let scope = self.choose_scope(challenge, &discovery);
        let mut pairs = vec![
            ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
            ("assertion", assertion),
            ("resource", discovery.resource.as_str()),
        ];
        if let Some(scope) = &scope {
            pairs.push(("scope", scope.as_str()));
        }
        let answer = self
            .token_request(&discovery.token_endpoint, &client, &mut pairs)
            .await?;
        self.keep(&discovery, client, scope, &answer)
    }

    /// How a configured client with `secret` authenticates: HTTP Basic
    /// where the authorization server takes it, else in the body; none
    /// without a secret.
    fn secret_method(discovery: &Discovery, secret: Option<&String>) -> &'static str {
        let basic =
            discovery.auth_methods.is_empty() || discovery.auth_methods.iter().any(|m| m == "client_secret_basic");
        match secret {
            Some(_) if basic => "client_secret_basic",
            Some(_) => "client_secret_post",
            None => "none",
        }
    }

    /// The tokens of a token endpoint's answer, stored for this server.
    fn keep(
        &self,
        discovery: &Discovery,
        client: OAuthClient,
        scope: Option<String>,
        answer: &Value,
    ) -> Result<OAuthTokens, OAuthError> {
        let mut tokens = OAuthTokens {
            server_url: self.server_url.clone(),
            resource: discovery.resource.clone(),
            token_endpoint: discovery.token_endpoint.clone(),
            client,
            access_token: String::new(),
            refresh_token: None,
            expires_at: None,
            scope,
        };
        apply_token_answer(&mut tokens, answer)?;
        self.store.save(&self.server, &tokens).map_err(OAuthError::Store)?;
        Ok(tokens)
    }

    async fn get_json(&self, url: &str) -> Result<Option<Value>, OAuthError> {
        let request = Request::get(url)
            .header("accept", "application/json")
            .header("mcp-protocol-version", "2025-06-18")
            .body(RequestBody::from(Bytes::new()))
            .map_err(|e| OAuthError::Http(e.to_string()))?;
        let response = self
            .http
            .send_raw("mcp-oauth", request, &AbortSignal::never())
            .await
            .map_err(|e| OAuthError::Http(e.to_string()))?;
        if !response.status().is_success() {
            return Ok(None);
        }
        let body = read(response.into_body()).await?;
        Ok(serde_json::from_slice(&body).ok().filter(Value::is_object))
    }

    /// The first of `urls` that answers with a JSON object.
    async fn first_json(&self, urls: Vec<String>) -> Result<Option<Value>, OAuthError> {
        for url in urls {
            if let Some(doc) = self.get_json(&url).await? {
                return Ok(Some(doc));
            }
        }
        Ok(None)
    }

    async fn discover(&self, challenge: &Challenge) -> Result<Discovery, OAuthError> {
        let Some((server_origin, server_path)) = origin(&self.server_url) else {
            return Err(OAuthError::Protocol(format!("`{}` is not a URL", self.server_url)));
        };
        // RFC 9728: the challenge's URL, else the path-based well-known
        // location, else the root one.
        let mut candidates = Vec::new();
        if let Some(url) = &challenge.resource_metadata {
            candidates.push(url.clone());
        }
        if !server_path.is_empty() {
            candidates.push(format!(
                "{server_origin}/.well-known/oauth-protected-resource{server_path}"
            ));
        }
        candidates.push(format!("{server_origin}/.well-known/oauth-protected-resource"));
        let prm = self.first_json(candidates).await?;
        let mut discovery = Discovery {
            resource: self.server_url.clone(),
            ..Default::default()
        };
        let issuer = match &prm {
            Some(prm) => {
                if let Some(resource) = prm["resource"].as_str() {
                    if !resource_matches(resource, &self.server_url) {
                        return Err(OAuthError::ResourceMismatch {
                            resource: resource.to_owned(),
                            server: self.server_url.clone(),
                        });
                    }
                    discovery.resource = resource.to_owned();
                }
                discovery.scopes_supported = strings(&prm["scopes_supported"]);
                prm["authorization_servers"][0]
                    .as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| server_origin.clone())
            }
            // The 2025-03-26 revision: the server's origin is the
            // authorization server.
            None => server_origin.clone(),
        };
        let (issuer_origin, issuer_path) =
            origin(&issuer).ok_or_else(|| OAuthError::Protocol(format!("`{issuer}` is not a URL")))?;
        let candidates = if issuer_path.is_empty() {
            vec![
                format!("{issuer_origin}/.well-known/oauth-authorization-server"),
                format!("{issuer_origin}/.well-known/openid-configuration"),
            ]
        } else {
            vec![
                format!("{issuer_origin}/.well-known/oauth-authorization-server{issuer_path}"),
                format!("{issuer_origin}/.well-known/openid-configuration{issuer_path}"),
                format!("{issuer_origin}{issuer_path}/.well-known/openid-configuration"),
            ]
        };
        match self.first_json(candidates).await? {
            Some(doc) => {
                let endpoint = |key: &str| doc[key].as_str().map(str::to_owned);
                discovery.authorization_endpoint = endpoint("authorization_endpoint")
                    .ok_or_else(|| OAuthError::Protocol("the metadata names no authorization endpoint".into()))?;
                discovery.token_endpoint = endpoint("token_endpoint")
                    .ok_or_else(|| OAuthError::Protocol("the metadata names no token endpoint".into()))?;
                discovery.registration_endpoint = endpoint("registration_endpoint");
                discovery.issuer = endpoint("issuer").unwrap_or_else(|| issuer.clone());
                discovery.grant_types = strings(&doc["grant_types_supported"]);
                discovery.as_scopes_supported = strings(&doc["scopes_supported"]);
                discovery.auth_methods = strings(&doc["token_endpoint_auth_methods_supported"]).unwrap_or_default();
                discovery.client_id_metadata_document_supported =
                    doc["client_id_metadata_document_supported"].as_bool() == Some(true);
                if let Some(methods) = strings(&doc["code_challenge_methods_supported"])
                    && !methods.iter().any(|m| m == "S256")
                {
                    return Err(OAuthError::Protocol(
                        "the authorization server does not support PKCE with S256".into(),
                    ));
                }
            }
            None => {
                // No metadata: the 2025-03-26 default endpoints.
                discovery.issuer = issuer_origin.clone();
                discovery.authorization_endpoint = format!("{issuer_origin}/authorize");
                discovery.token_endpoint = format!("{issuer_origin}/token");
                discovery.registration_endpoint = Some(format!("{issuer_origin}/register"));
            }
        }
        Ok(discovery)
    }

    /// The scopes to ask for: configured, else the challenge's, else every
    /// scope the resource lists, else none; `offline_access` added when the
    /// authorization server offers it.
    fn choose_scope(&self, challenge: &Challenge, discovery: &Discovery) -> Option<String> {
        let mut scopes: Vec<String> = match (&self.config.scopes, &challenge.scope, &discovery.scopes_supported) {
            (Some(configured), _, _) => configured.clone(),
            (None, Some(asked), _) => asked.split_whitespace().map(str::to_owned).collect(),
            (None, None, Some(supported)) => supported.clone(),
            (None, None, None) => Vec::new(),
        };
        let offers_offline = discovery
            .as_scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|s| s == "offline_access"));
        if offers_offline && !scopes.iter().any(|s| s == "offline_access") {
            scopes.push("offline_access".into());
        }
        (!scopes.is_empty()).then(|| scopes.join(" "))
    }

    /// The client to authenticate as: configured, a metadata document URL,
    /// or a fresh dynamic registration.
    async fn client(&self, discovery: &Discovery, redirect_uri: &str) -> Result<OAuthClient, OAuthError> {
        if let Some(client_id) = &self.config.client_id {
            return Ok(OAuthClient {
                client_id: client_id.clone(),
                client_secret: self.config.client_secret.clone(),
                auth_method: Self::secret_method(discovery, self.config.client_secret.as_ref()).into(),
            });
        }
        if discovery.client_id_metadata_document_supported
            && let Some(url) = &self.config.client_metadata_url
        {
            return Ok(OAuthClient {
                client_id: url.clone(),
                client_secret: None,
                auth_method: "none".into(),
            });
        }
        let Some(endpoint) = &discovery.registration_endpoint else {
            return Err(OAuthError::NoRegistration);
        };
        // The authorization server's first method this client can do.
        let method = discovery
            .auth_methods
            .iter()
            .find(|m| matches!(m.as_str(), "client_secret_basic" | "client_secret_post" | "none"))
            .cloned()
            .unwrap_or_else(|| "none".into());
        let body = serde_json::json!({
            "client_name": self.config.client_name.clone().unwrap_or_else(|| "zidane".into()),
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
        });
        let request = Request::post(endpoint)
            .header("content-type", "application/json")
            .header("accept", "application/json")
            .body(RequestBody::from(Bytes::from(body.to_string())))
            .map_err(|e| OAuthError::Http(e.to_string()))?;
        let answer = self.send_json(request).await?;
        let client_id = answer["client_id"]
            .as_str()
            .ok_or_else(|| OAuthError::Protocol("the registration answer has no client_id".into()))?;
        let secret = answer["client_secret"].as_str().map(str::to_owned);
        let method = answer["token_endpoint_auth_method"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or(method);
        let method = if secret.is_none() { "none".to_owned() } else { method };
        Ok(OAuthClient {
            client_id: client_id.to_owned(),
            client_secret: secret,
            auth_method: method,
        })
    }

    async fn token_request<'a>(
        &self,
        endpoint: &str,
        client: &'a OAuthClient,
        pairs: &mut Vec<(&'a str, &'a str)>,
    ) -> Result<Value, OAuthError> {
        let mut request = Request::post(endpoint)
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json");
        match (client.auth_method.as_str(), &client.client_secret) {
            ("client_secret_basic", Some(secret)) => {
                let pair = format!("{}:{}", encode(&client.client_id), encode(secret));
                let basic = base64::engine::general_purpose::STANDARD.encode(pair);
                request = request.header("authorization", format!("Basic {basic}"));
            }
            ("client_secret_post", Some(secret)) => {
                pairs.push(("client_id", client.client_id.as_str()));
                pairs.push(("client_secret", secret.as_str()));
            }
            // The assertion is in the pairs already.
            ("private_key_jwt", _) => pairs.push(("client_id", client.client_id.as_str())),
            _ => pairs.push(("client_id", client.client_id.as_str())),
        }
        let request = request
            .body(RequestBody::from(Bytes::from(form(pairs))))
            .map_err(|e| OAuthError::Http(e.to_string()))?;
        self.send_json(request).await
    }

    async fn send_json(&self, request: Request<RequestBody>) -> Result<Value, OAuthError> {
        let response = self
            .http
            .send_raw("mcp-oauth", request, &AbortSignal::never())
            .await
            .map_err(|e| OAuthError::Http(e.to_string()))?;
        let status = response.status();
        let body = read(response.into_body()).await?;
        let value: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        if !status.is_success() {
            let why = match (value["error"].as_str(), value["error_description"].as_str()) {
                (Some(e), Some(d)) => format!("{e}: {d}"),
                (Some(e), None) => e.to_owned(),
                _ => format!("HTTP {status}"),
            };
            return Err(OAuthError::Refused(why));
        }
        Ok(value)
    }
}

fn strings(value: &Value) -> Option<Vec<String>> {
    value
        .as_array()
        .map(|items| items.iter().filter_map(Value::as_str).map(str::to_owned).collect())
}

fn apply_token_answer(tokens: &mut OAuthTokens, answer: &Value) -> Result<(), OAuthError> {
    let access = answer["access_token"]
        .as_str()
        .ok_or_else(|| OAuthError::Protocol("the token answer has no access_token".into()))?;
    tokens.access_token = access.to_owned();
    if let Some(refresh) = answer["refresh_token"].as_str() {
        tokens.refresh_token = Some(refresh.to_owned());
    }
    tokens.expires_at = answer["expires_in"].as_u64().map(|s| now_ms() + s * 1000);
    if let Some(scope) = answer["scope"].as_str() {
        tokens.scope = Some(scope.to_owned());
    }
    Ok(())
}

async fn read(body: zidane_provider::ResponseBody) -> Result<Bytes, OAuthError> {
    let collected = tokio::time::timeout(Duration::from_secs(30), Limited::new(body, 1 << 20).collect())
        .await
        .map_err(|_| OAuthError::Http("the answer stalled".into()))?
        .map_err(|e| OAuthError::Http(e.to_string()))?;
    Ok(collected.to_bytes())
}

/// A JWT client assertion (RFC 7523): `iss` and `sub` the client, `aud`
/// the authorization server, five minutes to live, signed with the PKCS#8
/// PEM key.
fn sign_assertion(pem: &str, alg: &str, client_id: &str, audience: &str) -> Result<String, OAuthError> {
    use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, RSA_PKCS1_SHA256, RsaKeyPair};
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(body.trim())
        .map_err(|e| OAuthError::Protocol(format!("the private key is not PEM: {e}")))?;
    let now = now_ms() / 1000;
    let header = serde_json::json!({"alg": alg, "typ": "JWT"});
    let claims = serde_json::json!({
        "iss": client_id, "sub": client_id, "aud": audience,
        "iat": now, "exp": now + 300, "jti": random_token(),
    });
    let input = format!("{}.{}", b64.encode(header.to_string()), b64.encode(claims.to_string()));
    let rng = ring::rand::SystemRandom::new();
    let bad_key = |e: &dyn fmt::Display| OAuthError::Protocol(format!("the private key cannot sign {alg}: {e}"));
    let signature = match alg {
        "ES256" => {
            let key =
                EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &der, &rng).map_err(|e| bad_key(&e))?;
            key.sign(&rng, input.as_bytes())
                .map_err(|e| bad_key(&e))?
                .as_ref()
                .to_vec()
        }
        "RS256" => {
            let key = RsaKeyPair::from_pkcs8(&der).map_err(|e| bad_key(&e))?;
            let mut signature = vec![0u8; key.public().modulus_len()];
            key.sign(&RSA_PKCS1_SHA256, &rng, input.as_bytes(), &mut signature)
                .map_err(|e| bad_key(&e))?;
            signature
        }
        other => {
            return Err(OAuthError::Protocol(format!(
                "signing with {other} is not supported (ES256, RS256)"
            )));
        }
    };
    Ok(format!("{input}.{}", b64.encode(signature)))
}

/// Serves the loopback redirect until a request with the right `state`
/// brings a code (or an `error`).
async fn wait_for_code(listener: TcpListener, state: &str) -> Result<String, OAuthError> {
    loop {
        let (mut stream, _) = listener
            .accept()
            .await
            .map_err(|e| OAuthError::Redirect(e.to_string()))?;
        let mut buf = vec![0u8; 8192];
        let mut len = 0;
        while len < buf.len() {
            match stream.read(&mut buf[len..]).await {
                Ok(0) | Err(_) => break,
                Ok(n) => len += n,
            }
            if buf[..len].windows(4).any(|w| w == b"\r\n\r\n") {
                break;
            }
        }
        let head = String::from_utf8_lossy(&buf[..len]).into_owned();
        let target = head.split_whitespace().nth(1).unwrap_or_default().to_owned();
        let query: HashMap<String, String> = target
            .split_once('?')
            .map(|(_, q)| q)
            .unwrap_or_default()
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .map(|(k, v)| (decode(k), decode(v)))
            .collect();
        let (page, outcome) = match (query.get("code"), query.get("error"), query.get("state")) {
            (Some(code), _, Some(s)) if s == state => ("Logged in. You can close this window.", Some(Ok(code.clone()))),
            (_, Some(error), Some(s)) if s == state => {
                let why = query
                    .get("error_description")
                    .map_or(error.clone(), |d| format!("{error}: {d}"));
                (
                    "The login failed. You can close this window.",
                    Some(Err(OAuthError::Refused(why))),
                )
            }
            // A favicon, a stale tab: not the redirect we wait for.
            _ => ("Not the expected redirect.", None),
        };
        let status = if outcome.is_some() { "200 OK" } else { "400 Bad Request" };
        let response = format!(
            "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
            page.len()
        );
        let _ = stream.write_all(response.as_bytes()).await;
        if let Some(outcome) = outcome {
            return outcome;
        }
    }
}

fn decode(s: &str) -> String {
    let s = s.replace('+', " ");
    percent_encoding::percent_decode_str(&s)
        .decode_utf8_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests;
