//! Own profile data: the read, its lists' order and formats, malformed
//! dates, and the once-only CNES supplement.

use credencial_domain::profile::{AcademicDegree, Experience};
use credencial_domain::{Degree, UserId};
use credencial_storage_contract::{contract, Backend};

use crate::account::support::user;

contract!(
    a_new_user_has_an_empty_unvalidated_profile,
    lists_come_back_ordered_with_the_contract_formats,
    a_malformed_date_is_refused_and_nothing_is_written,
    cnes_supplementation_happens_exactly_once_even_concurrently,
    an_inactive_user_has_no_profile,
);

fn experience(estabelecimento: &str, inicio: Option<&str>) -> Experience {
    Experience {
        estabelecimento: estabelecimento.into(),
        profissao: "Enfermeira".into(),
        data_inicio: inicio.map(str::to_owned),
        data_fim: None,
        municipio: "Natal".into(),
        descricao: String::new(),
    }
}

fn degree(curso: &str, inicio: &str, fim: Option<&str>) -> AcademicDegree {
    AcademicDegree {
        instituicao: "UFRN".into(),
        curso: curso.into(),
        data_inicio: inicio.into(),
        data_fim: fim.map(str::to_owned),
        municipio: "Natal".into(),
        descricao: "Bacharelado".into(),
        grau: Degree::Graduacao,
    }
}

async fn a_new_user_has_an_empty_unvalidated_profile<B: Backend>() {
    let b = B::fresh().await;
    let id = user(&b, "ana", Some("52998224725")).await;
    let profiles = b.profiles();
    let p = profiles.own_profile(id).await.expect("read").expect("exists");
    assert_eq!(
        (p.name.as_str(), p.email.as_str(), p.cpf.as_deref(), p.avatar.as_str()),
        ("Full ana", "ana@example.gov.br", Some("52998224725"), "")
    );
    assert!(!p.receita_validated);
    assert!(p.experiences.is_empty() && p.degrees.is_empty());
    assert!(profiles.own_profile(UserId(id.0 + 99)).await.expect("read").is_none());
}

async fn lists_come_back_ordered_with_the_contract_formats<B: Backend>() {
    let b = B::fresh().await;
    let id = user(&b, "ana", None).await;
    let repo = b.profiles();
    repo.set_profile(id, "https://example.gov.br/ana.png", true).await.expect("set");
    repo.add_experience(id, experience("Hospital B", Some("2021-05-03T08:30:00"))).await.expect("add");
    repo.add_experience(id, experience("Hospital A", Some("2019-02-01T00:00:00"))).await.expect("add");
    repo.add_experience(id, experience("Sem data", None)).await.expect("add");
    repo.add_degree(id, degree("Enfermagem", "2010-03-01", Some("2014-12-15"))).await.expect("add");
    repo.add_degree(id, degree("Especialização", "2008-01-10", None)).await.expect("add");
    let p = repo.own_profile(id).await.expect("read").expect("exists");
    assert!(p.receita_validated);
    assert_eq!(p.avatar, "https://example.gov.br/ana.png");
    let names: Vec<_> = p.experiences.iter().map(|e| e.estabelecimento.as_str()).collect();
    assert_eq!(names, ["Hospital A", "Hospital B", "Sem data"]);
    assert_eq!(p.experiences[1].data_inicio.as_deref(), Some("2021-05-03T08:30:00"));
    assert_eq!(p.experiences[2].data_inicio, None);
    assert_eq!(
        p.degrees,
        [degree("Especialização", "2008-01-10", None), degree("Enfermagem", "2010-03-01", Some("2014-12-15"))]
    );
}

async fn a_malformed_date_is_refused_and_nothing_is_written<B: Backend>() {
    let b = B::fresh().await;
    let id = user(&b, "ana", None).await;
    let repo = b.profiles();
    assert!(repo.add_experience(id, experience("X", Some("ontem"))).await.is_err());
    assert!(repo.add_experience(id, experience("X", Some("2021-02-30T00:00:00"))).await.is_err(), "no 30 February");
    assert!(repo.add_degree(id, degree("X", "2010-13-01", None)).await.is_err());
    let p = repo.own_profile(id).await.expect("read").expect("exists");
    assert!(p.experiences.is_empty() && p.degrees.is_empty());
}

async fn cnes_supplementation_happens_exactly_once_even_concurrently<B: Backend>() {
    let b = B::fresh().await;
    let id = user(&b, "ana", None).await;
    let repo = b.profiles();
    let calls: Vec<_> = (0..8)
        .map(|i| {
            let repo = repo.clone();
            tokio::spawn(async move {
                repo.supplement_from_cnes(id, vec![experience(&format!("Bond {i}"), None), experience("Other", None)])
                    .await
                    .expect("supplement")
            })
        })
        .collect();
    let mut won = 0;
    for call in calls {
        if call.await.expect("joined") {
            won += 1;
        }
    }
    assert_eq!(won, 1);
    assert_eq!(repo.own_profile(id).await.expect("read").expect("exists").experiences.len(), 2);
    assert!(!repo.supplement_from_cnes(id, vec![experience("Later", None)]).await.expect("again"));
}

async fn an_inactive_user_has_no_profile<B: Backend>() {
    let b = B::fresh().await;
    let id = user(&b, "ana", None).await;
    b.execute(&format!("UPDATE users SET is_active = FALSE WHERE id = {}", id.0)).await;
    assert!(b.profiles().own_profile(id).await.expect("read").is_none());
}
