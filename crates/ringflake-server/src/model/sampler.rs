//! The thread that samples every generator's issue count into its [`History`] every [`EVERY`],
//! and gives memory back to the system once a burst of large answers is over
//! ([`super::memory`]).
//!
//! [`History`]: super::history::History

use super::app::Generators;
use super::history::Sample;
use super::limits::Limits;
use super::memory::{GIVE_BACK_EVERY, give_back};
use std::sync::Arc;
use std::sync::mpsc::{RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the sampler samples.
pub const EVERY: Duration = Duration::from_secs(1);

/// The thread that samples every generator's issue count every [`EVERY`]; stopped and joined by
/// [`Sampler::stop`] (or when dropped).
pub struct Sampler {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Sampler {
    /// Starts sampling `generators` (the first sample at once), and watching `limits`' large
    /// answers.
    pub fn start(generators: Arc<Generators>, limits: Arc<Limits>) -> Result<Sampler, String> {
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("ringflake-status".into())
            .spawn(move || {
                let mut given_back = std::time::Instant::now();
                loop {
                    let at_ms = unix_ms();
                    for g in generators.iter() {
                        let issued = g.app.generator.stats().issued;
                        g.history.push(Sample { at_ms, issued });
                    }
                    if given_back.elapsed() >= GIVE_BACK_EVERY && limits.large_answers_over() {
                        give_back();
                        given_back = std::time::Instant::now();
                    }
                    match stopped.recv_timeout(EVERY) {
                        Err(RecvTimeoutError::Timeout) => {}
                        _ => break,
                    }
                }
            })
            .map_err(|e| format!("cannot start the status sampler: {e}"))?;
        Ok(Sampler {
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Stops the thread and waits for it (it then holds no generator).
    pub fn stop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The wall clock in unix milliseconds.
pub fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
