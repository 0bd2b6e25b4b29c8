//! End-to-end tests: the real server on a random port, a real PostgreSQL
//! database per test, wiremock behind every upstream.

mod cli;
mod client_login;
mod clients;
mod consume;
mod demo;
mod errors;
mod helpers;
mod oauth;
mod profile;
mod provider_client;
mod settings;
mod tokens;
