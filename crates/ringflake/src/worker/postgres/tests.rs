//! The URL's forms and TLS modes, without a server.

use super::*;
use crate::worker::rows::TableSetup;

#[test]
fn urls_are_described_without_password() {
    let t = PostgresTable::from_url("postgres://app:pa%3Ass@db:5433/ids")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.describe(), "postgres://app@db:5433/ids");
    let t = PostgresTable::from_url("host=db user=app password=kv9 dbname=ids")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.describe(), "postgres://app@db:5432/ids");
    let e = PostgresTable::from_url("postgres://app:pw7@db:notaport/ids")
        .err()
        .unwrap();
    assert!(e.to_string().contains("invalid URL"), "{e}");
    assert!(!e.to_string().contains("pw7"), "{e}");
}

#[test]
fn tls_modes_and_ca_files_come_from_either_url_form() {
    let t =
        PostgresTable::from_url("postgres://app:pw@db/ids?sslmode=verify-ca&sslrootcert=/ca.pem")
            .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.tls().unwrap(), "sslmode=verify-ca with CA file /ca.pem");
    let t = PostgresTable::from_url(
        "host=db user=app password='p w' sslrootcert = '/my ca.pem' dbname=ids",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        t.tls().unwrap(),
        "sslmode=verify-full with CA file /my ca.pem"
    );
    assert_eq!(t.describe(), "postgres://app@db:5432/ids");
    let t = PostgresTable::from_url("postgres://app@db/ids").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.tls().unwrap(), "sslmode=prefer");
    let e = PostgresTable::from_url("postgres://app:pw8@db/ids?sslmode=allow")
        .err()
        .unwrap();
    assert!(
        e.to_string().contains(
            "sslmode=allow is not a TLS mode: expected one of disable, prefer, require, verify-ca, verify-full"
        ),
        "{e}"
    );
    assert!(!e.to_string().contains("pw8"), "{e}");
}
