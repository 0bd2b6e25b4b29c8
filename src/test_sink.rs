//! Test support for the log modules: an output that keeps what is written
//! to it, and can be slow.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// An output that keeps what is written; clones share it.
#[derive(Clone, Default)]
pub(crate) struct Kept {
    bytes: Arc<Mutex<Vec<u8>>>,
    /// How long each write takes (a slow output: lines queue up behind it).
    delay: Duration,
}

impl Kept {
    /// An output whose every write takes `delay`.
    pub(crate) fn slow(delay: Duration) -> Self {
        Self { delay, ..Self::default() }
    }

    /// What was written, as text.
    pub(crate) fn text(&self) -> String {
        String::from_utf8(self.bytes.lock().expect("lock").clone()).expect("UTF-8")
    }

    /// What was written, line by line.
    pub(crate) fn lines(&self) -> Vec<String> {
        self.text().lines().map(str::to_owned).collect()
    }
}

impl Write for Kept {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if !self.delay.is_zero() {
            std::thread::sleep(self.delay);
        }
        self.bytes.lock().map_err(|_| std::io::Error::other("poisoned"))?.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
