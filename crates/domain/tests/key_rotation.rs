//! Integration tests of key ids and key rotation: every token names its key
//! by `kid`, a codec verifies with the key a token names (and that key's
//! algorithm only), previous public keys keep old tokens valid until they
//! expire, and the published key set holds public keys only.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use credencial_domain::jwt::keys::RSA_KEY_BITS;
use credencial_domain::jwt::{generate_pem_pair, KeyError, PublicKey};
use credencial_domain::{Claims, JwtAlgorithm, JwtKeys, TokenCodec, TokenError, TokenType};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::Value;

const RSA_PRIVATE: &[u8] = include_bytes!("keys/rsa_private.pem");
const RSA_PUBLIC: &[u8] = include_bytes!("keys/rsa_public.pem");
const RSA_OTHER_PRIVATE: &[u8] = include_bytes!("keys/rsa_other_private.pem");
const RSA_OTHER_PUBLIC: &[u8] = include_bytes!("keys/rsa_other_public.pem");
const EC_PRIVATE: &[u8] = include_bytes!("keys/ec_private.pem");
const EC_PUBLIC: &[u8] = include_bytes!("keys/ec_public.pem");
const NOW: i64 = 1_700_000_000;

fn codec(algorithm: JwtAlgorithm, private: &[u8]) -> TokenCodec {
    TokenCodec::new(JwtKeys::from_private_pem(algorithm, private).expect("private key"), 0).expect("codec")
}

fn public(pem: &[u8]) -> PublicKey {
    PublicKey::from_pem(pem).expect("public key")
}

fn header(token: &str) -> Value {
    let first = token.split('.').next().expect("header");
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(first).expect("base64url")).expect("JSON")
}

fn access() -> Claims {
    Claims::new(TokenType::Access, 7, NOW, 300)
}

#[test]
fn every_token_names_the_key_that_signed_it() {
    let rs = codec(JwtAlgorithm::RS256, RSA_PRIVATE);
    let token = rs.encode(&access()).expect("signs");
    assert_eq!(header(&token)["kid"], rs.kid());
    assert_eq!(header(&token)["alg"], "RS256");

    let hs = TokenCodec::new(JwtKeys::hmac(&[9; 32]).expect("secret"), 0).expect("codec");
    let token = hs.encode(&access()).expect("signs");
    assert_eq!(header(&token)["kid"], hs.kid());
    assert!(hs.kid().starts_with("hs256-"), "an HS256 kid names the secret without being it: {}", hs.kid());
}

