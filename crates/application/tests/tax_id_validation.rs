//! The tax-id validation against fakes of every port: the registry is
//! asked through the profile service's scope cache, an attempt counts only
//! once the record is at hand, and every refusal leaves the account as it
//! was.

use std::sync::{Arc, Mutex};

use credencial_application::tax_id_validation::ERRO_CPF_MUDOU;
use credencial_application::{
    ProfileService, Registries, ScopeCache, ScopeTtls, ServiceError, TaxIdValidationService, ValidationOutcome,
    ValidationState,
};
use credencial_domain::account::{window_start, TaxIdClaim};
use credencial_domain::profile::OwnProfile;
use credencial_domain::{ReceitaFederal, Scope, UserId};
use credencial_ports::account::MockTaxIdValidationStore;
use credencial_ports::{
    MockCdpDirectory, MockClock, MockCnesRegistry, MockOAuthClientRepository, MockProfileRepository, MockSnapshotStore,
    MockTaxAuthority, Snapshot, UpstreamError,
};
use mockall::predicate::eq;

const BRUNO: UserId = UserId(3);
const CPF: &str = "12345678909";
const NOW: i64 = 1_900_000_000;
const HOUR: i64 = 3_600;

fn record() -> ReceitaFederal {
    ReceitaFederal {
        nome: "BRUNO CARVALHO LIMA".into(),
        dt_nascimento: "1991-07-21".into(),
        sexo: "M".into(),
        mae: "JOANA PEREIRA LIMA".into(),
        no_municipio: "MOSSORO".into(),
        uf: "RN".into(),
    }
}

fn claim(date: &str, mae: &str) -> TaxIdClaim {
    TaxIdClaim::parse(date, mae).expect("well-formed")
}

fn right() -> TaxIdClaim {
    claim("1991-07-21", "Joana Pereira  Lima")
}

fn profiles(cpf: Option<&'static str>, validated: bool) -> MockProfileRepository {
    let mut profiles = MockProfileRepository::new();
    profiles.expect_own_profile().returning(move |_| {
        Ok(Some(OwnProfile {
            name: "Bruno Carvalho Lima".into(),
            avatar: String::new(),
            cpf: cpf.map(str::to_owned),
            email: "bruno@example.gov.br".into(),
            receita_validated: validated,
            experiences: vec![],
            degrees: vec![],
            govbr_reliability: None,
        }))
    });
    profiles
}

fn clock() -> Arc<MockClock> {
    let mut clock = MockClock::new();
    clock.expect_now().return_const(NOW);
    Arc::new(clock)
}

/// What the fake tax authority answers.
type Answer = fn() -> Result<ReceitaFederal, UpstreamError>;

/// A tax authority answering `answer` exactly `times` times.
fn registry(times: usize, answer: Answer) -> MockTaxAuthority {
    let mut tax = MockTaxAuthority::new();
    tax.expect_lookup().times(times).returning(move |cpf| {
        assert_eq!(cpf.as_str(), CPF, "the CPF on file is looked up");
        answer()
    });
    tax
}

/// A snapshot store holding `kept` (or nothing), accepting writes.
fn snapshots(kept: Option<Snapshot>) -> MockSnapshotStore {
    let mut store = MockSnapshotStore::new();
    store.expect_get_many().returning(move |_, _| Ok(kept.clone().into_iter().collect()));
    store.expect_put().returning(|_, _| Ok(()));
    store
}

fn profile_service(tax: MockTaxAuthority, store: MockSnapshotStore) -> Arc<ProfileService> {
    let registries = Registries {
        tax_authority: Arc::new(tax),
        cnes: Arc::new(MockCnesRegistry::new()),
        cdp: Arc::new(MockCdpDirectory::new()),
    };
    let cache = ScopeCache::new(Arc::new(store), clock(), ScopeTtls::default(), 100);
    Arc::new(ProfileService::new(
        Arc::new(MockOAuthClientRepository::new()),
        Arc::new(MockProfileRepository::new()),
        registries,
        cache,
        clock(),
    ))
}

