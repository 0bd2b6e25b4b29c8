//! The account adapters ("Minha conta") against a real PostgreSQL
//! (127.0.0.1:5432, or `TEST_DATABASE_URL`): every test gets a fresh,
//! migrated database. Where two writers can meet, they are run at once.

mod access_log;
mod client_read;
mod entries;
mod grants;
mod registration;
mod support;
mod tax_id;
