//! Signing and verifying tokens with one algorithm pinned by configuration.
//!
//! The accepted algorithm is the configured one, never the one a token's
//! header asks for: a token whose header names any other algorithm (including
//! `none`, or HS256 over an RSA public key) is refused before its signature is
//! looked at.
//!
//! Every token carries the `kid` of the key that signed it. A codec holds
//! the current signing key and, for RS256/ES256, the public keys of the
//! keys it replaced: a token names its key by `kid` and verifies with that
//! key and that key's algorithm only, so keys rotate without logging
//! anybody out (see [`keys`]).

pub mod keys;

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use base64::Engine as _;
/// The published form of a public key and of a key set (RFC 7517).
pub use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header};
use thiserror::Error;

use crate::error::TokenError;
use crate::token::{is_access_token_jwt_type, Claims, TokenType, ACCESS_TOKEN_JWT_TYPE};
pub use keys::{generate_pem_pair, PublicKey};

/// Allowance for clocks of two instances that disagree by a few seconds: a
/// token whose `iat`/`nbf` lies at most this far in the future is accepted.
pub const CLOCK_SKEW_SECS: i64 = 5;

/// Smallest accepted HS256 secret, in bytes (RFC 7518 §3.2: at least the hash size).
pub const MIN_HMAC_SECRET_BYTES: usize = 32;

/// The signing algorithms an operator may choose from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JwtAlgorithm {
    /// HMAC with SHA-256 and a shared secret (the default).
    #[default]
    HS256,
    /// RSASSA-PKCS1-v1_5 with SHA-256 and an RSA key pair in PEM.
    RS256,
    /// ECDSA on P-256 with SHA-256 and an EC key pair in PEM.
    ES256,
}

impl JwtAlgorithm {
    /// Whether the algorithm signs with a key pair (RS256, ES256), whose
    /// public half can be published.
    pub fn is_asymmetric(self) -> bool {
        !matches!(self, Self::HS256)
    }

    /// Its name in a JWS header's `alg` (RFC 7518 §3.1).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::HS256 => "HS256",
            Self::RS256 => "RS256",
            Self::ES256 => "ES256",
        }
    }

    fn as_jsonwebtoken(self) -> Algorithm {
        match self {
            Self::HS256 => Algorithm::HS256,
            Self::RS256 => Algorithm::RS256,
            Self::ES256 => Algorithm::ES256,
        }
    }
}

impl fmt::Display for JwtAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for JwtAlgorithm {
    type Err = KeyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_uppercase().as_str() {
            "HS256" => Ok(Self::HS256),
            "RS256" => Ok(Self::RS256),
            "ES256" => Ok(Self::ES256),
            other => Err(KeyError::UnknownAlgorithm(other.to_owned())),
        }
    }
}

/// Problems with the configured algorithm or keys, found at start-up.
#[derive(Debug, Error)]
pub enum KeyError {
    /// The algorithm name is not one of HS256, RS256, ES256.
    #[error("unknown algorithm {0:?} (expected HS256, RS256 or ES256)")]
    UnknownAlgorithm(String),
    /// An HS256 secret shorter than [`MIN_HMAC_SECRET_BYTES`].
    #[error("the HS256 secret must be at least {MIN_HMAC_SECRET_BYTES} bytes long")]
    SecretTooShort,
    /// A PEM file that does not hold a key of the expected kind.
    #[error("the {which} key is not a valid {algorithm} PEM key: {reason}")]
    BadPem {
        /// `private` or `public`.
        which: &'static str,
        /// The configured algorithm.
        algorithm: JwtAlgorithm,
        /// What the PEM parser said.
        reason: String,
    },
    /// A public key that is neither an RSA nor a P-256 key in PEM.
    #[error("the public key is not an RSA or P-256 public key in PEM: {0}")]
    BadPublicKey(String),
    /// The public key does not verify what the private key signs.
    #[error("the public key does not match the private key")]
    Mismatch,
    /// A previous key is not one of RS256/ES256 (HS256 secrets are not rotated by key id).
    #[error("previous keys are RS256 or ES256 public keys; the current algorithm is {0}")]
    PreviousKeysNeedAsymmetric(JwtAlgorithm),
}

