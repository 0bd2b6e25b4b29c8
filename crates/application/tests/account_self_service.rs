//! The account's self-service use cases over fakes of the ports: sign-up,
//! login by CPF, the details form, the password change, and the login
//! session that ends when the password changes. The user store is an
//! in-memory fake that keeps the port's contract (unique username, CPF and
//! e-mail ignoring case), so that what one use case stores, the next reads.

#[path = "support/failure_log.rs"]
mod failure_log;
#[path = "support/sessions.rs"]
mod sessions;

use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use credencial_application::metrics::SessionEnd;
use credencial_application::{
    AccountEditService, DetailsOutcome, LoginThrottle, Origin, PasswordHasher, PasswordOutcome, ServiceError,
    SessionService, SignupOutcome, SignupService, TokenService, TokenServiceConfig,
};
use credencial_domain::account::{AccountDetails, DetailsForm, Registration, SignupForm, UniqueField};
use credencial_domain::admin::LoginVia;
use credencial_domain::session::{SessionLimits, SessionToken};
use credencial_domain::throttle::{ClientAddress, ThrottlePolicy};
use credencial_domain::{Claims, DjangoPbkdf2, JwtKeys, TokenCodec, TokenType, UserId};
use credencial_ports::{
    AccountRecord, DetailsUpdate, MockClock, MockRefreshTokenStore, MockUserDataSource, MockUserRepository, Registered,
    UserCredentials,
};
use failure_log::Failures;
use secrecy::SecretString;
use sessions::Sessions;

const NOW: i64 = 1_700_000_000;
const ITERATIONS: u32 = 1_000;
const POLICY: ThrottlePolicy = ThrottlePolicy { username_failures: 5, address_failures: 3, window_secs: 300 };
const CPF: &str = "529.982.247-25";
const PASSWORD: &str = "ipê amarelo no cerrado";

fn here() -> Option<ClientAddress> {
    Some(ClientAddress::of("192.0.2.10".parse().expect("ip")))
}

/// A login from `address`, in Firefox on Linux.
fn at(address: Option<ClientAddress>) -> Origin {
    Origin {
        address,
        user_agent: Some("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0".into()),
    }
}

fn secret(s: &str) -> SecretString {
    SecretString::from(s.to_owned())
}

fn codec() -> TokenCodec {
    TokenCodec::new(JwtKeys::hmac(&[7u8; 32]).expect("secret"), 0).expect("codec")
}

/// One stored account of the fake.
#[derive(Clone)]
struct Account {
    id: UserId,
    username: String,
    password_hash: String,
    active: bool,
    cpf: Option<String>,
    email: String,
    name: String,
}

impl Account {
    fn credentials(&self) -> UserCredentials {
        UserCredentials {
            id: self.id,
            username: self.username.clone(),
            password_hash: self.password_hash.clone().into(),
            is_active: self.active,
            must_change_password: false,
        }
    }
}

type Accounts = Arc<Mutex<Vec<Account>>>;

/// What a test looks at after the services took the fakes.
struct World {
    accounts: Accounts,
    failures: Failures,
    registers: Arc<AtomicUsize>,
    revoked_for: Arc<Mutex<Vec<UserId>>>,
    signup: SignupService,
    edit: AccountEditService,
    sessions: Arc<SessionService>,
    stored_sessions: Sessions,
    tokens: Arc<TokenService>,
    now: Arc<AtomicI64>,
}

