//! The signing keys the settings describe: the codec of the service's own
//! tokens (HS256 secret or RS256/ES256 pair, plus previous public keys)
//! and the provider's ID-token codec (always asymmetric).

use std::path::Path;
use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use credencial_domain::jwt::PublicKey;
use credencial_domain::second_factor::SealingKey;
use credencial_domain::{JwtAlgorithm, JwtKeys, TokenCodec};
use rand::RngCore;
use secrecy::ExposeSecret;

use crate::settings::{Settings, SettingsError};
use crate::startup::Mode;

/// The token codec the settings describe (the demo may sign with a random
/// secret); the key pair signs and verifies a probe token. It also
/// verifies tokens of the previous public keys listed.
pub(crate) fn codec(settings: &Settings, mode: Mode) -> Result<TokenCodec, SettingsError> {
    let algorithm = settings.tokens.jwt_algorithm;
    let keys = match algorithm {
        JwtAlgorithm::HS256 => match (&settings.tokens.jwt_secret, mode) {
            (Some(secret), _) => {
                JwtKeys::hmac(secret.expose_secret().as_bytes()).map_err(|e| SettingsError::about("jwt_secret", e))?
            }
            (None, Mode::Demo) => {
                tracing::warn!("demo mode: no SERVICE_JWT_SECRET set, signing with a random secret for this run");
                let mut secret = [0u8; 32];
                rand::thread_rng().fill_bytes(&mut secret);
                JwtKeys::hmac(&secret).map_err(|e| SettingsError::about("jwt_secret", e))?
            }
            (None, Mode::Serve) => {
                return Err(SettingsError::about(
                    "jwt_secret",
                    "is not set; HS256 needs a secret of at least 32 bytes (e.g. `openssl rand -hex 32`)",
                ))
            }
        },
        JwtAlgorithm::RS256 | JwtAlgorithm::ES256 => {
            let private = read_key(settings.tokens.jwt_private_key_file.as_deref(), "jwt_private_key_file", algorithm)?;
            let public = read_key(settings.tokens.jwt_public_key_file.as_deref(), "jwt_public_key_file", algorithm)?;
            JwtKeys::asymmetric(algorithm, &private, &public)
                .map_err(|e| SettingsError::about("jwt_private_key_file", e))?
        }
    };
    let previous = previous_keys(&settings.tokens.jwt_previous_public_key_files, "jwt_previous_public_key_files")?;
    TokenCodec::new(keys, settings.tokens.jwt_leeway_secs)
        .map_err(|e| SettingsError::about("jwt_public_key_file", e))?
        .with_previous_keys(previous)
        .map_err(|e| SettingsError::about("jwt_previous_public_key_files", e))
}

fn read_key(path: Option<&Path>, key: &str, algorithm: JwtAlgorithm) -> Result<Vec<u8>, SettingsError> {
    let path =
        path.ok_or_else(|| SettingsError::about(key, format!("is not set; {algorithm} needs a PEM key file")))?;
    std::fs::read(path).map_err(|e| SettingsError::about(key, format!("cannot read {}: {e}", path.display())))
}

