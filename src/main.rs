//! `credencial` — see `credencial --help`.

use clap::Parser;

/// jemalloc, configured in `.cargo/config.toml` to give freed memory back to
/// the system within a second: glibc's malloc keeps the high-water mark of a
/// burst of connections for good (docs/performance.md, "Mixed load and soak").
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = credencial::cli::Cli::parse();
    match credencial::cli::run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("credencial: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