fn users(accounts: &Accounts, registers: &Arc<AtomicUsize>) -> MockUserRepository {
    let mut users = MockUserRepository::new();
    let all = Arc::clone(accounts);
    users.expect_find_credentials().returning(move |username| {
        Ok(all.lock().expect("lock").iter().find(|a| a.username == username).map(Account::credentials))
    });
    let all = Arc::clone(accounts);
    users.expect_find_credentials_for_cpf().returning(move |cpf, typed| {
        let all = all.lock().expect("lock");
        let found = all.iter().find(|a| a.username == typed).or_else(|| {
            all.iter().find(|a| a.cpf.as_deref() == Some(cpf.as_str())) //
        });
        Ok(found.map(Account::credentials))
    });
    let all = Arc::clone(accounts);
    users
        .expect_find_credentials_by_id()
        .returning(move |id| Ok(all.lock().expect("lock").iter().find(|a| a.id == id).map(Account::credentials)));
    let all = Arc::clone(accounts);
    users.expect_find_summary_by_id().returning(move |id| {
        Ok(all.lock().expect("lock").iter().find(|a| a.id == id).map(|a| AccountRecord {
            id: a.id,
            username: a.username.clone(),
            name: a.name.clone(),
            email: a.email.clone(),
            cpf: a.cpf.clone(),
            is_active: a.active,
            is_staff: false,
            tax_id_validated: false,
            must_change_password: false,
            created_at: 0,
        }))
    });
    let all = Arc::clone(accounts);
    let count = Arc::clone(registers);
    users.expect_register().returning(move |r: &Registration, hash| {
        count.fetch_add(1, Ordering::SeqCst);
        let mut all = all.lock().expect("lock");
        let mut taken = vec![];
        if all.iter().any(|a| a.cpf.as_deref() == Some(r.cpf.as_str())) {
            taken.push(UniqueField::Cpf);
        }
        if all.iter().any(|a| a.email.to_lowercase() == r.email.as_str().to_lowercase()) {
            taken.push(UniqueField::Email);
        }
        if all.iter().any(|a| a.username == r.username.as_str()) {
            taken.push(UniqueField::Username);
        }
        if !taken.is_empty() {
            return Ok(Registered::Taken(taken));
        }
        let id = UserId(all.len() as i64 + 1);
        all.push(Account {
            id,
            username: r.username.as_str().to_owned(),
            password_hash: hash.to_owned(),
            active: true,
            cpf: Some(r.cpf.as_str().to_owned()),
            email: r.email.as_str().to_owned(),
            name: r.name.clone(),
        });
        Ok(Registered::Created(id))
    });
    let all = Arc::clone(accounts);
    users.expect_update_details().returning(move |id, d: &AccountDetails| {
        let mut all = all.lock().expect("lock");
        let email = d.email.as_str().to_lowercase();
        if all.iter().any(|a| a.id != id && a.email.to_lowercase() == email) {
            return Ok(DetailsUpdate::EmailTaken);
        }
        match all.iter_mut().find(|a| a.id == id && a.active) {
            Some(a) => {
                (a.name, a.email) = (d.name.clone(), d.email.as_str().to_owned());
                Ok(DetailsUpdate::Updated)
            }
            None => Ok(DetailsUpdate::NotFound),
        }
    });
    let all = Arc::clone(accounts);
    users.expect_set_password_hash().returning(move |id, hash| {
        let mut all = all.lock().expect("lock");
        Ok(all.iter_mut().find(|a| a.id == id).map(|a| a.password_hash = hash.to_owned()).is_some())
    });
    users
}

fn world() -> World {
    let accounts: Accounts = Arc::default();
    let failures = Failures::default();
    let registers = Arc::new(AtomicUsize::new(0));
    let revoked_for: Arc<Mutex<Vec<UserId>>> = Arc::default();
    let now = Arc::new(AtomicI64::new(NOW));
    let mut clock = MockClock::new();
    let n = Arc::clone(&now);
    clock.expect_now().returning(move || n.load(Ordering::SeqCst));
    let n = Arc::clone(&now);
    clock.expect_now_millis().returning(move || n.load(Ordering::SeqCst) * 1000);
    let clock = Arc::new(clock);
    let users = Arc::new(users(&accounts, &registers));
    let mut refresh = MockRefreshTokenStore::new();
    let revoked = Arc::clone(&revoked_for);
    refresh.expect_revoke_user().returning(move |id| {
        revoked.lock().expect("lock").push(id);
        Ok(2)
    });
    let refresh = Arc::new(refresh);
    let tokens = Arc::new(
        TokenService::new(
            Arc::new(codec()),
            users.clone(),
            refresh.clone(),
            Arc::new(MockUserDataSource::new()),
            clock.clone(),
            PasswordHasher::new(2, ITERATIONS).expect("hasher"),
            TokenServiceConfig::default(),
        )
        .with_throttle(LoginThrottle::new(Arc::new(failures.log()), clock.clone(), POLICY)),
    );
    let stored_sessions = Sessions::default();
    let sessions = Arc::new(SessionService::new(
        Arc::new(stored_sessions.store()),
        Arc::clone(tokens.credentials()),
        clock,
        SessionLimits::default(),
    ));
    World {
        signup: SignupService::new(users.clone(), Arc::clone(&tokens), Arc::clone(&sessions)),
        edit: AccountEditService::new(users, refresh, Arc::clone(&tokens), Arc::clone(&sessions)),
        accounts,
        failures,
        registers,
        revoked_for,
        sessions,
        stored_sessions,
        tokens,
        now,
    }
}

