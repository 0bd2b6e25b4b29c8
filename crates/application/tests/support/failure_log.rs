//! An in-memory fake of `LoginFailureLog` that keeps the port's contract
//! (windows per key, a failure after the window starts a new one), with
//! counters of what was asked of it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use credencial_domain::throttle::FailureWindow;
use credencial_ports::MockLoginFailureLog;

/// What the fake holds: `key text → (failures, window start)`, and how
/// often failures were recorded.
#[derive(Clone, Default)]
pub struct Failures {
    pub windows: Arc<Mutex<HashMap<String, (u32, i64)>>>,
    pub recorded: Arc<AtomicUsize>,
}

impl Failures {
    /// The failures counted on `key` (0 without a window).
    pub fn on(&self, key: &str) -> u32 {
        self.windows.lock().expect("lock").get(key).map_or(0, |w| w.0)
    }

    /// How many failures were recorded (calls, not keys).
    pub fn recorded(&self) -> usize {
        self.recorded.load(Ordering::SeqCst)
    }

    /// A fake log over these failures.
    pub fn log(&self) -> MockLoginFailureLog {
        let mut log = MockLoginFailureLog::new();
        let windows = Arc::clone(&self.windows);
        log.expect_windows().returning(move |keys| {
            let all = windows.lock().expect("lock");
            Ok(keys
                .iter()
                .filter_map(|k| {
                    all.get(k.as_str()).map(|&(failures, started_at_ms)| FailureWindow {
                        key: k.clone(),
                        failures,
                        started_at_ms,
                    })
                })
                .collect())
        });
        let windows = Arc::clone(&self.windows);
        let recorded = Arc::clone(&self.recorded);
        log.expect_record_failure().returning(move |keys, now, window| {
            recorded.fetch_add(1, Ordering::SeqCst);
            let mut all = windows.lock().expect("lock");
            for key in keys {
                let entry = all.entry(key.as_str().to_owned()).or_insert((0, now));
                if entry.1 <= now - window {
                    *entry = (0, now);
                }
                entry.0 += 1;
            }
            Ok(())
        });
        let windows = Arc::clone(&self.windows);
        log.expect_clear().returning(move |key| {
            windows.lock().expect("lock").remove(key.as_str());
            Ok(())
        });
        let windows = Arc::clone(&self.windows);
        log.expect_purge_started_before().returning(move |before, _| {
            let mut all = windows.lock().expect("lock");
            let n = all.len();
            all.retain(|_, w| w.1 >= before);
            Ok((n - all.len()) as u64)
        });
        log
    }
}
