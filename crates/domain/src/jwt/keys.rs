//! Key material: public keys read from PEM, their key ids (RFC 7638 JWK
//! thumbprints), their published form (RFC 7517 JWKs), and new key pairs
//! for `credencial keys generate` and the demo.
//!
//! A key id names a key, not a configuration: the same public key has the
//! same `kid` on every instance and after every restart, so a token signed
//! before a rotation still finds its key among the previous ones.

use base64::Engine as _;
use jsonwebtoken::jwk::{
    AlgorithmParameters, CommonParameters, EllipticCurve, EllipticCurveKeyParameters, EllipticCurveKeyType, Jwk,
    KeyAlgorithm, PublicKeyUse, RSAKeyParameters, RSAKeyType, ThumbprintHash,
};
use jsonwebtoken::DecodingKey;
use p256::elliptic_curve::sec1::ToEncodedPoint;
use p256::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey, LineEnding};
use rsa::pkcs1::{DecodeRsaPrivateKey, DecodeRsaPublicKey};
use rsa::traits::PublicKeyParts;
use sha2::{Digest, Sha256};

use super::{JwtAlgorithm, KeyError};
use crate::redacted::Redacted;

/// Size of the RSA keys `keys generate` and the demo make, in bits.
pub const RSA_KEY_BITS: usize = 2048;

/// A public key that verifies tokens: its algorithm (RSA keys verify
/// RS256, P-256 keys ES256), its key id and its published form.
#[derive(Clone)]
pub struct PublicKey {
    algorithm: JwtAlgorithm,
    kid: String,
    decoding: DecodingKey,
    jwk: Jwk,
    fast: Option<FastVerifier>,
}

/// A key in the form `ring` verifies with. jsonwebtoken's
/// `rust_crypto` backend takes about 300 µs for one RS256 verification on
/// the machines we measure on (docs/performance.md), on the profile read's
/// hot path; `ring` (already in the tree through rustls) takes a fraction
/// of that. Signing stays with jsonwebtoken.
#[derive(Clone)]
pub(super) enum FastVerifier {
    /// An RSA key of at least 2,048 bits (ring's floor; a smaller key
    /// verifies through jsonwebtoken): modulus and exponent, big-endian.
    Rsa {
        /// The modulus.
        n: Vec<u8>,
        /// The public exponent.
        e: Vec<u8>,
    },
    /// A P-256 point, uncompressed (0x04‖x‖y).
    P256(Vec<u8>),
    /// An HS256 secret, with the HMAC's inner and outer states computed
    /// once (jsonwebtoken computes them again for every token).
    HmacSha256(ring::hmac::Key),
}

impl FastVerifier {
    /// The verifier of HS256 with `secret`.
    pub(super) fn hmac_sha256(secret: &[u8]) -> Self {
        Self::HmacSha256(ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret))
    }

    /// Whether `signature` (raw bytes) signs `message` with this key:
    /// RSASSA-PKCS1-v1_5 with SHA-256, ECDSA P-256 with SHA-256 in the
    /// fixed-length form JWS uses (RFC 7518 §3.4), or HMAC-SHA256 (compared
    /// in constant time).
    pub(super) fn verify(&self, message: &[u8], signature: &[u8]) -> bool {
        use ring::signature::{RsaPublicKeyComponents, UnparsedPublicKey, ECDSA_P256_SHA256_FIXED};
        match self {
            Self::Rsa { n, e } => RsaPublicKeyComponents { n, e }
                .verify(&ring::signature::RSA_PKCS1_2048_8192_SHA256, message, signature)
                .is_ok(),
            Self::P256(point) => {
                UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, point).verify(message, signature).is_ok()
            }
            Self::HmacSha256(key) => ring::hmac::verify(key, message, signature).is_ok(),
        }
    }
}

impl std::fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PublicKey").field("algorithm", &self.algorithm).field("kid", &self.kid).finish()
    }
}

