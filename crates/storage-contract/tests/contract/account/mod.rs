//! The account ports ("Minha conta"): consent, own entries, the access
//! report, the client's reads, sign-up and tax-id validation. Where two
//! writers can meet, they are run at once.

mod access_log;
mod client_read;
mod entries;
mod grants;
mod registration;
pub mod support;
mod tax_id;
