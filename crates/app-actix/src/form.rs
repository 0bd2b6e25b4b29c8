//! Form-encoded parameters (`application/x-www-form-urlencoded` bodies and
//! query strings) as OAuth2 reads them, and as every HTML form of the
//! service is read: every parameter at most once
//! (RFC 6749 §3.1, §3.2), empty values as absent.

use actix_web::http::header;
use actix_web::{web, HttpRequest};
use credencial_domain::oauth::AuthorizationParams;
use credencial_domain::text::holds_nul;
use futures_util::StreamExt;

use crate::body::MAX_BODY_BYTES;

/// The parameters of one request, in the order sent.
#[derive(Default)]
pub struct FormFields(Vec<(String, String)>);

/// Shows the parameter names only: forms carry passwords, secrets and codes.
impl std::fmt::Debug for FormFields {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("FormFields").field(&self.0.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>()).finish()
    }
}

/// Why a request's parameters could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormError {
    /// The body is declared as something other than a form.
    NotAForm,
    /// The body is larger than [`MAX_BODY_BYTES`].
    TooLarge,
    /// The body could not be read or decoded.
    Malformed,
    /// A parameter was sent more than once.
    Repeated(String),
    /// A parameter's name or value holds a NUL, which no text a client
    /// sends may hold ([`credencial_domain::text`]): the name, as sent.
    NullCharacter(String),
}

impl FormError {
    /// The text shown to the user or sent as `error_description`.
    pub fn message(&self) -> String {
        match self {
            FormError::NotAForm => "the body must be application/x-www-form-urlencoded".into(),
            FormError::TooLarge => format!("the body is larger than {MAX_BODY_BYTES} bytes"),
            FormError::Malformed => "the body is not a valid form".into(),
            FormError::Repeated(name) => match quotable(name) {
                Some(name) => format!("parameter {name} was sent more than once"),
                None => "a parameter was sent more than once".into(),
            },
            FormError::NullCharacter(name) => match quotable(name) {
                Some(name) => format!("parameter {name} holds a NUL character"),
                None => "a parameter holds a NUL character".into(),
            },
        }
    }
}

/// `name` when an error text may quote it: printable ASCII but `"` and `\`,
/// the characters of RFC 6749's `error_description` (§5.2), which these
/// texts become at the OAuth2 endpoints.
fn quotable(name: &str) -> Option<&str> {
    name.bytes().all(|b| matches!(b, 0x20..=0x21 | 0x23..=0x5B | 0x5D..=0x7E)).then_some(name)
}

/// The names of the authorization request's parameters.
const AUTHORIZATION_PARAMS: [&str; 15] = [
    "response_type",
    "client_id",
    "redirect_uri",
    "scope",
    "state",
    "code_challenge",
    "code_challenge_method",
    "prompt",
    "nonce",
    "max_age",
    "response_mode",
    "request",
    "request_uri",
    "registration",
    "acr_values",
];

impl FormFields {
    /// Decodes form-encoded `bytes` (a body or a query string). Errors:
    /// `Malformed`; `NullCharacter` when a name or value holds a NUL
    /// (percent-encoded or not).
    pub fn parse(bytes: &[u8]) -> Result<Self, FormError> {
        let pairs = serde_urlencoded::from_bytes::<Vec<(String, String)>>(bytes).map_err(|_| FormError::Malformed)?;
        if let Some((name, _)) = pairs.iter().find(|(k, v)| holds_nul(k) || holds_nul(v)) {
            return Err(FormError::NullCharacter(name.clone()));
        }
        Ok(Self(pairs))
    }

    /// Every field as sent, in order.
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The value of `name`; `Ok(None)` when absent or empty. Errors:
    /// `Repeated` when it was sent more than once.
    pub fn get(&self, name: &str) -> Result<Option<&str>, FormError> {
        let mut values = self.0.iter().filter(|(k, _)| k == name).map(|(_, v)| v.as_str());
        match (values.next(), values.next()) {
            (_, Some(_)) => Err(FormError::Repeated(name.to_owned())),
            (value, None) => Ok(value.filter(|v| !v.is_empty())),
        }
    }

    /// Like [`get`](Self::get), as an owned value.
    pub fn owned(&self, name: &str) -> Result<Option<String>, FormError> {
        self.get(name).map(|v| v.map(str::to_owned))
    }

