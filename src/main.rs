//! `credencial` — see `credencial --help`.

use clap::Parser;

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
