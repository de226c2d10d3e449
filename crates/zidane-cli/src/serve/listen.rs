//! Where the server listens: a loopback port (the default), an address the
//! person names (with TLS, or said loudly without it), or a Unix socket
//! only its owner can open.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use super::http::{self, State};
use crate::cli::ServeArgs;
use crate::out::Failure;

/// The most connections served at once.
const CONNECTIONS: usize = 256;

/// How long a TLS handshake may take.
const HANDSHAKE: std::time::Duration = std::time::Duration::from_secs(10);

pub(super) enum Listener {
    Tcp {
        listener: tokio::net::TcpListener,
        address: SocketAddr,
        tls: Option<tokio_rustls::TlsAcceptor>,
        insecure: bool,
    },
    #[cfg(unix)]
    Unix {
        listener: tokio::net::UnixListener,
        path: PathBuf,
    },
}

impl Listener {
    pub(super) async fn open(args: &ServeArgs) -> Result<Listener, Failure> {
        #[cfg(unix)]
        if let Some(path) = &args.socket {
            return unix(path);
        }
        let wanted = args.listen.as_deref().unwrap_or("127.0.0.1:0");
        let mut address: SocketAddr = wanted
            .parse()
            .map_err(|_| Failure::usage(format!("--listen `{wanted}` is not an address like 127.0.0.1:7777")))?;
        // Started again, the default server takes its last port when it is
        // free, so clients reconnect to the URL they had.
        if args.listen.is_none()
            && let Some(last) = last_port()
            && std::net::TcpListener::bind(("127.0.0.1", last)).is_ok()
        {
            address.set_port(last);
        }
        let tls = match (&args.tls_cert, &args.tls_key) {
            (Some(cert), Some(key)) => Some(acceptor(cert, key)?),
            _ => None,
        };
        if !address.ip().is_loopback() && tls.is_none() && !args.insecure_no_tls {
            return Err(Failure::usage(format!(
                "--listen {address} is not a loopback address: give --tls-cert and --tls-key, or --insecure-no-tls to send the token and every message in clear"
            )));
        }
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(|e| Failure::run(format!("cannot listen on {address}: {e}")))?;
        let address = listener
            .local_addr()
            .map_err(|e| Failure::run(format!("cannot read the address: {e}")))?;
        Ok(Listener::Tcp {
            listener,
            address,
            tls,
            insecure: !address.ip().is_loopback() && args.insecure_no_tls,
        })
    }

    /// The address, for people.
    pub(super) fn describe(&self) -> String {
        match self {
            Listener::Tcp { address, .. } => address.to_string(),
            #[cfg(unix)]
            Listener::Unix { path, .. } => format!("unix:{}", path.display()),
        }
    }

    /// The URL a client connects to.
    pub(super) fn url(&self) -> String {
        match self {
            Listener::Tcp { address, tls, .. } => {
                let scheme = if tls.is_some() { "wss" } else { "ws" };
                format!("{scheme}://{address}/acp")
            }
            #[cfg(unix)]
            Listener::Unix { path, .. } => format!("unix:{}", path.display()),
        }
    }

    pub(super) fn socket_path(&self) -> Option<String> {
        match self {
            Listener::Tcp { .. } => None,
            #[cfg(unix)]
            Listener::Unix { path, .. } => Some(path.display().to_string()),
        }
    }

    pub(super) fn tls(&self) -> bool {
        matches!(self, Listener::Tcp { tls: Some(_), .. })
    }

    /// What the server says loudly at start.
    pub(super) fn warning(&self) -> Option<String> {
        match self {
            Listener::Tcp {
                insecure: true,
                address,
                ..
            } => Some(format!(
                "WARNING: listening on {address} without TLS (--insecure-no-tls): the token and every message travel in clear"
            )),
            _ => None,
        }
    }

