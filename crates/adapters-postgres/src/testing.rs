//! A fresh database per test (migrated, or empty), dropped when the test ends.
//!
//! The server is `TEST_DATABASE_URL` if set, else
//! `postgres://postgres@127.0.0.1:5432/postgres` (the maintenance database is
//! used only to create and drop the per-test databases).

use sqlx::{Connection, Executor, PgConnection, PgPool};

const DEFAULT_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// A database that exists for one test. Dropping it drops the database.
pub struct TestDatabase {
    /// Pool on the fresh database.
    pub pool: PgPool,
    /// URL of the fresh database.
    pub url: String,
    name: String,
    admin_url: String,
}

fn admin_url() -> String {
    std::env::var("TEST_DATABASE_URL").unwrap_or_else(|_| DEFAULT_ADMIN_URL.to_owned())
}

fn with_database(url: &str, name: &str) -> String {
    let (head, query) = match url.split_once('?') {
        Some((h, q)) => (h, format!("?{q}")),
        None => (url, String::new()),
    };
    let authority_start = head.find("://").map_or(0, |i| i + 3);
    let base = match head[authority_start..].find('/') {
        Some(i) => &head[..authority_start + i],
        None => head,
    };
    format!("{base}/{name}{query}")
}

impl TestDatabase {
    /// Creates and migrates a database with a unique name.
    ///
    /// # Panics
    /// When PostgreSQL is unreachable: a test cannot go on without it.
    pub async fn new() -> Self {
        let db = Self::new_unmigrated().await;
        crate::migrate(&db.pool).await.expect("migrate test database");
        db
    }

    /// Creates an empty database with a unique name: no migration applied.
    ///
    /// # Panics
    /// When PostgreSQL is unreachable: a test cannot go on without it.
    pub async fn new_unmigrated() -> Self {
        let admin_url = admin_url();
        let name = format!("credencial_test_{}", uuid::Uuid::new_v4().simple());
        let mut admin = PgConnection::connect(&admin_url)
            .await
            .expect("PostgreSQL must run on 127.0.0.1:5432 (or set TEST_DATABASE_URL)");
        admin.execute(format!(r#"CREATE DATABASE "{name}""#).as_str()).await.expect("create test database");
        let url = with_database(&admin_url, &name);
        let pool =
            crate::connect(&url, 10, std::time::Duration::from_secs(10)).await.expect("connect to test database");
        Self { pool, url, name, admin_url }
    }

    /// Creates an active user `name` (e-mail `<name>@example.gov.br`, name
    /// `Full <name>`, an unusable password hash) with `cpf`, and returns its id.
    pub async fn create_user(&self, name: &str, cpf: Option<&str>) -> credencial_domain::UserId {
        use credencial_ports::UserRepository;
        crate::PgUserRepository::new(self.pool.clone())
            .create(credencial_ports::NewUser {
                username: credencial_domain::Username::parse(name).expect("username"),
                password_hash: "pbkdf2_sha256$1$s$h".into(),
                is_active: true,
                data: credencial_domain::UserData {
                    email: format!("{name}@example.gov.br"),
                    ..credencial_domain::UserData::default()
                },
                name: format!("Full {name}"),
                cpf: cpf.map(|c| credencial_domain::Cpf::parse(c).expect("a valid CPF")),
            })
            .await
            .expect("user")
    }

    /// Records a migration this build does not know, as a newer release
    /// would have applied it.
    pub async fn record_newer_migration(&self) {
        sqlx::query(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
             VALUES (29991231000001, 'from a newer release', true, '\\x00', 0)",
        )
        .execute(&self.pool)
        .await
        .expect("record a newer migration");
    }

    /// Drops the database now, `WITH (FORCE)`: every connection to it
    /// (this pool's, a server's under test) is ended, and new ones are
    /// refused. For tests of what happens when the database goes away.
    ///
    /// # Panics
    /// When PostgreSQL is unreachable or refuses the drop.
    pub async fn drop_now(&self) {
        let mut admin = PgConnection::connect(&self.admin_url).await.expect("connect to the maintenance database");
        admin
            .execute(format!(r#"DROP DATABASE IF EXISTS "{}" WITH (FORCE)"#, self.name).as_str())
            .await
            .expect("drop test database");
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let name = std::mem::take(&mut self.name);
        let admin_url = std::mem::take(&mut self.admin_url);
        // Drop runs inside the test's runtime, which cannot be awaited on; a
        // short-lived thread with its own runtime does the clean-up. The pool
        // is not closed first: closing waits for connections that a server
        // under test may still hold, and FORCE ends them anyway.
        let _ = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
                return;
            };
            rt.block_on(async move {
                if let Ok(mut admin) = PgConnection::connect(&admin_url).await {
                    let _ = admin.execute(format!(r#"DROP DATABASE IF EXISTS "{name}" WITH (FORCE)"#).as_str()).await;
                }
            });
        })
        .join();
    }
}

/// The audit entry tests pass with a write they set up (an operator
/// `test` at the CLI).
pub fn setup_audit() -> credencial_domain::admin::NewAuditEntry {
    use credencial_domain::admin::{Actor, AuditAction, AuditTarget, NewAuditEntry};
    NewAuditEntry::new(Actor::Cli { os_user: "test".into() }, AuditAction::ClientCreate, AuditTarget::None)
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn database_name_is_replaced_in_the_url() {
        assert_eq!(
            with_database("postgres://postgres@127.0.0.1:5432/postgres", "t1"),
            "postgres://postgres@127.0.0.1:5432/t1"
        );
        assert_eq!(with_database("postgres://u:p@h/db?sslmode=disable", "t1"), "postgres://u:p@h/t1?sslmode=disable");
    }
}