impl PublicKey {
    /// A public key from PEM: an RSA key (`PUBLIC KEY` or `RSA PUBLIC
    /// KEY`) or a P-256 key (`PUBLIC KEY`). Errors: `BadPem` for anything
    /// else (a private key, another curve, not PEM).
    pub fn from_pem(pem: &[u8]) -> Result<Self, KeyError> {
        let text = std::str::from_utf8(pem).map_err(|_| bad_public("not PEM text"))?;
        if let Ok(rsa) =
            rsa::RsaPublicKey::from_public_key_pem(text).or_else(|_| rsa::RsaPublicKey::from_pkcs1_pem(text))
        {
            return Ok(Self::rsa(&rsa));
        }
        if let Ok(ec) = p256::PublicKey::from_public_key_pem(text) {
            return Ok(Self::p256(&ec));
        }
        Err(bad_public("neither an RSA nor a P-256 public key"))
    }

    fn rsa(key: &rsa::RsaPublicKey) -> Self {
        let (n, e) = (key.n().to_bytes_be(), key.e().to_bytes_be());
        let decoding = DecodingKey::from_rsa_raw_components(&n, &e);
        let params = AlgorithmParameters::RSA(RSAKeyParameters { key_type: RSAKeyType::RSA, n: b64(&n), e: b64(&e) });
        let fast = (n.len() * 8 >= RSA_KEY_BITS).then(|| FastVerifier::Rsa { n: n.clone(), e: e.clone() });
        Self::with_jwk(JwtAlgorithm::RS256, decoding, params, fast)
    }

    fn p256(key: &p256::PublicKey) -> Self {
        let point = key.to_encoded_point(false);
        let (x, y) = (point.x().map(|x| b64(x)).unwrap_or_default(), point.y().map(|y| b64(y)).unwrap_or_default());
        // jsonwebtoken verifies ES256 with the uncompressed point (0x04‖x‖y).
        let decoding = DecodingKey::from_ec_der(point.as_bytes());
        let params = AlgorithmParameters::EllipticCurve(EllipticCurveKeyParameters {
            key_type: EllipticCurveKeyType::EC,
            curve: EllipticCurve::P256,
            x,
            y,
        });
        let fast = Some(FastVerifier::P256(point.as_bytes().to_vec()));
        Self::with_jwk(JwtAlgorithm::ES256, decoding, params, fast)
    }

    fn with_jwk(
        algorithm: JwtAlgorithm,
        decoding: DecodingKey,
        params: AlgorithmParameters,
        fast: Option<FastVerifier>,
    ) -> Self {
        let mut jwk = Jwk { common: CommonParameters::default(), algorithm: params };
        let kid = jwk.thumbprint(ThumbprintHash::SHA256);
        jwk.common = CommonParameters {
            public_key_use: Some(PublicKeyUse::Signature),
            key_algorithm: Some(match algorithm {
                JwtAlgorithm::ES256 => KeyAlgorithm::ES256,
                _ => KeyAlgorithm::RS256,
            }),
            key_id: Some(kid.clone()),
            ..CommonParameters::default()
        };
        Self { algorithm, kid, decoding, jwk, fast }
    }

    /// The algorithm this key verifies.
    pub fn algorithm(&self) -> JwtAlgorithm {
        self.algorithm
    }

    /// Its key id: the RFC 7638 SHA-256 thumbprint, base64url.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// Its published form (RFC 7517), with `kid`, `alg` and `use: sig`.
    pub fn jwk(&self) -> &Jwk {
        &self.jwk
    }

    pub(super) fn decoding(&self) -> &DecodingKey {
        &self.decoding
    }

    pub(super) fn fast_verifier(&self) -> Option<&FastVerifier> {
        self.fast.as_ref()
    }
}