/// Could not sign a token (a key problem, never a client's fault).
#[derive(Debug, Error)]
#[error("could not sign token: {0}")]
pub struct SigningError(String);

/// The signing key of one algorithm: a secret (HS256) or a private key
/// with its public half (RS256, ES256), and its key id.
pub struct JwtKeys {
    algorithm: JwtAlgorithm,
    kid: String,
    encoding: EncodingKey,
    decoding: DecodingKey,
    public: Option<PublicKey>,
    /// The key in `ring`'s form, which verifies it (see [`keys::FastVerifier`]).
    fast: Option<keys::FastVerifier>,
}

impl fmt::Debug for JwtKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwtKeys").field("algorithm", &self.algorithm).field("kid", &self.kid).finish_non_exhaustive()
    }
}

impl JwtKeys {
    /// HS256 keys from a shared secret of at least 32 bytes.
    pub fn hmac(secret: &[u8]) -> Result<Self, KeyError> {
        if secret.len() < MIN_HMAC_SECRET_BYTES {
            return Err(KeyError::SecretTooShort);
        }
        Ok(Self {
            algorithm: JwtAlgorithm::HS256,
            kid: keys::hmac_kid(secret),
            encoding: EncodingKey::from_secret(secret),
            decoding: DecodingKey::from_secret(secret),
            public: None,
            fast: Some(keys::FastVerifier::hmac_sha256(secret)),
        })
    }

    /// RS256 or ES256 keys from a PEM private key and its PEM public key;
    /// the public key must be the private key's (`Mismatch` otherwise,
    /// found when the codec is built).
    pub fn asymmetric(algorithm: JwtAlgorithm, private_pem: &[u8], public_pem: &[u8]) -> Result<Self, KeyError> {
        let (encoding, _) = keys::private_pem(algorithm, private_pem)?;
        let public = PublicKey::from_pem(public_pem).map_err(|e| KeyError::BadPem {
            which: "public",
            algorithm,
            reason: e.to_string(),
        })?;
        if public.algorithm() != algorithm {
            return Err(KeyError::BadPem {
                which: "public",
                algorithm,
                reason: format!("a {} key", public.algorithm()),
            });
        }
        Ok(Self::from_parts(algorithm, encoding, public))
    }

    /// RS256 or ES256 keys from a PEM private key alone (PKCS#8, or PKCS#1
    /// for RSA, SEC1 for P-256): the public half is derived from it.
    pub fn from_private_pem(algorithm: JwtAlgorithm, private_pem: &[u8]) -> Result<Self, KeyError> {
        let (encoding, public) = keys::private_pem(algorithm, private_pem)?;
        Ok(Self::from_parts(algorithm, encoding, public))
    }

    fn from_parts(algorithm: JwtAlgorithm, encoding: EncodingKey, public: PublicKey) -> Self {
        Self {
            algorithm,
            kid: public.kid().to_owned(),
            encoding,
            decoding: public.decoding().clone(),
            fast: public.fast_verifier().cloned(),
            public: Some(public),
        }
    }

    /// The key id tokens signed with these keys carry.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The algorithm.
    pub fn algorithm(&self) -> JwtAlgorithm {
        self.algorithm
    }
}

/// One key a codec verifies with: its id, algorithm and key (and, for a
/// public key, the same key in `ring`'s form, which verifies it).
struct VerifyingKey {
    kid: String,
    algorithm: JwtAlgorithm,
    decoding: DecodingKey,
    fast: Option<keys::FastVerifier>,
}