/// An attempts store with `earlier` attempts in the window that records
/// attempts (up to five) and validates the CPF [`CPF`].
struct Attempts {
    times: Arc<Mutex<Vec<i64>>>,
    validated: Arc<Mutex<Vec<String>>>,
}

impl Attempts {
    fn new(earlier: &[i64]) -> Self {
        Self { times: Arc::new(Mutex::new(earlier.to_vec())), validated: Arc::default() }
    }

    fn store(&self) -> MockTaxIdValidationStore {
        let mut store = MockTaxIdValidationStore::new();
        let times = Arc::clone(&self.times);
        store.expect_attempts_since().returning(move |_, since| {
            Ok(times.lock().expect("lock").iter().copied().filter(|t| *t > since).collect())
        });
        let times = Arc::clone(&self.times);
        store.expect_record_attempt().returning(move |_, now, since, max| {
            let mut times = times.lock().expect("lock");
            let used = times.iter().filter(|t| **t > since).count();
            if used >= max as usize {
                return Ok(false);
            }
            times.push(now);
            Ok(true)
        });
        let validated = Arc::clone(&self.validated);
        store.expect_set_validated().returning(move |_, cpf| {
            validated.lock().expect("lock").push(cpf.as_str().to_owned());
            Ok(true)
        });
        store
    }

    fn recorded(&self) -> usize {
        self.times.lock().expect("lock").iter().filter(|t| **t == NOW).count()
    }

    fn validated(&self) -> Vec<String> {
        self.validated.lock().expect("lock").clone()
    }
}

fn service(
    profiles: MockProfileRepository,
    store: MockTaxIdValidationStore,
    registry: Arc<ProfileService>,
) -> TaxIdValidationService {
    TaxIdValidationService::new(Arc::new(profiles), Arc::new(store), registry, clock())
}

#[tokio::test]
async fn a_match_validates_the_cpf_on_file_and_counts_as_an_attempt() {
    let attempts = Attempts::new(&[]);
    let registry = profile_service(registry(1, || Ok(record())), snapshots(None));
    let service = service(profiles(Some(CPF), false), attempts.store(), registry);
    assert_eq!(service.state(BRUNO).await.expect("state"), ValidationState::Open { remaining: 5 });
    let typed = claim("1991-07-21", "  joána PEREIRA lima ");
    assert_eq!(service.validate(BRUNO, &typed).await.expect("answered"), ValidationOutcome::Validated);
    assert_eq!(attempts.validated(), [CPF]);
    assert_eq!(attempts.recorded(), 1);
}

#[tokio::test]
async fn a_mismatch_says_how_many_attempts_are_left_and_validates_nothing() {
    let attempts = Attempts::new(&[NOW - 3 * HOUR]);
    // The record is kept by the cache: one registry call for both attempts.
    let registry = profile_service(registry(1, || Ok(record())), snapshots(None));
    let service = service(profiles(Some(CPF), false), attempts.store(), registry);
    for (typed, remaining) in [(claim("1991-07-22", "Joana Pereira Lima"), 3), (claim("1991-07-21", "Joana Lima"), 2)] {
        assert_eq!(service.validate(BRUNO, &typed).await.expect("answered"), ValidationOutcome::Mismatch { remaining });
    }
    assert!(attempts.validated().is_empty());
    assert_eq!(attempts.recorded(), 2);
}

