use super::*;
use crate::oauth::{Challenge, MemoryOAuthStore};

/// Keys made for these tests only (`openssl genpkey`).
const ES256_KEY: &str = include_str!("../../testdata/es256-test-key.pem");
const RS256_KEY: &str = include_str!("../../testdata/rs256-test-key.pem");

fn flow(url: &str, config: OAuthConfig) -> OAuthFlow {
    let http = HttpClient::new(zidane_provider::Timeouts::default()).unwrap();
    OAuthFlow::new("docs", url, config, Arc::new(MemoryOAuthStore::default()), http)
}

/// A server with no metadata at all (every request a 404): discovery
/// falls back to the 2025-03-26 default endpoints.
async fn bare_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                while let Ok(n) = stream.read(&mut buf).await {
                    if n == 0 {
                        return;
                    }
                    let answer = "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n";
                    if stream.write_all(answer.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    format!("http://{addr}")
}

/// The configured scopes and callback port shape the authorization
/// request of a pre-registered client.
#[tokio::test]
async fn configured_scopes_and_callback_port_reach_the_authorization_url() {
    let base = bare_server().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = OAuthConfig {
        client_id: Some("pre-registered".into()),
        scopes: Some(vec!["files:read".into(), "files:write".into()]),
        callback_port: Some(port),
        ..Default::default()
    };
    let challenge = Challenge {
        scope: Some("ignored:by-config".into()),
        ..Default::default()
    };
    let pending = flow(&format!("{base}/mcp"), config)
        .begin(&challenge, None)
        .await
        .unwrap();
    let url = pending.url().to_owned();
    assert!(url.starts_with(&format!("{base}/authorize?")), "{url}");
    assert!(url.contains("client_id=pre-registered"), "{url}");
    assert!(url.contains("scope=files%3Aread%20files%3Awrite"), "{url}");
    assert!(!url.contains("ignored"), "{url}");
    assert!(
        url.contains(&format!("redirect_uri=http%3A%2F%2F127.0.0.1%3A{port}%2Fcallback")),
        "{url}"
    );
    assert!(url.contains("code_challenge_method=S256"), "{url}");
    assert!(
        url.contains(&format!("resource={}", encode(&format!("{base}/mcp")))),
        "{url}"
    );
}

#[tokio::test]
async fn a_configured_client_credentials_grant_is_used_without_asking_the_server() {
    let config = OAuthConfig {
        grant_type: Some("client_credentials".into()),
        ..Default::default()
    };
    // Nothing listens there: the configuration alone decides.
    let machine = flow("http://127.0.0.1:1/mcp", config);
    assert!(machine.uses_client_credentials(&Challenge::default()).await.unwrap());
    let person = flow("http://127.0.0.1:1/mcp", OAuthConfig::default());
    assert!(!person.uses_client_credentials(&Challenge::default()).await.unwrap());
}

/// Both signing algorithms give a JWT whose signature the key's public
/// half verifies, with the client as issuer and subject.
#[test]
fn client_assertions_are_signed_es256_and_rs256() {
    use ring::signature::{
        ECDSA_P256_SHA256_FIXED, ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair, RSA_PKCS1_2048_8192_SHA256,
        RsaKeyPair, UnparsedPublicKey,
    };
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let der = |pem: &str| {
        let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
        base64::engine::general_purpose::STANDARD.decode(body).unwrap()
    };
    let rng = ring::rand::SystemRandom::new();
    for (alg, pem) in [("ES256", ES256_KEY), ("RS256", RS256_KEY)] {
        let jwt = sign_assertion(pem, alg, "client-1", "http://as.example").unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let header: Value = serde_json::from_slice(&b64.decode(parts[0]).unwrap()).unwrap();
        assert_eq!(header["alg"], alg);
        let claims: Value = serde_json::from_slice(&b64.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(
            (claims["iss"].as_str(), claims["sub"].as_str()),
            (Some("client-1"), Some("client-1"))
        );
        assert_eq!(claims["aud"], "http://as.example");
        let signed = format!("{}.{}", parts[0], parts[1]);
        let signature = b64.decode(parts[2]).unwrap();
        let verified = if alg == "ES256" {
            let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &der(pem), &rng).unwrap();
            UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, key.public_key().as_ref())
                .verify(signed.as_bytes(), &signature)
        } else {
            let key = RsaKeyPair::from_pkcs8(&der(pem)).unwrap();
            UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, key.public().as_ref())
                .verify(signed.as_bytes(), &signature)
        };
        assert!(verified.is_ok(), "{alg}");
    }
    assert!(sign_assertion(ES256_KEY, "HS256", "c", "a").is_err());
    assert!(sign_assertion("not a key", "ES256", "c", "a").is_err());
}

#[test]
fn challenges_and_resources() {
    let c = Challenge::parse(
        r#"Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="http://h/.well-known/oauth-protected-resource/mcp""#,
    );
    assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
    assert_eq!(c.scope.as_deref(), Some("mcp:basic mcp:write"));
    assert_eq!(
        c.resource_metadata.as_deref(),
        Some("http://h/.well-known/oauth-protected-resource/mcp")
    );
    assert_eq!(Challenge::parse("Bearer"), Challenge::default());
    // Malformed challenges give what they can, never a panic.
    assert_eq!(
        Challenge::parse("Bearer scope=\"unterminated").scope.as_deref(),
        Some("unterminated")
    );
    assert_eq!(Challenge::parse("Basic realm").scope, None);
    assert_eq!(
        Challenge::parse("Bearer scope=a, error=insufficient_scope")
            .error
            .as_deref(),
        Some("insufficient_scope")
    );
    assert!(resource_matches("http://h:1/mcp", "http://h:1/mcp"));
    assert!(resource_matches("http://h:1", "http://h:1/mcp"));
    assert!(!resource_matches("https://evil.example.com/mcp", "http://h:1/mcp"));
    assert!(!resource_matches("http://h:1/other", "http://h:1/mcp"));
    // RFC 7636's example.
    assert_eq!(
        pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    );
}