fn registration(cpf: &str, email: &str, username: &str) -> Registration {
    Registration::parse(SignupForm {
        cpf,
        nome: "Carla Dias Moreira",
        email,
        username,
        password: PASSWORD,
        password_confirmacao: PASSWORD,
    })
    .expect("valid")
}

/// Signs carla up (CPF 529.982.247-25) and returns her session token.
async fn carla(w: &World) -> (UserId, String) {
    match w.signup.sign_up(registration(CPF, "carla@x.gov.br", "carla"), secret(PASSWORD), &at(here())).await {
        Ok(SignupOutcome::SignedIn(signed)) => (signed.session.user_id, signed.token.into_inner()),
        other => panic!("not signed up: {other:?}"),
    }
}

impl World {
    fn account(&self, id: UserId) -> Account {
        self.accounts.lock().expect("lock").iter().find(|a| a.id == id).cloned().expect("account")
    }

    async fn session_user(&self, token: &str) -> Option<UserId> {
        self.sessions.resume(token).await.expect("read").map(|s| s.user_id)
    }
}

// -------------------------------------------------------------- sign-up

#[tokio::test]
async fn a_sign_up_stores_a_hashed_password_and_opens_a_session_for_the_new_account() {
    let w = world();
    let (id, token) = carla(&w).await;
    assert_eq!(w.session_user(&token).await, Some(id));
    let stored = w.account(id);
    assert!(stored.password_hash.starts_with("pbkdf2_sha256$1000$"), "hashed with the configured iterations");
    assert!(DjangoPbkdf2::parse(&stored.password_hash).expect("parse").verify(PASSWORD));
    assert_eq!((stored.username.as_str(), stored.cpf.as_deref()), ("carla", Some("52998224725")));
    assert_eq!(w.failures.recorded(), 0, "a sign-up that creates counts nothing");
}

#[tokio::test]
async fn a_taken_value_is_a_field_error_and_a_failure_of_the_address() {
    let w = world();
    carla(&w).await;
    let again = registration("52998224725", "CARLA@x.gov.br", "carla2");
    let Ok(SignupOutcome::Taken(errors)) = w.signup.sign_up(again, secret(PASSWORD), &at(here())).await else {
        panic!("not refused")
    };
    assert_eq!(errors.fields(), ["cpf", "email"]);
    assert!(errors.get("cpf").is_some_and(|m| m.contains("Já existe uma conta com este CPF")));
    assert_eq!(w.failures.on("address:192.0.2.10"), 1);
    assert_eq!(w.accounts.lock().expect("lock").len(), 1, "nothing created");
}

#[tokio::test]
async fn sign_ups_cannot_enumerate_cpfs_faster_than_the_login_form() {
    let w = world();
    carla(&w).await;
    for i in 0..POLICY.address_failures {
        let attempt = registration(CPF, &format!("x{i}@x.gov.br"), &format!("guess{i}"));
        assert!(matches!(w.signup.sign_up(attempt, secret(PASSWORD), &at(here())).await, Ok(SignupOutcome::Taken(_))));
    }
    let before = w.registers.load(Ordering::SeqCst);
    let fresh = registration("111.444.777-35", "new@x.gov.br", "newperson");
    let refused = w.signup.sign_up(fresh, secret(PASSWORD), &at(here())).await;
    assert!(matches!(refused, Err(ServiceError::Throttled { retry_after_secs: 1.. })), "{refused:?}");
    assert_eq!(w.registers.load(Ordering::SeqCst), before, "a limited address stores nothing");
    // The login form of the same address is limited too: one limit.
    let login = w.sessions.log_in(LoginVia::Account, "carla", secret(PASSWORD), &at(here())).await;
    assert!(matches!(login, Err(ServiceError::Throttled { .. })), "{login:?}");
}

// ------------------------------------------------------- login by CPF

#[tokio::test]
async fn the_new_account_logs_in_with_its_cpf_punctuated_or_not_or_its_username() {
    let w = world();
    let (id, _) = carla(&w).await;
    for login in [CPF, "52998224725", "carla", " 529 982 247 25"] {
        let user = w.tokens.check_credentials(login.trim(), secret(PASSWORD), here()).await;
        assert_eq!(user.expect(login).id, id, "{login}");
    }
    let signed = w.sessions.log_in(LoginVia::Account, CPF, secret(PASSWORD), &at(here())).await.expect("login by CPF");
    assert_eq!(w.session_user(&signed.token).await, Some(id));
}

