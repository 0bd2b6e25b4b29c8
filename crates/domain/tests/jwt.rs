//! Integration tests of `credencial_domain::jwt`: the algorithm is pinned by
//! configuration, forged or damaged tokens are refused, and the time rules
//! (expiry, leeway, clock skew, not-before) hold at their edges.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use credencial_domain::jwt::{KeyError, CLOCK_SKEW_SECS};
use credencial_domain::{Claims, JwtAlgorithm, JwtKeys, TokenCodec, TokenError, TokenType};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::json;

const RSA_PRIVATE: &[u8] = include_bytes!("keys/rsa_private.pem");
const RSA_PUBLIC: &[u8] = include_bytes!("keys/rsa_public.pem");
const RSA_OTHER_PRIVATE: &[u8] = include_bytes!("keys/rsa_other_private.pem");
const RSA_OTHER_PUBLIC: &[u8] = include_bytes!("keys/rsa_other_public.pem");
const EC_PRIVATE: &[u8] = include_bytes!("keys/ec_private.pem");
const EC_PUBLIC: &[u8] = include_bytes!("keys/ec_public.pem");

const SECRET: &[u8; 32] = b"0123456789abcdef0123456789abcdef";
const NOW: i64 = 1_700_000_000;

fn hs256(leeway: i64) -> TokenCodec {
    TokenCodec::new(JwtKeys::hmac(SECRET).expect("32-byte secret"), leeway).expect("HS256 codec")
}

fn rs256() -> TokenCodec {
    let keys = JwtKeys::asymmetric(JwtAlgorithm::RS256, RSA_PRIVATE, RSA_PUBLIC).expect("RSA keys");
    TokenCodec::new(keys, 0).expect("RS256 codec")
}

fn rs256_other() -> TokenCodec {
    let keys = JwtKeys::asymmetric(JwtAlgorithm::RS256, RSA_OTHER_PRIVATE, RSA_OTHER_PUBLIC).expect("other RSA keys");
    TokenCodec::new(keys, 0).expect("other RS256 codec")
}

fn es256() -> TokenCodec {
    let keys = JwtKeys::asymmetric(JwtAlgorithm::ES256, EC_PRIVATE, EC_PUBLIC).expect("EC keys");
    TokenCodec::new(keys, 0).expect("ES256 codec")
}

fn access(user_id: i64) -> Claims {
    Claims::new(TokenType::Access, user_id, NOW, 300)
}

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// The three dot-separated segments of a compact token.
fn segments(token: &str) -> (String, String, String) {
    let parts: Vec<&str> = token.split('.').collect();
    assert_eq!(parts.len(), 3, "a compact JWT has three segments: {token}");
    (parts[0].to_owned(), parts[1].to_owned(), parts[2].to_owned())
}

fn assert_round_trip(codec: &TokenCodec, expected: Algorithm) {
    let claims = access(42);
    let token = codec.encode(&claims).expect("encode");
    let header = jsonwebtoken::decode_header(&token).expect("header");
    assert_eq!(header.alg, expected);
    assert_eq!(codec.decode(&token, NOW).expect("decode"), claims);
}

// ---------------------------------------------------------------- round trips

#[test]
fn hs256_round_trip_keeps_claims_and_header_names_hs256() {
    let codec = hs256(0);
    assert_eq!(codec.algorithm(), JwtAlgorithm::HS256);
    assert_round_trip(&codec, Algorithm::HS256);
}

#[test]
fn rs256_round_trip_keeps_claims_and_header_names_rs256() {
    let codec = rs256();
    assert_eq!(codec.algorithm(), JwtAlgorithm::RS256);
    assert_round_trip(&codec, Algorithm::RS256);
}

#[test]
fn es256_round_trip_keeps_claims_and_header_names_es256() {
    let codec = es256();
    assert_eq!(codec.algorithm(), JwtAlgorithm::ES256);
    assert_round_trip(&codec, Algorithm::ES256);
}

