use super::*;

fn record() -> ReceitaFederal {
    ReceitaFederal {
        nome: "Bruno Pereira Lima".into(),
        dt_nascimento: "1991-07-21".into(),
        sexo: "M".into(),
        mae: "Joana Pereira Lima".into(),
        no_municipio: "Natal".into(),
        uf: "RN".into(),
    }
}

#[test]
fn names_match_without_accents_case_or_extra_spaces() {
    let cases = [
        ("Maria José da Conceição", "MARIA JOSE DA CONCEICAO", true),
        ("  maria   josé da   conceição ", "Maria José da Conceição", true),
        ("Conceição", "Conceicao", true),
        ("JOÃO", "joao", true),
        ("Ângela Müller", "angela muller", true),
        ("Maria\tJosé", "maria jose", true),
        // Precomposed and decomposed forms of the same accents.
        ("Jos\u{e9}", "Jose\u{301}", true),
        ("Maria José", "Maria Josefa", false),
        ("Maria José", "Maria", false),
        ("Maria da Silva", "Maria de Silva", false),
        ("", "", false),
        ("   ", "", false),
    ];
    for (a, b, want) in cases {
        assert_eq!(names_match(a, b), want, "{a:?} vs {b:?}");
        assert_eq!(names_match(b, a), want, "symmetric: {b:?} vs {a:?}");
    }
}

#[test]
fn a_claim_matches_only_when_the_date_is_exact_and_the_names_agree() {
    let cases = [
        ("1991-07-21", "Joana Pereira Lima", TaxIdMatch::Match),
        ("1991-07-21", "JOANA  pereira lima ", TaxIdMatch::Match),
        ("1991-07-21", "Joána Pereira Lima", TaxIdMatch::Match),
        ("1991-07-22", "Joana Pereira Lima", TaxIdMatch::Mismatch),
        ("1991-07-21", "Joana Lima", TaxIdMatch::Mismatch),
        ("1990-01-01", "Maria", TaxIdMatch::Mismatch),
    ];
    for (date, mae, want) in cases {
        let claim = TaxIdClaim::parse(date, mae).expect("well-formed");
        assert_eq!(claim.compare(&record()), want, "{date} {mae}");
    }
}

#[test]
fn a_claim_that_is_not_well_formed_is_refused_before_any_comparison() {
    let cases = [
        ("", "Joana", vec![("data_nascimento", "Informe a data de nascimento.")]),
        ("21/07/1991", "Joana", vec![("data_nascimento", crate::account::entries::MSG_DATA_INVALIDA)]),
        ("1991-07-21", "  ", vec![("nome_mae", "Informe o nome da mãe.")]),
        ("", "", vec![("data_nascimento", "Informe a data de nascimento."), ("nome_mae", "Informe o nome da mãe.")]),
        ("1991-07-21", &"J".repeat(201), vec![("nome_mae", "Use no máximo 200 caracteres.")]),
    ];
    for (date, mae, want) in cases {
        let errors = TaxIdClaim::parse(date, mae).expect_err("refused");
        let got: Vec<_> = errors.iter().map(|e| (e.field, e.message.as_str())).collect();
        assert_eq!(got, want, "{date:?} {mae:?}");
    }
}

#[test]
fn a_claim_never_shows_what_was_typed_in_debug() {
    let claim = TaxIdClaim::parse("1991-07-21", "Joana Pereira Lima").expect("well-formed");
    let shown = format!("{claim:?}");
    assert!(!shown.contains("1991") && !shown.contains("Joana"), "{shown}");
}

const NOW: i64 = 1_900_000_000;
const HOUR: i64 = 3_600;

#[test]
fn five_attempts_a_day_then_the_time_until_the_oldest_leaves_the_window() {
    let cases: [(&[i64], AttemptVerdict); 7] = [
        (&[], AttemptVerdict::Allowed { remaining: 5 }),
        (&[NOW - HOUR], AttemptVerdict::Allowed { remaining: 4 }),
        (&[NOW - 4 * HOUR, NOW - 3 * HOUR, NOW - 2 * HOUR, NOW - HOUR], AttemptVerdict::Allowed { remaining: 1 }),
        (
            &[NOW - HOUR, NOW - 5 * HOUR, NOW - 4 * HOUR, NOW - 3 * HOUR, NOW - 2 * HOUR],
            AttemptVerdict::Limited { retry_after_secs: 19 * HOUR },
        ),
        // An attempt exactly 24 h old no longer counts.
        (
            &[NOW - 24 * HOUR, NOW - 4 * HOUR, NOW - 3 * HOUR, NOW - 2 * HOUR, NOW - HOUR],
            AttemptVerdict::Allowed { remaining: 1 },
        ),
        (
            &[NOW - 24 * HOUR + 1, NOW - 4 * HOUR, NOW - 3 * HOUR, NOW - 2 * HOUR, NOW - HOUR],
            AttemptVerdict::Limited { retry_after_secs: 1 },
        ),
        // More than five (e.g. recorded before a limit change): the wait is
        // until the count falls below five.
        (
            &[NOW - 6 * HOUR, NOW - 5 * HOUR, NOW - 4 * HOUR, NOW - 3 * HOUR, NOW - 2 * HOUR, NOW - HOUR],
            AttemptVerdict::Limited { retry_after_secs: 19 * HOUR },
        ),
    ];
    for (attempts, want) in cases {
        assert_eq!(attempt_verdict(attempts, NOW), want, "{attempts:?}");
    }
}

#[test]
fn the_wait_is_told_in_hours_and_minutes() {
    let cases = [
        (AttemptVerdict::Allowed { remaining: 2 }, None),
        (AttemptVerdict::Limited { retry_after_secs: 1 }, Some("1 min")),
        (AttemptVerdict::Limited { retry_after_secs: 19 * HOUR }, Some("19 h")),
        (AttemptVerdict::Limited { retry_after_secs: 3 * HOUR + 4 * 60 + 1 }, Some("3 h 05 min")),
    ];
    for (verdict, wait) in cases {
        let want = wait.map(|w| format!("Você atingiu o limite de 5 tentativas em 24 horas. Tente novamente em {w}."));
        assert_eq!(verdict.mensagem(), want, "{verdict:?}");
    }
}
