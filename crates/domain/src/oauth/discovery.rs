//! OpenID Connect Discovery 1.0: the issuer identifier (the `issuer_url`
//! setting) and the provider's metadata document
//! (`/.well-known/openid-configuration`, §3).

use serde::Serialize;
use thiserror::Error;
use url::Url;

use super::response_mode::RESPONSE_MODES_SUPPORTED;
use super::userinfo::CLAIMS_SUPPORTED;
use super::{is_loopback_host, PKCE_METHOD_S256};
use crate::jwt::JwtAlgorithm;
use crate::scope::{Scope, OPENID};

/// Where the discovery document is served, below the issuer.
pub const DISCOVERY_PATH: &str = "/.well-known/openid-configuration";

/// Where the provider's public keys are published, below the issuer.
pub const JWKS_PATH: &str = "/.well-known/jwks.json";

/// The issuer identifier: an absolute `https` URL (or `http` on a loopback
/// host) without query, fragment or user information, written without a
/// trailing slash. ID tokens carry it as `iss` exactly, and every endpoint
/// of the discovery document starts with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuerUrl(String);

/// Why an issuer URL was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum IssuerUrlError {
    /// Not an absolute http(s) URL with a host.
    #[error("must be an absolute URL such as https://id.example.gov.br")]
    NotAbsolute,
    /// `http` for a host that is not loopback.
    #[error("must use https (http only for localhost or a loopback address)")]
    InsecureHttp,
    /// Has a query, a fragment or user information.
    #[error("must not have a query (?), a fragment (#) or user information")]
    Extra,
}

impl IssuerUrl {
    /// Validates `raw` (surrounding whitespace and trailing slashes are
    /// dropped).
    pub fn parse(raw: &str) -> Result<Self, IssuerUrlError> {
        let text = raw.trim().trim_end_matches('/');
        if text.contains(['?', '#']) {
            return Err(IssuerUrlError::Extra);
        }
        if !text.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(IssuerUrlError::NotAbsolute);
        }
        let url = Url::parse(text).map_err(|_| IssuerUrlError::NotAbsolute)?;
        let authority = text.get(url.scheme().len()..).and_then(|rest| rest.strip_prefix("://"));
        if !authority.is_some_and(|a| !a.is_empty() && !a.starts_with('/')) {
            return Err(IssuerUrlError::NotAbsolute);
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(IssuerUrlError::Extra);
        }
        let host = url.host().ok_or(IssuerUrlError::NotAbsolute)?;
        match url.scheme() {
            "https" => {}
            "http" if is_loopback_host(&host) => {}
            "http" => return Err(IssuerUrlError::InsecureHttp),
            _ => return Err(IssuerUrlError::NotAbsolute),
        }
        Ok(Self(text.to_owned()))
    }

    /// The identifier.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The URL of `path` (which starts with `/`) below the issuer.
    pub fn join(&self, path: &str) -> String {
        format!("{}{path}", self.0)
    }
}

/// The paths of the provider's endpoints (the HTTP layer's routes).
#[derive(Debug, Clone, Copy)]
pub struct EndpointPaths {
    /// `/oauth/authorize/`.
    pub authorization: &'static str,
    /// `/oauth/token/`.
    pub token: &'static str,
    /// `/oauth/userinfo/`.
    pub userinfo: &'static str,
    /// `/oauth/logout/`.
    pub end_session: &'static str,
    /// `/oauth/revoke/`.
    pub revocation: &'static str,
    /// `/oauth/introspect/`.
    pub introspection: &'static str,
}