#[tokio::test]
async fn wrong_passwords_by_cpf_count_against_the_account_however_it_is_punctuated() {
    let w = world();
    carla(&w).await;
    for login in [CPF, "52998224725", "529982247-25"] {
        let e = w.tokens.check_credentials(login, secret("wrong password"), None).await.expect_err("wrong");
        assert!(matches!(e, ServiceError::InvalidCredentials), "{e:?}");
    }
    assert_eq!(w.failures.on("username:carla"), 3, "the account's one count");
    assert_eq!(w.failures.on("username:52998224725"), 0);
    let unknown = w.tokens.check_credentials("111.444.777-35", secret(PASSWORD), None).await;
    assert!(matches!(unknown, Err(ServiceError::InvalidCredentials)), "an unknown CPF: {unknown:?}");
}

// --------------------------------------------------------------- details

fn details(email: &str) -> AccountDetails {
    AccountDetails::parse(DetailsForm { nome: "Carla D. Moreira", email, avatar: "https://x.gov.br/c.png" })
        .expect("valid")
}

#[tokio::test]
async fn details_are_stored_and_a_taken_e_mail_is_a_field_error_counted_against_the_address() {
    let w = world();
    let (id, _) = carla(&w).await;
    let other = registration("111.444.777-35", "dora@x.gov.br", "dora");
    assert!(matches!(w.signup.sign_up(other, secret(PASSWORD), &at(here())).await, Ok(SignupOutcome::SignedIn(_))));
    assert_eq!(
        w.edit.update_details(id, &details("Carla@X.gov.br"), &at(here())).await.expect("ok"),
        DetailsOutcome::Saved
    );
    assert_eq!(w.account(id).name, "Carla D. Moreira");
    let taken = w.edit.update_details(id, &details("DORA@x.gov.br"), &at(here())).await.expect("answered");
    let DetailsOutcome::Refused(errors) = taken else { panic!("not refused") };
    assert_eq!(errors.fields(), ["email"]);
    assert_eq!(w.account(id).email, "Carla@X.gov.br", "nothing changed");
    assert_eq!(w.failures.on("address:192.0.2.10"), 1);
}

#[tokio::test]
async fn a_limited_address_changes_no_details_and_a_gone_account_is_unknown() {
    let w = world();
    let (id, _) = carla(&w).await;
    for _ in 0..POLICY.address_failures {
        let _ = w.tokens.check_credentials("nobody", secret("x"), here()).await;
    }
    let limited = w.edit.update_details(id, &details("c2@x.gov.br"), &at(here())).await;
    assert!(matches!(limited, Err(ServiceError::Throttled { .. })), "{limited:?}");
    assert_eq!(w.account(id).email, "carla@x.gov.br");
    let gone = w.edit.update_details(UserId(99), &details("c2@x.gov.br"), &at(None)).await;
    assert!(matches!(gone, Err(ServiceError::UnknownUser)), "{gone:?}");
}

// -------------------------------------------------------------- password

#[tokio::test]
async fn a_password_change_revokes_refresh_tokens_and_ends_every_other_session() {
    let w = world();
    let (id, first) = carla(&w).await;
    let other =
        w.sessions.log_in(LoginVia::Account, "carla", secret(PASSWORD), &at(None)).await.expect("a second browser");
    let outcome = w.edit.change_password(id, secret(PASSWORD), secret("um novo caminho de pedras"), &at(here())).await;
    let Ok(PasswordOutcome::Changed { session, revoked }) = outcome else { panic!("not changed: {outcome:?}") };
    assert_eq!(revoked, 4, "what both passes revoked");
    assert_eq!(*w.revoked_for.lock().expect("lock"), [id, id], "before and after the new hash is stored");
    assert_eq!(w.session_user(&first).await, None, "the session that changed it is replaced");
    assert_eq!(w.session_user(&other.token).await, None, "the other browser's session is over");
    assert_eq!(w.session_user(&session.token).await, Some(id), "the new session is accepted");
    assert!(
        w.sessions.log_in(LoginVia::Account, "carla", secret(PASSWORD), &at(None)).await.is_err(),
        "the old password is over"
    );
    assert!(w.sessions.log_in(LoginVia::Account, CPF, secret("um novo caminho de pedras"), &at(None)).await.is_ok());
}

