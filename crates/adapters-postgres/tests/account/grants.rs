//! Stored grants: widening (also concurrent), the check, the list, revocation.

use std::sync::Arc;

use credencial_adapters_postgres::account::PgGrantRepository;
use credencial_adapters_postgres::testing::TestDatabase;
use credencial_adapters_postgres::PgRefreshTokenStore;
use credencial_domain::ScopeSet;
use credencial_ports::account::GrantRepository;
use credencial_ports::{NewRefreshToken, RefreshTokenStore};

use crate::support::{client, scopes, user, NOW};

#[tokio::test]
async fn a_first_grant_is_stored_and_later_approvals_widen_it_never_narrow_it() {
    let db = TestDatabase::new().await;
    let ana = user(&db, "ana", None).await;
    let portal = client(&db, "portal", "Portal do Servidor").await;
    let grants = PgGrantRepository::new(db.pool.clone());
    assert_eq!(grants.granted_scopes(ana, &portal).await.expect("read"), None);
    assert!(!grants.is_granted(ana, &portal).await.expect("check"));

    let first = grants.widen(ana, &portal, scopes("dados_publicos cpf email receita_federal"), NOW).await;
    assert_eq!(first.expect("widen"), scopes("dados_publicos cpf email receita_federal"));
    let wider = grants.widen(ana, &portal, scopes("cnes"), NOW + 60).await.expect("widen");
    assert_eq!(wider, scopes("dados_publicos cpf email receita_federal cnes"));
    let same = grants.widen(ana, &portal, scopes("cpf"), NOW + 120).await.expect("narrower approval");
    assert_eq!(same, wider, "an approval of fewer scopes does not narrow the grant");

    assert!(grants.is_granted(ana, &portal).await.expect("check"));
    assert_eq!(grants.granted_scopes(ana, &portal).await.expect("read"), Some(wider));
    let listed = grants.list(ana).await.expect("list");
    assert_eq!(listed.len(), 1);
    assert_eq!((listed[0].client_id.as_str(), listed[0].client_name.as_str()), ("portal", "Portal do Servidor"));
    assert_eq!((listed[0].first_granted_at, listed[0].last_used_at), (NOW, NOW + 120));
    assert_eq!(listed[0].scopes, wider);
}

#[tokio::test]
async fn grants_are_per_user_and_client() {
    let db = TestDatabase::new().await;
    let ana = user(&db, "ana", None).await;
    let bruno = user(&db, "bruno", None).await;
    let portal = client(&db, "portal", "Portal").await;
    let host = client(&db, "demo-host", "Aplicação de demonstração").await;
    let grants = PgGrantRepository::new(db.pool.clone());
    grants.widen(ana, &portal, scopes("cnes"), NOW).await.expect("widen");
    assert!(!grants.is_granted(bruno, &portal).await.expect("check"));
    assert!(!grants.is_granted(ana, &host).await.expect("check"));
    grants.widen(ana, &host, ScopeSet::empty(), NOW + 10).await.expect("widen");
    let listed: Vec<_> = grants.list(ana).await.expect("list").into_iter().map(|g| g.client_name).collect();
    assert_eq!(listed, ["Aplicação de demonstração", "Portal"], "most recently used first");
    assert!(grants.list(bruno).await.expect("list").is_empty());
}

#[tokio::test]
async fn a_use_moves_last_used_forward_only() {
    let db = TestDatabase::new().await;
    let ana = user(&db, "ana", None).await;
    let portal = client(&db, "portal", "Portal").await;
    let grants = PgGrantRepository::new(db.pool.clone());
    assert!(!grants.mark_used(ana, &portal, NOW).await.expect("no grant yet"));
    grants.widen(ana, &portal, scopes("cnes"), NOW).await.expect("widen");
    assert!(grants.mark_used(ana, &portal, NOW + 300).await.expect("use"));
    assert!(grants.mark_used(ana, &portal, NOW + 100).await.expect("late, out-of-order use"));
    let g = grants.list(ana).await.expect("list").pop().expect("one");
    assert_eq!((g.first_granted_at, g.last_used_at), (NOW, NOW + 300));
}