/// The discovery document (OIDC Discovery 1.0 §3, and RFC 8414's members
/// for revocation and introspection). The two `credencial_*` members are
/// our extension: how the access and refresh tokens (the simplejwt-style
/// lane and the OAuth2 lane) are signed, and whether their key is the one
/// published at `jwks_uri` (never with HS256: a shared secret is not
/// published).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProviderMetadata {
    /// The issuer identifier.
    pub issuer: String,
    /// The authorization endpoint.
    pub authorization_endpoint: String,
    /// The token endpoint.
    pub token_endpoint: String,
    /// The userinfo endpoint.
    pub userinfo_endpoint: String,
    /// The public keys of the ID tokens.
    pub jwks_uri: String,
    /// RP-initiated logout.
    pub end_session_endpoint: String,
    /// RFC 7009 token revocation.
    pub revocation_endpoint: String,
    /// RFC 7662 token introspection.
    pub introspection_endpoint: String,
    /// `["code"]`.
    pub response_types_supported: &'static [&'static str],
    /// `["query", "fragment", "form_post"]`.
    pub response_modes_supported: &'static [&'static str],
    /// `authorization_code` and `refresh_token`.
    pub grant_types_supported: &'static [&'static str],
    /// `["public"]`: the same `sub` for every client.
    pub subject_types_supported: &'static [&'static str],
    /// The ID tokens' algorithm.
    pub id_token_signing_alg_values_supported: Vec<String>,
    /// `openid`, `profile` and the scope catalogue.
    pub scopes_supported: Vec<&'static str>,
    /// The claims of the ID token and of userinfo.
    pub claims_supported: &'static [&'static str],
    /// How clients authenticate at the token endpoint.
    pub token_endpoint_auth_methods_supported: &'static [&'static str],
    /// How clients authenticate at the revocation endpoint.
    pub revocation_endpoint_auth_methods_supported: &'static [&'static str],
    /// How clients authenticate at the introspection endpoint.
    pub introspection_endpoint_auth_methods_supported: &'static [&'static str],
    /// `["S256"]` (`plain` is refused).
    pub code_challenge_methods_supported: &'static [&'static str],
    /// The `prompt` values understood.
    pub prompt_values_supported: &'static [&'static str],
    /// The authentication context classes this provider reaches, weakest
    /// first (`acr_values` takes them; ID tokens say which one was met).
    pub acr_values_supported: &'static [&'static str],
    /// The pages' language.
    pub ui_locales_supported: &'static [&'static str],
    /// The `claims` parameter is not supported.
    pub claims_parameter_supported: bool,
    /// Request objects are not supported.
    pub request_parameter_supported: bool,
    /// Request objects by reference are not supported.
    pub request_uri_parameter_supported: bool,
    /// Applications that name a `backchannel_logout_uri` are told when a
    /// session ends (OpenID Connect Back-Channel Logout 1.0).
    pub backchannel_logout_supported: bool,
    /// Logout tokens (and ID tokens) carry `sid`.
    pub backchannel_logout_session_supported: bool,
    /// The algorithm of the access and refresh tokens (extension).
    pub credencial_access_token_signing_alg: String,
    /// Whether the access tokens' key is published at `jwks_uri`
    /// (extension): `false` with HS256.
    pub credencial_access_token_key_published: bool,
}

/// Client authentication at the token endpoint: Basic, form fields, or a
/// public client's `client_id` alone (with PKCE).
const TOKEN_AUTH_METHODS: [&str; 3] = ["client_secret_basic", "client_secret_post", "none"];

/// Client authentication where only confidential clients are served.
const SECRET_AUTH_METHODS: [&str; 2] = ["client_secret_basic", "client_secret_post"];

