//! The two lanes of tokens, as any reader holding the key sees them:
//! first-party tokens keep simplejwt's exact shape, tokens issued to client
//! applications carry types simplejwt refuses (`oauth_access`,
//! `oauth_refresh`) and, for access tokens, the header `typ: at+jwt`
//! (RFC 9068 §2.1); the rules of the two kinds exclude each other (RFC 8725
//! §3.11–3.12). Also: `user_id` written as simplejwt 5.5 writes it.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use credencial_domain::token::is_access_token_jwt_type;
use credencial_domain::{Claims, JwtKeys, TokenCodec, TokenError, TokenType};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{json, Value};

const SECRET: &[u8; 32] = b"0123456789abcdef0123456789abcdef";
const NOW: i64 = 1_700_000_000;

fn codec() -> TokenCodec {
    TokenCodec::new(JwtKeys::hmac(SECRET).expect("32-byte secret"), 0).expect("HS256 codec")
}

fn client(token_type: TokenType) -> Claims {
    Claims {
        scope: Some("dados_publicos cpf email".into()),
        client_id: Some("portal".into()),
        aud: Some("portal".into()),
        ..Claims::new(token_type, 42, NOW, 300)
    }
}

/// The header and the payload of a compact token, as JSON.
fn parts(token: &str) -> (Value, Value) {
    let mut segments = token.split('.');
    let json = |s: Option<&str>| -> Value {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(s.expect("segment")).expect("base64")).expect("json")
    };
    (json(segments.next()), json(segments.next()))
}

/// A token signed with the shared secret by anyone (simplejwt, a test),
/// with `typ` and `payload` as given.
fn minted(typ: Option<&str>, payload: Value) -> String {
    let header = Header { typ: typ.map(Into::into), ..Header::new(Algorithm::HS256) };
    jsonwebtoken::encode(&header, &payload, &EncodingKey::from_secret(SECRET)).expect("signs")
}

#[test]
fn a_first_party_pair_keeps_simplejwts_exact_shape() {
    for (token_type, name) in [(TokenType::Access, "access"), (TokenType::Refresh, "refresh")] {
        let token = codec().encode_claims(&Claims::new(token_type, 42, NOW, 300)).expect("signs");
        let (header, payload) = parts(&token);
        assert_eq!(header["typ"], "JWT");
        assert_eq!(header["alg"], "HS256");
        assert_eq!(payload["token_type"], name);
        assert_eq!(payload["user_id"], 42, "an integer, as simplejwt's for_user with an integer pk");
        assert!(payload.get("aud").is_none() && payload.get("client_id").is_none());
    }
}

#[test]
fn a_client_access_token_is_typed_at_jwt_with_a_type_simplejwt_refuses() {
    let token = codec().encode_claims(&client(TokenType::ClientAccess)).expect("signs");
    let (header, payload) = parts(&token);
    assert_eq!(header["typ"], "at+jwt");
    assert_eq!(payload["token_type"], "oauth_access");
    assert_ne!(payload["token_type"], "access", "simplejwt's AccessToken accepts only 'access'");
    assert_eq!((payload["aud"].as_str(), payload["client_id"].as_str()), (Some("portal"), Some("portal")));
}

#[test]
fn a_client_refresh_token_has_a_type_simplejwts_refresh_view_refuses() {
    let token = codec().encode_claims(&client(TokenType::ClientRefresh)).expect("signs");
    let (header, payload) = parts(&token);
    assert_eq!(header["typ"], "JWT");
    assert_eq!(payload["token_type"], "oauth_refresh");
}

#[test]
fn client_tokens_are_read_only_in_the_client_lane() {
    let c = codec();
    let access = c.encode_claims(&client(TokenType::ClientAccess)).expect("signs");
    let refresh = c.encode_claims(&client(TokenType::ClientRefresh)).expect("signs");
    assert_eq!(c.decode_client(&access, TokenType::ClientAccess, NOW).expect("read").client_audience(), Some("portal"));
    assert!(c.decode_client(&refresh, TokenType::ClientRefresh, NOW).is_ok());
    assert_eq!(c.decode_client(&access, TokenType::ClientRefresh, NOW), Err(TokenError::WrongType));
    assert_eq!(c.decode_client(&refresh, TokenType::ClientAccess, NOW), Err(TokenError::WrongType));
    for expected in [TokenType::Access, TokenType::Refresh] {
        assert_eq!(c.decode_first_party(&access, expected, NOW), Err(TokenError::WrongType));
        assert_eq!(c.decode_first_party(&refresh, expected, NOW), Err(TokenError::WrongType));
    }
}

#[test]
fn first_party_tokens_and_sessions_are_never_read_in_the_client_lane() {
    let c = codec();
    for token_type in [TokenType::Access, TokenType::Refresh, TokenType::Session] {
        let token = c.encode_claims(&Claims::new(token_type, 42, NOW, 300)).expect("signs");
        for expected in [TokenType::ClientAccess, TokenType::ClientRefresh] {
            assert_eq!(c.decode_client(&token, expected, NOW), Err(TokenError::WrongType), "{token_type:?}");
        }
    }
    let session_with_audience = c.encode_claims(&client(TokenType::Session)).expect("signs");
    assert_eq!(c.decode_client(&session_with_audience, TokenType::ClientAccess, NOW), Err(TokenError::WrongType));
}

