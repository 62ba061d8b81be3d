//! The signals of `ringflake serve`: SIGTERM and SIGINT (Ctrl-C) stop it, SIGHUP reloads the
//! token file.

/// What a signal asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Stop (SIGTERM, SIGINT, Ctrl-C); the signal's name.
    Stop(&'static str),
    /// SIGHUP: read the token file again.
    Reload,
}

/// SIGTERM, SIGINT and SIGHUP, listened for from before the address is printed, so a signal sent
/// as soon as the service is announced is never the default "terminate at once".
pub struct Signals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
    #[cfg(unix)]
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    /// Starts listening; must be called inside a Tokio runtime with I/O enabled.
    pub fn new() -> Result<Self, String> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Signals {
                term: signal(SignalKind::terminate())
                    .map_err(|e| format!("cannot listen for SIGTERM: {e}"))?,
                int: signal(SignalKind::interrupt())
                    .map_err(|e| format!("cannot listen for SIGINT: {e}"))?,
                hup: signal(SignalKind::hangup())
                    .map_err(|e| format!("cannot listen for SIGHUP: {e}"))?,
            })
        }
        #[cfg(not(unix))]
        Ok(Signals {})
    }

    /// Waits for the next signal.
    pub async fn recv(&mut self) -> Signal {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.term.recv() => Signal::Stop("SIGTERM"),
                _ = self.int.recv() => Signal::Stop("SIGINT"),
                _ = self.hup.recv() => Signal::Reload,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            Signal::Stop("Ctrl-C")
        }
    }

    /// Waits for the next signal that asks to stop; SIGHUP meanwhile calls `reload`.
    pub async fn stop(&mut self, reload: &mut impl FnMut()) -> &'static str {
        loop {
            match self.recv().await {
                Signal::Stop(name) => return name,
                Signal::Reload => reload(),
            }
        }
    }
}
