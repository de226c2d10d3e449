//! Request identity verification on `ring`: the SDK checks Restate's
//! signed request tokens (EdDSA JWTs) through `jsonwebtoken`, which needs a
//! process-wide crypto provider. The workspace builds the SDK without its
//! RustCrypto and aws-lc stacks, so the endpoint installs this one, which
//! verifies Ed25519 (what Restate signs with) with the `ring` the HTTP stack
//! already uses, and refuses every other algorithm.

use jsonwebtoken::crypto::{CryptoProvider, JwkUtils, JwtSigner, JwtVerifier};
use jsonwebtoken::errors::{ErrorKind, Result};
use jsonwebtoken::signature::{Error as SignatureError, Verifier};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, EncodingKey};
use ring::signature::{ED25519, UnparsedPublicKey};

/// An Ed25519 public key.
struct Ed25519Verifier(Vec<u8>);

impl Verifier<Vec<u8>> for Ed25519Verifier {
    fn verify(&self, message: &[u8], signature: &Vec<u8>) -> std::result::Result<(), SignatureError> {
        UnparsedPublicKey::new(&ED25519, &self.0)
            .verify(message, signature)
            .map_err(|_| SignatureError::new())
    }
}

impl JwtVerifier for Ed25519Verifier {
    fn algorithm(&self) -> Algorithm {
        Algorithm::EdDSA
    }
}

fn verifier(algorithm: &Algorithm, key: &DecodingKey) -> Result<Box<dyn JwtVerifier>> {
    if *algorithm != Algorithm::EdDSA || key.family() != AlgorithmFamily::Ed {
        return Err(ErrorKind::InvalidAlgorithm.into());
    }
    Ok(Box::new(Ed25519Verifier(key.as_bytes().to_vec())))
}

fn signer(_: &Algorithm, _: &EncodingKey) -> Result<Box<dyn JwtSigner>> {
    // The endpoint only verifies.
    Err(ErrorKind::InvalidAlgorithm.into())
}

static RING: CryptoProvider = CryptoProvider {
    signer_factory: signer,
    verifier_factory: verifier,
    jwk_utils: JwkUtils::new_unimplemented(),
};

/// Installs the provider for this process, unless one is installed already
/// (by the application, or an earlier endpoint).
pub(crate) fn install() {
    let _ = RING.install_default();
}
