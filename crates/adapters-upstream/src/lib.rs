//! reqwest implementations of credencial's network ports.
//!
//! One pooled [`reqwest::Client`] (see [`http_client`]) is built by the
//! binary and cloned into every adapter; each adapter has its own base URL and
//! time-out. Redirects are never followed, so a token can only ever reach the
//! configured host.

mod client;
mod response;
mod user_data;

pub use client::{http_client, BaseUrl, BaseUrlError};
pub use user_data::HttpUserDataSource;
