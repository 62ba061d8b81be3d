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
    let root = &Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
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

/// The repository's root.
fn root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The YAML documents of a file under `deploy/kubernetes/`.
fn documents(name: &str) -> Vec<serde_yaml::Value> {
    let text = std::fs::read_to_string(root().join("deploy/kubernetes").join(name)).unwrap();
    text.split("\n---\n")
        .map(|d| serde_yaml::from_str(d).unwrap_or_else(|e| panic!("{name}: {e}")))
        .collect()
}

/// The image every manifest, the Dockerfile's comment and the docs name: `ringflake:` and the
/// crate's version, so that `docker build -t` as written makes the image the StatefulSets run.
#[test]
fn one_image_name_and_tag_everywhere() {
    let image = format!("ringflake:{}", env!("CARGO_PKG_VERSION"));
    let mut seen = 0;
    let mut files = vec![root().join("deploy/Dockerfile"), root().join("README.md")];
    for dir in ["deploy/kubernetes", "docs"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            files.push(entry.unwrap().path());
        }
    }
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        // Every `ringflake:TAG` where the tag starts with a digit: an image reference.
        for (i, _) in text.match_indices("ringflake:") {
            let tag: String = text[i + "ringflake:".len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
                .collect();
            if tag.starts_with(|c: char| c.is_ascii_digit()) && !tag.contains("5432") {
                assert_eq!(
                    format!("ringflake:{tag}"),
                    image,
                    "{}: an image tag other than the crate's version",
                    file.display()
                );
                seen += 1;
            }
        }
    }
    let docker = std::fs::read_to_string(root().join("deploy/Dockerfile")).unwrap();
    assert!(
        docker.contains(&format!("-t {image} .")),
        "the build command tags {image}"
    );
    for name in ["statefulset.yaml", "statefulset-shared-table.yaml"] {
        let set = &documents(name)[0];
        let containers = set["spec"]["template"]["spec"]["containers"]
            .as_sequence()
            .unwrap();
        assert_eq!(
            containers[0]["image"].as_str(),
            Some(image.as_str()),
            "{name}"
        );
    }
    assert!(seen >= 4, "only {seen} image references");
}

/// What a StatefulSet needs to survive its own cluster: liveness (the process answers, `/livez`)
/// apart from readiness (`/healthz`, which a restart does not fix), a startup probe, a preStop
/// delay shorter than the grace period, spread over nodes and zones; and a PodDisruptionBudget
/// selecting its pods.
#[test]
fn the_statefulsets_probe_spread_and_drain() {
    for name in ["statefulset.yaml", "statefulset-shared-table.yaml"] {
        let set = &documents(name)[0];
        assert_eq!(set["kind"].as_str(), Some("StatefulSet"), "{name}");
        let pod = &set["spec"]["template"]["spec"];
        let c = &pod["containers"][0];
        let path = |probe: &str| c[probe]["httpGet"]["path"].as_str().map(str::to_owned);
        assert_eq!(path("livenessProbe").as_deref(), Some("/livez"), "{name}");
        assert_eq!(
            path("readinessProbe").as_deref(),
            Some("/healthz"),
            "{name}"
        );
        assert_eq!(path("startupProbe").as_deref(), Some("/livez"), "{name}");
        let startup = &c["startupProbe"];
        let budget = startup["periodSeconds"].as_u64().unwrap()
            * startup["failureThreshold"].as_u64().unwrap();
        assert!(
            budget >= 60,
            "{name}: a start-up of {budget} s cannot outlast --db-retry"
        );
        let pre_stop = c["lifecycle"]["preStop"]["exec"]["command"]
            .as_sequence()
            .unwrap_or_else(|| panic!("{name}: no preStop"));
        assert_eq!(pre_stop[0].as_str(), Some("sleep"), "{name}");
        let delay: u64 = pre_stop[1].as_str().unwrap().parse().unwrap();
        let grace = pod["terminationGracePeriodSeconds"].as_u64().unwrap();
        // The delay, then --shutdown-timeout (10 s), within the grace period.
        assert!(
            delay >= 3 && delay + 10 < grace,
            "{name}: {delay} s + 10 s vs {grace} s"
        );
        let keys: Vec<&str> = pod["topologySpreadConstraints"]
            .as_sequence()
            .unwrap_or_else(|| panic!("{name}: no topology spread"))
            .iter()
            .map(|t| t["topologyKey"].as_str().unwrap())
            .collect();
        assert_eq!(
            keys,
            ["kubernetes.io/hostname", "topology.kubernetes.io/zone"],
            "{name}"
        );
        // Probes on the metrics port, which the container declares.
        let ports: Vec<&str> = c["ports"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
            let port = c[probe]["httpGet"]["port"].as_str().unwrap();
            assert!(ports.contains(&port), "{name} {probe}: port {port}");
        }
    }
    let pdb = &documents("pdb.yaml")[0];
    assert_eq!(pdb["kind"].as_str(), Some("PodDisruptionBudget"));
    assert_eq!(pdb["apiVersion"].as_str(), Some("policy/v1"));
    assert_eq!(pdb["spec"]["maxUnavailable"].as_u64(), Some(1));
    let set = &documents("statefulset.yaml")[0];
    assert_eq!(
        pdb["spec"]["selector"]["matchLabels"],
        set["spec"]["selector"]["matchLabels"]
    );
}

