//! A log sink for tests: every line the service writes, kept in memory.
//! Install it with `credencial::telemetry::subscriber(format, filter,
//! capture.clone())`, the code path production uses.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tracing_subscriber::fmt::MakeWriter;

/// The captured output, shared by every writer handed out.
#[derive(Clone, Default)]
pub struct LogCapture(Arc<Mutex<Vec<u8>>>);

impl LogCapture {
    /// Everything written so far.
    pub fn text(&self) -> String {
        String::from_utf8(self.0.lock().expect("lock").clone()).expect("UTF-8 logs")
    }

    /// Waits (at most 10 s) until a line satisfies `found`.
    pub async fn wait_for_line(&self, found: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.text().lines().any(&found) {
            assert!(Instant::now() < deadline, "the expected log line never came");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

impl Write for LogCapture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for LogCapture {
    type Writer = LogCapture;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}
