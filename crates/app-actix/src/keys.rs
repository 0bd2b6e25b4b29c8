//! `GET /.well-known/jwks.json`: the published key set (RFC 7517) — the
//! public keys that verify the service's tokens (RS256/ES256 only; an
//! HS256 secret is never published) and the provider's ID tokens, each
//! current key first, then the previous ones, once each by `kid`.

use actix_web::http::header::{CacheControl, CacheDirective};
use actix_web::{web, HttpResponse, Resource};
use credencial_application::TokenIssuer;
use credencial_domain::jwt::{Jwk, JwkSet};

use crate::routes::{self, resource};

/// Where the key set is served.
pub const PATH: &str = "/.well-known/jwks.json";

/// How long a client may keep the key set before fetching it again, in
/// seconds. A client that meets an unknown `kid` fetches it at once; a new
/// key is published before it signs anything only if the operator lists it
/// as a previous key first (docs/configuration.md, "Rotating keys").
pub const MAX_AGE_SECS: u32 = 300;

/// The key set `issuer` verifies with, as published.
pub fn key_set(issuer: &TokenIssuer) -> JwkSet {
    let mut keys: Vec<Jwk> = Vec::new();
    let codecs = std::iter::once(issuer.codec()).chain(issuer.id_token_codec());
    for jwk in codecs.flat_map(|codec| codec.public_jwks()) {
        if !keys.iter().any(|k| k.common.key_id == jwk.common.key_id) {
            keys.push(jwk.clone());
        }
    }
    JwkSet { keys }
}

/// The resource serving `set` (computed once at start: keys change only
/// with the settings).
pub fn resource_for(set: &JwkSet) -> Resource {
    let body = web::Bytes::from(serde_json::to_vec(set).unwrap_or_else(|_| b"{\"keys\":[]}".to_vec()));
    resource(PATH, "GET").route(routes::get().to(move || {
        let body = body.clone();
        async move {
            HttpResponse::Ok()
                .content_type("application/json")
                .insert_header(CacheControl(vec![CacheDirective::Public, CacheDirective::MaxAge(MAX_AGE_SECS)]))
                .body(body)
        }
    }))
}
