//! The stand-in for a registry that is not configured: every call fails, so
//! its scope answers an `erro` object (the rest of the profile still works).

use async_trait::async_trait;
use credencial_domain::{Cnes, Cpf, CursosCdp, ReceitaFederal};
use credencial_ports::{CdpDirectory, CnesRegistry, TaxAuthority, UpstreamError};

/// A registry with no base URL configured.
#[derive(Debug, Clone, Copy, Default)]
pub struct UnconfiguredRegistry;

fn not_configured() -> UpstreamError {
    UpstreamError::BadResponse("registry not configured".into())
}

#[async_trait]
impl TaxAuthority for UnconfiguredRegistry {
    async fn lookup(&self, _cpf: &Cpf) -> Result<ReceitaFederal, UpstreamError> {
        Err(not_configured())
    }
}

#[async_trait]
impl CnesRegistry for UnconfiguredRegistry {
    async fn bonds(&self, _cpf: &Cpf) -> Result<Cnes, UpstreamError> {
        Err(not_configured())
    }
}

#[async_trait]
impl CdpDirectory for UnconfiguredRegistry {
    async fn courses(&self, _cpf: &Cpf) -> Result<CursosCdp, UpstreamError> {
        Err(not_configured())
    }
}