#[test]
fn optional_claims_survive_a_round_trip() {
    let codec = hs256(0);
    let mut claims = access(7);
    claims.scope = Some("dados_publicos email".into());
    claims.client_id = Some("app".into());
    claims.nbf = Some(NOW);
    let token = codec.encode(&claims).expect("encode");
    assert_eq!(codec.decode(&token, NOW).expect("decode"), claims);
}

// ---------------------------------------------------------------- key configuration

#[test]
fn hs256_secret_shorter_than_32_bytes_is_refused() {
    assert!(matches!(JwtKeys::hmac(&[1u8; 31]), Err(KeyError::SecretTooShort)));
    assert!(matches!(JwtKeys::hmac(b""), Err(KeyError::SecretTooShort)));
    assert!(JwtKeys::hmac(&[1u8; 32]).is_ok(), "exactly 32 bytes is enough");
}

#[test]
fn unknown_algorithm_names_are_refused() {
    for name in ["none", "HS512", "RS512", "PS256", "EdDSA", "", "HS 256"] {
        assert!(matches!(name.parse::<JwtAlgorithm>(), Err(KeyError::UnknownAlgorithm(_))), "{name:?} must be refused");
    }
}

#[test]
fn known_algorithm_names_parse_case_insensitively() {
    assert_eq!("HS256".parse::<JwtAlgorithm>().expect("HS256"), JwtAlgorithm::HS256);
    assert_eq!(" rs256 ".parse::<JwtAlgorithm>().expect("rs256"), JwtAlgorithm::RS256);
    assert_eq!("es256".parse::<JwtAlgorithm>().expect("es256"), JwtAlgorithm::ES256);
}

#[test]
fn public_key_not_matching_the_private_key_is_refused() {
    let keys = JwtKeys::asymmetric(JwtAlgorithm::RS256, RSA_PRIVATE, RSA_OTHER_PUBLIC).expect("both PEMs parse");
    assert!(matches!(TokenCodec::new(keys, 0), Err(KeyError::Mismatch)));
}

#[test]
fn a_key_pair_for_the_wrong_algorithm_is_refused() {
    assert!(matches!(JwtKeys::asymmetric(JwtAlgorithm::ES256, RSA_PRIVATE, RSA_PUBLIC), Err(KeyError::BadPem { .. })));
    assert!(matches!(JwtKeys::asymmetric(JwtAlgorithm::HS256, RSA_PRIVATE, RSA_PUBLIC), Err(KeyError::BadPem { .. })));
}

// ---------------------------------------------------------------- algorithm confusion

#[test]
fn alg_none_token_with_empty_signature_is_refused() {
    let codec = hs256(0);
    let header = b64(br#"{"alg":"none","typ":"JWT"}"#);
    let payload = b64(&serde_json::to_vec(&access(42)).expect("claims serialise"));
    let token = format!("{header}.{payload}.");
    assert!(matches!(codec.decode(&token, NOW), Err(TokenError::Invalid)));
    // The same forgery against an asymmetric codec.
    assert!(matches!(rs256().decode(&token, NOW), Err(TokenError::Invalid)));
}

#[test]
fn hs256_token_signed_with_the_rsa_public_pem_is_refused_by_an_rs256_codec() {
    let codec = rs256();
    let forged =
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &access(42), &EncodingKey::from_secret(RSA_PUBLIC))
            .expect("HS256 forgery signs");
    assert_eq!(jsonwebtoken::decode_header(&forged).expect("header").alg, Algorithm::HS256);
    assert!(matches!(codec.decode(&forged, NOW), Err(TokenError::Invalid)));
}

#[test]
fn rs256_token_is_refused_by_an_hs256_codec() {
    let token = rs256().encode(&access(42)).expect("encode");
    assert!(matches!(hs256(0).decode(&token, NOW), Err(TokenError::Invalid)));
}

