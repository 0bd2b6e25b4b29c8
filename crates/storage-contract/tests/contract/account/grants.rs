//! Stored grants: widening (also concurrent), the check, the list,
//! revocation.

use credencial_domain::ScopeSet;
use credencial_storage_contract::{contract, Backend};

use super::support::{client, is_current, refresh_token, scopes, user, NOW};

contract!(
    a_first_grant_is_stored_and_later_approvals_widen_it_never_narrow_it,
    grants_are_per_user_and_client,
    a_use_moves_last_used_forward_only,
    concurrent_widenings_all_end_up_in_the_union,
    revoking_deletes_the_grant_and_the_client_s_refresh_families_of_that_person_only,
    deleting_a_client_deletes_its_grants,
    a_grant_for_a_user_or_client_that_does_not_exist_is_an_error,
);

async fn a_first_grant_is_stored_and_later_approvals_widen_it_never_narrow_it<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let portal = client(&b, "portal", "Portal do Servidor").await;
    let grants = b.grants();
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

async fn grants_are_per_user_and_client<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let bruno = user(&b, "bruno", None).await;
    let portal = client(&b, "portal", "Portal").await;
    let host = client(&b, "demo-host", "Aplicação de demonstração").await;
    let grants = b.grants();
    grants.widen(ana, &portal, scopes("cnes"), NOW).await.expect("widen");
    assert!(!grants.is_granted(bruno, &portal).await.expect("check"));
    assert!(!grants.is_granted(ana, &host).await.expect("check"));
    assert_eq!(grants.widen(ana, &host, ScopeSet::empty(), NOW + 10).await.expect("widen"), ScopeSet::empty());
    assert_eq!(grants.granted_scopes(ana, &host).await.expect("read"), Some(ScopeSet::empty()), "a grant of nothing");
    let listed: Vec<_> = grants.list(ana).await.expect("list").into_iter().map(|g| g.client_name).collect();
    assert_eq!(listed, ["Aplicação de demonstração", "Portal"], "most recently used first");
    assert!(grants.list(bruno).await.expect("list").is_empty());
}

async fn a_use_moves_last_used_forward_only<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let portal = client(&b, "portal", "Portal").await;
    let grants = b.grants();
    assert!(!grants.mark_used(ana, &portal, NOW).await.expect("no grant yet"));
    grants.widen(ana, &portal, scopes("cnes"), NOW).await.expect("widen");
    assert!(grants.mark_used(ana, &portal, NOW + 300).await.expect("use"));
    assert!(grants.mark_used(ana, &portal, NOW + 100).await.expect("late, out-of-order use"));
    let g = grants.list(ana).await.expect("list").pop().expect("one");
    assert_eq!((g.first_granted_at, g.last_used_at), (NOW, NOW + 300));
    grants.widen(ana, &portal, scopes("cpf"), NOW + 200).await.expect("a widening dated before the last use");
    let g = grants.list(ana).await.expect("list").pop().expect("one");
    assert_eq!((g.first_granted_at, g.last_used_at), (NOW, NOW + 300));
}

async fn concurrent_widenings_all_end_up_in_the_union<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let portal = client(&b, "portal", "Portal").await;
    let grants = b.grants();
    let each = ["receita_federal", "cnes", "experiencia_profissional", "formacao_academica", "cursos_cdp", "cpf"];
    // Several rounds, each starting without a grant: the first inserts race too.
    for round in 0..5 {
        let tasks: Vec<_> = each
            .iter()
            .map(|name| {
                let (grants, portal) = (grants.clone(), portal.clone());
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

async fn revoking_deletes_the_grant_and_the_client_s_refresh_families_of_that_person_only<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let bruno = user(&b, "bruno", None).await;
    let portal = client(&b, "portal", "Portal").await;
    // A client id with LIKE's wildcard: it must not match other clients' families.
    let other = client(&b, "porta_", "Outro").await;
    let grants = b.grants();
    refresh_token(&b, "ana-portal", ana, "code:portal:aaaa").await;
    refresh_token(&b, "ana-portal-2", ana, "code:portal:bbbb").await;
    refresh_token(&b, "ana-other", ana, "code:porta_:cccc").await;
    refresh_token(&b, "ana-portal-x", ana, "code:portalx:eeee").await;
    refresh_token(&b, "ana-pair", ana, "ana-pair").await;
    refresh_token(&b, "bruno-portal", bruno, "code:portal:dddd").await;
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
        ("ana-portal-x", true),
        ("ana-pair", true),
        ("bruno-portal", true),
    ] {
        assert_eq!(is_current(&b, jti).await, current, "{jti}");
    }
    assert!(!grants.revoke(ana, &portal).await.expect("revoke again"), "nothing left to revoke");
}

async fn deleting_a_client_deletes_its_grants<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let portal = client(&b, "portal", "Portal").await;
    let grants = b.grants();
    grants.widen(ana, &portal, scopes("cnes"), NOW).await.expect("widen");
    b.execute("DELETE FROM oauth_clients WHERE client_id = 'portal'").await;
    assert!(grants.list(ana).await.expect("list").is_empty());
    assert!(!grants.is_granted(ana, &portal).await.expect("check"));
}

async fn a_grant_for_a_user_or_client_that_does_not_exist_is_an_error<B: Backend>() {
    let b = B::fresh().await;
    let ana = user(&b, "ana", None).await;
    let portal = client(&b, "portal", "Portal").await;
    let grants = b.grants();
    let nobody = credencial_domain::UserId(ana.0 + 1000);
    assert!(grants.widen(nobody, &portal, scopes("cnes"), NOW).await.is_err(), "no such user");
    let unknown = super::support::client_id("unknown-app");
    assert!(grants.widen(ana, &unknown, scopes("cnes"), NOW).await.is_err(), "no such client");
    assert!(grants.list(ana).await.expect("list").is_empty());
}
