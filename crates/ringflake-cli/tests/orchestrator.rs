//! `serve` in an orchestrator, on the real binary: in a Kubernetes pod (`KUBERNETES_SERVICE_HOST`
//! set) it refuses worker ids from a SQLite file of the pod's own, at once and naming the safe
//! choices; `--worker-id-from-hostname` takes the StatefulSet ordinal of the host name as the
//! worker id and refuses a host name without one; outside a pod nothing changes.

mod common;

use common::{Serve, get, ringflake, wait_until};
use std::path::Path;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

/// The variable that says "in a pod".
const IN_POD: &str = "KUBERNETES_SERVICE_HOST";

/// `serve` with `extra` flags and `env` in `dir`; it must exit within 5 s. Its exit status, how
/// long it took and what it printed.
fn refused(dir: &Path, extra: &[&str], env: &[(&str, &str)]) -> (ExitStatus, Duration, String) {
    let mut cmd = ringflake(dir);
    cmd.args(["serve", "--listen", "127.0.0.1:0"]).args(extra);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let started = Instant::now();
    let mut serve = Serve::launch_command(cmd);
    wait_until("serve exits", Duration::from_secs(5), || !serve.running());
    let took = started.elapsed();
    let status = serve.kill().expect("exit status");
    // The reader threads may still be copying the last line.
    wait_until("the error line", Duration::from_secs(5), || {
        serve.output().contains("error:")
    });
    (status, took, serve.output())
}

/// The worker id of an ID that `serve` hands out, as its own `/parse` reads it.
fn served_worker_id(serve: &mut Serve) -> i64 {
    let addr = serve.ready(Duration::from_secs(60));
    let id = get(addr, "/id");
    assert_eq!(id.status, 200, "{}", id.body);
    let parsed = get(addr, &format!("/parse/{}", id.body.trim()));
    assert_eq!(parsed.status, 200, "{}", parsed.body);
    // parseUID's fields are strings: `"workerId":"3"`.
    parsed
        .body
        .split("\"workerId\":\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no workerId: {}", parsed.body))
}

#[test]
fn in_a_pod_serve_refuses_its_own_sqlite_file_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (status, took, out) = refused(dir.path(), &[], &[(IN_POD, "10.96.0.1")]);
    assert!(!status.success(), "{out}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    for safe in [
        "--postgres",
        "--mysql",
        "--worker-id-from-hostname",
        "--single-instance",
        IN_POD,
        "ringflake.db",
    ] {
        assert!(out.contains(safe), "{safe} not named: {out}");
    }
    // Refused before anything was opened: no worker table, no state file left behind.
    assert!(!dir.path().join("ringflake.db").exists());
    assert!(!dir.path().join("ringflake.state").exists());

    // An explicit SQLite file is a file of the pod's own too.
    let (status, _, out) = refused(dir.path(), &["--db", "ids.db"], &[(IN_POD, "10.96.0.1")]);
    assert!(!status.success(), "{out}");
    assert!(
        out.contains("ids.db (--db)") && out.contains("--postgres"),
        "{out}"
    );
    assert!(!dir.path().join("ids.db").exists());

    // So is a --config generator without a source: the error names its table.
    std::fs::write(
        dir.path().join("ringflake.toml"),
        "[generators.orders]\nworker-id = 9\n\n[generators.users]\nmax-lead = 5\n",
    )
    .unwrap();
    let (status, _, out) = refused(
        dir.path(),
        &["--worker-id", "1", "--config", "ringflake.toml"],
        &[(IN_POD, "10.96.0.1")],
    );
    assert!(!status.success(), "{out}");
    assert!(
        out.contains("[generators.users]") && out.contains("--postgres"),
        "{out}"
    );
}

#[test]
fn in_a_pod_the_operator_can_say_single_instance_or_fix_the_id() {
    let dir = tempfile::tempdir().unwrap();
    for (flags, worker) in [
        (&["--single-instance"][..], 1),
        (&["--worker-id", "5"][..], 5),
    ] {
        let mut cmd = ringflake(dir.path());
        cmd.args(["serve", "--listen", "127.0.0.1:0"])
            .args(flags)
            .env(IN_POD, "10.96.0.1");
        let mut serve = Serve::launch_command(cmd);
        assert_eq!(served_worker_id(&mut serve), worker, "{flags:?}");
    }
    // The switch from its variable, as the deploy/ files set it.
    let mut cmd = ringflake(dir.path());
    cmd.args(["serve", "--listen", "127.0.0.1:0"])
        .env(IN_POD, "10.96.0.1")
        .env("RINGFLAKE_SINGLE_INSTANCE", "true");
    let mut serve = Serve::launch_command(cmd);
    serve.ready(Duration::from_secs(60));
}