#[test]
fn es256_token_is_refused_by_an_rs256_codec() {
    let token = es256().encode(&access(42)).expect("encode");
    assert!(matches!(rs256().decode(&token, NOW), Err(TokenError::Invalid)));
}

#[test]
fn token_signed_by_another_rsa_key_is_refused() {
    let token = rs256_other().encode(&access(42)).expect("encode");
    assert!(matches!(rs256().decode(&token, NOW), Err(TokenError::Invalid)));
}

// ---------------------------------------------------------------- tampering

#[test]
fn payload_changed_under_the_old_signature_is_refused() {
    for codec in [hs256(0), rs256(), es256()] {
        let token = codec.encode(&access(42)).expect("encode");
        let (header, _, signature) = segments(&token);
        let mut forged_claims = access(42);
        forged_claims.user_id = Some(1);
        let payload = b64(&serde_json::to_vec(&forged_claims).expect("claims serialise"));
        let forged = format!("{header}.{payload}.{signature}");
        assert!(matches!(codec.decode(&forged, NOW), Err(TokenError::Invalid)), "{:?}", codec.algorithm());
    }
}

#[test]
fn one_character_changed_in_the_payload_is_refused() {
    let codec = hs256(0);
    let token = codec.encode(&access(42)).expect("encode");
    let (header, payload, signature) = segments(&token);
    let mut chars: Vec<char> = payload.chars().collect();
    let i = chars.len() / 2;
    chars[i] = if chars[i] == 'A' { 'B' } else { 'A' };
    let payload: String = chars.into_iter().collect();
    let forged = format!("{header}.{payload}.{signature}");
    assert!(matches!(codec.decode(&forged, NOW), Err(TokenError::Invalid)));
}

/// Replaces the last character of a base64url string by one whose top bit
/// differs, so that the decoded bytes change whatever the unused bits are.
fn flip_last_char(s: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let last = *s.as_bytes().last().expect("non-empty");
    let index = ALPHABET.iter().position(|&c| c == last).expect("base64url character");
    let flipped = char::from(ALPHABET[index ^ 0b10_0000]);
    format!("{}{flipped}", &s[..s.len() - 1])
}

#[test]
fn last_character_of_the_signature_changed_is_refused() {
    for codec in [hs256(0), rs256(), es256()] {
        let token = codec.encode(&access(42)).expect("encode");
        let forged = flip_last_char(&token);
        assert_ne!(forged, token);
        assert!(matches!(codec.decode(&forged, NOW), Err(TokenError::Invalid)), "{:?}", codec.algorithm());
    }
}

#[test]
fn token_without_its_signature_is_refused() {
    let codec = hs256(0);
    let token = codec.encode(&access(42)).expect("encode");
    let (header, payload, _) = segments(&token);
    let unsigned = format!("{header}.{payload}.");
    assert!(matches!(codec.decode(&unsigned, NOW), Err(TokenError::Invalid)));
}

#[test]
fn token_missing_its_last_five_characters_is_refused() {
    let codec = hs256(0);
    let token = codec.encode(&access(42)).expect("encode");
    let truncated = &token[..token.len() - 5];
    assert!(matches!(codec.decode(truncated, NOW), Err(TokenError::Invalid)));
}

#[test]
fn empty_and_garbage_strings_are_refused() {
    let codec = hs256(0);
    for token in ["", "abc", "..", "a.b.c", "   "] {
        assert!(matches!(codec.decode(token, NOW), Err(TokenError::Invalid)), "{token:?}");
    }
}

#[test]
fn tokens_with_two_or_four_segments_are_refused() {
    let codec = hs256(0);
    let token = codec.encode(&access(42)).expect("encode");
    let (header, payload, signature) = segments(&token);
    let two = format!("{header}.{payload}");
    let four = format!("{header}.{payload}.{signature}.{signature}");
    let four_empty = format!("{token}.");
    for forged in [two, four, four_empty] {
        assert!(matches!(codec.decode(&forged, NOW), Err(TokenError::Invalid)), "{forged}");
    }
}