#[test]
fn the_kid_of_a_key_pair_is_its_rfc7638_thumbprint_and_stable() {
    // The same key read twice, from the private or the public half, has
    // the same id: instances agree and restarts change nothing.
    let from_private = codec(JwtAlgorithm::RS256, RSA_PRIVATE);
    assert_eq!(from_private.kid(), public(RSA_PUBLIC).kid());
    assert_eq!(codec(JwtAlgorithm::ES256, EC_PRIVATE).kid(), public(EC_PUBLIC).kid());
    assert_ne!(public(RSA_PUBLIC).kid(), public(RSA_OTHER_PUBLIC).kid());
    // RFC 7638 §3: SHA-256 over the required members in lexicographic
    // order, base64url without padding (43 characters).
    let jwk = serde_json::to_value(public(RSA_PUBLIC).jwk()).expect("JSON");
    let canonical =
        format!(r#"{{"e":"{}","kty":"RSA","n":"{}"}}"#, jwk["e"].as_str().expect("e"), jwk["n"].as_str().expect("n"));
    let digest = <sha2::Sha256 as sha2::Digest>::digest(canonical.as_bytes());
    assert_eq!(public(RSA_PUBLIC).kid(), URL_SAFE_NO_PAD.encode(digest));
}

#[test]
fn a_token_of_a_previous_key_verifies_until_it_expires_and_new_tokens_use_the_current_key() {
    let old = codec(JwtAlgorithm::RS256, RSA_PRIVATE);
    let old_token = old.encode(&access()).expect("signs");

    let rotated =
        codec(JwtAlgorithm::RS256, RSA_OTHER_PRIVATE).with_previous_keys(vec![public(RSA_PUBLIC)]).expect("previous");
    assert_eq!(rotated.decode(&old_token, NOW + 10).expect("still valid").user_id, Some(7));
    assert_eq!(rotated.decode(&old_token, NOW + 300), Err(TokenError::Expired));

    let new_token = rotated.encode(&access()).expect("signs");
    assert_eq!(header(&new_token)["kid"], public(RSA_OTHER_PUBLIC).kid());
    // Without the previous key, the old token is refused.
    let without = codec(JwtAlgorithm::RS256, RSA_OTHER_PRIVATE);
    assert_eq!(without.decode(&old_token, NOW + 10), Err(TokenError::Invalid));
}

#[test]
fn a_previous_key_of_the_other_algorithm_verifies_its_own_algorithm_only() {
    // Rotating from ES256 to RS256: the old ES256 tokens still verify.
    let es = codec(JwtAlgorithm::ES256, EC_PRIVATE);
    let es_token = es.encode(&access()).expect("signs");
    let rs = codec(JwtAlgorithm::RS256, RSA_PRIVATE).with_previous_keys(vec![public(EC_PUBLIC)]).expect("previous");
    assert!(rs.decode(&es_token, NOW).is_ok());

    // A token naming the EC key's kid but claiming HS256 (signed with the
    // public key's bytes as an HMAC secret) is refused: the key's
    // algorithm, not the header's, decides.
    let mut forged = Header::new(Algorithm::HS256);
    forged.kid = Some(public(EC_PUBLIC).kid().to_owned());
    let token = jsonwebtoken::encode(&forged, &access(), &EncodingKey::from_secret(EC_PUBLIC)).expect("signs");
    assert_eq!(rs.decode(&token, NOW), Err(TokenError::Invalid));
}

#[test]
fn an_unknown_kid_is_refused_and_a_token_without_kid_uses_the_current_key() {
    let rs = codec(JwtAlgorithm::RS256, RSA_PRIVATE);
    let key = EncodingKey::from_rsa_pem(RSA_PRIVATE).expect("key");
    let mut unknown = Header::new(Algorithm::RS256);
    unknown.kid = Some("not-a-key-we-have".into());
    let token = jsonwebtoken::encode(&unknown, &access(), &key).expect("signs");
    assert_eq!(rs.decode(&token, NOW), Err(TokenError::Invalid), "the right signature under an unknown kid");

    // Tokens issued before key ids existed carry none: the current key.
    let token = jsonwebtoken::encode(&Header::new(Algorithm::RS256), &access(), &key).expect("signs");
    assert!(rs.decode(&token, NOW).is_ok());
    let other = codec(JwtAlgorithm::RS256, RSA_OTHER_PRIVATE).with_previous_keys(vec![public(RSA_PUBLIC)]).expect("ok");
    assert_eq!(other.decode(&token, NOW), Err(TokenError::Invalid), "no kid means the current key only");
}

#[test]
fn the_published_keys_are_public_and_none_with_hs256() {
    let rs = codec(JwtAlgorithm::RS256, RSA_PRIVATE)
        .with_previous_keys(vec![public(EC_PUBLIC), public(RSA_PUBLIC)])
        .expect("ok");
    let jwks: Vec<Value> = rs.public_jwks().iter().map(|k| serde_json::to_value(k).expect("JSON")).collect();
    assert_eq!(jwks.len(), 2, "the current key listed again as previous is published once");
    assert_eq!(jwks[0]["kid"], rs.kid());
    assert_eq!(
        (jwks[0]["kty"].as_str(), jwks[0]["alg"].as_str(), jwks[0]["use"].as_str()),
        (Some("RSA"), Some("RS256"), Some("sig"))
    );
    assert_eq!(
        (jwks[1]["kty"].as_str(), jwks[1]["crv"].as_str(), jwks[1]["alg"].as_str()),
        (Some("EC"), Some("P-256"), Some("ES256"))
    );
    for jwk in &jwks {
        for private_member in ["d", "p", "q", "dp", "dq", "qi", "k"] {
            assert!(jwk.get(private_member).is_none(), "no private member {private_member} in {jwk}");
        }
    }
    let hs = TokenCodec::new(JwtKeys::hmac(&[9; 32]).expect("secret"), 0).expect("codec");
    assert!(hs.public_jwks().is_empty());
    assert!(matches!(hs.with_previous_keys(vec![public(RSA_PUBLIC)]), Err(KeyError::PreviousKeysNeedAsymmetric(_))));
}

#[test]
fn a_published_key_verifies_the_tokens_it_names() {
    for (algorithm, private) in [(JwtAlgorithm::RS256, RSA_PRIVATE), (JwtAlgorithm::ES256, EC_PRIVATE)] {
        let signer = codec(algorithm, private);
        let token = signer.encode(&access()).expect("signs");
        let jwk = &signer.public_jwks()[0];
        let key = jsonwebtoken::DecodingKey::from_jwk(jwk).expect("a usable JWK");
        let mut validation = jsonwebtoken::Validation::new(if algorithm == JwtAlgorithm::ES256 {
            Algorithm::ES256
        } else {
            Algorithm::RS256
        });
        validation.validate_exp = false;
        validation.required_spec_claims.clear();
        jsonwebtoken::decode::<Claims>(&token, &key, &validation).expect("verifies with the published key alone");
    }
}

#[test]
fn generated_pairs_sign_and_verify_and_their_public_half_is_published() {
    for algorithm in [JwtAlgorithm::RS256, JwtAlgorithm::ES256] {
        let (private, public_pem) = generate_pem_pair(algorithm).expect("generates");
        assert!(private.starts_with("-----BEGIN PRIVATE KEY-----"), "PKCS#8");
        assert!(public_pem.starts_with("-----BEGIN PUBLIC KEY-----"), "SubjectPublicKeyInfo");
        let keys = JwtKeys::asymmetric(algorithm, private.as_bytes(), public_pem.as_bytes()).expect("a matching pair");
        let signer = TokenCodec::new(keys, 0).expect("codec");
        assert_eq!(signer.kid(), public(public_pem.as_bytes()).kid());
        let token = signer.encode(&access()).expect("signs");
        assert!(signer.decode(&token, NOW).is_ok());
        assert!(!format!("{private:?}").contains("PRIVATE"), "Debug hides the private key");
    }
    let (_, rsa_public) = generate_pem_pair(JwtAlgorithm::RS256).expect("generates");
    let n =
        serde_json::to_value(public(rsa_public.as_bytes()).jwk()).expect("JSON")["n"].as_str().expect("n").to_owned();
    assert_eq!(URL_SAFE_NO_PAD.decode(n).expect("base64url").len() * 8, RSA_KEY_BITS, "the modulus size");
    assert!(generate_pem_pair(JwtAlgorithm::HS256).is_err());
}

#[test]
fn a_private_key_of_the_wrong_kind_or_a_mismatched_pair_is_refused() {
    assert!(matches!(JwtKeys::from_private_pem(JwtAlgorithm::ES256, RSA_PRIVATE), Err(KeyError::BadPem { .. })));
    assert!(matches!(JwtKeys::from_private_pem(JwtAlgorithm::RS256, EC_PRIVATE), Err(KeyError::BadPem { .. })));
    assert!(matches!(JwtKeys::from_private_pem(JwtAlgorithm::RS256, RSA_PUBLIC), Err(KeyError::BadPem { .. })));
    assert!(matches!(PublicKey::from_pem(RSA_PRIVATE), Err(KeyError::BadPublicKey(_))));
    assert!(matches!(PublicKey::from_pem(b"not a key"), Err(KeyError::BadPublicKey(_))));
    let mismatched = JwtKeys::asymmetric(JwtAlgorithm::RS256, RSA_PRIVATE, RSA_OTHER_PUBLIC).expect("both parse");
    assert!(matches!(TokenCodec::new(mismatched, 0), Err(KeyError::Mismatch)));
}