    /// The authorization request's parameters (`response_type`,
    /// `client_id`, `redirect_uri`, `scope`, `state`, `code_challenge`,
    /// `code_challenge_method`, `prompt`, `nonce`, `max_age`,
    /// `response_mode`, and the refused `request`, `request_uri` and
    /// `registration`). Errors: `Repeated`.
    pub fn authorization_params(&self) -> Result<AuthorizationParams, FormError> {
        Ok(AuthorizationParams {
            response_type: self.owned("response_type")?,
            client_id: self.owned("client_id")?,
            redirect_uri: self.owned("redirect_uri")?,
            scope: self.owned("scope")?,
            state: self.owned("state")?,
            code_challenge: self.owned("code_challenge")?,
            code_challenge_method: self.owned("code_challenge_method")?,
            prompt: self.owned("prompt")?,
            nonce: self.owned("nonce")?,
            max_age: self.owned("max_age")?,
            response_mode: self.owned("response_mode")?,
            request: self.owned("request")?,
            request_uri: self.owned("request_uri")?,
            registration: self.owned("registration")?,
            acr_values: self.owned("acr_values")?,
        })
    }
}

/// The present parameters of an authorization request, in a fixed order
/// (for hidden form fields and for the query of a redirect to
/// `/oauth/authorize/`).
pub fn authorization_pairs(params: &AuthorizationParams) -> Vec<(&'static str, &str)> {
    let values = [
        &params.response_type,
        &params.client_id,
        &params.redirect_uri,
        &params.scope,
        &params.state,
        &params.code_challenge,
        &params.code_challenge_method,
        &params.prompt,
        &params.nonce,
        &params.max_age,
        &params.response_mode,
        &params.request,
        &params.request_uri,
        &params.registration,
        &params.acr_values,
    ];
    AUTHORIZATION_PARAMS.iter().zip(values).filter_map(|(name, value)| value.as_deref().map(|v| (*name, v))).collect()
}