// ---------------------------------------------------------------- time rules

#[test]
fn token_is_valid_from_issue_until_one_second_before_expiry() {
    let codec = hs256(0);
    let claims = access(42);
    let token = codec.encode(&claims).expect("encode");
    assert!(codec.decode(&token, claims.iat).is_ok());
    assert!(codec.decode(&token, claims.exp - 1).is_ok());
    assert!(matches!(codec.decode(&token, claims.exp), Err(TokenError::Expired)));
    assert!(matches!(codec.decode(&token, claims.exp + 3_600), Err(TokenError::Expired)));
}

#[test]
fn leeway_extends_expiry_by_exactly_its_length() {
    let codec = hs256(10);
    let claims = access(42);
    let token = codec.encode(&claims).expect("encode");
    assert!(codec.decode(&token, claims.exp + 9).is_ok());
    assert!(matches!(codec.decode(&token, claims.exp + 10), Err(TokenError::Expired)));
}

#[test]
fn negative_leeway_counts_as_zero() {
    let codec = hs256(-100);
    let claims = access(42);
    let token = codec.encode(&claims).expect("encode");
    assert!(codec.decode(&token, claims.exp - 1).is_ok());
    assert!(matches!(codec.decode(&token, claims.exp), Err(TokenError::Expired)));
}

#[test]
fn iat_up_to_the_clock_skew_in_the_future_is_accepted_beyond_it_refused() {
    assert_eq!(CLOCK_SKEW_SECS, 5);
    let codec = hs256(0);
    let token_issued_at = |iat: i64| {
        let mut c = access(42);
        c.iat = iat;
        c.exp = iat + 300;
        codec.encode(&c).expect("encode")
    };
    assert!(codec.decode(&token_issued_at(NOW + CLOCK_SKEW_SECS), NOW).is_ok());
    assert!(matches!(codec.decode(&token_issued_at(NOW + CLOCK_SKEW_SECS + 1), NOW), Err(TokenError::NotYetValid)));
}

#[test]
fn leeway_adds_to_the_clock_skew_for_a_future_iat() {
    let codec = hs256(10);
    let token_issued_at = |iat: i64| {
        let mut c = access(42);
        c.iat = iat;
        c.exp = iat + 300;
        codec.encode(&c).expect("encode")
    };
    assert!(codec.decode(&token_issued_at(NOW + CLOCK_SKEW_SECS + 10), NOW).is_ok());
    assert!(matches!(codec.decode(&token_issued_at(NOW + CLOCK_SKEW_SECS + 11), NOW), Err(TokenError::NotYetValid)));
}

#[test]
fn nbf_in_the_future_is_not_yet_valid() {
    let codec = hs256(0);
    let mut claims = access(42);
    claims.nbf = Some(NOW + 60);
    let token = codec.encode(&claims).expect("encode");
    assert!(matches!(codec.decode(&token, NOW), Err(TokenError::NotYetValid)));
    assert!(codec.decode(&token, NOW + 60).is_ok(), "valid once nbf is reached");
}

#[test]
fn nbf_earlier_than_iat_does_not_hide_a_future_iat() {
    let codec = hs256(0);
    let mut claims = access(42);
    claims.iat = NOW + 60;
    claims.exp = NOW + 360;
    claims.nbf = Some(NOW - 60);
    let token = codec.encode(&claims).expect("encode");
    assert!(matches!(codec.decode(&token, NOW), Err(TokenError::NotYetValid)));
}

// ---------------------------------------------------------------- token types