#[tokio::test]
async fn the_sixth_attempt_in_a_day_is_refused_before_the_registry_is_asked() {
    let earlier: Vec<i64> = (1..=5).map(|h| NOW - h * HOUR).collect();
    let attempts = Attempts::new(&earlier);
    let registry = profile_service(registry(0, || Ok(record())), snapshots(None));
    let service = service(profiles(Some(CPF), false), attempts.store(), registry);
    let limited = ValidationOutcome::Limited { retry_after_secs: 19 * HOUR };
    assert_eq!(service.validate(BRUNO, &right()).await.expect("answered"), limited);
    assert_eq!(service.state(BRUNO).await.expect("state"), ValidationState::Limited { retry_after_secs: 19 * HOUR });
    assert_eq!((attempts.recorded(), attempts.validated().len()), (0, 0));
}

#[tokio::test]
async fn an_attempt_that_loses_the_race_for_the_last_slot_is_limited_and_compares_nothing() {
    // Four attempts when the form was read; a racing one takes the fifth
    // slot before this one is recorded.
    let earlier: Vec<i64> = (1..=4).map(|h| NOW - h * HOUR).collect();
    let mut store = MockTaxIdValidationStore::new();
    let reads = Mutex::new(0);
    store.expect_attempts_since().returning(move |_, _| {
        let mut reads = reads.lock().expect("lock");
        *reads += 1;
        let mut seen = earlier.clone();
        if *reads > 1 {
            seen.push(NOW - 10);
        }
        Ok(seen)
    });
    store.expect_record_attempt().times(1).returning(|_, _, _, _| Ok(false));
    store.expect_set_validated().times(0);
    let registry = profile_service(registry(1, || Ok(record())), snapshots(None));
    let service = service(profiles(Some(CPF), false), store, registry);
    let outcome = service.validate(BRUNO, &right()).await.expect("answered");
    assert_eq!(outcome, ValidationOutcome::Limited { retry_after_secs: 20 * HOUR });
}

#[tokio::test]
async fn a_registry_that_is_down_or_does_not_know_the_cpf_changes_nothing_and_costs_no_attempt() {
    let cases: [(Answer, &str); 3] = [
        (
            || Err(UpstreamError::BadResponse("status 500".into())),
            "O serviço da Receita Federal está indisponível no momento.",
        ),
        (|| Err(UpstreamError::Timeout), "O serviço da Receita Federal não respondeu a tempo."),
        (|| Err(UpstreamError::NotFound), "CPF não encontrado na base da Receita Federal."),
    ];
    for (answer, erro) in cases {
        let attempts = Attempts::new(&[]);
        let registry = profile_service(registry(1, answer), snapshots(None));
        let service = service(profiles(Some(CPF), false), attempts.store(), registry);
        let outcome = service.validate(BRUNO, &right()).await.expect("answered");
        assert_eq!(outcome, ValidationOutcome::Unavailable { erro: erro.into() });
        assert_eq!((attempts.recorded(), attempts.validated().len()), (0, 0), "{erro}");
    }
}

#[tokio::test]
async fn a_kept_record_is_compared_when_the_registry_is_down() {
    let kept = Snapshot {
        scope: Scope::ReceitaFederal,
        payload: serde_json::to_value(record()).expect("json"),
        fetched_at: NOW - 10 * 365 * 24 * HOUR,
        expires_at: NOW - 1,
    };
    let attempts = Attempts::new(&[]);
    let registry =
        profile_service(registry(1, || Err(UpstreamError::BadResponse("status 503".into()))), snapshots(Some(kept)));
    let service = service(profiles(Some(CPF), false), attempts.store(), registry);
    assert_eq!(service.validate(BRUNO, &right()).await.expect("answered"), ValidationOutcome::Validated);
}

#[tokio::test]
async fn an_account_without_cpf_or_validated_already_compares_nothing() {
    for (cpf, validated, state, outcome) in [
        (None, false, ValidationState::NoCpf, ValidationOutcome::NoCpf),
        (Some("12345678900"), false, ValidationState::NoCpf, ValidationOutcome::NoCpf),
        (Some(CPF), true, ValidationState::Validated, ValidationOutcome::AlreadyValidated),
    ] {
        let mut store = MockTaxIdValidationStore::new();
        store.expect_record_attempt().times(0);
        store.expect_set_validated().times(0);
        store.expect_attempts_since().times(0);
        let registry = profile_service(registry(0, || Ok(record())), snapshots(None));
        let service = service(profiles(cpf, validated), store, registry);
        assert_eq!(service.state(BRUNO).await.expect("state"), state);
        assert_eq!(service.validate(BRUNO, &right()).await.expect("answered"), outcome);
    }
}