/// The Secret as shipped does not start a service: its token is a placeholder, refused at start
/// with the file and line, and the StatefulSets' headers create the Secret rather than apply it.
#[test]
fn the_shipped_secret_is_refused() {
    let secret = &documents("secret.yaml")[0];
    let tokens = secret["stringData"]["tokens"].as_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tokens"), tokens).unwrap();
    let mut cmd = common::ringflake(dir.path());
    cmd.args([
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--auth-token-file",
        "tokens",
    ]);
    let out = common::output_within(cmd, std::time::Duration::from_secs(30));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("token file tokens line 1: the token contains \"replace-me\""),
        "{err}"
    );
    assert!(
        !dir.path().join("ringflake.db").exists(),
        "refused before the worker table"
    );
    for name in ["statefulset.yaml", "statefulset-shared-table.yaml"] {
        let text = std::fs::read_to_string(root().join("deploy/kubernetes").join(name)).unwrap();
        assert!(
            !text.contains("-f secret.yaml"),
            "{name} applies the placeholder Secret"
        );
        assert!(
            text.contains("kubectl create secret generic ringflake"),
            "{name}"
        );
    }
}

/// The Dockerfile caches its dependencies apart from the sources and has a HEALTHCHECK; the
/// systemd unit waits for serve's readiness notification.
#[test]
fn the_dockerfile_and_the_unit_signal_health() {
    let docker = std::fs::read_to_string(root().join("deploy/Dockerfile")).unwrap();
    let fetch = docker
        .find("cargo fetch --locked")
        .expect("a cargo fetch layer");
    let stubs = docker
        .find("sh deploy/stub-targets.sh")
        .expect("the stub step");
    let copy_all = docker.find("COPY . .").expect("COPY . .");
    assert!(
        stubs < fetch && fetch < copy_all,
        "the dependencies are fetched, the targets stubbed, before the sources are copied"
    );
    assert!(docker.contains("--mount=type=cache,target=/src/target"));
    // A cache mount over the registry would hide the layer that `cargo fetch` filled; the build
    // proves that the layer holds every crate it needs (--frozen: nothing downloaded).
    assert!(!docker.contains("target=/usr/local/cargo"), "{docker}");
    assert!(docker.contains("cargo build --release --frozen -p ringflake-cli --bin ringflake"));
    assert!(docker.contains("HEALTHCHECK ") && docker.contains("GET /healthz"));
    let unit = std::fs::read_to_string(root().join("deploy/systemd/ringflake.service")).unwrap();
    let lines: Vec<&str> = unit.lines().collect();
    assert!(lines.contains(&"Type=notify"), "{unit}");
    assert!(lines.contains(&"NotifyAccess=main"), "{unit}");
}

/// `Type=notify`: with `NOTIFY_SOCKET` set, serve sends `READY=1` once it listens (its address
/// announced) and `STOPPING=1` at SIGTERM, as datagrams to that socket.
#[cfg(unix)]
#[test]
fn serve_notifies_systemd() {
    use std::os::unix::net::UnixDatagram;
    let dir = tempfile::tempdir().unwrap();
    let socket_path = dir.path().join("notify");
    let socket = UnixDatagram::bind(&socket_path).unwrap();
    socket
        .set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .unwrap();
    let mut cmd = common::ringflake(dir.path());
    cmd.args(["serve", "--listen", "127.0.0.1:0"])
        .env("NOTIFY_SOCKET", &socket_path);
    let mut serve = common::Serve::launch_command(cmd);
    let mut buf = [0u8; 256];
    let n = socket.recv(&mut buf).expect("READY=1 within 60 s");
    let ready = String::from_utf8_lossy(&buf[..n]).into_owned();
    assert!(ready.lines().any(|l| l == "READY=1"), "{ready:?}");
    // Ready means listening, the address printed.
    let addr = serve.ready(std::time::Duration::from_secs(5));
    assert_eq!(common::get(addr, "/livez").body, "ok\n");
    common::signal(serve.pid, "TERM");
    let n = socket.recv(&mut buf).expect("STOPPING=1");
    assert_eq!(&buf[..n], b"STOPPING=1");
    serve.kill();
}