/// What a token check reads from a JOSE header (RFC 7515 §4): the
/// algorithm, the key id and the type. A `crit` member names extensions the
/// reader must understand (§4.1.11); we understand none, so a header with
/// one is refused. Other members are ignored. Strings are read borrowed from
/// the decoded header (escaped ones are copied), so that a check allocates
/// no string for them: the header is parsed on every token check.
#[derive(serde::Deserialize)]
struct JoseHeader<'a> {
    #[serde(borrow)]
    alg: Cow<'a, str>,
    #[serde(default, borrow)]
    kid: Option<Borrowed<'a>>,
    #[serde(default, borrow)]
    typ: Option<Borrowed<'a>>,
    #[serde(default)]
    crit: Option<serde::de::IgnoredAny>,
}

/// A string member read borrowed where it can be: serde borrows a bare
/// `Cow<str>` field, not one inside an `Option`.
#[derive(serde::Deserialize)]
struct Borrowed<'a>(#[serde(borrow)] Cow<'a, str>);

impl std::ops::Deref for Borrowed<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

/// Signs and verifies tokens with the configured keys only.
pub struct TokenCodec {
    algorithm: JwtAlgorithm,
    encoding: EncodingKey,
    header: Header,
    /// The header of OAuth2 access tokens: `header` with `typ: at+jwt`.
    access_header: Header,
    /// The current key first, then the previous public keys.
    verifying: Vec<VerifyingKey>,
    /// The published form of the current and previous public keys
    /// (empty with HS256).
    published: Vec<Jwk>,
    leeway_secs: i64,
}

impl fmt::Debug for TokenCodec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenCodec")
            .field("algorithm", &self.algorithm)
            .field("kid", &self.header.kid)
            .field("previous_keys", &self.verifying.len().saturating_sub(1))
            .field("leeway_secs", &self.leeway_secs)
            .finish_non_exhaustive()
    }
}

impl TokenCodec {
    /// A codec for `keys`, accepting tokens up to `leeway_secs` past their
    /// expiry. Checks that the keys can sign and verify a token.
    pub fn new(keys: JwtKeys, leeway_secs: i64) -> Result<Self, KeyError> {
        let alg = keys.algorithm.as_jsonwebtoken();
        let mut header = Header::new(alg);
        header.kid = Some(keys.kid.clone());
        let access_header = Header { typ: Some(ACCESS_TOKEN_JWT_TYPE.to_owned()), ..header.clone() };
        // Time-based claims are checked by `decode` against the caller's
        // clock, so that the rules are testable and the clock is a port.
        let codec = Self {
            algorithm: keys.algorithm,
            encoding: keys.encoding,
            header,
            access_header,
            verifying: vec![VerifyingKey {
                kid: keys.kid,
                algorithm: keys.algorithm,
                decoding: keys.decoding,
                fast: keys.fast,
            }],
            published: keys.public.iter().map(|p| p.jwk().clone()).collect(),
            leeway_secs: leeway_secs.max(0),
        };
        let probe = Claims::new(TokenType::Access, 0, 0, 1);
        let signed = codec.encode(&probe).map_err(|_| KeyError::Mismatch)?;
        codec.decode(&signed, 0).map_err(|_| KeyError::Mismatch)?;
        Ok(codec)
    }

    /// The same codec, also verifying tokens signed with `previous` keys
    /// (the public keys of keys it replaced; each verifies its own
    /// algorithm). A key equal to the current one, or listed twice, is
    /// kept once. Errors: `PreviousKeysNeedAsymmetric` with HS256.
    pub fn with_previous_keys(mut self, previous: Vec<PublicKey>) -> Result<Self, KeyError> {
        if !previous.is_empty() && !self.algorithm.is_asymmetric() {
            return Err(KeyError::PreviousKeysNeedAsymmetric(self.algorithm));
        }
        for key in previous {
            if self.verifying.iter().any(|v| v.kid == key.kid()) {
                continue;
            }
            self.published.push(key.jwk().clone());
            self.verifying.push(VerifyingKey {
                kid: key.kid().to_owned(),
                algorithm: key.algorithm(),
                decoding: key.decoding().clone(),
                fast: key.fast_verifier().cloned(),
            });
        }
        Ok(self)
    }