#[tokio::test]
async fn a_wrong_current_password_is_refused_and_counts_against_the_account_and_the_address() {
    let w = world();
    let (id, token) = carla(&w).await;
    let before = w.account(id).password_hash;
    let outcome =
        w.edit.change_password(id, secret("not it at all"), secret("um novo caminho de pedras"), &at(here())).await;
    let Ok(PasswordOutcome::Refused(errors)) = outcome else { panic!("not refused: {outcome:?}") };
    assert_eq!(errors.get("password_atual"), Some("A senha atual não confere."));
    assert_eq!((w.failures.on("username:carla"), w.failures.on("address:192.0.2.10")), (1, 1));
    assert_eq!(w.account(id).password_hash, before);
    assert!(w.revoked_for.lock().expect("lock").is_empty());
    assert_eq!(w.session_user(&token).await, Some(id), "nothing ended");
}

#[tokio::test]
async fn a_new_password_that_breaks_the_rules_changes_nothing_and_counts_nothing() {
    let w = world();
    let (id, _) = carla(&w).await;
    for (new, text) in
        [("curta", "8 caracteres"), ("52998224725", "CPF"), ("carla@x.gov.br", "e-mail"), ("senha123", "comum")]
    {
        let outcome = w.edit.change_password(id, secret(PASSWORD), secret(new), &at(here())).await;
        let Ok(PasswordOutcome::Refused(errors)) = outcome else { panic!("{new}: not refused") };
        assert!(errors.get("password").is_some_and(|m| m.contains(text)), "{new}: {errors:?}");
    }
    assert_eq!(w.failures.recorded(), 0);
    assert!(DjangoPbkdf2::parse(&w.account(id).password_hash).expect("parse").verify(PASSWORD));
}

#[tokio::test]
async fn a_password_change_is_refused_while_the_account_is_limited() {
    let w = world();
    let (id, _) = carla(&w).await;
    for _ in 0..POLICY.username_failures {
        let _ = w.tokens.check_credentials("carla", secret("wrong"), None).await;
    }
    let limited = w.edit.change_password(id, secret(PASSWORD), secret("um novo caminho de pedras"), &at(None)).await;
    assert!(matches!(limited, Err(ServiceError::Throttled { .. })), "{limited:?}");
}

// ----------------------------------------------------------- the session

#[tokio::test]
async fn an_old_session_jwt_is_no_session_and_a_deactivated_account_changes_no_password() {
    // (A deactivated account's stored sessions are refused by the store:
    // the storage contract's `a_deactivated_accounts_sessions_are_refused`.)
    let w = world();
    let (id, _) = carla(&w).await;
    let old_form = codec().encode(&Claims::new(TokenType::Session, id.0, NOW, 600)).expect("encode");
    assert_eq!(w.session_user(&old_form).await, None, "a session JWT of an earlier release");
    w.accounts.lock().expect("lock")[0].active = false;
    let gone = w.edit.change_password(id, secret(PASSWORD), secret("um novo caminho de pedras"), &at(None)).await;
    assert!(matches!(gone, Err(ServiceError::UnknownUser)), "{gone:?}");
}

// -------------------------------------------------------------- sessions

#[tokio::test]
async fn a_login_opens_a_new_stored_session_each_time_and_only_its_hash_is_kept() {
    let w = world();
    let (id, _) = carla(&w).await;
    let a = w.sessions.log_in(LoginVia::Account, "carla", secret(PASSWORD), &at(here())).await.expect("login");
    let b = w.sessions.log_in(LoginVia::OAuth, "carla", secret(PASSWORD), &at(here())).await.expect("login");
    assert_ne!(a.token.as_str(), b.token.as_str(), "a login never reuses a session id");
    assert_eq!(a.max_age_secs, SessionLimits::default().absolute_secs);
    assert_eq!((a.session.user_id, a.session.auth_time, a.session.amr.as_str()), (id, NOW, "pwd"));
    assert!(!format!("{a:?}").contains(a.token.as_str()), "Debug hides the id");
    let rows = w.stored_sessions.rows.lock().expect("lock").clone();
    let stored = rows.iter().find(|(i, _, _)| *i == a.session.id).expect("stored").1.clone();
    assert_eq!(stored.token_hash, SessionToken::from_cookie(&a.token).expect("shaped").hash());
    assert_eq!((stored.device.as_str(), stored.place.as_str()), ("Firefox no Linux", "192.0.2.0/24"));
    assert_eq!(w.session_user(&a.token).await, Some(id));
    let jwt = codec().encode(&Claims::new(TokenType::Access, id.0, NOW, 300)).expect("encode");
    assert_eq!(w.session_user(&jwt).await, None, "an access token is not a session");
}

