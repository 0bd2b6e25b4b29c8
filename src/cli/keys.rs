//! `credencial keys generate`: a new RS256 or ES256 key pair in PEM files,
//! for `jwt_private_key_file`/`jwt_public_key_file` or
//! `oidc_signing_key_file`. It reads no settings and touches no database.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::Subcommand;
use credencial_domain::jwt::{generate_pem_pair, PublicKey};
use credencial_domain::JwtAlgorithm;

/// `credencial keys …`
#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Writes a new key pair: `<name>-private.pem` (PKCS#8, mode 0600) and
    /// `<name>-public.pem`, and prints their key id. Existing files are
    /// never overwritten.
    Generate {
        /// RS256 (RSA 2048) or ES256 (P-256).
        #[arg(long, default_value = "RS256")]
        alg: String,
        /// The folder to write to.
        #[arg(long, default_value = ".")]
        out: PathBuf,
        /// The files' name prefix (default: `credencial-<alg>-<first 8
        /// characters of the key id>`).
        #[arg(long)]
        name: Option<String>,
    },
}

/// Runs a `keys` command.
pub fn run(command: KeysCommand) -> anyhow::Result<()> {
    let KeysCommand::Generate { alg, out, name } = command;
    let algorithm: JwtAlgorithm = alg.parse()?;
    if !algorithm.is_asymmetric() {
        anyhow::bail!("--alg must be RS256 or ES256 (HS256 takes a secret: e.g. `openssl rand -hex 32`)");
    }
    let (private, public) = generate_pem_pair(algorithm)?;
    let kid = PublicKey::from_pem(public.as_bytes())?.kid().to_owned();
    let name = name.unwrap_or_else(|| {
        let short: String = kid.chars().take(8).collect();
        format!("credencial-{}-{short}", algorithm.to_string().to_ascii_lowercase())
    });
    let private_path = out.join(format!("{name}-private.pem"));
    let public_path = out.join(format!("{name}-public.pem"));
    write_new(&private_path, private.as_bytes(), 0o600)?;
    write_new(&public_path, public.as_bytes(), 0o644)?;
    println!("{algorithm} key pair written (kid {kid}):");
    println!("  private: {}", private_path.display());
    println!("  public:  {}", public_path.display());
    println!(
        "Sign ID tokens with it: SERVICE_OIDC_SIGNING_ALGORITHM={algorithm} SERVICE_OIDC_SIGNING_KEY_FILE={}",
        private_path.display()
    );
    println!("or the service's tokens: SERVICE_JWT_ALGORITHM={algorithm} SERVICE_JWT_PRIVATE_KEY_FILE={} SERVICE_JWT_PUBLIC_KEY_FILE={}", private_path.display(), public_path.display());
    Ok(())
}

/// Writes `bytes` to a new file at `path` with `mode` (on Unix); an
/// existing file is an error, never overwritten.
fn write_new(path: &Path, bytes: &[u8], mode: u32) -> anyhow::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode);
    #[cfg(not(unix))]
    let _ = mode;
    let mut file = options.open(path).with_context(|| format!("cannot create {}", path.display()))?;
    file.write_all(bytes).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}
