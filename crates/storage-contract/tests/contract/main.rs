//! The storage ports' contract, run against PostgreSQL and SQLite (see the
//! crate's documentation). One module per port group.

mod audit;
mod health;
mod login_failures;
mod oauth;
mod race;
mod refresh_tokens;
mod snapshots;
