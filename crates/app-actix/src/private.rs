//! Answers that carry a token or personal data: never stored by a browser
//! or an intermediary cache (RFC 6749 §5.1 asks it of every token answer;
//! LGPD asks it of personal data).

use actix_web::http::header::{self, HeaderValue};
use actix_web::HttpResponse;
use serde::Serialize;

/// A `200` JSON answer with `Cache-Control: no-store` and `Pragma: no-cache`,
/// for tokens (`pair`, `refresh`, `/oauth/token/`) and personal data (the
/// consume routes, the profile endpoint).
pub fn private_json(body: impl Serialize) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .insert_header((header::PRAGMA, HeaderValue::from_static("no-cache")))
        .json(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_answer_is_json_that_no_cache_keeps() {
        let r = private_json(serde_json::json!({"access": "t"}));
        assert_eq!(r.status(), 200);
        let value = |name| r.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
        assert_eq!(value(header::CACHE_CONTROL).as_deref(), Some("no-store"));
        assert_eq!(value(header::PRAGMA).as_deref(), Some("no-cache"));
    }
}
