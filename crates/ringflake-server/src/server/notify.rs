//! systemd's readiness protocol (`Type=notify`, `sd_notify(3)`): `READY=1` once the service
//! listens and has announced its address, `STOPPING=1` when a stop signal arrives. A datagram to
//! the Unix socket `$NOTIFY_SOCKET` names (a path, or `@name` in Linux's abstract namespace);
//! without the variable (not started by systemd), nothing is sent. A failure to send is logged,
//! never fatal: systemd then times the start out, which says more than a service that exits.

/// Tells systemd the service is ready (it listens, its address is printed).
pub fn ready() {
    send("READY=1\nSTATUS=serving");
}

/// Tells systemd the service is stopping.
pub fn stopping() {
    send("STOPPING=1");
}

fn send(state: &str) {
    let Some(socket) = std::env::var_os("NOTIFY_SOCKET") else {
        return;
    };
    if let Err(e) = send_to(&socket, state) {
        tracing::warn!(
            target: crate::log::TARGET,
            socket = %socket.to_string_lossy(),
            error = %e,
            "cannot notify systemd ({state:?}): {e}"
        );
    }
}

#[cfg(unix)]
fn send_to(socket: &std::ffi::OsStr, state: &str) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt as _;
    use std::os::unix::net::UnixDatagram;
    let sender = UnixDatagram::unbound()?;
    let bytes = socket.as_bytes();
    match bytes.strip_prefix(b"@") {
        #[cfg(target_os = "linux")]
        Some(name) => {
            use std::os::linux::net::SocketAddrExt as _;
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
            sender.send_to_addr(state.as_bytes(), &addr)?;
        }
        #[cfg(not(target_os = "linux"))]
        Some(_) => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "an abstract socket name (@…) outside Linux",
            ));
        }
        None => {
            sender.send_to(state.as_bytes(), socket)?;
        }
    }
    Ok(())
}

#[cfg(not(unix))]
fn send_to(_: &std::ffi::OsStr, _: &str) -> std::io::Result<()> {
    Ok(())
}