#[test]
fn client_tokens_of_the_old_form_are_still_read_in_the_client_lane_until_they_expire() {
    // Issued before the client types: `access`/`refresh` with an audience.
    let c = codec();
    let access = c.encode_claims(&client(TokenType::Access)).expect("signs");
    let refresh = c.encode_claims(&client(TokenType::Refresh)).expect("signs");
    let read = c.decode_client(&access, TokenType::ClientAccess, NOW).expect("old access token read");
    assert!(read.is_legacy_client_token());
    assert!(c.decode_client(&refresh, TokenType::ClientRefresh, NOW).expect("old refresh").is_legacy_client_token());
    assert_eq!(c.decode_client(&access, TokenType::ClientAccess, NOW + 300), Err(TokenError::Expired));
    assert_eq!(c.decode_first_party(&access, TokenType::Access, NOW), Err(TokenError::WrongType));
    let new = c.decode_client(
        &c.encode_claims(&client(TokenType::ClientAccess)).expect("signs"),
        TokenType::ClientAccess,
        NOW,
    );
    assert!(!new.expect("read").is_legacy_client_token());
}

#[test]
fn a_client_audience_needs_both_claims_to_name_one_client() {
    let c = codec();
    for (aud, client_id) in [(Some("portal"), None), (None, Some("portal")), (Some("portal"), Some("other"))] {
        let claims = Claims {
            aud: aud.map(Into::into),
            client_id: client_id.map(Into::into),
            ..client(TokenType::ClientAccess)
        };
        let token = c.encode_claims(&claims).expect("signs");
        assert_eq!(c.decode_client(&token, TokenType::ClientAccess, NOW), Err(TokenError::WrongType));
        assert_eq!(c.decode_first_party(&token, TokenType::Access, NOW), Err(TokenError::WrongType));
    }
}

#[test]
fn the_at_jwt_type_and_the_oauth_access_type_go_together_or_the_token_is_invalid() {
    let c = codec();
    let first_party = json!({"token_type": "access", "exp": NOW + 300, "iat": NOW, "jti": "j", "user_id": 42});
    let oauth = json!({"token_type": "oauth_access", "exp": NOW + 300, "iat": NOW, "jti": "j", "user_id": 42,
                       "aud": "portal", "client_id": "portal"});
    // A first-party payload under an access-token header is neither kind.
    assert_eq!(c.decode(&minted(Some("at+jwt"), first_party.clone()), NOW), Err(TokenError::Invalid));
    // An OAuth2 access token without its header type is refused too.
    assert_eq!(c.decode(&minted(Some("JWT"), oauth.clone()), NOW), Err(TokenError::Invalid));
    assert_eq!(c.decode(&minted(None, oauth.clone()), NOW), Err(TokenError::Invalid));
    // The media-type form and any case are the same type (RFC 8725 §3.11).
    for typ in ["at+jwt", "application/at+jwt", "AT+JWT", "Application/At+JWT"] {
        assert!(c.decode_client(&minted(Some(typ), oauth.clone()), TokenType::ClientAccess, NOW).is_ok(), "{typ}");
    }
    assert!(c.decode_first_party(&minted(Some("JWT"), first_party.clone()), TokenType::Access, NOW).is_ok());
    assert!(c.decode_first_party(&minted(None, first_party), TokenType::Access, NOW).is_ok(), "typ is optional");
}

#[test]
fn the_access_token_type_is_recognised_only_in_its_two_spellings() {
    for typ in ["at+jwt", "application/at+jwt", "AT+jwt"] {
        assert!(is_access_token_jwt_type(typ), "{typ}");
    }
    for typ in ["JWT", "", "at+jwt ", "application/jwt", "application/", "xapplication/at+jwt", "at"] {
        assert!(!is_access_token_jwt_type(typ), "{typ:?}");
    }
}

#[test]
fn a_token_minted_by_simplejwt_with_user_id_as_a_string_verifies() {
    // djangorestframework-simplejwt 5.5 writes `str(user.pk)`.
    let c = codec();
    let payload = json!({"token_type": "access", "exp": NOW + 300, "iat": NOW, "jti": "5f0c1d2e", "user_id": "42"});
    let claims = c.decode_first_party(&minted(Some("JWT"), payload), TokenType::Access, NOW).expect("accepted");
    assert_eq!(claims.user_id, Some(42));
}

#[test]
fn a_user_id_that_is_not_an_integer_or_a_string_of_digits_is_refused() {
    let c = codec();
    for user_id in [
        json!(""),
        json!("4a"),
        json!("-4"),
        json!(" 4"),
        json!("4.0"),
        json!(4.5),
        json!(null),
        json!("99999999999999999999"),
        json!(true),
        json!([4]),
    ] {
        let payload = json!({"token_type": "access", "exp": NOW + 300, "iat": NOW, "jti": "j", "user_id": user_id});
        assert_eq!(c.decode(&minted(Some("JWT"), payload), NOW), Err(TokenError::Invalid), "{user_id}");
    }
}
