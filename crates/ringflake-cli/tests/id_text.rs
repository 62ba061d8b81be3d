//! IDs that fit a URL, against the real binary: `gen --format` and `parse` in every text form,
//! public IDs through `--id-key-file` read back with their key and only with it, the service's
//! `format=` on `/id`, `/ids` and `/parse`, its public IDs, and gRPC's `Parse` of a text; the key
//! never shows in an error, a log line or `/status`.
#![cfg(unix)]

mod common;

use common::{Serve, get, ringflake};
use ringflake::{IdCipher, IdFormat, Layout};
use std::io::Write as _;
use std::path::Path;
use std::process::{Output, Stdio};

/// A key for the tests, and another one.
const KEY: &str = "4f1c2a9be07d3568c1e2f30a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e";
const OTHER_KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

fn run(dir: &Path, args: &[&str]) -> Output {
    ringflake(dir).args(args).output().expect("run ringflake")
}

/// `ringflake parse ARGS` with `input` on standard input.
fn parse_stdin(dir: &Path, args: &[&str], input: &str) -> Output {
    let mut child = ringflake(dir)
        .arg("parse")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The `UID` and `workerId` of each line of `parse`'s output.
fn uids(out: &str) -> Vec<(u64, u64)> {
    out.lines()
        .map(|l| {
            let field = |name: &str| -> u64 {
                let rest = l.split(&format!("\"{name}\":\"")).nth(1).unwrap();
                rest.split('"').next().unwrap().parse().unwrap()
            };
            (field("UID"), field("workerId"))
        })
        .collect()
}

fn key_file(dir: &Path, name: &str, hex: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("{hex}\n")).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn gen_writes_and_parse_reads_every_form() {
    let dir = tempfile::tempdir().unwrap();
    let layout = Layout::default();
    for format in IdFormat::ALL {
        let out = run(
            dir.path(),
            &[
                "gen",
                "-n",
                "300",
                "--worker-id",
                "5",
                "--no-state-file",
                "--format",
                format.name(),
            ],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 300);
        let ids: Vec<u64> = lines.iter().map(|l| format.decode(l).unwrap()).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{format}");
        for (line, id) in lines.iter().zip(&ids) {
            assert_eq!(*line, format.encode(*id).as_str());
            assert_eq!(layout.parse(*id).unwrap().worker_id, 5);
        }
        if format.sorts_as_bytes() {
            assert!(
                lines.windows(2).all(|w| w[0] < w[1]),
                "{format} sorts as text"
            );
            assert!(lines.iter().all(|l| l.len() == format.max_len()));
        }
        // parse reads them back, told by their text and named.
        for args in [&[][..], &["--format", format.name()][..]] {
            let parsed = parse_stdin(dir.path(), args, &text);
            assert!(parsed.status.success(), "{}", stderr(&parsed));
            let got = uids(&stdout(&parsed));
            assert_eq!(got, ids.iter().map(|&i| (i, 5)).collect::<Vec<_>>());
        }
    }
    // Base32 is read in either case, with Crockford's aliases.
    let out = run(
        dir.path(),
        &[
            "gen",
            "--worker-id",
            "5",
            "--no-state-file",
            "--format",
            "base32",
        ],
    );
    let b32 = stdout(&out).trim().to_string();
    let id = IdFormat::Base32.decode(&b32).unwrap();
    let lower = b32.to_lowercase().replace('0', "o");
    let parsed = run(dir.path(), &["parse", &lower]);
    assert_eq!(uids(&stdout(&parsed)), [(id, 5)], "{}", stderr(&parsed));
    // RINGFLAKE_FORMAT sets the form.
    let out = ringflake(dir.path())
        .env("RINGFLAKE_FORMAT", "base62")
        .args(["gen", "--worker-id", "5", "--no-state-file"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out).trim().len(), 11, "{}", stdout(&out));
    // A form named wrongly: each ID's error says what is wrong with it.
    let out = run(dir.path(), &["parse", "--format", "base32", "0Ix9oXm4KOW"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("a base32 ID has exactly 13 characters, found 11"),
        "{}",
        stderr(&out)
    );
    let out = run(dir.path(), &["parse", "7ZZZZZZZZZZZZ", "G000000000000"]);
    assert!(
        stderr(&out).contains(
            "base32 ID \"G000000000000\" is above the largest ID, 7ZZZZZZZZZZZZ (2^63 - 1 = \
             9223372036854775807)"
        ),
        "{}",
        stderr(&out)
    );
    assert_eq!(uids(&stdout(&out)), [(i64::MAX as u64, 1023)]);
    let out = run(dir.path(), &["gen", "--format", "hex"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn public_ids_read_back_with_their_key_only() {
    let dir = tempfile::tempdir().unwrap();
    let key = key_file(dir.path(), "id.key", KEY);
    let other = key_file(dir.path(), "other.key", OTHER_KEY);
    let out = run(
        dir.path(),
        &[
            "gen",
            "-n",
            "1000",
            "--worker-id",
            "5",
            "--no-state-file",
            "--id-key-file",
            &key,
            "--format",
            "base62",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let public: Vec<u64> = text
        .lines()
        .map(|l| IdFormat::Base62.decode(l).unwrap())
        .collect();
    // Neither order nor volume shows: about half of the steps go down.
    let downs = public.windows(2).filter(|w| w[1] < w[0]).count();
    assert!((350..650).contains(&downs), "{downs} of 999 steps go down");
    let mut distinct = public.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), 1000);
    // The key reads them back: worker 5, in the order they were made.
    let parsed = parse_stdin(dir.path(), &["--id-key-file", &key], &text);
    assert!(parsed.status.success(), "{}", stderr(&parsed));
    let ids = uids(&stdout(&parsed));
    assert!(ids.iter().all(|&(_, worker)| worker == 5));
    assert!(ids.windows(2).all(|w| w[0].0 < w[1].0));
    let cipher = IdCipher::from_hex(KEY).unwrap();
    for (p, (id, _)) in public.iter().zip(&ids) {
        assert_eq!(cipher.decrypt(*p).unwrap(), *id);
    }
    // Another key, or none, reads something else.
    for args in [&["--id-key-file", other.as_str()][..], &[][..]] {
        let parsed = parse_stdin(dir.path(), args, &text);
        let wrong = uids(&stdout(&parsed));
        assert_eq!(wrong.len(), 1000);
        assert_ne!(wrong, ids, "{args:?}");
        assert!(
            wrong.iter().filter(|&&(_, w)| w == 5).count() < 50,
            "{args:?}"
        );
    }
}

#[test]
fn key_file_errors_never_show_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let short = key_file(dir.path(), "short.key", &KEY[..63]);
    let bad = key_file(dir.path(), "bad.key", &format!("{}z", &KEY[..63]));
    for (file, says) in [
        (short.as_str(), "expected 64 hex digits"),
        (bad.as_str(), "character 64 is not a hex digit"),
        ("missing.key", "cannot open it"),
    ] {
        for command in [
            &["gen", "--worker-id", "1", "--no-state-file"][..],
            &["parse", "1"][..],
        ] {
            let out = ringflake(dir.path())
                .args(command)
                .args(["--id-key-file", file])
                .output()
                .unwrap();
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(1), "{err}");
            assert!(err.contains(&format!("ID key {file}: ")), "{err}");
            assert!(err.contains(says), "{err}");
            assert!(
                !err.contains(&KEY[..16]) && stdout(&out).is_empty(),
                "{err}"
            );
        }
    }
}

#[test]
fn the_service_answers_in_every_form() {
    let dir = tempfile::tempdir().unwrap();
    let serve = Serve::start(dir.path(), &["--no-state-file", "--worker-id", "7"]);
    let addr = serve.addr();
    let layout = Layout::default();
    for format in IdFormat::ALL {
        let one = get(addr, &format!("/id?format={}", format.name()));
        assert_eq!(one.status, 200, "{}", one.body);
        let text = one.body.strip_suffix('\n').unwrap();
        let id = format.decode(text).unwrap();
        assert_eq!(layout.parse(id).unwrap().worker_id, 7);
        let many = get(addr, &format!("/ids?count=100&format={}", format.name()));
        assert_eq!(many.status, 200, "{}", many.body);
        assert_eq!(many.header("content-type"), Some("application/json"));
        let texts: Vec<&str> = many.body[2..many.body.len() - 2].split("\",\"").collect();
        assert_eq!(texts.len(), 100, "{}", many.body);
        let ids: Vec<u64> = texts.iter().map(|t| format.decode(t).unwrap()).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]) && ids[0] > id);
        if format.sorts_as_bytes() {
            assert!(texts.windows(2).all(|w| w[0] < w[1]));
        }
        // /parse reads each form, told by its text or named.
        let want = layout
            .parse(ids[0])
            .unwrap()
            .to_java_string_in(&ringflake::TimeZone::UTC);
        for path in [
            format!("/parse/{}", texts[0]),
            format!("/parse/{}?format={}", texts[0], format.name()),
            format!("/parse/default/{}?format={}", texts[0], format.name()),
        ] {
            let parsed = get(addr, &path);
            assert_eq!(parsed.status, 200, "{path}: {}", parsed.body);
            assert_eq!(parsed.body, want.clone().unwrap(), "{path}");
        }
    }
    for (path, says) in [
        (
            "/ids?count=2&format=hex",
            r#"format \"hex\" is not an ID format: use /ids?count=N"#,
        ),
        (
            "/id?format=",
            r#"format \"\" is not an ID format: use /id [?format=decimal|base32|base62]"#,
        ),
        (
            "/id?format=base32&format=base62",
            "query parameter format given 2 times",
        ),
        (
            "/parse/0Ix9oXm4KOW?format=base32",
            "a base32 ID has exactly 13 characters, found 11",
        ),
        (
            "/parse/0000000%C3%A9",
            "invalid character '%' at position 8 of a base32 ID",
        ),
    ] {
        let r = get(addr, path);
        assert_eq!(r.status, 400, "{path}: {}", r.body);
        assert!(r.body.contains(says), "{path}: {}", r.body);
    }
}

