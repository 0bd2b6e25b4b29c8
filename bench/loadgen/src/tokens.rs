//! The credentials the load needs: seeded users, a pool of refresh tokens
//! (each replaced by its rotated successor), recent access tokens, and an
//! OAuth2 access token minted like the service mints them (RS256 with the
//! provider's key, `typ: at+jwt`, `token_type: oauth_access`).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use serde::Serialize;
use tokio::sync::Semaphore;

/// Every scope of the contract: the minted profile token holds them all.
pub const ALL_SCOPES: &str =
    "dados_publicos cpf email receita_federal cnes experiencia_profissional formacao_academica cursos_cdp";

/// A user the pair requests log in as.
#[derive(Debug, Clone)]
pub struct User {
    /// Login name.
    pub username: String,
    /// The right password.
    pub password: String,
}

/// Reads `username password` lines (blank lines and `#` comments skipped).
pub fn parse_users(text: &str) -> anyhow::Result<Vec<User>> {
    let mut users = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (username, password) = line
            .split_once(char::is_whitespace)
            .with_context(|| format!("line {}: expected \"username password\"", n + 1))?;
        users.push(User { username: username.to_owned(), password: password.trim().to_owned() });
    }
    anyhow::ensure!(!users.is_empty(), "no users");
    Ok(users)
}

/// Refresh tokens, each used by one request at a time: a request takes one
/// out and puts the rotated successor back (the old one is refused from then
/// on, so each slot must always hold the newest).
#[derive(Debug)]
pub struct RefreshPool {
    tokens: Mutex<VecDeque<String>>,
    available: Semaphore,
}

impl Default for RefreshPool {
    fn default() -> Self {
        RefreshPool { tokens: Mutex::new(VecDeque::new()), available: Semaphore::new(0) }
    }
}

impl RefreshPool {
    /// Adds a token (a new one, or the successor of one taken out).
    pub fn put(&self, token: String) {
        self.tokens.lock().unwrap_or_else(PoisonError::into_inner).push_back(token);
        self.available.add_permits(1);
    }

    /// Takes the oldest token out, waiting at most `wait` for one to come free.
    pub async fn take(&self, wait: Duration) -> Option<String> {
        let permit = tokio::time::timeout(wait, self.available.acquire()).await.ok()?.ok()?;
        permit.forget();
        self.tokens.lock().unwrap_or_else(PoisonError::into_inner).pop_front()
    }

