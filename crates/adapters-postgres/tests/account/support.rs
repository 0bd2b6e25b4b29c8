//! Users and clients for the account tests.

use credencial_adapters_postgres::testing::TestDatabase;
use credencial_adapters_postgres::{PgOAuthClientRepository, PgUserRepository};
use credencial_domain::oauth::ClientId;
use credencial_domain::{ScopeSet, UserData, UserId, Username};
use credencial_ports::{NewUser, OAuthClient, OAuthClientRepository, UserRepository};

pub const NOW: i64 = 1_900_000_000;

pub async fn user(db: &TestDatabase, name: &str, cpf: Option<&str>) -> UserId {
    PgUserRepository::new(db.pool.clone())
        .create(NewUser {
            username: Username::parse(name).expect("username"),
            password_hash: "pbkdf2_sha256$1$s$h".into(),
            is_active: true,
            data: UserData { email: format!("{name}@example.gov.br"), ..UserData::default() },
            name: format!("Full {name}"),
            cpf: cpf.map(str::to_owned),
        })
        .await
        .expect("user")
}

pub fn client_id(raw: &str) -> ClientId {
    ClientId::parse(raw).expect("client id")
}

pub async fn client(db: &TestDatabase, id: &str, name: &str) -> ClientId {
    PgOAuthClientRepository::new(db.pool.clone())
        .create(OAuthClient {
            client_id: client_id(id),
            name: name.to_owned(),
            secret_hash: None,
            redirect_uris: vec!["https://app.example.gov.br/cb".to_owned()],
            confidential: false,
            require_pkce: true,
            enabled_scopes: ScopeSet::all(),
        })
        .await
        .expect("client");
    client_id(id)
}

pub fn scopes(text: &str) -> ScopeSet {
    ScopeSet::parse_strict(text).expect("known scopes")
}
