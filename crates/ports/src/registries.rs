//! The upstream registries behind the profile scopes `receita_federal`
//! (the tax authority), `cnes` (the health-establishment registry) and
//! `cursos_cdp` (the community-of-practice platform). All three are keyed
//! by the person's CPF. Their wire contracts are in `docs/upstreams.md`.
//!
//! Error contract shared by every method here (see [`UpstreamError`]):
//!
//! - [`UpstreamError::NotFound`]: the registry answered 404 with a JSON body,
//!   i.e. it has no record of this CPF;
//! - [`UpstreamError::Unauthorized`] / [`UpstreamError::Forbidden`]: the
//!   registry refused credencial's configured API key (401 / 403);
//! - [`UpstreamError::Timeout`]: no complete answer within the configured
//!   time-out (default 3 s);
//! - [`UpstreamError::BadResponse`]: anything else — unreachable, 5xx or
//!   another status, a redirect, a body that is not JSON, too large, or that
//!   does not match the contract (missing field, wrong type, a date that is
//!   not `YYYY-MM-DD`).
//!
//! None of these is ever an error of the profile endpoint: the caller serves
//! a stale snapshot or puts an `erro` object under the scope.

use async_trait::async_trait;
use credencial_domain::{Cnes, Cpf, CursosCdp, ReceitaFederal};

use crate::user_data::UpstreamError;

/// The tax authority's registration data (`receita_federal`).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait TaxAuthority: Send + Sync + 'static {
    /// The registration of `cpf`. [`UpstreamError::NotFound`] means the tax
    /// authority does not know this CPF; other errors: see the module docs.
    async fn lookup(&self, cpf: &Cpf) -> Result<ReceitaFederal, UpstreamError>;
}

/// The health-establishment registry (`cnes`).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait CnesRegistry: Send + Sync + 'static {
    /// The professional bonds of `cpf`; a professional without bonds is
    /// `Ok` with an empty list. [`UpstreamError::NotFound`] means the
    /// registry does not know this CPF (callers may treat it as no bonds);
    /// other errors: see the module docs.
    async fn bonds(&self, cpf: &Cpf) -> Result<Cnes, UpstreamError>;
}

/// The community-of-practice platform's course directory (`cursos_cdp`).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait CdpDirectory: Send + Sync + 'static {
    /// The courses of the person with `cpf` (the platform keys its users by
    /// CPF, which unlike the e-mail never changes); none is `Ok` with
    /// `total` 0 and an empty list. [`UpstreamError::NotFound`] means the
    /// platform has no user with this CPF (callers may treat it as no
    /// courses); other errors: see the module docs.
    async fn courses(&self, cpf: &Cpf) -> Result<CursosCdp, UpstreamError>;
}