#[test]
fn the_service_hands_out_public_ids() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let key = key_file(dir.path(), "id.key", KEY);
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let serve = Serve::start(
        dir.path(),
        &["--no-state-file", "--worker-id", "7", "--id-key-file", &key],
    );
    let addr = serve.addr();
    let layout = Layout::default();
    let cipher = IdCipher::from_key_file(&key).unwrap();
    let many = get(addr, "/ids?count=500&format=base32");
    assert_eq!(many.status, 200, "{}", many.body);
    let texts: Vec<&str> = many.body[2..many.body.len() - 2].split("\",\"").collect();
    let public: Vec<u64> = texts
        .iter()
        .map(|t| IdFormat::Base32.decode(t).unwrap())
        .collect();
    let ids: Vec<u64> = public.iter().map(|&p| cipher.decrypt(p).unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert!(ids.iter().all(|&i| layout.parse(i).unwrap().worker_id == 7));
    let downs = public.windows(2).filter(|w| w[1] < w[0]).count();
    assert!((150..350).contains(&downs), "{downs} of 499 steps go down");
    // /parse reads a public ID back; /id hands out public IDs too.
    let parsed = get(addr, &format!("/parse/{}", texts[3]));
    assert!(
        parsed
            .body
            .starts_with(&format!("{{\"UID\":\"{}\"", ids[3])),
        "{}",
        parsed.body
    );
    let one = get(addr, "/id");
    let id = cipher.decrypt(one.body.trim().parse().unwrap()).unwrap();
    assert!(id > ids[499] && layout.parse(id).unwrap().worker_id == 7);
    // Leaf's route would hand out plain IDs, which could equal a public one: refused.
    let leaf = get(addr, "/api/snowflake/get/x");
    assert_eq!(leaf.status, 404, "{}", leaf.body);
    assert!(
        leaf.body
            .contains("is not served with --id-key-file: the service hands out public IDs only"),
        "{}",
        leaf.body
    );
    // Every ID handed out is a public ID of a distinct plain ID (a permutation): none twice.
    let mut all = ids.clone();
    all.push(id);
    all.extend(
        common::json_ids(&get(addr, "/ids?count=1000").body)
            .into_iter()
            .map(|p| cipher.decrypt(p).unwrap()),
    );
    let distinct: std::collections::HashSet<u64> = all.iter().copied().collect();
    assert_eq!(distinct.len(), all.len());
    // The key is nowhere: not in /status, the status page, the metrics or the log.
    for path in ["/status", "/", "/metrics", "/healthz"] {
        let body = get(addr, path).body;
        assert!(!body.contains(&KEY[..16]), "{path}");
    }
    let output = serve.output();
    assert!(
        output.contains("public IDs: /id and /ids hand out IDs through the key"),
        "{output}"
    );
    assert!(!output.contains(&KEY[..16]), "{output}");
    // Every user may read the file (mode 644): the start-up output says so.
    assert!(
        output.contains(&format!(
            "warning: ID key file {key} is readable by every user (mode 644): chmod 600 it"
        )),
        "{output}"
    );
}

