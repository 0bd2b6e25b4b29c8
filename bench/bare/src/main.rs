//! The bare contender of `bench/run.sh`: the least a service can do to
//! answer `POST /api/token/verify/` like credencial — actix-web, the
//! `{"token": …}` body, jsonwebtoken's HS256 check of the same claims
//! (expiry, `token_type` = `access`), `200 {}` — with no middleware, no
//! logging and no database. It tells how close credencial's verify comes to
//! what the framework and the JWT crate cost by themselves.
//!
//! Environment: `BARE_BIND` (default `127.0.0.1:18001`), `BARE_JWT_SECRET`
//! (the HS256 secret, required: the one the credencial under test signs
//! with), `BARE_WORKERS` (default: actix's, one per core, like credencial).

use actix_web::{web, App, HttpResponse, HttpServer};
use jsonwebtoken::{decode, Algorithm, DecodingKey, Validation};
use serde::Deserialize;

/// The request body of verify.
#[derive(Deserialize)]
struct VerifyBody {
    /// The token to check.
    token: String,
}

/// The claims credencial's access tokens carry (the ones a check needs).
#[derive(Deserialize)]
struct Claims {
    /// `access` for an access token.
    token_type: String,
    /// Checked by jsonwebtoken's validation; read so that it is required.
    #[allow(dead_code)]
    exp: i64,
    /// Issue time.
    #[allow(dead_code)]
    iat: i64,
    /// Token id.
    #[allow(dead_code)]
    jti: String,
    /// The user's key.
    #[allow(dead_code)]
    user_id: i64,
}

/// The key and the validation, shared by the workers.
struct Checker {
    key: DecodingKey,
    validation: Validation,
}

/// `POST /api/token/verify/`: `200 {}` for a valid access token, `401` otherwise.
async fn verify(checker: web::Data<Checker>, body: web::Json<VerifyBody>) -> HttpResponse {
    match decode::<Claims>(body.token.trim(), &checker.key, &checker.validation) {
        Ok(data) if data.claims.token_type == "access" => HttpResponse::Ok().json(serde_json::json!({})),
        _ => HttpResponse::Unauthorized().json(serde_json::json!({"code": "token_not_valid"})),
    }
}

/// `GET /healthz`: the bench waits for it before measuring.
async fn healthz() -> HttpResponse {
    HttpResponse::Ok().body("ok")
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let bind = std::env::var("BARE_BIND").unwrap_or_else(|_| "127.0.0.1:18001".to_owned());
    let secret = std::env::var("BARE_JWT_SECRET").map_err(|_| {
        std::io::Error::other("BARE_JWT_SECRET is required (the HS256 secret of the service under test)")
    })?;
    let workers = std::env::var("BARE_WORKERS").ok().and_then(|w| w.parse::<usize>().ok());
    let mut validation = Validation::new(Algorithm::HS256);
    validation.set_required_spec_claims(&["exp"]);
    // credencial's default leeway.
    validation.leeway = 0;
    let checker = web::Data::new(Checker { key: DecodingKey::from_secret(secret.as_bytes()), validation });
    let mut server = HttpServer::new(move || {
        App::new()
            .app_data(checker.clone())
            .route("/api/token/verify/", web::post().to(verify))
            .route("/healthz", web::get().to(healthz))
    })
    .bind(bind)?;
    if let Some(workers) = workers {
        server = server.workers(workers);
    }
    server.run().await
}
