//! The service's log output: formatted lines are appended to one shared
//! buffer, and a thread of its own writes the buffer out in batches, so
//! that a request never waits for standard output.
//!
//! Why not `tracing-appender`'s `non_blocking` (which this replaces): it
//! hands every line over as a heap allocation of its own through a channel,
//! freed by the writer thread. At tens of thousands of lines a second, that
//! allocation, its free on another core and the channel's shared slots cost
//! several times what formatting the line does (docs/performance.md: about
//! 6 µs of CPU per request line on the 2-core bench machine, against about
//! 1.5 µs of instructions). Here a line is one copy into a buffer that is
//! reused: a short lock, no allocation once the buffer has grown, and the
//! writer thread wakes at most once per [`WRITE_PAUSE`].

use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use tracing_subscriber::fmt::MakeWriter;

/// How long the writer thread rests after writing a batch out: meanwhile
/// the lines logged gather in the buffer and are written with one system
/// call. A line reaches the output at most this late (unless the output
/// itself is slower).
pub const WRITE_PAUSE: Duration = Duration::from_millis(50);

/// How long dropping the guard waits for the writer thread to write out
/// what is left: an output that accepts nothing (a stalled pipe or log
/// collector) must not keep the process from exiting after a graceful stop.
pub const FINAL_WRITE_WAIT: Duration = Duration::from_secs(2);

/// How many bytes may wait for the writer thread before a thread that logs
/// waits for it (back-pressure: a line is never dropped; a thread that logs
/// waits as it would have with a direct write). 8 MiB: tens of thousands of
/// request lines, far more than a healthy output lets gather in
/// [`WRITE_PAUSE`].
pub const BUFFERED_BYTES: usize = 8 << 20;

/// The writer half given to the subscriber ([`MakeWriter`]): cheap to
/// clone, each write appends to the shared buffer.
#[derive(Clone)]
pub struct LogWriter {
    shared: Arc<Shared>,
}

/// Keeps the writer thread alive: dropping it writes out what is still
/// buffered and ends the thread (at the end of a graceful stop), waiting at
/// most [`FINAL_WRITE_WAIT`] for the output.
#[must_use = "dropping the guard stops the log writer"]
pub struct LogWriterGuard {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

/// What the threads that log and the writer thread share.
struct Shared {
    state: Mutex<State>,
    /// The writer thread waits on it: for the first line after a quiet
    /// spell, for a full buffer, or for the stop.
    wake_writer: Condvar,
    /// Threads that found the buffer full wait on it for room.
    room: Condvar,
    /// The buffer limit ([`BUFFERED_BYTES`]; tests use a small one).
    limit: usize,
}

/// The shared buffer and the writer thread's situation.
#[derive(Default)]
struct State {
    /// Lines not yet handed to the writer thread.
    buffer: Vec<u8>,
    /// The writer thread waits without a deadline (nothing was buffered):
    /// the next line must wake it.
    idle: bool,
    /// The guard was dropped: write out what is left and end.
    stopping: bool,
    /// The writer thread has written out what was left and ended.
    done: bool,
}

/// A writer to `sink` that writes from a thread of its own (see the
/// module's documentation), and the guard that stops it.
pub fn off_thread<W: Write + Send + 'static>(sink: W) -> (LogWriter, LogWriterGuard) {
    with_limit(sink, BUFFERED_BYTES)
}

/// [`off_thread`] with a buffer limit of `limit` bytes.
fn with_limit<W: Write + Send + 'static>(sink: W, limit: usize) -> (LogWriter, LogWriterGuard) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State::default()),
        wake_writer: Condvar::new(),
        room: Condvar::new(),
        limit,
    });
    let for_thread = Arc::clone(&shared);
    // A process that cannot start this thread at its start cannot start its
    // request workers either; without it a full buffer would wait forever.
    let thread = std::thread::Builder::new()
        .name("credencial-log".to_owned())
        .spawn(move || {
            for_thread.write_out(sink);
            for_thread.lock().done = true;
            for_thread.room.notify_all();
        })
        .expect("the log writer thread starts");
    (LogWriter { shared: Arc::clone(&shared) }, LogWriterGuard { shared, thread: Some(thread) })
}

