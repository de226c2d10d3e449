//! Restate's request identity: a service started with `--identity-key`
//! answers only a Restate server that signs its requests with the matching
//! private key.

use ring::rand::SystemRandom;
use ring::signature::{Ed25519KeyPair, KeyPair};
use serde_json::json;

use crate::ONE_AT_A_TIME;
use crate::harness::{Reply, Restate, Service, answer, model};

/// A fresh Ed25519 key pair: the private key as PEM (what the server
/// reads) and the public key as Restate writes it (`publickeyv1_` and the
/// key in base58).
fn key_pair() -> (String, String) {
    use base64::Engine;
    let der = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
    let pair = Ed25519KeyPair::from_pkcs8(der.as_ref()).unwrap();
    let body = base64::engine::general_purpose::STANDARD.encode(der.as_ref());
    let lines: Vec<&str> = body
        .as_bytes()
        .chunks(64)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        lines.join("\n")
    );
    let public = format!("publickeyv1_{}", bs58::encode(pair.public_key().as_ref()).into_string());
    (pem, public)
}

/// The service refuses a server that does not sign (its registration
/// fails on the 401 of discovery) and serves one that signs with the
/// configured key: a run through it completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_with_an_identity_key_answers_only_the_signing_server() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (url, bodies, _arrived) = model(|_, _| Reply::Stream(answer("signed answer"))).await;
    let keys = tempfile::tempdir().unwrap();
    let (pem, public) = key_pair();
    let pem_path = keys.path().join("identity.pem");
    std::fs::write(&pem_path, pem).unwrap();

    let service = Service::start_program(&url, &["--identity-key", &public]).await;
    let unsigned = Restate::start().await;
    let refused = unsigned.try_register(&service.uri).await;
    assert!(
        refused.status >= 400 && refused.body.contains("401"),
        "an unsigned server is refused: {refused:?}"
    );
    drop(unsigned);

    let signing = Restate::start_with(&[(
        "RESTATE_WORKER__INVOKER__REQUEST_IDENTITY_PRIVATE_KEY_PEM_FILE",
        pem_path.to_str().unwrap(),
    )])
    .await;
    let registered = signing.try_register(&service.uri).await;
    assert!(
        registered.status == 201 || registered.status == 200,
        "{registered:?}\nservice: {}\nserver: {}",
        std::fs::read_to_string(service.workspace.path().join("service.log")).unwrap_or_default(),
        signing.log()
    );
    let id = signing.send("s-id", "run", &json!({"prompt": "Who signs?"}), &[]).await;
    assert_eq!(signing.output(&id).await["text"], "signed answer");
    assert_eq!(bodies.lock().unwrap().len(), 1);
}

/// A key that is not a Restate public key stops the program before it
/// listens, naming the key.
#[tokio::test]
async fn a_malformed_identity_key_is_refused_at_start() {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_zidane-restate"))
        .args(["--bind", "127.0.0.1:0", "--identity-key", "publickeyv1_notbase58!!"])
        .env("ANTHROPIC_API_KEY", "sk-test")
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--identity-key: identity key `publickeyv1_notbase58!!` cannot be used"),
        "{stderr}"
    );
}