impl ProviderMetadata {
    /// The document of the provider at `issuer` with its endpoints at
    /// `paths`, signing ID tokens with `id_token_alg` and the access and
    /// refresh tokens with `access_token_alg`.
    pub fn new(
        issuer: &IssuerUrl,
        paths: EndpointPaths,
        id_token_alg: JwtAlgorithm,
        access_token_alg: JwtAlgorithm,
    ) -> Self {
        let scopes_supported =
            [OPENID, super::oidc::PROFILE_SCOPE].into_iter().chain(Scope::ALL.map(Scope::name)).collect();
        Self {
            issuer: issuer.as_str().to_owned(),
            authorization_endpoint: issuer.join(paths.authorization),
            token_endpoint: issuer.join(paths.token),
            userinfo_endpoint: issuer.join(paths.userinfo),
            jwks_uri: issuer.join(JWKS_PATH),
            end_session_endpoint: issuer.join(paths.end_session),
            revocation_endpoint: issuer.join(paths.revocation),
            introspection_endpoint: issuer.join(paths.introspection),
            response_types_supported: &["code"],
            response_modes_supported: &RESPONSE_MODES_SUPPORTED,
            grant_types_supported: &["authorization_code", "refresh_token", "client_credentials"],
            subject_types_supported: &["public"],
            id_token_signing_alg_values_supported: vec![id_token_alg.to_string()],
            scopes_supported,
            claims_supported: &CLAIMS_SUPPORTED,
            token_endpoint_auth_methods_supported: &TOKEN_AUTH_METHODS,
            revocation_endpoint_auth_methods_supported: &SECRET_AUTH_METHODS,
            introspection_endpoint_auth_methods_supported: &SECRET_AUTH_METHODS,
            code_challenge_methods_supported: &[PKCE_METHOD_S256],
            prompt_values_supported: &["none", "login", "consent", "select_account"],
            acr_values_supported: &[
                crate::session::ACR_PASSWORD,
                crate::session::ACR_TWO_FACTORS,
                crate::federation::level::ACR_BRONZE,
                crate::federation::level::ACR_PRATA,
                crate::federation::level::ACR_OURO,
            ],
            ui_locales_supported: &["pt-BR"],
            claims_parameter_supported: false,
            request_parameter_supported: false,
            request_uri_parameter_supported: false,
            backchannel_logout_supported: true,
            backchannel_logout_session_supported: true,
            credencial_access_token_signing_alg: access_token_alg.to_string(),
            credencial_access_token_key_published: access_token_alg != JwtAlgorithm::HS256,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issuer_urls_are_https_or_loopback_http_without_query_or_fragment() {
        for (raw, want) in [
            ("https://id.example.gov.br", "https://id.example.gov.br"),
            (" https://id.example.gov.br/ ", "https://id.example.gov.br"),
            ("https://example.gov.br/credencial/", "https://example.gov.br/credencial"),
            ("http://127.0.0.1:8000", "http://127.0.0.1:8000"),
            ("http://localhost:8000/", "http://localhost:8000"),
            ("http://[::1]:8000", "http://[::1]:8000"),
        ] {
            assert_eq!(IssuerUrl::parse(raw).map(|i| i.as_str().to_owned()), Ok(want.to_owned()), "{raw}");
        }
        for (raw, why) in [
            ("id.example.gov.br", IssuerUrlError::NotAbsolute),
            ("", IssuerUrlError::NotAbsolute),
            ("https:///x", IssuerUrlError::NotAbsolute),
            ("https:id.example", IssuerUrlError::NotAbsolute),
            ("ftp://id.example", IssuerUrlError::NotAbsolute),
            ("https://id .example", IssuerUrlError::NotAbsolute),
            ("http://id.example.gov.br", IssuerUrlError::InsecureHttp),
            ("http://10.0.0.1", IssuerUrlError::InsecureHttp),
            ("https://id.example.gov.br/?a=1", IssuerUrlError::Extra),
            ("https://id.example.gov.br#x", IssuerUrlError::Extra),
            ("https://user:pw@id.example.gov.br", IssuerUrlError::Extra),
        ] {
            assert_eq!(IssuerUrl::parse(raw), Err(why), "{raw}");
        }
    }

    const PATHS: EndpointPaths = EndpointPaths {
        authorization: "/oauth/authorize/",
        token: "/oauth/token/",
        userinfo: "/oauth/userinfo/",
        end_session: "/oauth/logout/",
        revocation: "/oauth/revoke/",
        introspection: "/oauth/introspect/",
    };

    #[test]
    fn the_document_has_discovery_s_required_members_under_the_issuer() {
        let issuer = IssuerUrl::parse("https://id.example.gov.br/").expect("valid");
        let doc = ProviderMetadata::new(&issuer, PATHS, JwtAlgorithm::RS256, JwtAlgorithm::HS256);
        let json = serde_json::to_value(&doc).expect("json");
        // OIDC Discovery 1.0 §3: REQUIRED members.
        for member in [
            "issuer",
            "authorization_endpoint",
            "token_endpoint",
            "jwks_uri",
            "response_types_supported",
            "subject_types_supported",
            "id_token_signing_alg_values_supported",
        ] {
            assert!(json.get(member).is_some(), "{member} missing");
        }
        assert_eq!(json["issuer"], "https://id.example.gov.br");
        assert_eq!(json["jwks_uri"], "https://id.example.gov.br/.well-known/jwks.json");
        assert_eq!(json["end_session_endpoint"], "https://id.example.gov.br/oauth/logout/");
        for (key, value) in json.as_object().expect("object") {
            if key.ends_with("_endpoint") || key == "jwks_uri" {
                assert!(value.as_str().is_some_and(|u| u.starts_with("https://id.example.gov.br/")), "{key}");
            }
        }
        assert_eq!(json["id_token_signing_alg_values_supported"], serde_json::json!(["RS256"]));
        assert_eq!(json["code_challenge_methods_supported"], serde_json::json!(["S256"]));
        assert_eq!(json["response_modes_supported"], serde_json::json!(["query", "fragment", "form_post"]));
        // OIDC Discovery 1.0 §3: request_uri_parameter_supported defaults to
        // true, so its false is written out.
        assert_eq!(
            (&json["request_parameter_supported"], &json["request_uri_parameter_supported"]),
            (&false.into(), &false.into())
        );
        let scopes = json["scopes_supported"].as_array().expect("list");
        assert_eq!(scopes.len(), 10, "openid, profile and the eight of the catalogue");
        assert_eq!((&scopes[0], &scopes[1]), (&serde_json::json!("openid"), &serde_json::json!("profile")));
        assert_eq!(json["credencial_access_token_signing_alg"], "HS256");
        assert_eq!(json["credencial_access_token_key_published"], false, "an HS256 secret is never published");
        let es = ProviderMetadata::new(&issuer, PATHS, JwtAlgorithm::ES256, JwtAlgorithm::ES256);
        assert!(es.credencial_access_token_key_published);
        assert_eq!(es.id_token_signing_alg_values_supported, ["ES256"]);
    }

    #[test]
    fn claims_supported_names_every_claim_an_id_token_can_carry() {
        // A client that checks `claims_supported` before asking for
        // `acr_values` must find `acr` there.
        let issuer = IssuerUrl::parse("https://id.example.gov.br").expect("valid");
        let doc = ProviderMetadata::new(&issuer, PATHS, JwtAlgorithm::RS256, JwtAlgorithm::RS256);
        let client = super::super::ClientId::parse("portal").expect("id");
        let amr = ["pwd".to_owned(), "otp".to_owned(), "mfa".to_owned()];
        let full = super::super::id_token::IdTokenClaims::new(super::super::id_token::IdTokenFacts {
            issuer: issuer.as_str(),
            user: crate::UserId(7),
            client_id: &client,
            now: 1_000,
            lifetime_secs: 300,
            auth_time: Some(900),
            nonce: Some("n"),
            access_token: "a",
            acr: Some(crate::session::ACR_TWO_FACTORS),
            amr: Some(&amr),
            email: Some(("ana@example.gov.br", true)),
            sid: Some("s"),
        });
        let json = serde_json::to_value(full).expect("json");
        for claim in json.as_object().expect("object").keys() {
            assert!(doc.claims_supported.contains(&claim.as_str()), "{claim} is not in claims_supported");
        }
        assert!(doc.claims_supported.contains(&"acr"));
    }
}