impl Shared {
    /// The buffer's lock; a thread that panicked while holding it left the
    /// buffer usable (bytes are only ever appended or taken whole).
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Appends `line`, waiting for room when the buffer is full.
    fn append(&self, line: &[u8]) {
        let mut state = self.lock();
        while state.buffer.len() >= self.limit && !state.stopping {
            self.wake_writer.notify_one();
            state = self.room.wait(state).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        state.buffer.extend_from_slice(line);
        if state.idle {
            state.idle = false;
            self.wake_writer.notify_one();
        }
    }

    /// The writer thread: takes the whole buffer, writes it to `sink`,
    /// rests for [`WRITE_PAUSE`] (or less, when the buffer fills), and so on
    /// until the stop, after which it writes out what is left.
    fn write_out<W: Write>(&self, sink: W) {
        let mut sink = std::io::BufWriter::with_capacity(64 * 1024, sink);
        // The buffer the lines are taken into: swapped with the shared one,
        // so that both keep their capacity.
        let mut batch = Vec::new();
        let mut state = self.lock();
        loop {
            if state.buffer.is_empty() {
                if state.stopping {
                    return;
                }
                state.idle = true;
                state = self.wake_writer.wait(state).unwrap_or_else(std::sync::PoisonError::into_inner);
                continue;
            }
            std::mem::swap(&mut state.buffer, &mut batch);
            self.room.notify_all();
            drop(state);
            // An output that fails (a closed pipe) loses the batch: there
            // is nowhere else to write it.
            let _ = sink.write_all(&batch).and_then(|()| sink.flush());
            batch.clear();
            state = self
                .wake_writer
                .wait_timeout_while(self.lock(), WRITE_PAUSE, |s| !s.stopping && s.buffer.len() < self.limit)
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
    }
}

impl LogWriter {
    /// Appends `line` (one or more whole lines) to the output.
    pub fn write_line(&self, line: &[u8]) {
        self.shared.append(line);
    }
}

impl std::fmt::Debug for LogWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogWriter").finish_non_exhaustive()
    }
}

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.shared.append(buf);
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.shared.append(buf);
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for LogWriter {
    type Writer = LogWriter;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

impl Drop for LogWriterGuard {
    fn drop(&mut self) {
        let Some(thread) = self.thread.take() else {
            return;
        };
        let mut state = self.shared.lock();
        state.stopping = true;
        self.shared.wake_writer.notify_one();
        self.shared.room.notify_all();
        let (state, waited) = self
            .shared
            .room
            .wait_timeout_while(state, FINAL_WRITE_WAIT, |s| !s.done)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        drop(state);
        // On a time-out the output is stuck: leave the thread to it.
        if !waited.timed_out() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_sink::Kept;

    #[test]
    fn lines_from_several_threads_arrive_whole_and_in_each_threads_order_even_past_a_full_buffer() {
        let kept = Kept::slow(Duration::from_micros(200));
        // A buffer that fills after a few lines: the threads wait for room.
        let (writer, guard) = with_limit(kept.clone(), 256);
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let mut writer = writer.make_writer();
                std::thread::spawn(move || {
                    for n in 0..500 {
                        writer.write_all(format!("thread {t} line {n}\n").as_bytes()).expect("write");
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().expect("thread");
        }
        drop(guard);
        let lines = kept.lines();
        assert_eq!(lines.len(), 2_000);
        for t in 0..4 {
            let own: Vec<String> = lines.iter().filter(|l| l.starts_with(&format!("thread {t} "))).cloned().collect();
            let expected: Vec<String> = (0..500).map(|n| format!("thread {t} line {n}")).collect();
            assert_eq!(own, expected);
        }
    }

    /// An output that accepts nothing until `release` is set.
    struct Stuck(Arc<std::sync::atomic::AtomicBool>);

    impl Write for Stuck {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            while !self.0.load(std::sync::atomic::Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(5));
            }
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn dropping_the_guard_waits_for_a_stuck_output_no_longer_than_the_final_wait() {
        let release = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (mut writer, guard) = off_thread(Stuck(Arc::clone(&release)));
        writer.write_all(b"a line the output never takes\n").expect("write");
        let started = std::time::Instant::now();
        drop(guard);
        let waited = started.elapsed();
        release.store(true, std::sync::atomic::Ordering::SeqCst);
        assert!(waited >= FINAL_WRITE_WAIT && waited < FINAL_WRITE_WAIT * 5, "{waited:?}");
    }

    #[test]
    fn a_line_reaches_the_output_while_the_guard_is_alive() {
        let kept = Kept::slow(Duration::from_micros(200));
        let (mut writer, _guard) = off_thread(kept.clone());
        // After a quiet spell (the writer thread idle), then again after a
        // batch (the writer thread resting).
        for round in 0..2 {
            writer.write_all(format!("round {round}\n").as_bytes()).expect("write");
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            while kept.lines().len() <= round && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            assert_eq!(kept.lines().len(), round + 1, "round {round} written");
        }
    }
}
