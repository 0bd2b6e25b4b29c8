//! Liveness and readiness: `/healthz` answers as soon as the server serves;
//! `/readyz` answers whether the service can do its work (its database
//! answers and holds every migration this build needs).

use actix_web::{web, HttpResponse};
use credencial_ports::{NotReady, ReadinessProbe};

/// The `detail` of a 503 at `/readyz` when the database does not answer.
pub const DETAIL_UNREACHABLE: &str = "database unreachable";
/// The `detail` of a 503 at `/readyz` when migrations are pending.
pub const DETAIL_SCHEMA_BEHIND: &str = "schema behind: run credencial migrate";

/// `GET /healthz` → `{"status": "ok"}`.
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({ "status": "ok" }))
}

/// `GET /readyz` → 200 `{"status": "ready"}` when the probe answers, else
/// 503 `{"status": "unavailable", "detail": …}`: [`DETAIL_UNREACHABLE`] or
/// [`DETAIL_SCHEMA_BEHIND`] (the reason goes to the log only).
pub async fn readyz(probe: web::Data<dyn ReadinessProbe>) -> HttpResponse {
    let detail = match probe.check().await {
        Ok(()) => return HttpResponse::Ok().json(serde_json::json!({ "status": "ready" })),
        Err(e @ NotReady::Unreachable(_)) => {
            tracing::warn!(error = %e, "not ready: database unreachable");
            DETAIL_UNREACHABLE
        }
        Err(e @ NotReady::SchemaBehind(_)) => {
            tracing::warn!(error = %e, "not ready: pending migrations; run `credencial migrate`");
            DETAIL_SCHEMA_BEHIND
        }
    };
    HttpResponse::ServiceUnavailable().json(serde_json::json!({ "status": "unavailable", "detail": detail }))
}

/// `POST /_noop/` → `{}` after reading the JSON body: the baseline the
/// benchmark compares `verify` against. Mounted only when configured.
pub async fn noop(_body: crate::body::JsonBody) -> HttpResponse {
    crate::jwt::ok_empty_object()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use actix_web::{test, App};
    use credencial_ports::{MockReadinessProbe, NotReady, ReadinessProbe};
    use serde_json::{json, Value};

    use super::*;
    use crate::routes::{self, resource};

    /// `request` to an app that serves `/readyz` with `probe`.
    async fn call(probe: MockReadinessProbe, request: test::TestRequest) -> actix_web::dev::ServiceResponse {
        let probe: Arc<dyn ReadinessProbe> = Arc::new(probe);
        let app = test::init_service(
            App::new()
                .app_data(web::Data::from(probe))
                .service(resource("/readyz", "GET").route(routes::get().to(readyz))),
        )
        .await;
        test::call_service(&app, request.to_request()).await
    }

    async fn get_readyz(probe: MockReadinessProbe, path: &str) -> (u16, Value) {
        let response = call(probe, test::TestRequest::get().uri(path)).await;
        let status = response.status().as_u16();
        (status, test::read_body_json(response).await)
    }

    #[actix_web::test]
    async fn readyz_is_200_ready_when_the_probe_answers() {
        let mut probe = MockReadinessProbe::new();
        probe.expect_check().times(1).returning(|| Ok(()));
        assert_eq!(get_readyz(probe, "/readyz").await, (200, json!({"status": "ready"})));
    }

    #[actix_web::test]
    async fn readyz_is_503_unavailable_without_the_reason_when_the_probe_fails() {
        let mut probe = MockReadinessProbe::new();
        probe
            .expect_check()
            .times(1)
            .returning(|| Err(NotReady::Unreachable("connection refused to 10.0.0.7:5432".into())));
        let (status, body) = get_readyz(probe, "/readyz/").await;
        assert_eq!((status, &body), (503, &json!({"status": "unavailable", "detail": "database unreachable"})));
        assert!(!body.to_string().contains("10.0.0.7"), "the reason stays in the log");
    }

    #[actix_web::test]
    async fn readyz_is_503_schema_behind_when_migrations_are_pending() {
        let mut probe = MockReadinessProbe::new();
        probe.expect_check().times(1).returning(|| Err(NotReady::SchemaBehind("1 of 6 migrations pending".into())));
        let (status, body) = get_readyz(probe, "/readyz").await;
        assert_eq!(
            (status, &body),
            (503, &json!({"status": "unavailable", "detail": "schema behind: run credencial migrate"}))
        );
    }

    #[actix_web::test]
    async fn readyz_refuses_other_methods_without_probing() {
        // No expectation: a call to the probe would panic.
        let response = call(MockReadinessProbe::new(), test::TestRequest::post().uri("/readyz")).await;
        assert_eq!(response.status().as_u16(), 405);
        assert_eq!(response.headers().get("allow").and_then(|v| v.to_str().ok()), Some("GET, HEAD"));
    }
}