/// `deploy/stub-targets.sh` (the Dockerfile's dependency layer) stands in for every target each
/// member's Cargo.toml declares: in a folder holding only the workspace's manifests (as the
/// Dockerfile's layer does), Cargo reads the whole workspace after the script ran
/// (`cargo metadata --offline --no-deps` refuses a manifest whose declared target is missing), the
/// script lists each file it made, and it never overwrites a real one. `.ci/run` runs the
/// Dockerfile's build stage with it up to the compile.
#[cfg(unix)]
#[test]
fn the_stub_step_stands_in_for_every_declared_target() {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let members: Vec<String> = manifest
        .lines()
        .find_map(|l| l.strip_prefix("members = ["))
        .expect("a one-line members list")
        .trim_end_matches(']')
        .split(',')
        .map(|m| m.trim().trim_matches('"').to_string())
        .filter(|m| !m.is_empty())
        .collect();
    assert!(members.len() >= 4, "{members:?}");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), &manifest).unwrap();
    for member in &members {
        std::fs::create_dir_all(dir.path().join(member)).unwrap();
        std::fs::copy(
            root().join(member).join("Cargo.toml"),
            dir.path().join(member).join("Cargo.toml"),
        )
        .unwrap();
    }
    let real = "crates/ringflake/examples/prometheus.rs";
    std::fs::create_dir_all(dir.path().join("crates/ringflake/examples")).unwrap();
    std::fs::write(dir.path().join(real), "// real\n").unwrap();
    let out = std::process::Command::new("sh")
        .arg(root().join("deploy/stub-targets.sh"))
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert!(
        listed.contains(&"crates/ringflake-cli/src/main.rs".to_string()),
        "{listed:?}"
    );
    assert!(!listed.contains(&real.to_string()), "{listed:?}");
    for file in &listed {
        assert!(dir.path().join(file).is_file(), "{file} listed, not made");
    }
    let metadata = std::process::Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--offline",
            "--no-deps",
            "--format-version",
            "1",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        metadata.status.success(),
        "Cargo cannot read the stubbed workspace: {}",
        String::from_utf8_lossy(&metadata.stderr)
    );
    let text = std::fs::read_to_string(dir.path().join(real)).unwrap();
    assert_eq!(text, "// real\n", "a real file was overwritten");
}

/// The section of docs/production.md under `## {title}`, up to the next `## `.
fn production_section(title: &str) -> String {
    let page = std::fs::read_to_string(root().join("docs/production.md")).unwrap();
    let start = page
        .find(&format!("\n## {title}\n"))
        .unwrap_or_else(|| panic!("docs/production.md has no section {title}"));
    let rest = &page[start + 4 + title.len()..];
    rest[..rest.find("\n## ").unwrap_or(rest.len())].to_string()
}