#[test]
fn grpc_parse_reads_texts() {
    use ringflake::grpc::ParseRequest;
    use ringflake::grpc::id_service_client::IdServiceClient;

    let dir = tempfile::tempdir().unwrap();
    let key = key_file(dir.path(), "id.key", KEY);
    let serve = Serve::start(
        dir.path(),
        &["--no-state-file", "--worker-id", "7", "--id-key-file", &key],
    );
    let addr = serve.addr();
    let cipher = IdCipher::from_hex(KEY).unwrap();
    let id = Layout::default().compose(1_000, 7, 3).unwrap();
    let public = cipher.encrypt(id).unwrap();
    let runtime = common::runtime();
    runtime.block_on(async {
        let channel = common::grpc_channel(addr).await;
        let mut client = IdServiceClient::new(channel);
        for (text, format) in [
            (IdFormat::Base32.encode(public).to_string(), ""),
            (IdFormat::Base62.encode(public).to_string(), "base62"),
            (public.to_string(), "decimal"),
        ] {
            let request = ParseRequest {
                text: text.clone(),
                format: format.into(),
                ..Default::default()
            };
            let answer = client.parse(request).await.unwrap().into_inner();
            assert_eq!(
                (answer.id, answer.worker_id, answer.sequence),
                (id, 7, 3),
                "{text}"
            );
        }
        // `id` is a plain ID, as a service without a key hands them out.
        let request = ParseRequest {
            id,
            ..Default::default()
        };
        assert_eq!(
            client.parse(request).await.unwrap().into_inner().worker_id,
            7
        );
        for (request, says) in [
            (
                ParseRequest {
                    id: 5,
                    text: "5".into(),
                    ..Default::default()
                },
                "give id or text, not both",
            ),
            (
                ParseRequest {
                    text: "0Ix9oXm4KOW".into(),
                    format: "base36".into(),
                    ..Default::default()
                },
                "format \"base36\" is not an ID format",
            ),
            (
                ParseRequest {
                    text: "0Ix9oXm4KO!".into(),
                    ..Default::default()
                },
                "invalid character '!' at position 11 of a base62 ID",
            ),
        ] {
            let status = client.parse(request).await.unwrap_err();
            assert_eq!(status.code(), tonic::Code::InvalidArgument);
            assert!(status.message().contains(says), "{}", status.message());
        }
        // What hands out plain IDs is refused: they could equal a public one of /id and /ids.
        let refused = [
            client
                .next(ringflake::grpc::NextRequest::default())
                .await
                .unwrap_err(),
            client
                .batch(ringflake::grpc::BatchRequest {
                    count: 10,
                    ..Default::default()
                })
                .await
                .unwrap_err(),
            client
                .stream(ringflake::grpc::StreamRequest {
                    count: 10,
                    ..Default::default()
                })
                .await
                .unwrap_err(),
        ];
        for (status, method) in refused.iter().zip(["Next", "Batch", "Stream"]) {
            assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");
            assert!(
                status.message().starts_with(&format!(
                    "{method} is not served with --id-key-file: the service hands out public \
                     IDs only"
                )),
                "{}",
                status.message()
            );
        }
    });
    // RemoteGenerator, which prefetches with Stream, says why at once.
    let error = ringflake::RemoteGenerator::builder(format!("http://{addr}"))
        .build()
        .expect_err("a keyed service refuses RemoteGenerator");
    assert!(
        error
            .to_string()
            .contains("Stream is not served with --id-key-file"),
        "{error}"
    );
}