#[test]
fn refresh_token_where_access_expected_is_wrong_type() {
    let codec = hs256(0);
    let token = codec.encode(&Claims::new(TokenType::Refresh, 42, NOW, 86_400)).expect("encode");
    assert!(matches!(codec.decode_typed(&token, TokenType::Access, NOW), Err(TokenError::WrongType)));
    assert!(codec.decode_typed(&token, TokenType::Refresh, NOW).is_ok());
}

#[test]
fn access_token_where_refresh_expected_is_wrong_type() {
    let codec = hs256(0);
    let token = codec.encode(&access(42)).expect("encode");
    assert!(matches!(codec.decode_typed(&token, TokenType::Refresh, NOW), Err(TokenError::WrongType)));
    assert!(codec.decode_typed(&token, TokenType::Access, NOW).is_ok());
}

#[test]
fn a_session_token_is_neither_an_access_nor_a_refresh_token() {
    let codec = hs256(0);
    let token = codec.encode(&Claims::new(TokenType::Session, 42, NOW, 600)).expect("encode");
    assert!(matches!(codec.decode_typed(&token, TokenType::Access, NOW), Err(TokenError::WrongType)));
    assert!(matches!(codec.decode_typed(&token, TokenType::Refresh, NOW), Err(TokenError::WrongType)));
    assert!(codec.decode_typed(&token, TokenType::Session, NOW).is_ok());
    let access = codec.encode(&access(42)).expect("encode");
    assert!(matches!(codec.decode_typed(&access, TokenType::Session, NOW), Err(TokenError::WrongType)));
}

#[test]
fn decode_typed_reports_expiry_before_type() {
    let codec = hs256(0);
    let claims = Claims::new(TokenType::Refresh, 42, NOW, 86_400);
    let token = codec.encode(&claims).expect("encode");
    assert!(matches!(codec.decode_typed(&token, TokenType::Access, claims.exp), Err(TokenError::Expired)));
}

// ---------------------------------------------------------------- malformed claims

fn sign_value(value: &serde_json::Value) -> String {
    jsonwebtoken::encode(&Header::new(Algorithm::HS256), value, &EncodingKey::from_secret(SECRET))
        .expect("sign raw claims")
}

fn full_claims() -> serde_json::Value {
    json!({
        "token_type": "access",
        "exp": NOW + 300,
        "iat": NOW,
        "jti": "0123456789abcdef0123456789abcdef",
        "user_id": 42,
    })
}

#[test]
fn hand_signed_well_formed_claims_are_accepted() {
    // Guards the tests below: what they change is what makes them fail.
    let claims = hs256(0).decode(&sign_value(&full_claims()), NOW).expect("decode");
    assert_eq!(claims.user_id, Some(42));
    assert_eq!(claims.token_type, TokenType::Access);
}

#[test]
fn claims_without_user_id_speak_for_no_person_and_are_in_no_persons_lane() {
    // Only an application's own token (`oauth_machine`) names no person; a
    // first-party or client token without `user_id` is accepted nowhere.
    let mut value = full_claims();
    value.as_object_mut().expect("object").remove("user_id");
    let token = sign_value(&value);
    let claims = hs256(0).decode(&token, NOW).expect("the signature and times verify");
    assert_eq!((claims.user_id, claims.person()), (None, Err(TokenError::WrongType)));
    assert!(matches!(hs256(0).decode_first_party(&token, TokenType::Access, NOW), Err(TokenError::WrongType)));
    assert!(matches!(hs256(0).decode_client(&token, TokenType::Access, NOW), Err(TokenError::WrongType)));
    value["user_id"] = json!(null);
    assert!(matches!(hs256(0).decode(&sign_value(&value), NOW), Err(TokenError::Invalid)), "null is no user id");
}

#[test]
fn claims_without_token_type_are_invalid() {
    let mut value = full_claims();
    value.as_object_mut().expect("object").remove("token_type");
    assert!(matches!(hs256(0).decode(&sign_value(&value), NOW), Err(TokenError::Invalid)));
}