#[tokio::test]
async fn concurrent_widenings_all_end_up_in_the_union() {
    let db = TestDatabase::new().await;
    let ana = user(&db, "ana", None).await;
    let portal = client(&db, "portal", "Portal").await;
    let grants = Arc::new(PgGrantRepository::new(db.pool.clone()));
    let each = ["receita_federal", "cnes", "experiencia_profissional", "formacao_academica", "cursos_cdp", "cpf"];
    // Several rounds, each starting without a grant: the first inserts race too.
    for round in 0..5 {
        let tasks: Vec<_> = each
            .iter()
            .map(|name| {
                let (grants, portal) = (Arc::clone(&grants), portal.clone());
                let approved = scopes(name);
                tokio::spawn(async move { grants.widen(ana, &portal, approved, NOW).await.expect("widen") })
            })
            .collect();
        for task in tasks {
            task.await.expect("join");
        }
        let stored = grants.granted_scopes(ana, &portal).await.expect("read").expect("granted");
        assert_eq!(stored, scopes(&each.join(" ")), "round {round}");
        assert!(grants.revoke(ana, &portal).await.expect("revoke"));
    }
}

#[tokio::test]
async fn revoking_deletes_the_grant_and_the_client_s_refresh_families_of_that_person_only() {
    let db = TestDatabase::new().await;
    let ana = user(&db, "ana", None).await;
    let bruno = user(&db, "bruno", None).await;
    let portal = client(&db, "portal", "Portal").await;
    // A client id with LIKE's wildcard: it must not match other clients' families.
    let other = client(&db, "porta_", "Outro").await;
    let grants = PgGrantRepository::new(db.pool.clone());
    let tokens = PgRefreshTokenStore::new(db.pool.clone());
    let token = |jti: &str, user| NewRefreshToken { jti: jti.to_owned(), user_id: user, expires_at: NOW + 86_400 };
    tokens.record(token("ana-portal", ana), "code:portal:aaaa").await.expect("record");
    tokens.record(token("ana-portal-2", ana), "code:portal:bbbb").await.expect("record");
    tokens.record(token("ana-other", ana), "code:porta_:cccc").await.expect("record");
    tokens.record(token("ana-pair", ana), "ana-pair").await.expect("record");
    tokens.record(token("bruno-portal", bruno), "code:portal:dddd").await.expect("record");
    grants.widen(ana, &portal, scopes("cnes"), NOW).await.expect("widen");
    grants.widen(ana, &other, scopes("cnes"), NOW).await.expect("widen");
    grants.widen(bruno, &portal, scopes("cnes"), NOW).await.expect("widen");

    assert!(grants.revoke(ana, &portal).await.expect("revoke"));
    assert!(!grants.is_granted(ana, &portal).await.expect("check"));
    assert!(grants.is_granted(ana, &other).await.expect("check"), "other clients keep their grant");
    assert!(grants.is_granted(bruno, &portal).await.expect("check"), "other people keep theirs");
    for (jti, current) in [
        ("ana-portal", false),
        ("ana-portal-2", false),
        ("ana-other", true),
        ("ana-pair", true),
        ("bruno-portal", true),
    ] {
        assert_eq!(tokens.is_current(jti).await.expect("read"), current, "{jti}");
    }
    assert!(!grants.revoke(ana, &portal).await.expect("revoke again"), "nothing left to revoke");
}

#[tokio::test]
async fn deleting_a_client_or_a_user_deletes_their_grants() {
    let db = TestDatabase::new().await;
    let ana = user(&db, "ana", None).await;
    let portal = client(&db, "portal", "Portal").await;
    let grants = PgGrantRepository::new(db.pool.clone());
    grants.widen(ana, &portal, scopes("cnes"), NOW).await.expect("widen");
    sqlx::query("DELETE FROM oauth_clients WHERE client_id = 'portal'").execute(&db.pool).await.expect("delete");
    assert!(grants.list(ana).await.expect("list").is_empty());
}
