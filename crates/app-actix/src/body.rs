//! Reading JSON request bodies at the edge: a size cap, a content-type
//! check, an object at the top, and DRF-style messages per field, among
//! them DRF's refusal of a text field that holds a NUL
//! ([`credencial_domain::text`]).

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{FromRequest, HttpRequest};
use credencial_domain::text::holds_nul;
use futures_util::future::LocalBoxFuture;
use futures_util::StreamExt;
use serde_json::{json, Map, Value};

use crate::error::ApiError;

/// Largest accepted request body (64 KiB).
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// DRF's message for a missing field.
pub const REQUIRED: &str = "This field is required.";

/// DRF's message for a NUL in a text field (`ProhibitNullCharactersValidator`).
pub const NULL_CHARACTER: &str = "Null characters are not allowed.";

/// A request body that must be a JSON object.
#[derive(Default)]
pub struct JsonBody(pub Map<String, Value>);

/// Shows the field names only: bodies carry passwords and tokens.
impl std::fmt::Debug for JsonBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("JsonBody").field(&self.0.keys().collect::<Vec<_>>()).finish()
    }
}

/// A request body that may be empty (read as `{}`) or a JSON object.
#[derive(Debug, Default)]
pub struct OptionalJsonBody(pub JsonBody);

/// A request body that may be empty, a JSON object, or form-encoded
/// (`application/x-www-form-urlencoded`, values read as strings).
#[derive(Debug, Default)]
pub struct FormOrJsonBody(pub JsonBody);

impl FromRequest for JsonBody {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        read(req, payload, Accept::Json)
    }
}

impl FromRequest for OptionalJsonBody {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let fut = read(req, payload, Accept::JsonOrNothing);
        Box::pin(async move { fut.await.map(OptionalJsonBody) })
    }
}

impl FromRequest for FormOrJsonBody {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let fut = read(req, payload, Accept::JsonFormOrNothing);
        Box::pin(async move { fut.await.map(FormOrJsonBody) })
    }
}

/// What a route accepts as its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Accept {
    Json,
    JsonOrNothing,
    JsonFormOrNothing,
}

fn read(
    req: &HttpRequest,
    payload: &mut Payload,
    accept: Accept,
) -> LocalBoxFuture<'static, Result<JsonBody, ApiError>> {
    let declared_len =
        req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    let content_type = req.headers().get(header::CONTENT_TYPE).map(|v| v.to_str().unwrap_or("<non-ASCII>").to_owned());
    let mut payload = payload.take();
    Box::pin(async move {
        if declared_len.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
            return Err(ApiError::payload_too_large(MAX_BODY_BYTES));
        }
        let mut bytes = Vec::with_capacity(declared_len.unwrap_or(0) as usize);
        while let Some(chunk) = payload.next().await {
            let chunk = chunk.map_err(|e| ApiError::parse_error(&e.to_string()))?;
            if bytes.len() + chunk.len() > MAX_BODY_BYTES {
                return Err(ApiError::payload_too_large(MAX_BODY_BYTES));
            }
            bytes.extend_from_slice(&chunk);
        }
        if accept != Accept::Json && bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(JsonBody::default());
        }
        if let Some(ct) = content_type.as_deref() {
            if accept == Accept::JsonFormOrNothing && is_form(ct) {
                return serde_urlencoded::from_bytes::<Vec<(String, String)>>(&bytes)
                    .map(|pairs| JsonBody(pairs.into_iter().map(|(k, v)| (k, Value::String(v))).collect()))
                    .map_err(|e| ApiError::parse_error(&e.to_string()));
            }
            if !is_json(ct) {
                return Err(ApiError::unsupported_media_type(ct));
            }
        }
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(map)) => Ok(JsonBody(map)),
            Ok(other) => Err(ApiError::fields(non_field_error(&format!(
                "Invalid data. Expected a dictionary, but got {}.",
                kind(&other)
            )))),
            Err(e) => Err(ApiError::parse_error(&e.to_string())),
        }
    })
}

/// DRF's message for `text` when it holds a NUL; `None` for text that may
/// be used.
pub fn null_character_message(text: &str) -> Option<&'static str> {
    holds_nul(text).then_some(NULL_CHARACTER)
}

fn is_json(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
}

fn is_form(content_type: &str) -> bool {
    content_type.split(';').next().is_some_and(|e| e.trim().eq_ignore_ascii_case("application/x-www-form-urlencoded"))
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

fn non_field_error(message: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("non_field_errors".into(), json!([message]));
    m
}

/// How a string field is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trim {
    /// Leading and trailing whitespace removed (DRF's default).
    Yes,
    /// Taken as sent (passwords).
    No,
}

impl JsonBody {
    /// Reads the required string fields `names`, collecting every field's
    /// error into one 400 response, as DRF does.
    pub fn required<const N: usize>(&self, names: [(&str, Trim); N]) -> Result<[String; N], ApiError> {
        let mut errors = Map::new();
        let values = names.map(|(name, trim)| match self.string(name, trim) {
            Ok(Some(v)) if !v.is_empty() => v,
            Ok(Some(_)) => {
                errors.insert(name.to_owned(), json!(["This field may not be blank."]));
                String::new()
            }
            Ok(None) => {
                errors.insert(name.to_owned(), json!([REQUIRED]));
                String::new()
            }
            Err(message) => {
                errors.insert(name.to_owned(), json!([message]));
                String::new()
            }
        });
        if errors.is_empty() {
            Ok(values)
        } else {
            Err(ApiError::fields(errors))
        }
    }