    /// The `Host` values a request may name (`None`: any; the listener is
    /// not a loopback port, where a web page could reach it through DNS
    /// rebinding).
    pub(super) fn host(&self) -> Option<Vec<String>> {
        match self {
            Listener::Tcp { address, .. } if address.ip().is_loopback() => {
                let port = address.port();
                let own = match address.ip() {
                    std::net::IpAddr::V4(ip) => format!("{ip}:{port}"),
                    std::net::IpAddr::V6(ip) => format!("[{ip}]:{port}"),
                };
                let mut hosts = vec![own, format!("localhost:{port}")];
                hosts.extend([format!("127.0.0.1:{port}"), format!("[::1]:{port}")]);
                hosts.dedup();
                Some(hosts)
            }
            _ => None,
        }
    }

    /// Accepts connections and serves each on a task of its own, at most
    /// [`CONNECTIONS`] at once (the others wait in the system's backlog).
    pub(super) async fn accept_loop(self, state: Arc<State>) {
        let room = Arc::new(tokio::sync::Semaphore::new(CONNECTIONS));
        loop {
            let Ok(permit) = Arc::clone(&room).acquire_owned().await else {
                return;
            };
            let state = Arc::clone(&state);
            match &self {
                Listener::Tcp { listener, tls, .. } => {
                    let stream = match listener.accept().await {
                        Ok((stream, _)) => stream,
                        Err(_) => {
                            // Out of descriptors, say: wait rather than spin.
                            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                            continue;
                        }
                    };
                    let _ = stream.set_nodelay(true);
                    let tls = tls.clone();
                    tokio::spawn(async move {
                        let _permit = permit;
                        match tls {
                            Some(tls) => {
                                let handshake = tokio::time::timeout(HANDSHAKE, tls.accept(stream)).await;
                                if let Ok(Ok(stream)) = handshake {
                                    http::connection(stream, state).await;
                                }
                            }
                            None => http::connection(stream, state).await,
                        }
                    });
                }
                #[cfg(unix)]
                Listener::Unix { listener, .. } => {
                    let Ok((stream, _)) = listener.accept().await else {
                        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                        continue;
                    };
                    tokio::spawn(async move {
                        let _permit = permit;
                        http::connection(stream, state).await;
                    });
                }
            }
        }
    }
}

/// The loopback port the last server here listened on.
fn last_port() -> Option<u16> {
    let home = zidane_app::paths::user_dir()?;
    let text = std::fs::read_to_string(home.join("serve.json")).ok()?;
    let state: serde_json::Value = serde_json::from_str(&text).ok()?;
    let address: SocketAddr = state["address"].as_str()?.parse().ok()?;
    address.ip().is_loopback().then_some(address.port())
}

/// A Unix socket at `path`, readable and writable by its owner only.
#[cfg(unix)]
fn unix(path: &std::path::Path) -> Result<Listener, Failure> {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket()) {
        // A socket left by a server that died; a live one refuses to bind.
        if std::os::unix::net::UnixStream::connect(path).is_err() {
            let _ = std::fs::remove_file(path);
        }
    }
    let listener = tokio::net::UnixListener::bind(path)
        .map_err(|e| Failure::run(format!("cannot listen on {}: {e}", path.display())))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| Failure::run(format!("cannot make {} private: {e}", path.display())))?;
    Ok(Listener::Unix {
        listener,
        path: path.to_owned(),
    })
}

/// TLS with the certificate chain and key of two PEM files.
fn acceptor(cert: &std::path::Path, key: &std::path::Path) -> Result<tokio_rustls::TlsAcceptor, Failure> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| Failure::usage(format!("--tls-cert {}: {e}", cert.display())))?;
    let key =
        PrivateKeyDer::from_pem_file(key).map_err(|e| Failure::usage(format!("--tls-key {}: {e}", key.display())))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Failure::run(format!("TLS: {e}")))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| Failure::usage(format!("--tls-cert and --tls-key: {e}")))?;
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}
