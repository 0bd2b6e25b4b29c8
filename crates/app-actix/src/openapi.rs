//! `GET /api/openapi.json`: the OpenAPI 3.1 description of every JSON route
//! (`docs/openapi.yaml`, converted to JSON by the build script).

use actix_web::HttpResponse;

/// Path of the description.
pub const PATH: &str = "/api/openapi.json";

/// The description as JSON, made from `docs/openapi.yaml` at build time.
pub static DOCUMENT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/openapi.json"));

/// `GET /api/openapi.json` → the description, as static bytes.
pub async fn document() -> HttpResponse {
    HttpResponse::Ok().content_type("application/json").body(DOCUMENT)
}