#[tokio::test]
async fn a_cpf_changed_while_the_registry_was_asked_is_not_validated() {
    let mut store = MockTaxIdValidationStore::new();
    store.expect_attempts_since().returning(|_, _| Ok(vec![]));
    store.expect_record_attempt().returning(|_, _, _, _| Ok(true));
    store.expect_set_validated().times(1).returning(|_, _| Ok(false));
    let registry = profile_service(registry(1, || Ok(record())), snapshots(None));
    let service = service(profiles(Some(CPF), false), store, registry);
    let outcome = service.validate(BRUNO, &right()).await.expect("answered");
    assert_eq!(outcome, ValidationOutcome::Unavailable { erro: ERRO_CPF_MUDOU.into() });
}

#[tokio::test]
async fn a_gone_account_is_an_unknown_user() {
    let mut profiles = MockProfileRepository::new();
    profiles.expect_own_profile().returning(|_| Ok(None));
    let registry = profile_service(registry(0, || Ok(record())), snapshots(None));
    let service = service(profiles, MockTaxIdValidationStore::new(), registry);
    assert!(matches!(service.state(BRUNO).await, Err(ServiceError::UnknownUser)));
    assert!(matches!(service.validate(BRUNO, &right()).await, Err(ServiceError::UnknownUser)));
}

#[tokio::test]
async fn old_attempts_are_purged_once_out_of_the_window() {
    let mut store = MockTaxIdValidationStore::new();
    store.expect_purge_attempts_before().with(eq(window_start(NOW)), eq(500)).times(1).returning(|_, _| Ok(3));
    let registry = profile_service(registry(0, || Ok(record())), snapshots(None));
    let service = service(profiles(Some(CPF), false), store, registry);
    assert_eq!(service.purge_old_attempts(500).await.expect("purged"), 3);
}

/// A buffer the log lines of a test go to.
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Lines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn nothing_typed_nor_the_record_nor_the_cpf_is_ever_logged() {
    let lines = Lines::default();
    let writer = lines.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _logging = tracing::subscriber::set_default(subscriber);
    let attempts = Attempts::new(&[]);
    let asked = profile_service(registry(1, || Ok(record())), snapshots(None));
    let service = service(profiles(Some(CPF), false), attempts.store(), asked);
    let wrong = claim("1990-01-02", "Maria Aparecida Nunes");
    assert!(matches!(service.validate(BRUNO, &wrong).await, Ok(ValidationOutcome::Mismatch { .. })));
    assert_eq!(service.validate(BRUNO, &right()).await.expect("answered"), ValidationOutcome::Validated);
    let down = profile_service(registry(1, || Err(UpstreamError::Timeout)), snapshots(None));
    let service = self::service(profiles(Some(CPF), false), Attempts::new(&[]).store(), down);
    assert!(matches!(service.validate(BRUNO, &right()).await, Ok(ValidationOutcome::Unavailable { .. })));

    let logged = String::from_utf8(lines.0.lock().expect("lock").clone()).expect("utf-8");
    for outcome in ["mismatch", "validated", "could not be asked"] {
        assert!(logged.contains(outcome), "the outcome is logged: {outcome} in {logged}");
    }
    for secret in ["1990-01-02", "Maria Aparecida", "1991-07-21", "Joana", "JOANA", CPF, "MOSSORO"] {
        assert!(!logged.contains(secret), "{secret} was logged: {logged}");
    }
}
