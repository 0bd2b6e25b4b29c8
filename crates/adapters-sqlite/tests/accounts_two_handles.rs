//! The account adapters through two handles on one database file, as a CLI
//! command beside a serving instance has them: each handle has its own
//! writer connection, so their writes meet at SQLite's file lock (`BEGIN
//! IMMEDIATE`, or one statement that writes, and the busy timeout), not in
//! one writer's queue. What the ports promise "on any instance" holds.

use credencial_adapters_sqlite::account::{SqliteAccessLog, SqliteGrantRepository, SqliteTaxIdValidationStore};
use credencial_adapters_sqlite::testing::TestDatabase;
use credencial_adapters_sqlite::{SqliteDb, SqliteProfileRepository, SqliteUserDirectory, SqliteUserRepository};
use credencial_domain::account::{AccessLogPage, Registration, SignupForm};
use credencial_domain::admin::{Actor, AuditAction, AuditTarget, NewAuditEntry, PreRegistration, PreRegistrationForm};
use credencial_domain::oauth::ClientId;
use credencial_domain::{ScopeSet, UserId};
use credencial_ports::account::{AccessLog, AccessLogEntry, GrantRepository, TaxIdValidationStore};
use credencial_ports::{ClientRead, PreRegistered, ProfileRepository, Registered, UserDirectory, UserRepository};

const NOW: i64 = 1_900_000_000;

/// A migrated file in a directory of its own, and two handles on it; the
/// directory goes with it.
struct OneFile {
    handles: [SqliteDb; 2],
    _file: TestDatabase,
}

impl OneFile {
    async fn new() -> Self {
        let file = TestDatabase::new().await;
        let second = file.second_handle().await;
        Self { handles: [file.db.clone(), second], _file: file }
    }

    /// A user `name` written through the first handle.
    async fn user(&self, name: &str) -> UserId {
        let id: i64 = sqlx::query_scalar("INSERT INTO users (username, password) VALUES (?1, 'h') RETURNING id")
            .bind(name)
            .fetch_one(self.handles[0].writer())
            .await
            .expect("user");
        UserId(id)
    }
}

fn sign_up(i: usize, cpf: &str) -> Registration {
    Registration::parse(SignupForm {
        cpf,
        nome: "Carla Dias Moreira",
        email: &format!("p{i}@example.gov.br"),
        username: &format!("person{i}"),
        password: "ipê amarelo no cerrado",
        password_confirmacao: "ipê amarelo no cerrado",
    })
    .expect("a valid sign-up")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn of_sign_ups_with_one_cpf_through_two_handles_exactly_one_is_created() {
    let file = OneFile::new().await;
    let users = file.handles.clone().map(SqliteUserRepository::new);
    let registrations: Vec<_> = (0..16).map(|i| sign_up(i, "529.982.247-25")).collect();
    let attempts = registrations.iter().enumerate().map(|(i, r)| users[i % 2].register(r, "h"));
    let outcomes = futures_util::future::try_join_all(attempts).await.expect("no error, no `database is locked`");
    assert_eq!(outcomes.iter().filter(|o| matches!(o, Registered::Created(_))).count(), 1, "{outcomes:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn of_pre_registrations_of_one_cpf_through_two_handles_exactly_one_creates() {
    let file = OneFile::new().await;
    let directories = file.handles.clone().map(SqliteUserDirectory::new);
    let emails: Vec<String> = (0..16).map(|i| format!("joana{i}@example.org")).collect();
    let people: Vec<_> = emails
        .iter()
        .map(|email| {
            PreRegistration::parse(PreRegistrationForm {
                cpf: Some("52998224725"),
                email: Some(email),
                nome: Some("Joana Silva"),
                genero: Some("F"),
                data_de_nascimento: Some("1990-04-12"),
            })
            .expect("valid")
        })
        .collect();
    let audit = NewAuditEntry::new(
        Actor::Cli { os_user: "ops".into() },
        AuditAction::ApiUserCreate,
        AuditTarget::User("52998224725".into()),
    );
    let attempts = people.iter().enumerate().map(|(i, p)| directories[i % 2].pre_register(p, "!unusable", &audit));
    let outcomes = futures_util::future::try_join_all(attempts).await.expect("no error");
    assert_eq!(outcomes.iter().filter(|o| matches!(o, PreRegistered::Created(_))).count(), 1);
    let entries: i64 =
        sqlx::query_scalar("SELECT count(*) FROM audit_log").fetch_one(file.handles[1].readers()).await.expect("count");
    assert_eq!(entries, 1, "one entry, of the one creation");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tax_id_attempts_through_two_handles_never_exceed_the_limit() {
    let file = OneFile::new().await;
    let ana = file.user("ana").await;
    let stores = file.handles.clone().map(SqliteTaxIdValidationStore::new);
    let attempts = (0..16).map(|i| stores[i % 2].record_attempt(ana, NOW, NOW - 86_400, 5));
    let recorded = futures_util::future::try_join_all(attempts).await.expect("no error");
    assert_eq!(recorded.iter().filter(|r| **r).count(), 5);
    assert_eq!(stores[1].attempts_since(ana, 0).await.expect("read").len(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn profile_reads_through_one_handle_racing_a_revocation_through_the_other_are_logged_when_answered() {
    let file = OneFile::new().await;
    let ana = file.user("ana").await;
    sqlx::query(
        "INSERT INTO oauth_clients (client_id, name, confidential, redirect_uris) \
         VALUES ('portal', 'Portal', 0, '[\"https://p.example/cb\"]')",
    )
    .execute(file.handles[0].writer())
    .await
    .expect("portal");
    let portal = ClientId::parse("portal").expect("client id");
    let grants = SqliteGrantRepository::new(file.handles[1].clone());
    grants.widen(ana, &portal, ScopeSet::empty(), NOW).await.expect("grant");
    let profiles = SqliteProfileRepository::new(file.handles[0].clone());
    let entries: Vec<_> = (0..24)
        .map(|i| AccessLogEntry {
            user: ana,
            client: portal.clone(),
            scopes: ScopeSet::required(),
            at: NOW,
            request_id: format!("r{i}"),
        })
        .collect();
    let reads = futures_util::future::try_join_all(entries.iter().map(|e| profiles.read_for_client(e)));
    let (reads, revoked) = tokio::join!(reads, grants.revoke(ana, &portal));
    assert!(revoked.expect("revoke"));
    let answered = reads.expect("no error").iter().filter(|r| matches!(r, ClientRead::Answered(_))).count();
    let (_, logged) = SqliteAccessLog::new(file.handles[1].clone()).list(ana, AccessLogPage::FIRST).await.expect("log");
    assert_eq!(logged, u64::try_from(answered).expect("count"), "one entry per answered read");
}
