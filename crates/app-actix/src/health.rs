//! Liveness: `/healthz` answers as soon as the server serves.

use actix_web::HttpResponse;

/// `GET /healthz` → `{"status": "ok"}`.
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({ "status": "ok" }))
}

/// `POST /_noop/` → `{}` after reading the JSON body: the baseline the
/// benchmark compares `verify` against. Mounted only when configured.
pub async fn noop(_body: crate::body::JsonBody) -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({}))
}