#[test]
fn outside_a_pod_nothing_changes() {
    let dir = tempfile::tempdir().unwrap();
    // An empty variable is no pod either.
    for env in [None, Some("")] {
        let mut cmd = ringflake(dir.path());
        cmd.args(["serve", "--listen", "127.0.0.1:0"]);
        if let Some(v) = env {
            cmd.env(IN_POD, v);
        }
        let mut serve = Serve::launch_command(cmd);
        assert!(served_worker_id(&mut serve) >= 1);
    }
    assert!(dir.path().join("ringflake.db").exists());
}

#[test]
fn worker_id_from_hostname_is_the_statefulset_ordinal() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = ringflake(dir.path());
    cmd.args([
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--worker-id-from-hostname",
    ])
    .env("HOSTNAME", "ringflake-3")
    .env(IN_POD, "10.96.0.1");
    let mut serve = Serve::launch_command(cmd);
    assert_eq!(served_worker_id(&mut serve), 3);
    let out = serve.output();
    assert!(
        out.contains(
            "with worker id 3 (StatefulSet ordinal of host name ringflake-3, from HOSTNAME)"
        ),
        "{out}"
    );
    // It keeps the state file, and needs no worker table.
    assert!(out.contains("ringflake.state"), "{out}");
    assert!(!dir.path().join("ringflake.db").exists());
    drop(serve);

    // From its variable, and for gen too.
    let out = ringflake(dir.path())
        .args(["gen", "-n", "1"])
        .env("RINGFLAKE_WORKER_ID_FROM_HOSTNAME", "1")
        .env("HOSTNAME", "ids-12.ids.default.svc.cluster.local")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let id: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    assert_eq!((id >> 22) & 1023, 12, "the worker field of {id}");
}

#[test]
fn a_host_name_without_an_ordinal_or_beyond_the_layout_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (host, needles) in [
        (
            "ringflake",
            &["\"ringflake\" (HOSTNAME) does not end in -N", "--postgres"][..],
        ),
        ("ringflake-", &["does not end in -N"][..]),
        ("ringflake-x3", &["does not end in -N"][..]),
        ("-3", &["does not end in -N"][..]),
        (
            "ringflake-2000",
            &["worker id 2000", "largest worker id 1023", "10 worker bits"][..],
        ),
    ] {
        let (status, took, out) = refused(
            dir.path(),
            &["--worker-id-from-hostname"],
            &[("HOSTNAME", host), (IN_POD, "10.96.0.1")],
        );
        assert!(!status.success(), "{host}: {out}");
        assert!(took < Duration::from_secs(5), "{host}: {took:?}");
        for needle in needles {
            assert!(out.contains(needle), "{host}: {needle:?} not in {out}");
        }
    }
    // With more worker bits, 2000 fits.
    let mut cmd = ringflake(dir.path());
    cmd.args([
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--worker-id-from-hostname",
        "--worker-bits",
        "12",
        "--seq-bits",
        "20",
    ])
    .env("HOSTNAME", "ringflake-2000");
    let mut serve = Serve::launch_command(cmd);
    assert_eq!(served_worker_id(&mut serve), 2000);
    drop(serve);

    // A table-only flag names the source it does not fit.
    let (status, _, out) = refused(
        dir.path(),
        &["--worker-id-from-hostname", "--lease-window", "60"],
        &[("HOSTNAME", "ringflake-1")],
    );
    assert!(!status.success());
    assert!(
        out.contains("--lease-window needs a worker table")
            && out.contains("not --worker-id-from-hostname"),
        "{out}"
    );
    // Two sources at once are refused as ever.
    let (status, _, out) = refused(
        dir.path(),
        &["--worker-id-from-hostname", "--worker-id", "4"],
        &[("HOSTNAME", "ringflake-1")],
    );
    assert!(!status.success());
    assert!(out.contains("choose one worker id source"), "{out}");
}