/// A private key read from PEM with its public half derived from it:
/// RSA (`PRIVATE KEY` or `RSA PRIVATE KEY`) for RS256, P-256 (`PRIVATE
/// KEY` or `EC PRIVATE KEY`) for ES256. Errors: `BadPem` when the PEM is
/// not a private key of `algorithm`'s kind.
pub(super) fn private_pem(
    algorithm: JwtAlgorithm,
    pem: &[u8],
) -> Result<(jsonwebtoken::EncodingKey, PublicKey), KeyError> {
    let bad = |reason: &str| KeyError::BadPem { which: "private", algorithm, reason: reason.to_owned() };
    let text = std::str::from_utf8(pem).map_err(|_| bad("not PEM text"))?;
    match algorithm {
        JwtAlgorithm::RS256 => {
            let key = rsa::RsaPrivateKey::from_pkcs8_pem(text)
                .or_else(|_| rsa::RsaPrivateKey::from_pkcs1_pem(text))
                .map_err(|_| bad("not an RSA private key"))?;
            let der = rsa::pkcs1::EncodeRsaPrivateKey::to_pkcs1_der(&key).map_err(|e| bad(&e.to_string()))?;
            Ok((jsonwebtoken::EncodingKey::from_rsa_der(der.as_bytes()), PublicKey::rsa(&key.to_public_key())))
        }
        JwtAlgorithm::ES256 => {
            let key = p256::SecretKey::from_pkcs8_pem(text)
                .or_else(|_| p256::SecretKey::from_sec1_pem(text))
                .map_err(|_| bad("not a P-256 private key"))?;
            let der = key.to_pkcs8_der().map_err(|e| bad(&e.to_string()))?;
            Ok((jsonwebtoken::EncodingKey::from_ec_der(der.as_bytes()), PublicKey::p256(&key.public_key())))
        }
        JwtAlgorithm::HS256 => Err(bad("HS256 takes a secret, not a key pair")),
    }
}

/// A new key pair in PEM: the private key (PKCS#8) and the public key
/// (SubjectPublicKeyInfo). RSA keys have [`RSA_KEY_BITS`] bits. Errors:
/// `BadPem` for HS256 (a secret is not a key pair).
pub fn generate_pem_pair(algorithm: JwtAlgorithm) -> Result<(Redacted<String>, String), KeyError> {
    let fail = |reason: String| KeyError::BadPem { which: "private", algorithm, reason };
    let mut rng = rand::rngs::OsRng;
    match algorithm {
        JwtAlgorithm::RS256 => {
            let key = rsa::RsaPrivateKey::new(&mut rng, RSA_KEY_BITS).map_err(|e| fail(e.to_string()))?;
            let private = key.to_pkcs8_pem(LineEnding::LF).map_err(|e| fail(e.to_string()))?;
            let public = key.to_public_key().to_public_key_pem(LineEnding::LF).map_err(|e| fail(e.to_string()))?;
            Ok((Redacted(private.to_string()), public))
        }
        JwtAlgorithm::ES256 => {
            let key = p256::SecretKey::random(&mut rng);
            let private = key.to_pkcs8_pem(LineEnding::LF).map_err(|e| fail(e.to_string()))?;
            let public = key.public_key().to_public_key_pem(LineEnding::LF).map_err(|e| fail(e.to_string()))?;
            Ok((Redacted(private.to_string()), public))
        }
        JwtAlgorithm::HS256 => Err(fail("HS256 takes a secret, not a key pair".into())),
    }
}

/// The key id of an HS256 secret: a truncated SHA-256 of a label and the
/// secret. It names the secret without revealing anything a token's own
/// HMAC does not already reveal, and is never published.
pub(super) fn hmac_kid(secret: &[u8]) -> String {
    let digest = Sha256::new().chain_update(b"credencial hs256 kid\0").chain_update(secret).finalize();
    format!("hs256-{}", b64(&digest[..9]))
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn bad_public(reason: &str) -> KeyError {
    KeyError::BadPublicKey(reason.to_owned())
}
