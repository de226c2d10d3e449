//! Ctrl-C, SIGTERM and SIGHUP, as one stream of stop signals.

/// Ctrl-C, SIGTERM and SIGHUP, listened for from the moment this is made
/// (so a signal that arrives while the run starts is not lost).
pub(crate) struct StopSignals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    hup: Option<tokio::signal::unix::Signal>,
    /// Whether SIGHUP stops (a server outlives the terminal it started in,
    /// and takes SIGHUP without stopping).
    hangup_stops: bool,
}

impl StopSignals {
    pub(crate) fn listen() -> Self {
        Self::with_hangup(true)
    }

    /// Ctrl-C and SIGTERM; SIGHUP (the terminal closed) is taken and does
    /// nothing.
    pub(crate) fn listen_past_hangup() -> Self {
        Self::with_hangup(false)
    }

    fn with_hangup(hangup_stops: bool) -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            StopSignals {
                term: signal(SignalKind::terminate()).ok(),
                hup: signal(SignalKind::hangup()).ok(),
                hangup_stops,
            }
        }
        #[cfg(not(unix))]
        StopSignals { hangup_stops }
    }

    /// The next stop signal (`false` when none can be listened for).
    pub(crate) async fn next(&mut self) -> bool {
        #[cfg(unix)]
        {
            let term = async {
                match self.term.as_mut() {
                    Some(s) => s.recv().await.is_some(),
                    None => std::future::pending().await,
                }
            };
            let stops = self.hangup_stops;
            let hup = async {
                match self.hup.as_mut() {
                    Some(s) => loop {
                        let got = s.recv().await.is_some();
                        if stops || !got {
                            break got;
                        }
                    },
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                r = tokio::signal::ctrl_c() => r.is_ok(),
                r = term => r,
                r = hup => r,
            }
        }
        #[cfg(not(unix))]
        {
            tokio::signal::ctrl_c().await.is_ok()
        }
    }
}
