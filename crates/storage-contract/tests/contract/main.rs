//! The storage ports' contract, run against PostgreSQL and SQLite (see the
//! crate's documentation). One module per port group.

mod account;
mod account_admin;
mod app_passwords;
mod audit;
mod directory;
mod email_keys;
mod federated_links;
mod health;
mod host_session_ends;
mod host_users;
mod last_staff;
mod login_failures;
mod logout_deliveries;
mod mail;
mod oauth;
mod profiles;
mod race;
mod refresh_tokens;
mod second_factors;
mod security_events;
mod sessions;
mod snapshots;
mod transfer;
mod users;
