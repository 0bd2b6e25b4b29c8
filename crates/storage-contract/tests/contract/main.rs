//! The storage ports' contract, run against PostgreSQL and SQLite (see the
//! crate's documentation). One module per port group.

mod host_users;
