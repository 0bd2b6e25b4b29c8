//! End-to-end tests: the real server on a random port, a real PostgreSQL
//! database per test, wiremock behind every upstream.

mod account;
mod account_edit;
mod account_entries;
mod account_grants;
mod account_signup;
mod account_validation;
mod admin;
mod admin_applications;
mod admin_cli;
mod admin_users;
mod cli;
mod client_login;
mod clients;
mod consent;
mod consume;
mod demo;
mod errors;
mod fault_server;
mod faults;
mod grants;
mod helpers;
mod oauth;
mod openapi;
mod operations;
mod outbound;
mod profile;
mod provider_client;
mod round_robin;
mod scale_out;
mod settings;
mod shutdown;
mod start;
mod throttle;
mod tokens;
mod user_directory;