    /// Tokens in the pool now.
    pub fn len(&self) -> usize {
        self.tokens.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

/// The most recent access tokens (from pair and refresh answers), which the
/// verify requests take in turn; kept fresh so that none expires mid-run.
#[derive(Debug)]
pub struct AccessTokens {
    recent: Mutex<VecDeque<Arc<str>>>,
    capacity: usize,
    next: AtomicUsize,
}

impl AccessTokens {
    /// An empty ring of `capacity` tokens.
    pub fn new(capacity: usize) -> Self {
        AccessTokens { recent: Mutex::new(VecDeque::new()), capacity: capacity.max(1), next: AtomicUsize::new(0) }
    }

    /// Adds a fresh token, dropping the oldest when full.
    pub fn push(&self, token: &str) {
        let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        if recent.len() == self.capacity {
            recent.pop_front();
        }
        recent.push_back(Arc::from(token));
    }

    /// The next token in turn.
    pub fn pick(&self) -> Option<Arc<str>> {
        let recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        if recent.is_empty() {
            return None;
        }
        let i = self.next.fetch_add(1, Ordering::Relaxed) % recent.len();
        recent.get(i).cloned()
    }
}

#[derive(Serialize)]
struct OAuthClaims<'a> {
    /// `oauth_access`: the service's type for a client's access token,
    /// which simplejwt refuses (docs/resource-servers.md).
    token_type: &'a str,
    exp: i64,
    iat: i64,
    jti: String,
    user_id: i64,
    client_id: &'a str,
    /// The audience: the client, as the service marks a client's tokens.
    aud: &'a str,
    scope: &'a str,
}

/// The JWT header `typ` of the service's OAuth2 access tokens (RFC 9068 §2.1).
const ACCESS_TOKEN_JWT_TYPE: &str = "at+jwt";

/// An OAuth2 access token of `client_id` for `user_id` with every scope,
/// living `lifetime`, as the service issues them when OpenID Connect has a
/// key pair: RS256 with `private_pem` (the server's `oidc_signing_key_file`,
/// PKCS#8 or PKCS#1 PEM), header `typ: at+jwt` and `kid` (the key's RFC 7638
/// SHA-256 thumbprint), `token_type: oauth_access`.
pub fn mint_oauth_access_token(
    private_pem: &[u8],
    user_id: i64,
    client_id: &str,
    lifetime: Duration,
) -> anyhow::Result<String> {
    use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
    use jsonwebtoken::{Algorithm, EncodingKey, Header};

    let key = EncodingKey::from_rsa_pem(private_pem).context("not an RSA private key in PEM")?;
    let kid = Jwk::from_encoding_key(&key, Algorithm::RS256)?.thumbprint(ThumbprintHash::SHA256);
    let now = i64::try_from(SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs())?;
    let claims = OAuthClaims {
        token_type: "oauth_access",
        iat: now,
        exp: now + i64::try_from(lifetime.as_secs())?,
        jti: uuid::Uuid::new_v4().simple().to_string(),
        user_id,
        client_id,
        aud: client_id,
        scope: ALL_SCOPES,
    };
    let header =
        Header { typ: Some(ACCESS_TOKEN_JWT_TYPE.to_owned()), kid: Some(kid), ..Header::new(Algorithm::RS256) };
    Ok(jsonwebtoken::encode(&header, &claims, &key)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_are_read_one_per_line() {
        let users = parse_users("# seeded by soak.sh\nsoak-00 pw one\n\n  soak-01\tsecret-1  \n").expect("users");
        let pairs: Vec<(&str, &str)> = users.iter().map(|u| (u.username.as_str(), u.password.as_str())).collect();
        assert_eq!(pairs, [("soak-00", "pw one"), ("soak-01", "secret-1")]);
        assert!(parse_users("lonely\n").is_err());
        assert!(parse_users("# nobody\n").is_err());
    }

    #[tokio::test]
    async fn a_refresh_token_is_lent_to_one_request_at_a_time() {
        let pool = RefreshPool::default();
        pool.put("r1".into());
        pool.put("r2".into());
        let wait = Duration::from_millis(20);
        assert_eq!(pool.take(wait).await.as_deref(), Some("r1"));
        assert_eq!(pool.take(wait).await.as_deref(), Some("r2"));
        assert_eq!(pool.take(wait).await, None, "both are out");
        pool.put("r1-rotated".into());
        assert_eq!(pool.take(wait).await.as_deref(), Some("r1-rotated"));
        assert_eq!(pool.len(), 0);
    }

    #[test]
    fn access_tokens_are_taken_in_turn_and_the_oldest_drops_out() {
        let ring = AccessTokens::new(2);
        assert_eq!(ring.pick(), None);
        for token in ["a", "b", "c"] {
            ring.push(token);
        }
        let picks: Vec<String> = (0..4).filter_map(|_| ring.pick()).map(|t| t.to_string()).collect();
        assert_eq!(picks, ["b", "c", "b", "c"]);
    }

    /// Read back by the service's own codec with the provider's key, as
    /// the profile endpoint reads a client's token: the signature, the
    /// `kid`, the `typ: at+jwt` that `oauth_access` requires, the client
    /// lane; and the claims the profile read uses.
    #[test]
    fn the_minted_token_has_the_shape_of_the_services_oauth_access_tokens() {
        use credencial_domain::jwt::{generate_pem_pair, JwtKeys, TokenCodec};
        use credencial_domain::{JwtAlgorithm, TokenType};

        let (private, _) = generate_pem_pair(JwtAlgorithm::RS256).expect("key pair");
        let pem = private.expose().as_bytes();
        let token = mint_oauth_access_token(pem, 7, "demo-host", Duration::from_secs(600)).expect("token");

        let provider =
            TokenCodec::new(JwtKeys::from_private_pem(JwtAlgorithm::RS256, pem).expect("keys"), 0).expect("codec");
        let header = jsonwebtoken::decode_header(&token).expect("header");
        assert_eq!(header.alg, jsonwebtoken::Algorithm::RS256);
        assert_eq!(header.typ.as_deref(), Some("at+jwt"));
        assert_eq!(header.kid.as_deref(), Some(provider.kid()), "the key id the service gives its key");

        let now = i64::try_from(SystemTime::now().duration_since(UNIX_EPOCH).expect("clock").as_secs()).expect("now");
        let claims = provider.decode_client(&token, TokenType::ClientAccess, now).expect("a client access token");
        assert_eq!(claims.token_type, TokenType::ClientAccess, "oauth_access, not simplejwt's access");
        assert!(!claims.is_legacy_client_token());
        assert_eq!(claims.user_id, Some(7));
        assert_eq!(claims.client_audience(), Some("demo-host"));
        assert_eq!(claims.scope.as_deref().map(|s| s.split(' ').count()), Some(8));
        assert_eq!(claims.exp - claims.iat, 600);

        // Another key's codec refuses it: the signature is checked.
        let (other, _) = generate_pem_pair(JwtAlgorithm::RS256).expect("key pair");
        let stranger = TokenCodec::new(
            JwtKeys::from_private_pem(JwtAlgorithm::RS256, other.expose().as_bytes()).expect("keys"),
            0,
        )
        .expect("codec");
        assert!(stranger.decode(&token, now).is_err());
        // An HS256 secret is not a key to mint with.
        assert!(mint_oauth_access_token(b"0123456789abcdef0123456789abcdef", 7, "demo-host", Duration::from_secs(600))
            .is_err());
    }
}
