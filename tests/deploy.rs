//! The deployment files are code. `tests/docs_drift.rs` checks that every flag and variable
//! `deploy/` names is the binary's; here the StatefulSet's settings start `serve` as one of its
//! pods would.

mod common;

use std::path::Path;

/// The `name: value` pairs of the first container's `env:` list in a manifest, literal values
/// only (`valueFrom` entries have none), read line by line as the files are written.
fn literal_env(manifest: &str) -> Vec<(String, String)> {
    let mut env = Vec::new();
    let mut name = None;
    for line in manifest.lines().map(str::trim) {
        if let Some(n) = line.strip_prefix("- name: ") {
            name = Some(n.to_string());
        } else if let Some(v) = line.strip_prefix("value: ")
            && let Some(n) = name.take()
        {
            env.push((n, v.trim_matches('"').to_string()));
        }
    }
    env
}

/// `deploy/kubernetes/statefulset.yaml`'s settings start `serve` in a pod (`KUBERNETES_SERVICE_HOST`
/// set) as pod `ringflake-2`: the pod check passes and the worker id is the ordinal. Its paths are
/// moved into a temporary directory and its addresses to free local ports.
#[test]
fn the_statefulset_settings_start_serve_as_its_pods() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest =
        std::fs::read_to_string(root.join("deploy/kubernetes/statefulset.yaml")).unwrap();
    let env = literal_env(&manifest);
    let names: Vec<&str> = env.iter().map(|(n, _)| n.as_str()).collect();
    assert!(
        names.contains(&"RINGFLAKE_WORKER_ID_FROM_HOSTNAME")
            && names.contains(&"RINGFLAKE_STATE_FILE")
            && names.contains(&"RINGFLAKE_AUTH_TOKEN_FILE"),
        "{names:?}"
    );
    let dir = tempfile::tempdir().unwrap();
    let local = |value: &str| {
        value
            .replace("/var/lib/ringflake", &dir.path().display().to_string())
            .replace("/etc/ringflake", &dir.path().display().to_string())
            .replace("0.0.0.0:8080", "127.0.0.1:0")
            .replace("0.0.0.0:9464", "127.0.0.1:0")
    };
    std::fs::write(dir.path().join("tokens"), "a-token-for-the-test\n").unwrap();
    let mut cmd = common::ringflake(dir.path());
    cmd.arg("serve")
        .env("KUBERNETES_SERVICE_HOST", "10.96.0.1")
        .env("HOSTNAME", "ringflake-2");
    for (name, value) in &env {
        cmd.env(name, local(value));
    }
    let mut serve = common::Serve::launch_command(cmd);
    let addr = serve.ready(std::time::Duration::from_secs(60));
    let health = common::get(addr, "/healthz");
    assert_eq!(health.status, 200, "{}", health.body);
    assert_eq!(common::json_int(&health.body, "worker_id"), Some(2));
    let out = serve.output();
    assert!(out.contains("1 bearer token from"), "{out}");
    assert!(out.contains("metrics on http://127.0.0.1:"), "{out}");
    assert!(dir.path().join("ringflake.state").exists(), "{out}");
    // The ID routes want a token.
    assert_eq!(common::get(addr, "/id").status, 401);
}