    /// The key id of the current key (every token signed now carries it).
    pub fn kid(&self) -> &str {
        self.header.kid.as_deref().unwrap_or_default()
    }

    /// The public keys to publish (RFC 7517): the current one first, then
    /// the previous ones; none with HS256.
    pub fn public_jwks(&self) -> &[Jwk] {
        &self.published
    }

    /// The pinned algorithm.
    pub fn algorithm(&self) -> JwtAlgorithm {
        self.algorithm
    }

    /// How many seconds past its `exp` a token is still accepted.
    pub fn leeway_secs(&self) -> i64 {
        self.leeway_secs
    }

    /// Signs `claims` (our [`Claims`], or any other claim set such as an
    /// ID token's) into a compact JWT with the header `typ: JWT`.
    pub fn encode<T: serde::Serialize>(&self, claims: &T) -> Result<String, SigningError> {
        jsonwebtoken::encode(&self.header, claims, &self.encoding).map_err(|e| SigningError(e.to_string()))
    }

    /// Signs `claims` like [`encode`](Self::encode), with the header
    /// `typ: typ` instead of `JWT` (explicit typing, RFC 8725 §3.11: a
    /// logout token's `logout+jwt`).
    pub fn encode_typed<T: serde::Serialize>(&self, claims: &T, typ: &str) -> Result<String, SigningError> {
        let header = Header { typ: Some(typ.to_owned()), ..self.header.clone() };
        jsonwebtoken::encode(&header, claims, &self.encoding).map_err(|e| SigningError(e.to_string()))
    }

    /// Signs our `claims` with the header their type calls for: `typ:
    /// at+jwt` for an OAuth2 access token (`oauth_access`, `oauth_machine`;
    /// RFC 9068 §2.1),
    /// `typ: JWT` for every other (simplejwt's exact shape).
    pub fn encode_claims(&self, claims: &Claims) -> Result<String, SigningError> {
        let header = match claims.token_type {
            TokenType::ClientAccess | TokenType::Machine => &self.access_header,
            _ => &self.header,
        };
        jsonwebtoken::encode(header, claims, &self.encoding).map_err(|e| SigningError(e.to_string()))
    }

    /// Verifies `token` at time `now` (Unix seconds) and returns its claims,
    /// whatever its type and lane (see [`decode_first_party`](Self::decode_first_party)).
    ///
    /// Refuses: a header naming another algorithm, a bad signature, missing or
    /// mistyped claims, a header `typ` of `at+jwt` on anything but an
    /// OAuth2 access token (`oauth_access`, `oauth_machine`) or such a
    /// token without it
    /// (`Invalid`: the two kinds' rules exclude each other, RFC 8725
    /// §3.12); `exp` reached (`Expired`); `nbf`/`iat` in the future beyond
    /// leeway and clock skew (`NotYetValid`).
    pub fn decode(&self, token: &str, now: i64) -> Result<Claims, TokenError> {
        let (typed_as_access_token, claims): (_, Claims) = self.verified(token).ok_or(TokenError::Invalid)?;
        if typed_as_access_token != claims.token_type.is_oauth_access() {
            return Err(TokenError::Invalid);
        }
        if now >= claims.exp.saturating_add(self.leeway_secs) {
            return Err(TokenError::Expired);
        }
        let not_before = claims.nbf.unwrap_or(claims.iat).max(claims.iat);
        if not_before > now.saturating_add(self.leeway_secs.saturating_add(CLOCK_SKEW_SECS)) {
            return Err(TokenError::NotYetValid);
        }
        Ok(claims)
    }

