//! PostgreSQL's own side of the account adapters ("Minha conta") against a
//! real PostgreSQL (127.0.0.1:5432, or `TEST_DATABASE_URL`): its migration
//! history. What the ports promise is tested on both engines by the storage
//! contract (crates/storage-contract).

mod registration;