#[tokio::test]
async fn a_session_ends_when_idle_and_at_its_absolute_limit_however_active() {
    let w = world();
    let (_, token) = carla(&w).await;
    let limits = SessionLimits::default();
    w.now.store(NOW + limits.idle_secs, Ordering::SeqCst);
    assert!(w.session_user(&token).await.is_some(), "active at the limit: recorded");
    w.now.store(NOW + 2 * limits.idle_secs + 1, Ordering::SeqCst);
    assert!(w.session_user(&token).await.is_none(), "idle for longer than the limit");

    let token = w.sessions.log_in(LoginVia::Account, "carla", secret(PASSWORD), &at(None)).await.expect("login").token;
    let start = w.now.load(Ordering::SeqCst);
    let mut at_time = start;
    while at_time < start + limits.absolute_secs - limits.idle_secs {
        at_time += limits.idle_secs - 60;
        w.now.store(at_time, Ordering::SeqCst);
        assert!(w.session_user(&token).await.is_some(), "kept alive at {at_time}");
    }
    w.now.store(start + limits.absolute_secs, Ordering::SeqCst);
    assert!(w.session_user(&token).await.is_none(), "over at the absolute limit");
}

#[tokio::test]
async fn logging_out_and_ending_sessions_end_them_on_the_server() {
    let w = world();
    let (id, first) = carla(&w).await;
    let second = w.sessions.log_in(LoginVia::Account, "carla", secret(PASSWORD), &at(None)).await.expect("login");
    let third = w.sessions.log_in(LoginVia::Account, "carla", secret(PASSWORD), &at(None)).await.expect("login");
    assert!(w.sessions.end(&first).await.expect("logout"));
    assert_eq!(w.session_user(&first).await, None, "a copy of the logged-out cookie opens nothing");
    assert!(!w.sessions.end(&first).await.expect("logout"), "already over");
    assert!(!w.sessions.end("not a session id").await.expect("logout"));

    let listed = w.sessions.list(&second.session).await.expect("list");
    assert_eq!(listed.current, second.session.id);
    assert_eq!(listed.sessions.len(), 2);
    assert!(!w.sessions.end_one(UserId(id.0 + 1), third.session.id).await.expect("end"), "not another person's");
    assert!(w.sessions.end_one(id, third.session.id).await.expect("end"));
    assert_eq!(w.session_user(&third.token).await, None);

    let fourth = w.sessions.log_in(LoginVia::Account, "carla", secret(PASSWORD), &at(None)).await.expect("login");
    let ended = w.sessions.end_all(id, Some(second.session.id), SessionEnd::Person).await.expect("end all");
    assert_eq!(ended, 1);
    assert_eq!(w.session_user(&fourth.token).await, None);
    assert_eq!(w.session_user(&second.token).await, Some(id), "the asking browser's stays");
}

#[tokio::test]
async fn a_wrong_password_or_unknown_user_opens_nothing_and_shares_the_limit_with_pair() {
    let w = world();
    carla(&w).await;
    let opened = w.stored_sessions.count();
    for (user, pw) in [("carla", "wrong"), ("nobody", PASSWORD)] {
        let err = w.sessions.log_in(LoginVia::OAuth, user, secret(pw), &at(None)).await.expect_err("refused");
        assert!(matches!(err, ServiceError::InvalidCredentials), "{user}: {err:?}");
    }
    for _ in 1..POLICY.username_failures {
        let _ = w.tokens.check_credentials("carla", secret("guess"), None).await;
    }
    let limited = w.sessions.log_in(LoginVia::OAuth, "carla", secret(PASSWORD), &at(None)).await;
    assert!(matches!(limited, Err(ServiceError::Throttled { .. })), "{limited:?}");
    assert_eq!(w.stored_sessions.count(), opened, "no session was opened");
}

#[test]
fn login_form_tokens_are_bound_to_their_key() {
    let w = world();
    let key = w.sessions.new_form_key();
    assert_ne!(key, w.sessions.new_form_key());
    let t = w.sessions.login_form_token(&key);
    assert!(w.sessions.login_form_token_matches(&key, &t));
    assert!(!w.sessions.login_form_token_matches(&w.sessions.new_form_key(), &t));
}
