//! The thin binary's library: settings, telemetry, wiring and commands.
//! `main.rs` only parses the command line and calls [`cli::run`].

pub mod cli;
pub mod demo;
mod keys;
mod log_format;
pub mod log_writer;
pub mod settings;
pub mod startup;
pub mod storage;
pub mod telemetry;
#[cfg(test)]
mod test_sink;

pub use settings::Settings;
pub use startup::{Application, Mode};
