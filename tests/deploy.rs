//! The deployment files are code: every `--flag` and `RINGFLAKE_*` variable that `deploy/` (the
//! Dockerfile, the systemd unit, the Kubernetes manifests) and `docs/deploy.md` name is one the
//! binary accepts, read from its own `--help`.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Flags of other tools that the files name in their commands (`cargo build --locked`,
/// `kubectl create secret --from-file`, ...): each with its tool, so that nothing else passes.
const OTHER_TOOLS: &[(&str, &[&str])] = &[
    (
        "cargo",
        &[
            "--release",
            "--locked",
            "--bin",
            "--no-default-features",
            "--features",
        ],
    ),
    ("apt-get", &["--no-install-recommends"]),
    (
        "groupadd/useradd",
        &[
            "--system",
            "--uid",
            "--gid",
            "--home-dir",
            "--no-create-home",
        ],
    ),
    ("docker (COPY --from)", &["--from"]),
    ("kubectl", &["--from-file", "--from-literal", "--force"]),
    ("systemctl", &["--now"]),
];

/// Every file under `dir`.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// The `--flags` (before any `=`) and `RINGFLAKE_…` names in `text`.
fn names(text: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut flags = BTreeSet::new();
    let mut vars = BTreeSet::new();
    let word = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    for token in text.split(|c: char| !word(c)) {
        if let Some(rest) = token.strip_prefix("--")
            && rest.starts_with(|c: char| c.is_ascii_lowercase())
        {
            flags.insert(token.trim_end_matches('-').to_string());
        }
        if token.starts_with("RINGFLAKE_") && token.len() > "RINGFLAKE_".len() {
            vars.insert(token.to_string());
        }
    }
    (flags, vars)
}

/// What the binary accepts: every flag and variable of `ringflake --help` and of each command's.
fn accepted() -> (BTreeSet<String>, BTreeSet<String>) {
    let dir = tempfile::tempdir().unwrap();
    let mut help = String::new();
    for command in [
        &[][..],
        &["serve"],
        &["gen"],
        &["parse"],
        &["layout"],
        &["workers"],
    ] {
        let out = common::ringflake(dir.path())
            .args(command)
            .arg("--help")
            .output()
            .expect("run ringflake --help");
        assert!(out.status.success(), "{command:?} --help: {out:?}");
        help.push_str(&String::from_utf8_lossy(&out.stdout));
    }
    let (flags, _) = names(&help);
    let vars = help
        .split("[env: ")
        .skip(1)
        .filter_map(|rest| rest.split('=').next())
        .map(str::to_string)
        .collect();
    (flags, vars)
}

#[test]
fn every_flag_and_variable_the_deploy_files_name_is_accepted() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    files(&root.join("deploy"), &mut paths);
    paths.push(root.join("docs/deploy.md"));
    let (flags, vars) = accepted();
    assert!(flags.contains("--worker-id-from-hostname") && vars.contains("RINGFLAKE_LISTEN"));
    let others: BTreeSet<&str> = OTHER_TOOLS
        .iter()
        .flat_map(|(_, f)| f.iter().copied())
        .collect();

    let mut unknown = Vec::new();
    let mut named = 0;
    for path in &paths {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let (file_flags, file_vars) = names(&text);
        let shown = path.strip_prefix(root).unwrap_or(path).display();
        for flag in &file_flags {
            named += 1;
            if !flags.contains(flag) && !others.contains(flag.as_str()) {
                unknown.push(format!("{shown}: flag {flag}"));
            }
        }
        for var in &file_vars {
            named += 1;
            if !vars.contains(var) {
                unknown.push(format!("{shown}: variable {var}"));
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "not accepted by the binary (nor a flag of {:?}):\n{}",
        OTHER_TOOLS.iter().map(|(t, _)| *t).collect::<Vec<_>>(),
        unknown.join("\n")
    );
    // The files do name the settings they rely on (the check is not vacuous).
    assert!(named > 20, "only {named} names found in {paths:?}");
}

#[test]
fn the_name_reader_finds_made_up_names() {
    let (flags, vars) = names(
        "ringflake serve --listen=0.0.0.0:8080 --made-up\n  RINGFLAKE_MADE_UP: \"1\" # RINGFLAKE_* and -- alone",
    );
    assert_eq!(
        flags,
        BTreeSet::from(["--listen".to_string(), "--made-up".to_string()])
    );
    assert_eq!(vars, BTreeSet::from(["RINGFLAKE_MADE_UP".to_string()]));
    let (accepted_flags, accepted_vars) = accepted();
    assert!(!accepted_flags.contains("--made-up"));
    assert!(!accepted_vars.contains("RINGFLAKE_MADE_UP"));
}

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