#[test]
fn claims_with_token_type_id_are_invalid() {
    let mut value = full_claims();
    value["token_type"] = json!("id");
    assert!(matches!(hs256(0).decode(&sign_value(&value), NOW), Err(TokenError::Invalid)));
}

#[test]
fn claims_with_a_user_id_string_of_digits_are_read_and_any_other_string_is_invalid() {
    // simplejwt 5.5 writes `str(user.pk)` (see tests/token_lanes.rs).
    let mut value = full_claims();
    value["user_id"] = json!("42");
    assert_eq!(hs256(0).decode(&sign_value(&value), NOW).map(|c| c.user_id), Ok(Some(42)));
    value["user_id"] = json!("forty-two");
    assert!(matches!(hs256(0).decode(&sign_value(&value), NOW), Err(TokenError::Invalid)));
}

// ---------------------------------------------------------------- hand-made headers

/// A token with `header` (raw JSON) over the full claims, HS256-signed with
/// the codec's secret: only the header decides whether it is accepted.
fn with_header(header: &str) -> String {
    use hmac::Mac as _;
    let message = format!("{}.{}", b64(header.as_bytes()), b64(&serde_json::to_vec(&full_claims()).expect("claims")));
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(SECRET).expect("HMAC key");
    mac.update(message.as_bytes());
    format!("{message}.{}", b64(&mac.finalize().into_bytes()))
}

#[test]
fn a_header_is_read_for_its_algorithm_key_id_and_type_and_nothing_else() {
    let codec = hs256(0);
    let kid = jsonwebtoken::decode_header(codec.encode(&access(1)).expect("encode")).expect("header").kid;
    let kid = kid.expect("our tokens name their key");
    // Accepted: the minimal header, ours, unknown members, an escaped
    // string, a null type or key id (no key id: the current key).
    for header in [
        r#"{"alg":"HS256"}"#.to_owned(),
        format!(r#"{{"alg":"HS256","typ":"JWT","kid":"{kid}"}}"#),
        r#"{"alg":"HS256","x5u":"https://example.invalid/","extra":{"a":[1,2]}}"#.to_owned(),
        r#"{"alg":"HS\u0032\u00356","typ":"J\u0057T"}"#.to_owned(),
        r#"{"alg":"HS256","typ":null,"kid":null}"#.to_owned(),
    ] {
        assert!(codec.decode(&with_header(&header), NOW).is_ok(), "accepted: {header}");
    }
    // Refused: another or no algorithm, a lower-case name, a key id the
    // codec does not hold, members of the wrong type, a member given twice,
    // critical extensions (none is understood, RFC 7515 §4.1.11), not an
    // object, not JSON.
    for header in [
        r#"{"alg":"HS256","crit":["b64"],"b64":false}"#,
        r#"{"alg":"HS256","crit":[]}"#,
        r#"{"alg":"HS512"}"#,
        r#"{"alg":"hs256"}"#,
        r#"{"typ":"JWT"}"#,
        r#"{"alg":"HS256","kid":"someone-else"}"#,
        r#"{"alg":"HS256","kid":7}"#,
        r#"{"alg":["HS256"]}"#,
        r#"{"alg":"HS256","typ":1}"#,
        r#"{"alg":"HS256","alg":"HS256"}"#,
        r#"["HS256"]"#,
        r#"{"alg":"HS256""#,
        "",
    ] {
        assert!(matches!(codec.decode(&with_header(header), NOW), Err(TokenError::Invalid)), "refused: {header}");
    }
    // `typ: at+jwt` (escaped or not) marks an OAuth2 access token: on an
    // `access` token it is refused (the two kinds exclude each other).
    for header in [r#"{"alg":"HS256","typ":"at+jwt"}"#, r#"{"alg":"HS256","typ":"at\u002bjwt"}"#] {
        assert!(matches!(codec.decode(&with_header(header), NOW), Err(TokenError::Invalid)), "refused: {header}");
    }
}