    /// Reads an optional string field: absent or `null` give `None`; text
    /// with a NUL, a 400 on the field.
    pub fn optional(&self, name: &str) -> Result<Option<String>, ApiError> {
        self.string(name, Trim::Yes).map_err(|message| ApiError::field(name, message))
    }

    fn string(&self, name: &str, trim: Trim) -> Result<Option<String>, &'static str> {
        let text = match self.0.get(name) {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::String(s)) => s.clone(),
            // DRF's CharField takes numbers and renders them as text.
            Some(Value::Number(n)) => n.to_string(),
            Some(_) => return Err("Not a valid string."),
        };
        if let Some(message) = null_character_message(&text) {
            return Err(message);
        }
        Ok(Some(match trim {
            Trim::Yes => text.trim().to_owned(),
            Trim::No => text,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(v: Value) -> JsonBody {
        match v {
            Value::Object(m) => JsonBody(m),
            _ => JsonBody::default(),
        }
    }

    #[test]
    fn every_missing_field_is_reported_at_once() {
        let err = body(json!({})).required([("username", Trim::Yes), ("password", Trim::No)]);
        let err = err.expect_err("missing fields");
        assert_eq!(err.body(), &json!({"username": [REQUIRED], "password": [REQUIRED]}));
    }

    #[test]
    fn blank_null_and_wrong_types_have_their_own_messages() {
        let b = body(json!({"a": "  ", "b": null, "c": true, "d": 12}));
        let err = b.required([("a", Trim::Yes), ("b", Trim::Yes), ("c", Trim::Yes)]).expect_err("invalid");
        assert_eq!(
            err.body(),
            &json!({"a": ["This field may not be blank."], "b": [REQUIRED], "c": ["Not a valid string."]})
        );
        let [d] = b.required([("d", Trim::Yes)]).expect("numbers become text");
        assert_eq!(d, "12");
    }

    #[test]
    fn debug_output_names_fields_but_never_values() {
        let b = body(json!({"username": "ana", "password": "hunter2-secret"}));
        let shown = format!("{b:?}");
        assert!(shown.contains("password") && !shown.contains("hunter2-secret"), "{shown}");
    }

    #[test]
    fn a_field_read_with_a_nul_is_a_400_on_that_field_and_others_are_ignored() {
        let b = body(json!({"username": "a\u{0}b", "password": "\u{0}", "nome": "Ana\tMaria\u{1}\r\n", "x": "\u{0}"}));
        let e = b.required([("username", Trim::Yes), ("password", Trim::No)]).expect_err("refused");
        assert_eq!(e.body(), &json!({"username": [NULL_CHARACTER], "password": [NULL_CHARACTER]}));
        let e = b.optional("x").expect_err("refused");
        assert_eq!((e.status().as_u16(), e.body()), (400, &json!({"x": [NULL_CHARACTER]})));
        let text = b.optional("nome").expect("other control characters are the field's rules' to judge");
        assert_eq!(text.as_deref(), Some("Ana\tMaria\u{1}"));
        // A field no route reads is not looked at, as DRF ignores it.
        let sent = json!({"extra": {"k\u{0}": ["\u{0}"]}, "k\u{1}": "v"});
        let got = read_as(Accept::Json, Some("application/json"), serde_json::to_vec(&sent).expect("JSON"));
        assert_eq!(Value::Object(got.expect("an object").0), sent);
        let form = read_as(Accept::JsonFormOrNothing, Some("application/x-www-form-urlencoded"), b"nome=a%00".to_vec());
        assert_eq!(
            form.expect("a form").optional("nome").expect_err("refused").body(),
            &json!({"nome": [NULL_CHARACTER]})
        );
    }

    #[test]
    fn passwords_keep_their_spaces() {
        let b = body(json!({"u": " ana ", "p": " pw "}));
        let [u, p] = b.required([("u", Trim::Yes), ("p", Trim::No)]).expect("valid");
        assert_eq!((u.as_str(), p.as_str()), ("ana", " pw "));
    }

    #[test]
    fn json_content_types_are_recognised() {
        assert!(is_json("application/json"));
        assert!(is_json("application/json; charset=utf-8"));
        assert!(is_json("application/vnd.api+json"));
        assert!(!is_json("text/plain"));
        assert!(!is_json("application/x-www-form-urlencoded"));
    }

    // ---- properties: client bytes never panic and never give a 5xx ----

    use actix_web::test::TestRequest;
    use proptest::prelude::*;

    /// Reads `bytes` sent with `content_type` as route kind `accept` would.
    fn read_as(accept: Accept, content_type: Option<&str>, bytes: Vec<u8>) -> Result<JsonBody, ApiError> {
        let mut request = TestRequest::post().uri("/");
        if let Some(ct) = content_type {
            request = request.insert_header((header::CONTENT_TYPE, ct));
        }
        let (req, mut payload) = request.set_payload(bytes).to_http_parts();
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
        runtime.block_on(read(&req, &mut payload, accept))
    }

    fn any_accept() -> impl Strategy<Value = Accept> {
        prop::sample::select(vec![Accept::Json, Accept::JsonOrNothing, Accept::JsonFormOrNothing])
    }

    fn any_content_type() -> impl Strategy<Value = Option<String>> {
        prop_oneof![
            Just(None),
            Just(Some("application/json".to_owned())),
            Just(Some("application/json; charset=utf-8".to_owned())),
            Just(Some("application/x-www-form-urlencoded".to_owned())),
            Just(Some("text/plain".to_owned())),
            "[ -~]{0,30}".prop_map(Some),
        ]
    }

    /// Bytes a client might send: random, JSON-looking, form-looking.
    fn any_body() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            prop::collection::vec(any::<u8>(), 0..200),
            "[{}\\[\\]\",:0-9a-z \\\\]{0,60}".prop_map(String::into_bytes),
            "[a-z0-9=&%+]{0,60}".prop_map(String::into_bytes),
            Just(b"null".to_vec()),
            Just(b"[]".to_vec()),
            Just(b"\"text\"".to_vec()),
        ]
    }

    proptest! {
        #[test]
        fn any_bytes_give_an_object_or_a_4xx_json_error(
            accept in any_accept(),
            content_type in any_content_type(),
            bytes in any_body(),
        ) {
            match read_as(accept, content_type.as_deref(), bytes) {
                Ok(_) => {}
                Err(e) => {
                    prop_assert!(matches!(e.status().as_u16(), 400 | 413 | 415), "{e}");
                    let body = e.body().as_object().expect("a JSON object");
                    let drf_detail = body.get("detail").is_some_and(Value::is_string)
                        && body.get("code").is_some_and(Value::is_string);
                    let field_errors = body.values().all(|v| v.as_array().is_some_and(|a| a.len() == 1 && a[0].is_string()));
                    prop_assert!(drf_detail || field_errors, "{e}");
                }
            }
        }

        #[test]
        fn json_objects_round_trip(fields in prop::collection::btree_map("\\PC{0,8}", "\\PC{0,20}", 0..6),
                                   accept in any_accept()) {
            let sent: Map<String, Value> = fields.into_iter().map(|(k, v)| (k, Value::String(v))).collect();
            let bytes = serde_json::to_vec(&sent).expect("JSON");
            let got = read_as(accept, Some("application/json"), bytes).expect("an object");
            prop_assert_eq!(got.0, sent);
        }

        #[test]
        fn form_bodies_round_trip_where_a_form_is_accepted(
            fields in prop::collection::btree_map("\\PC{1,8}", "\\PC{0,20}", 1..6),
        ) {
            let bytes = serde_urlencoded::to_string(&fields).expect("form").into_bytes();
            let got = read_as(Accept::JsonFormOrNothing, Some("application/x-www-form-urlencoded"), bytes.clone());
            let sent: Map<String, Value> = fields.into_iter().map(|(k, v)| (k, Value::String(v))).collect();
            prop_assert_eq!(got.expect("a form").0, sent);
            let refused = read_as(Accept::Json, Some("application/x-www-form-urlencoded"), bytes).expect_err("JSON only");
            prop_assert_eq!(refused.status().as_u16(), 415);
        }

        #[test]
        fn a_required_field_is_its_trimmed_text_or_one_drf_message(value in any_field_value()) {
            let b = body(json!({ "f": value.clone() }));
            match (b.required([("f", Trim::Yes)]), &value) {
                (Ok([text]), Value::String(s)) => prop_assert_eq!(text, s.trim()),
                (Ok([text]), Value::Number(n)) => prop_assert_eq!(text, n.to_string()),
                (Ok(_), other) => prop_assert!(false, "accepted {other}"),
                (Err(e), _) => {
                    prop_assert_eq!(e.status().as_u16(), 400);
                    let message = e.body()["f"][0].as_str().unwrap_or_default().to_owned();
                    let expected = match &value {
                        Value::Null => REQUIRED,
                        Value::String(s) if s.trim().is_empty() => "This field may not be blank.",
                        _ => "Not a valid string.",
                    };
                    prop_assert_eq!(message, expected);
                }
            }
        }
    }

    fn any_field_value() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            "\\PC{0,12}".prop_map(Value::String),
            "[ \\t]{0,4}".prop_map(Value::String),
            Just(json!([])),
            Just(json!({"a": 1})),
        ]
    }

    #[test]
    fn a_body_over_the_limit_is_413_whatever_it_holds() {
        for accept in [Accept::Json, Accept::JsonOrNothing, Accept::JsonFormOrNothing] {
            let e = read_as(accept, Some("application/json"), vec![b'a'; MAX_BODY_BYTES + 1]).expect_err("too large");
            assert_eq!(e.status().as_u16(), 413);
        }
    }
}