    /// The payload of `token`, read as `T` (our [`Claims`], or another
    /// claim set such as an ID token's), if it is
    /// `header.payload.signature` whose signature verifies with the key its
    /// header's `kid` names (the current key when it names none: tokens
    /// from before key ids) and whose header names that key's algorithm;
    /// `None` otherwise. No time rule is applied: that is the caller's (see
    /// [`decode`](Self::decode) for our tokens').
    ///
    /// `jsonwebtoken::decode` would do the same with the header parsed twice
    /// and the claims parsed twice (once for its own validation, which we
    /// switch off: time rules are ours). This is the hot path of every
    /// token check, so it calls the crate's parts once each: the header
    /// parser, the signature check (with the key's algorithm, never the
    /// header's), then one parse of the claims.
    pub fn verified_payload<T: serde::de::DeserializeOwned>(&self, token: &str) -> Option<T> {
        self.verified(token).map(|(_, payload)| payload)
    }

    /// [`verified_payload`](Self::verified_payload), and whether the
    /// header's `typ` is an access token's (`at+jwt`).
    fn verified<T: serde::de::DeserializeOwned>(&self, token: &str) -> Option<(bool, T)> {
        let mut parts = token.split('.');
        let (header, payload, signature) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        let header_json = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(header).ok()?;
        // A JOSE header is a JSON object (RFC 7515 §4); a derived struct
        // would also read an array, member by position.
        if header_json.trim_ascii_start().first() != Some(&b'{') {
            return None;
        }
        let presented: JoseHeader<'_> = serde_json::from_slice(&header_json).ok()?;
        if presented.crit.is_some() {
            return None;
        }
        let key = match presented.kid.as_deref() {
            None => self.verifying.first()?,
            Some(kid) => self.verifying.iter().find(|k| k.kid == kid)?,
        };
        if presented.alg != key.algorithm.as_str() {
            return None;
        }
        let message = &token[..header.len() + 1 + payload.len()];
        let verified = match &key.fast {
            Some(fast) => {
                let signature = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(signature).ok()?;
                fast.verify(message.as_bytes(), &signature)
            }
            None => jsonwebtoken::crypto::verify(
                signature,
                message.as_bytes(),
                &key.decoding,
                key.algorithm.as_jsonwebtoken(),
            )
            .ok()?,
        };
        if !verified {
            return None;
        }
        let json = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).ok()?;
        let typed_as_access_token = presented.typ.as_deref().is_some_and(is_access_token_jwt_type);
        Some((typed_as_access_token, serde_json::from_slice(&json).ok()?))
    }

    /// Like [`decode_typed`](Self::decode_typed), and also requires a
    /// first-party token (see [`Claims::is_first_party`]): a token issued to
    /// a client application is refused as `WrongType`, whatever its type.
    pub fn decode_first_party(&self, token: &str, expected: TokenType, now: i64) -> Result<Claims, TokenError> {
        let claims = self.decode_typed(token, expected, now)?;
        if !claims.is_first_party() {
            return Err(TokenError::WrongType);
        }
        Ok(claims)
    }

    /// Like [`decode`](Self::decode), and also requires a token issued to a
    /// client application of `expected` kind (`oauth_access` or
    /// `oauth_refresh`, or the first-party type of the same kind with a
    /// client audience: the form issued before the client types), whose
    /// `aud` and `client_id` name one client ([`Claims::client_audience`]).
    /// A first-party token, a session and another kind are `WrongType`.
    pub fn decode_client(&self, token: &str, expected: TokenType, now: i64) -> Result<Claims, TokenError> {
        let claims = self.decode(token, now)?;
        claims.require_client_kind(expected)?;
        Ok(claims)
    }

    /// Like [`decode`](Self::decode), and also requires `expected` type.
    /// It does not check the lane: use
    /// [`decode_first_party`](Self::decode_first_party) where a first-party
    /// token is expected, or [`decode_client`](Self::decode_client) for a
    /// client's.
    pub fn decode_typed(&self, token: &str, expected: TokenType, now: i64) -> Result<Claims, TokenError> {
        let claims = self.decode(token, now)?;
        if claims.token_type != expected {
            return Err(TokenError::WrongType);
        }
        Ok(claims)
    }
}