/// The codec that signs OpenID Connect ID tokens, always with a key pair:
/// the `oidc_signing_key_file` (of `oidc_signing_algorithm`, RS256 by
/// default) with `oidc_previous_public_key_files`; without one, the demo
/// makes a key pair for this run, and `serve` signs with the service's own
/// RS256/ES256 key (`jwt` codec) when it has one. `None` — OpenID Connect
/// off — for `serve` with an HS256 secret and no provider key.
pub(crate) fn id_token_codec(
    settings: &Settings,
    mode: Mode,
    jwt: &Arc<TokenCodec>,
) -> Result<Option<Arc<TokenCodec>>, SettingsError> {
    const KEY: &str = "oidc_signing_key_file";
    let algorithm = settings.tokens.oidc_signing_algorithm;
    if !algorithm.is_asymmetric() {
        return Err(SettingsError::about(
            "oidc_signing_algorithm",
            "must be RS256 or ES256: ID tokens are verified with a published public key",
        ));
    }
    let keys = match (&settings.tokens.oidc_signing_key_file, mode) {
        (Some(path), _) => {
            let pem = read_key(Some(path), KEY, algorithm)?;
            JwtKeys::from_private_pem(algorithm, &pem).map_err(|e| SettingsError::about(KEY, e))?
        }
        (None, Mode::Demo) => {
            let (private, _) =
                credencial_domain::jwt::generate_pem_pair(algorithm).map_err(|e| SettingsError::about(KEY, e))?;
            tracing::info!(%algorithm, "demo mode: no oidc_signing_key_file set, signing ID tokens with a key made for this run");
            JwtKeys::from_private_pem(algorithm, private.as_bytes()).map_err(|e| SettingsError::about(KEY, e))?
        }
        (None, Mode::Serve) if jwt.algorithm().is_asymmetric() => return Ok(Some(Arc::clone(jwt))),
        (None, Mode::Serve) => {
            tracing::warn!(
                "no oidc_signing_key_file: OpenID Connect is off, and the shared HS256 secret also signs the tokens \
                 issued to applications and the login sessions, so every holder of the secret can mint them; \
                 make a key pair with `credencial keys generate` (docs/resource-servers.md)"
            );
            return Ok(None);
        }
    };
    let previous = previous_keys(&settings.tokens.oidc_previous_public_key_files, "oidc_previous_public_key_files")?;
    let codec = TokenCodec::new(keys, settings.tokens.jwt_leeway_secs)
        .map_err(|e| SettingsError::about(KEY, e))?
        .with_previous_keys(previous)
        .map_err(|e| SettingsError::about("oidc_previous_public_key_files", e))?;
    Ok(Some(Arc::new(codec)))
}

/// The key that seals TOTP secrets: `second_factor_key_file` (32 bytes in
/// base64); without it, the demo's `second_factor.key` in the working
/// directory (made on the first run, mode 0600, read on the next ones);
/// `serve` without it has no second factors (`None`).
pub(crate) fn second_factor_key(settings: &Settings, mode: Mode) -> Result<Option<SealingKey>, SettingsError> {
    const KEY: &str = "second_factor_key_file";
    let path = match (&settings.login.second_factor_key_file, mode) {
        (Some(path), _) => path.clone(),
        (None, Mode::Demo) => {
            let path = std::path::PathBuf::from("second_factor.key");
            if !path.exists() {
                let mut bytes = [0u8; 32];
                rand::thread_rng().fill_bytes(&mut bytes);
                write_private(&path, format!("{}\n", STANDARD.encode(bytes)).as_bytes())
                    .map_err(|e| SettingsError::about(KEY, format!("cannot write {}: {e}", path.display())))?;
                tracing::info!("demo mode: made second_factor.key, the key that seals TOTP secrets");
            }
            path
        }
        (None, Mode::Serve) => {
            tracing::info!("no second_factor_key_file: second factors (TOTP, recovery codes) are not offered");
            return Ok(None);
        }
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| SettingsError::about(KEY, format!("cannot read {}: {e}", path.display())))?;
    let bytes =
        STANDARD.decode(text.trim()).ok().and_then(|b| <[u8; 32]>::try_from(b).ok()).ok_or_else(|| {
            SettingsError::about(KEY, "must hold 32 bytes in base64 (head -c 32 /dev/urandom | base64)")
        })?;
    Ok(Some(SealingKey::new(bytes)))
}

/// Writes `contents` to a new file at `path` readable by its owner only.
fn write_private(path: &std::path::Path, contents: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    #[cfg(unix)]
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    options.mode(0o600);
    options.open(path)?.write_all(contents)
}

/// The public keys in the PEM files `paths` (the setting `key`).
fn previous_keys(paths: &[String], key: &str) -> Result<Vec<PublicKey>, SettingsError> {
    paths
        .iter()
        .map(|path| {
            let pem = std::fs::read(path).map_err(|e| SettingsError::about(key, format!("cannot read {path}: {e}")))?;
            PublicKey::from_pem(&pem).map_err(|e| SettingsError::about(key, format!("{path}: {e}")))
        })
        .collect()
}
