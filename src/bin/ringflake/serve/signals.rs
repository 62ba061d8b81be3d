//! The signals that stop `ringflake serve`: SIGTERM and SIGINT (Ctrl-C).

/// SIGTERM and SIGINT, listened for from before the address is printed, so a signal sent as soon
/// as the service is announced is never the default "terminate at once".
pub struct Signals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
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
            })
        }
        #[cfg(not(unix))]
        Ok(Signals {})
    }

    /// Waits for the next signal and names it.
    pub async fn recv(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.term.recv() => "SIGTERM",
                _ = self.int.recv() => "SIGINT",
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C"
        }
    }
}