/// Reads a form body of at most [`MAX_BODY_BYTES`]. An empty body is an
/// empty form whatever its type; a non-empty one must be declared as
/// `application/x-www-form-urlencoded`.
pub async fn read_form(req: &HttpRequest, mut payload: web::Payload) -> Result<FormFields, FormError> {
    let declared_len =
        req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if declared_len.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return Err(FormError::TooLarge);
    }
    let mut bytes = Vec::with_capacity(declared_len.unwrap_or(0).min(MAX_BODY_BYTES as u64) as usize);
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|_| FormError::Malformed)?;
        if bytes.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(FormError::TooLarge);
        }
        bytes.extend_from_slice(&chunk);
    }
    if bytes.is_empty() {
        return Ok(FormFields::default());
    }
    let is_form = req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|ct| {
        ct.split(';').next().is_some_and(|e| e.trim().eq_ignore_ascii_case("application/x-www-form-urlencoded"))
    });
    if !is_form {
        return Err(FormError::NotAForm);
    }
    FormFields::parse(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_parameters_are_refused_and_empty_ones_are_absent() {
        let f = FormFields::parse(b"a=1&b=&c=x&c=y").expect("form");
        assert_eq!(f.get("a"), Ok(Some("1")));
        assert_eq!(f.get("b"), Ok(None));
        assert_eq!(f.get("z"), Ok(None));
        assert_eq!(f.get("c"), Err(FormError::Repeated("c".into())));
    }

    #[test]
    fn a_nul_in_a_name_or_value_refuses_the_form() {
        for (bytes, name) in [
            (&b"q=%00"[..], "q"),
            (b"q=a\0b", "q"),
            (b"ok=1&ator=x%00", "ator"),
            (b"a%00=1", "a\0"),
            (b"x=%1F%00&y=%00", "x"),
        ] {
            assert_eq!(FormFields::parse(bytes).map(drop), Err(FormError::NullCharacter(name.into())), "{bytes:?}");
        }
        assert_eq!(FormError::NullCharacter("ator".into()).message(), "parameter ator holds a NUL character");
        // Only a name of RFC 6749's error_description characters is quoted.
        for name in ["a\0", "açaí", "a\"b", "a\\b"] {
            assert!(!FormError::NullCharacter(name.into()).message().contains(name), "{name:?}");
            assert!(!FormError::Repeated(name.into()).message().contains(name), "{name:?}");
        }
        // The other control characters are text here (their fields' rules judge them).
        let text = FormFields::parse(b"q=a%09b%0Ac%0Dd%01").expect("text");
        assert_eq!(text.get("q"), Ok(Some("a\tb\nc\rd\u{1}")));
    }

    #[test]
    fn authorization_params_round_trip_through_their_pairs() {
        let f = FormFields::parse(
            b"prompt=login+consent&client_id=portal&scope=cpf+cnes&state=a%26b&response_type=code&other=1&max_age=60&nonce=n%201&response_mode=form_post",
        )
        .expect("form");
        let p = f.authorization_params().expect("params");
        assert_eq!(p.scope.as_deref(), Some("cpf cnes"));
        assert_eq!(p.state.as_deref(), Some("a&b"));
        assert_eq!(p.prompt.as_deref(), Some("login consent"));
        assert_eq!(
            authorization_pairs(&p),
            [
                ("response_type", "code"),
                ("client_id", "portal"),
                ("scope", "cpf cnes"),
                ("state", "a&b"),
                ("prompt", "login consent"),
                ("nonce", "n 1"),
                ("max_age", "60"),
                ("response_mode", "form_post")
            ]
        );
        let twice = FormFields::parse(b"client_id=a&client_id=b").expect("form");
        assert_eq!(twice.authorization_params(), Err(FormError::Repeated("client_id".into())));
    }

    // ---- properties: query strings and form bodies from clients ----

    use actix_web::test::TestRequest;
    use proptest::prelude::*;

    fn read_as(content_type: Option<&str>, bytes: Vec<u8>) -> Result<FormFields, FormError> {
        let mut request = TestRequest::post().uri("/oauth/token/");
        if let Some(ct) = content_type {
            request = request.insert_header((header::CONTENT_TYPE, ct));
        }
        let (req, mut payload) = request.set_payload(bytes).to_http_parts();
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
        runtime.block_on(async {
            let payload =
                <web::Payload as actix_web::FromRequest>::from_request(&req, &mut payload).await.expect("payload");
            read_form(&req, payload).await
        })
    }

    /// Parameter names, the real ones among them.
    fn name() -> impl Strategy<Value = String> {
        prop_oneof![prop::sample::select(AUTHORIZATION_PARAMS.to_vec()).prop_map(str::to_owned), "\\PC{1,8}"]
    }

    proptest! {
        #[test]
        fn an_error_text_is_always_a_valid_error_description(name in "\\PC{0,8}|[\\x00-\\x1f\"\\\\a-z]{0,8}") {
            for e in [FormError::Repeated(name.clone()), FormError::NullCharacter(name.clone())] {
                let text = e.message();
                prop_assert!(text.bytes().all(|b| matches!(b, 0x20..=0x21 | 0x23..=0x5B | 0x5D..=0x7E)), "{text:?}");
            }
        }

        #[test]
        fn any_bytes_are_fields_or_a_form_error(
            content_type in prop::option::of(prop_oneof![
                Just("application/x-www-form-urlencoded".to_owned()),
                Just("application/json".to_owned()),
                "[ -~]{0,30}",
            ]),
            bytes in prop_oneof![
                prop::collection::vec(any::<u8>(), 0..200),
                "[a-z_=&%0-9A-F+]{0,80}".prop_map(String::into_bytes),
            ],
        ) {
            let was_empty = bytes.is_empty();
            match read_as(content_type.as_deref(), bytes.clone()) {
                Ok(fields) => {
                    let essence = content_type.as_deref().and_then(|ct| ct.split(';').next()).unwrap_or("");
                    let declared_form = essence.trim().eq_ignore_ascii_case("application/x-www-form-urlencoded");
                    prop_assert!(was_empty || declared_form, "a body is read only when declared as a form");
                    for (k, _) in &fields.0 {
                        let _ = fields.get(k);
                    }
                    let _ = fields.authorization_params();
                }
                Err(e) => prop_assert!(!e.message().is_empty()),
            }
            let _ = FormFields::parse(&bytes);
        }

        #[test]
        fn distinct_parameters_round_trip_and_empty_ones_are_absent(
            pairs in prop::collection::btree_map(name(), "\\PC{0,20}", 0..8),
        ) {
            let body = serde_urlencoded::to_string(&pairs).expect("form");
            let fields = read_as(Some("application/x-www-form-urlencoded"), body.clone().into_bytes()).expect("form");
            for (k, v) in &pairs {
                prop_assert_eq!(fields.get(k), Ok(Some(v.as_str()).filter(|v| !v.is_empty())));
            }
            let query = FormFields::parse(body.as_bytes()).expect("query");
            let params = query.authorization_params().expect("no repeats");
            let again = serde_urlencoded::to_string(authorization_pairs(&params)).expect("form");
            prop_assert_eq!(FormFields::parse(again.as_bytes()).expect("form").authorization_params(), Ok(params));
        }

        #[test]
        fn a_repeated_parameter_is_named(key in name(), a in "\\PC{0,10}", b in "\\PC{0,10}") {
            let body = serde_urlencoded::to_string([(&key, &a), (&key, &b)]).expect("form");
            let fields = FormFields::parse(body.as_bytes()).expect("form");
            prop_assert_eq!(fields.get(&key), Err(FormError::Repeated(key.clone())));
        }
    }
}