/// docs/production.md's token and systemd steps, word for word, give a unit that reads its
/// tokens: run as root in a scratch root, the service then started as an unprivileged user with
/// the unit's settings. Two changes, and why: paths under `/etc` and `/usr/local/bin` are moved
/// into the scratch root (a test must not write the machine's `/etc`; modes and groups work the
/// same under a prefix), and the account is the existing `nobody`/`nogroup` (a test must not add
/// users to the machine): `useradd` and `systemctl` are the lines left out. The unit's header
/// comment lists the same commands. Needs root (CI runs it; `-- --include-ignored`).
#[cfg(unix)]
#[test]
#[ignore = "needs root (chown, setpriv to nobody): run with -- --include-ignored as root, as CI does"]
fn the_documented_systemd_steps_give_a_unit_that_reads_its_tokens() {
    use std::os::unix::fs::PermissionsExt;
    let uid = std::process::Command::new("id").arg("-u").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&uid.stdout).trim(),
        "0",
        "run as root: the documented steps chown files and the unit runs as another user"
    );
    let tokens_step: Vec<String> = production_section("Bearer tokens")
        .lines()
        .filter_map(|l| l.strip_prefix("$ "))
        .take_while(|l| !l.starts_with("ringflake "))
        .map(str::to_string)
        .collect();
    let systemd = production_section("systemd");
    let block = systemd
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a sh block in ## systemd");
    let unit_text =
        std::fs::read_to_string(root().join("deploy/systemd/ringflake.service")).unwrap();
    let unit_commands: Vec<&str> = unit_text
        .lines()
        .filter_map(|l| l.strip_prefix("#   "))
        .collect();
    assert_eq!(
        unit_commands,
        block.lines().collect::<Vec<_>>(),
        "the unit's header comment and docs/production.md list other commands"
    );
    assert_eq!(tokens_step.len(), 1, "{tokens_step:?}");

    // The scratch root, traversable by everyone as / is; the working directory stands for the
    // checkout the commands are run in (target/release/ringflake, deploy/systemd/...).
    let scratch = tempfile::tempdir().unwrap();
    let sys = scratch.path().join("root");
    for dir in ["etc/systemd/system", "usr/local/bin", "var/lib/ringflake"] {
        std::fs::create_dir_all(sys.join(dir)).unwrap();
    }
    std::fs::set_permissions(scratch.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let work = scratch.path().join("work");
    std::fs::create_dir_all(work.join("target/release")).unwrap();
    std::fs::create_dir_all(work.join("deploy/systemd")).unwrap();
    std::fs::copy(
        env!("CARGO_BIN_EXE_ringflake"),
        work.join("target/release/ringflake"),
    )
    .unwrap();
    std::fs::copy(
        root().join("deploy/systemd/ringflake.service"),
        work.join("deploy/systemd/ringflake.service"),
    )
    .unwrap();
    let prefix = sys.display().to_string();
    let moved = |line: &str| {
        line.replace(" /etc/", &format!(" {prefix}/etc/"))
            .replace(" /usr/local/bin/", &format!(" {prefix}/usr/local/bin/"))
            .replace("-g ringflake ", "-g nogroup ")
    };
    let mut script = String::from("set -eu\n");
    let mut left_out = Vec::new();
    for line in tokens_step.iter().map(String::as_str).chain(block.lines()) {
        if line.starts_with("useradd ") || line.starts_with("systemctl ") {
            left_out.push(line);
            continue;
        }
        script.push_str(&moved(line));
        script.push('\n');
    }
    assert_eq!(left_out.len(), 2, "{left_out:?}");
    let out = std::process::Command::new("sh")
        .args(["-c", &script])
        .current_dir(&work)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the documented steps failed:\n{script}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The unit as systemd would start it: its user, its Environment= lines (the addresses moved
    // to free local ports), its state directory (StateDirectory= makes it the user's).
    let installed =
        std::fs::read_to_string(sys.join("etc/systemd/system/ringflake.service")).unwrap();
    let setting = |key: &str| -> Vec<String> {
        installed
            .lines()
            .filter_map(|l| l.strip_prefix(key))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(setting("User="), ["ringflake"]);
    let exec = setting("ExecStart=");
    let exec: Vec<String> = exec[0]
        .split_whitespace()
        .map(moved_path(&prefix))
        .collect();
    let state_dir = sys.join("var/lib/ringflake");
    // StateDirectory= hands the directory to the unit's user (nobody is uid and gid 65534 on
    // Debian).
    std::os::unix::fs::chown(&state_dir, Some(65534), Some(65534)).unwrap();
    let mut cmd = std::process::Command::new("setpriv");
    cmd.args(["--reuid=nobody", "--regid=nogroup", "--init-groups", "--"])
        .args(&exec)
        .current_dir(&state_dir)
        .env_clear()
        .env("TZ", "UTC");
    for assignment in setting("Environment=") {
        let (key, value) = assignment.split_once('=').unwrap();
        let value = match key {
            "RINGFLAKE_LISTEN" | "RINGFLAKE_METRICS_LISTEN" => "127.0.0.1:0".to_string(),
            _ => moved_path(&prefix)(
                value
                    .replace("%S/", &format!("{}/", sys.join("var/lib").display()))
                    .as_str(),
            ),
        };
        cmd.env(key, value);
    }
    let mut serve = common::Serve::launch_command(cmd);
    let addr = serve.ready(std::time::Duration::from_secs(60));
    let output = serve.output();
    let tokens = format!("{prefix}/etc/ringflake/tokens");
    assert!(
        output.contains(&format!("1 bearer token from {tokens}")),
        "{output}"
    );
    assert_eq!(common::get(addr, "/id").status, 401, "{output}");
    common::signal(serve.pid, "TERM");
}

/// A path of the unit moved under the scratch root `prefix` (`/etc/…`, `/usr/local/bin/…`).
fn moved_path(prefix: &str) -> impl Fn(&str) -> String + '_ {
    move |word: &str| {
        if word.starts_with("/etc/") || word.starts_with("/usr/local/bin/") {
            format!("{prefix}{word}")
        } else {
            word.to_string()
        }
    }
}
