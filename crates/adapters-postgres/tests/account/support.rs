//! Users and clients for the account tests.

use credencial_adapters_postgres::testing::TestDatabase;
use credencial_adapters_postgres::PgOAuthClientRepository;
use credencial_domain::oauth::ClientId;
use credencial_domain::{ScopeSet, UserId};
use credencial_ports::{OAuthClient, OAuthClientRepository};

pub const NOW: i64 = 1_900_000_000;

pub async fn user(db: &TestDatabase, name: &str, cpf: Option<&str>) -> UserId {
    db.create_user(name, cpf).await
}

pub fn client_id(raw: &str) -> ClientId {
    ClientId::parse(raw).expect("client id")
}

pub async fn client(db: &TestDatabase, id: &str, name: &str) -> ClientId {
    PgOAuthClientRepository::new(db.pool.clone())
        .create(
            OAuthClient {
                client_id: client_id(id),
                name: name.to_owned(),
                secret_hash: None,
                redirect_uris: vec!["https://app.example.gov.br/cb".to_owned()],
                post_logout_redirect_uris: vec![],
                confidential: false,
                require_pkce: true,
                enabled_scopes: ScopeSet::all(),
                is_active: true,
                created_at: 0,
            },
            &credencial_adapters_postgres::testing::setup_audit(),
        )
        .await
        .expect("client");
    client_id(id)
}

pub fn scopes(text: &str) -> ScopeSet {
    ScopeSet::parse_strict(text).expect("known scopes")
}
