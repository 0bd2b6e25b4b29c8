//! Users, clients and refresh tokens for the account tests, written the
//! same way on both engines.

use credencial_domain::oauth::ClientId;
use credencial_domain::{Cpf, ScopeSet, UserId};
use credencial_ports::account::CpfChange;
use credencial_storage_contract::{Backend, Engine};

/// The tests' "now" (Unix seconds), 2030-03-17.
pub const NOW: i64 = 1_900_000_000;

/// An active user `name` (the backend's [`Backend::create_user`]) with
/// `cpf`, set through the tax-id port.
pub async fn user<B: Backend>(b: &B, name: &str, cpf: Option<&str>) -> UserId {
    let id = b.create_user(name).await;
    if let Some(cpf) = cpf {
        let cpf = Cpf::parse(cpf).expect("cpf");
        assert_eq!(b.tax_id().change_cpf(id, &cpf).await.expect("cpf"), CpfChange::Changed);
    }
    id
}

/// A client id.
pub fn client_id(raw: &str) -> ClientId {
    ClientId::parse(raw).expect("client id")
}

/// A public client `id` named `name` with every scope enabled. Written as
/// a row: the tests need a client, not the client registry's rules.
pub async fn client<B: Backend>(b: &B, id: &str, name: &str) -> ClientId {
    let (redirect_uris, scopes) = match B::ENGINE {
        Engine::Postgres => (
            "'{https://app.example.gov.br/cb}'",
            "'{dados_publicos,cpf,email,receita_federal,cnes,experiencia_profissional,formacao_academica,cursos_cdp}'",
        ),
        Engine::Sqlite => (
            r#"'["https://app.example.gov.br/cb"]'"#,
            r#"'["dados_publicos","cpf","email","receita_federal","cnes","experiencia_profissional","formacao_academica","cursos_cdp"]'"#,
        ),
    };
    b.execute(&format!(
        "INSERT INTO oauth_clients (client_id, name, confidential, redirect_uris, require_pkce, enabled_scopes) \
         VALUES ('{id}', '{name}', FALSE, {redirect_uris}, TRUE, {scopes})"
    ))
    .await;
    client_id(id)
}

/// A scope set.
pub fn scopes(text: &str) -> ScopeSet {
    ScopeSet::parse_strict(text).expect("known scopes")
}

/// Records a current refresh token `jti` of `user` in `family`, expiring
/// a day after [`NOW`].
pub async fn refresh_token<B: Backend>(b: &B, jti: &str, user: UserId, family: &str) {
    let expires = match B::ENGINE {
        Engine::Postgres => format!("to_timestamp({})", NOW + 86_400),
        Engine::Sqlite => (NOW + 86_400).to_string(),
    };
    b.execute(&format!(
        "INSERT INTO refresh_tokens (jti, user_id, expires_at, family) VALUES ('{jti}', {}, {expires}, '{family}')",
        user.0
    ))
    .await;
}

/// Whether the refresh token `jti` is current (recorded, neither rotated
/// nor revoked).
pub async fn is_current<B: Backend>(b: &B, jti: &str) -> bool {
    b.count(&format!("SELECT count(*) FROM refresh_tokens WHERE jti = '{jti}' AND rotated_at IS NULL")).await == 1
}
