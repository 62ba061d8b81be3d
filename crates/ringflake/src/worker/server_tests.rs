//! The tests of `server`, the server clients' shared parts: URL parameters, TLS modes, CA
//! files, timeouts (a file of their own, as `row_lease_tests`).

use super::server::*;
use std::path::PathBuf;
use std::time::Duration;

#[test]
fn tls_params_are_taken_out_of_the_query() {
    let (rest, taken) = take_params(
        "mysql://u:p@h/db?prefer_socket=false&SSL_MODE=VERIFY_CA&ssl-ca=%2Fetc%2Fca.pem#x",
        &["ssl-mode", "ssl-ca"],
    );
    assert_eq!(rest, "mysql://u:p@h/db?prefer_socket=false#x");
    assert_eq!(
        taken,
        vec![
            ("SSL_MODE".to_string(), "VERIFY_CA".to_string()),
            ("ssl-ca".to_string(), "/etc/ca.pem".to_string())
        ]
    );
    let (rest, taken) = take_params("postgres://h/db?sslmode=disable", &["sslmode"]);
    assert_eq!(rest, "postgres://h/db");
    assert_eq!(taken.len(), 1);
    assert_eq!(
        take_params("postgres://h/db", &["sslmode"]).0,
        "postgres://h/db"
    );
}

#[test]
fn a_ca_file_means_verify_full_unless_the_url_names_a_mode() {
    let tls = |mode: Option<TlsMode>, ca: bool| Tls {
        mode: Tls::mode(mode, ca),
        ca: ca.then(|| CaFile {
            path: PathBuf::from("ca.pem"),
            certs: Vec::new(),
        }),
    };
    let t = tls(None, false);
    assert_eq!(t.mode, TlsMode::Prefer);
    assert!(!t.verify_chain() && !t.verify_name());
    let t = tls(None, true);
    assert_eq!(t.mode, TlsMode::VerifyFull);
    assert!(t.verify_chain() && t.verify_name());
    // libpq: require with a root certificate checks the chain.
    let t = tls(Some(TlsMode::Require), true);
    assert!(t.verify_chain() && !t.verify_name());
    let t = tls(Some(TlsMode::Require), false);
    assert!(!t.verify_chain());
    let t = tls(Some(TlsMode::VerifyCa), false);
    assert!(t.verify_chain() && !t.verify_name());
    let t = tls(Some(TlsMode::VerifyFull), false);
    assert!(t.verify_chain() && t.verify_name());
    assert!(!tls(Some(TlsMode::Disable), true).verify_chain());
}

#[test]
fn ca_files_are_read_as_pem_or_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("not-a-ca.pem");
    std::fs::write(&path, "hello").unwrap();
    let e = read_ca(&path).err().unwrap();
    assert!(e.contains("holds no certificate"), "{e}");
    assert!(e.contains("not-a-ca.pem"), "{e}");
    let e = read_ca(&dir.path().join("missing.pem")).err().unwrap();
    assert!(e.contains("cannot read the CA file"), "{e}");
}

#[test]
fn the_url_connect_timeout_wins_else_the_call_timeout_up_to_10_s() {
    let s = Duration::from_secs;
    assert_eq!(connect_timeout(Some(s(60)), s(5)), s(60));
    assert_eq!(connect_timeout(None, s(5)), s(5));
    assert_eq!(connect_timeout(None, s(30)), s(10));
}
