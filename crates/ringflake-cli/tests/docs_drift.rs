//! Docs that cannot drift from the binary: every `--flag` and `RINGFLAKE_*` variable named in the
//! README, `docs/`, `deploy/` (when present) and `examples/` is one the real binary accepts (read
//! from its own `--help`), flags given to a subcommand are that subcommand's, the defaults
//! `--help` states are the library's constants, every doc page is compiled as a doc test, every
//! relative link points at a file and heading that exist, the deterministic transcripts (`ringflake
//! parse` with only the key files they name, `ringflake layout --epoch …`) print what the docs
//! show, every `content-length` shown is its body's, the features of a `--version` transcript are
//! a default build's, the `--metrics-listen` start-up line names the routes that really moved, and
//! the `--config` example under `examples/` runs with the real binary and prints the timestamps the
//! docs show.

mod common;

use common::{Serve, get, ringflake};
use ringflake::{
    DEFAULT_BOOST_POWER, DEFAULT_EPOCH_SECONDS, DEFAULT_MAX_LAG, DEFAULT_MAX_LEAD,
    DEFAULT_PADDING_FACTOR, DEFAULT_SQLITE_PATH, DatabaseAssigner, Layout,
};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The repository root (the package root: the tests read the files `cargo publish` packages).
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The subcommands whose flags the docs may name (`segments` has two of its own).
const SUBCOMMANDS: [&str; 7] = [
    "serve",
    "gen",
    "parse",
    "layout",
    "workers",
    "segments list",
    "segments add",
];

/// Flags of other tools that the docs name, with the tool: anything else spelled `--flag` must be
/// one of the binary's. Keep this list short; a flag of the binary never belongs here.
const FOREIGN_FLAGS: &[(&str, &str)] = &[
    ("--zero", "callgrind_control"),
    ("--dump", "callgrind_control"),
    ("--check", "scripts/count-routes.sh"),
    ("--all-features", "cargo"),
    ("--locked", "cargo"),
    ("--frozen", "cargo"),
    ("--target", "cargo fetch"),
    ("--bench", "cargo"),
    ("--bin", "cargo"),
    ("--example", "cargo"),
    ("--features", "cargo"),
    ("--no-default-features", "cargo"),
    ("--path", "cargo install"),
    ("--release", "cargo"),
    ("--raw", "crates/ringflake-server/examples/http_floor.rs"),
    ("--num-workers", "ferroid-tonic-server"),
    ("--latency", "wrk"),
    ("--tool", "valgrind"),
    ("--config.file", "prometheus"),
    ("--web.listen-address", "prometheus"),
    ("--storage.tsdb.path", "prometheus"),
    ("--from", "Dockerfile COPY"),
    ("--stop-timeout", "docker"),
    ("--signal", "docker kill"),
    ("--system", "useradd, groupadd"),
    ("--home-dir", "useradd"),
    ("--shell", "useradd"),
    ("--uid", "useradd"),
    ("--gid", "useradd, groupadd"),
    ("--no-create-home", "useradd"),
    ("--no-install-recommends", "apt-get"),
    ("--now", "systemctl enable"),
    ("--from-file", "kubectl create secret"),
    ("--from-literal", "kubectl create secret"),
    ("--force", "kubectl delete"),
    ("--mount", "Dockerfile RUN"),
    ("--interval", "Dockerfile HEALTHCHECK"),
    ("--timeout", "Dockerfile HEALTHCHECK"),
    ("--start-period", "Dockerfile HEALTHCHECK"),
    ("--retries", "Dockerfile HEALTHCHECK"),
];

/// `RINGFLAKE_*` variables the docs name that the binary does not read, with the file that does
/// (a file the package holds: `scripts/` is not packaged).
const OTHER_VARIABLES: &[(&str, &str)] = &[
    (
        "RINGFLAKE_METRICS_ADDR",
        "crates/ringflake/examples/prometheus.rs",
    ),
    (
        "RINGFLAKE_RUN_SECS",
        "crates/ringflake/examples/prometheus.rs",
    ),
    ("RINGFLAKE_BLESS", "crates/ringflake/tests/grpc_codegen.rs"),
    (
        "RINGFLAKE_BENCH_BASELINE",
        "crates/ringflake-cli/benches/grpc.rs",
    ),
    ("RINGFLAKE_POSTGRES_URL", "scripts/fleet.sh"),
    ("RINGFLAKE_REACH_BASELINE", "scripts/crate-reach.sh"),
    ("RINGFLAKE_PG_BIN", "crates/ringflake-cli/tests/failover.rs"),
    (
        "RINGFLAKE_FAILOVER_PORT",
        "crates/ringflake-cli/tests/failover.rs",
    ),
    (
        "RINGFLAKE_MARIADBD",
        "crates/ringflake-cli/tests/failover.rs",
    ),
    (
        "RINGFLAKE_MARIADB_FAILOVER_PORT",
        "crates/ringflake-cli/tests/failover.rs",
    ),
];

/// One flag of a subcommand, as its `--help` shows it.
#[derive(Debug, Default)]
struct Flag {
    env: Option<String>,
    default: Option<String>,
}

/// `ringflake SUB --help`, parsed: every long flag with its variable and stated default.
fn help(sub: &str) -> BTreeMap<String, Flag> {
    let dir = tempfile::tempdir().unwrap();
    let out = ringflake(dir.path())
        .args(sub.split(' '))
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "ringflake {sub} --help failed");
    let text = String::from_utf8(out.stdout).unwrap();
    let mut flags: BTreeMap<String, Flag> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        // A flag's entry starts with `-n, --count` or `--count` (clap indents them).
        let entry = trimmed
            .strip_prefix('-')
            .filter(|_| line.starts_with(' '))
            .and_then(|_| {
                let at = trimmed.find("--")?;
                (at <= 4).then(|| trimmed[at..].split([' ', '=']).next().unwrap_or(""))
            });
        if let Some(name) = entry.filter(|n| n.len() > 2) {
            current = Some(name.to_string());
            flags.entry(name.to_string()).or_default();
        }
        let Some(name) = &current else { continue };
        let flag = flags.get_mut(name).unwrap();
        if let Some(rest) = line.split("[env: ").nth(1) {
            flag.env = rest.split(['=', ']']).next().map(str::to_string);
        }
        if let Some(rest) = line.split("[default: ").nth(1) {
            flag.default = rest.split(']').next().map(str::to_string);
        }
    }
    assert!(
        flags.len() > 2,
        "no flags found in ringflake {sub} --help:\n{text}"
    );
    flags
}

/// Every subcommand's flags.
fn all_help() -> BTreeMap<&'static str, BTreeMap<String, Flag>> {
    SUBCOMMANDS.iter().map(|s| (*s, help(s))).collect()
}

/// The files whose flags and variables must be the binary's: README.md, docs/, deploy/ (when
/// another change has added it) and examples/, with their paths relative to the root.
fn scanned_files() -> Vec<(String, String)> {
    let mut files = vec![root().join("README.md")];
    for dir in ["docs", "deploy", "examples"] {
        collect(&root().join(dir), &mut files);
    }
    files
        .into_iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(&p).ok()?; // binary files are not docs
            let rel = p
                .strip_prefix(root())
                .unwrap()
                .to_string_lossy()
                .into_owned();
            Some((rel, text))
        })
        .collect()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// The `--flag` tokens of `text`: `--` after a character that cannot be part of a word, then a
/// lowercase letter, then letters, digits, `-` and `.` (a trailing `.` or `-` is punctuation).
fn flags_in(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(at) = text[i..].find("--") {
        let start = i + at;
        i = start + 2;
        let before_ok = start == 0 || {
            let b = bytes[start - 1];
            !(b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        };
        if !before_ok || !bytes.get(i).is_some_and(|b| b.is_ascii_lowercase()) {
            continue;
        }
        let mut end = i;
        while end < bytes.len()
            && (bytes[end].is_ascii_lowercase()
                || bytes[end].is_ascii_digit()
                || bytes[end] == b'-'
                || bytes[end] == b'.')
        {
            end += 1;
        }
        let flag = text[start..end].trim_end_matches(['.', '-']);
        found.push(flag.to_string());
        i = end;
    }
    found
}

/// The `RINGFLAKE_*` names in `text` (not the bare prefix, nor `RINGFLAKE_…`).
fn variables_in(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (at, _) in text.match_indices("RINGFLAKE_") {
        let rest = &text[at + "RINGFLAKE_".len()..];
        let len = rest
            .bytes()
            .take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
            .count();
        let name = rest[..len].trim_end_matches('_');
        if !name.is_empty() {
            found.push(format!("RINGFLAKE_{name}"));
        }
    }
    found
}

/// Whether `flag` (`--x` or `--x=value`) is one `flags` has.
fn accepts(flags: &BTreeMap<String, Flag>, flag: &str) -> bool {
    flags.contains_key(flag.split('=').next().unwrap_or(flag))
}

#[test]
fn every_flag_in_the_docs_is_accepted() {
    let help = all_help();
    let foreign: BTreeSet<&str> = FOREIGN_FLAGS.iter().map(|(f, _)| *f).collect();
    let mut bad = Vec::new();
    for (file, text) in scanned_files() {
        for (n, line) in text.lines().enumerate() {
            for flag in flags_in(line) {
                let binary = help.values().any(|flags| accepts(flags, &flag));
                if !binary && !foreign.contains(flag.as_str()) {
                    bad.push(format!("{file}:{}: {flag}", n + 1));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "flags named in the docs that no `ringflake` command accepts (a foreign tool's flag goes \
         into FOREIGN_FLAGS):\n{}",
        bad.join("\n")
    );
}

/// Commands spelled out in the docs (`ringflake serve --listen …`, `cargo run -- serve …`,
/// `ENTRYPOINT ["ringflake", "serve", …]`, a systemd `ExecStart=` over several lines) give each
/// subcommand only its own flags.
#[test]
fn commands_in_the_docs_use_their_subcommands_flags() {
    let help = all_help();
    let mut bad = Vec::new();
    let mut commands = 0;
    for (file, text) in scanned_files() {
        for (n, line) in logical_lines(&file, &text) {
            for segment in command_segments(&file, &line) {
                let tokens: Vec<&str> = segment
                    .split(|c: char| c.is_whitespace() || matches!(c, '"' | ',' | '[' | ']'))
                    .filter(|t| !t.is_empty())
                    .collect();
                for (i, pair) in tokens.windows(2).enumerate() {
                    let invokes = pair[0] == "ringflake"
                        || pair[0].ends_with("/ringflake")
                        || pair[0] == "--";
                    // `segments list`, `segments add`: the action names the flags.
                    let sub = match (pair[1], tokens.get(i + 2)) {
                        ("segments", Some(action)) => format!("segments {action}"),
                        (sub, _) => sub.to_string(),
                    };
                    let Some(flags) = help.get(sub.as_str()).filter(|_| invokes) else {
                        continue;
                    };
                    commands += 1;
                    for token in &tokens[i + 2..] {
                        if matches!(*token, "|" | "&&" | ";" | ">" | "2>&1" | "…" | "#") {
                            break;
                        }
                        let token = token.trim_end_matches(['.', ')', ';', ':']);
                        if token.starts_with("--") && token.len() > 2 && !accepts(flags, token) {
                            bad.push(format!("{file}:{n}: ringflake {sub} {token}"));
                        }
                    }
                }
            }
        }
    }
    assert!(
        commands > 20,
        "found only {commands} ringflake commands in the docs"
    );
    assert!(
        bad.is_empty(),
        "flags given to a subcommand that does not take them:\n{}",
        bad.join("\n")
    );
}

/// The units a command can span, numbered by their first line: in Markdown prose a paragraph
/// (a code span may continue on the next line), elsewhere (code blocks, other files) a line with
/// its backslash continuations.
fn logical_lines(file: &str, text: &str) -> Vec<(usize, String)> {
    let markdown = file.ends_with(".md");
    let mut out = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    let mut fenced = false;
    let mut in_paragraph = false;
    for (n, line) in text.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        if fence {
            fenced = !fenced;
        }
        let prose = markdown && !fenced && !fence;
        // A paragraph ends at a blank line or where a code block starts.
        if prose && line.trim().is_empty() || !prose && in_paragraph {
            out.extend(pending.take());
        }
        in_paragraph = prose && !line.trim().is_empty();
        if prose && line.trim().is_empty() {
            continue;
        }
        let (start, mut joined) = pending.take().unwrap_or((n + 1, String::new()));
        if prose {
            joined.push_str(line);
            joined.push(' ');
            pending = Some((start, joined));
            continue;
        }
        match line.strip_suffix('\\') {
            Some(part) => {
                joined.push_str(part);
                joined.push(' ');
                pending = Some((start, joined));
            }
            None => {
                joined.push_str(line);
                out.push((start, joined));
            }
        }
    }
    out.extend(pending);
    out
}

/// The parts of a unit that may hold a command: in Markdown prose the `code spans`; elsewhere
/// (code blocks, and other files) the whole unit.
fn command_segments(file: &str, unit: &str) -> Vec<String> {
    let fence = unit.trim_start().starts_with("```");
    if file.ends_with(".md") && unit.contains('`') && !fence {
        unit.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    } else {
        vec![unit.to_string()]
    }
}

#[test]
fn every_variable_in_the_docs_is_read() {
    let help = all_help();
    let binary: BTreeSet<String> = help
        .values()
        .flat_map(|flags| flags.values().filter_map(|f| f.env.clone()))
        .collect();
    for (name, reader) in OTHER_VARIABLES {
        assert!(
            !binary.contains(*name),
            "{name} is the binary's: drop it from OTHER_VARIABLES"
        );
        let text = std::fs::read_to_string(root().join(reader)).unwrap();
        assert!(text.contains(name), "{reader} does not read {name}");
    }
    let other: BTreeSet<&str> = OTHER_VARIABLES.iter().map(|(v, _)| *v).collect();
    let mut bad = Vec::new();
    for (file, text) in scanned_files() {
        for (n, line) in text.lines().enumerate() {
            for var in variables_in(line) {
                if !binary.contains(&var) && !other.contains(var.as_str()) {
                    bad.push(format!("{file}:{}: {var}", n + 1));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "RINGFLAKE_* variables named in the docs that the binary does not read:\n{}",
        bad.join("\n")
    );
}

/// The docs say every flag is also read from `RINGFLAKE_` and its name in capitals.
#[test]
fn every_flag_has_its_variable() {
    for (sub, flags) in all_help() {
        for (name, flag) in flags {
            if matches!(name.as_str(), "--help" | "--version") {
                continue;
            }
            let expected = format!("RINGFLAKE_{}", name[2..].replace('-', "_").to_uppercase());
            assert_eq!(
                flag.env.as_deref(),
                Some(expected.as_str()),
                "ringflake {sub} {name}"
            );
        }
    }
}

/// The `[default: …]` of `--help` is the library's constant wherever the library has one.
#[test]
fn help_defaults_are_the_library_constants() {
    let d = Layout::default();
    let epoch = jiff::Timestamp::from_second(DEFAULT_EPOCH_SECONDS)
        .unwrap()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date();
    let expected: [(&str, String); 14] = [
        (
            "--segment-max-wait",
            ringflake::DEFAULT_SEGMENT_MAX_WAIT.as_secs().to_string(),
        ),
        (
            "--segment-refresh",
            ringflake::DEFAULT_SEGMENT_REFRESH.as_secs().to_string(),
        ),
        ("--time-bits", d.time_bits().to_string()),
        ("--worker-bits", d.worker_bits().to_string()),
        ("--seq-bits", d.seq_bits().to_string()),
        ("--epoch", format!("{epoch} UTC")),
        ("--max-lead", DEFAULT_MAX_LEAD.as_secs().to_string()),
        ("--max-lag", DEFAULT_MAX_LAG.as_secs().to_string()),
        ("--boost-power", DEFAULT_BOOST_POWER.to_string()),
        ("--padding-factor", DEFAULT_PADDING_FACTOR.to_string()),
        ("--db", DEFAULT_SQLITE_PATH.to_string()),
        (
            "--db-timeout",
            DatabaseAssigner::DEFAULT_TIMEOUT.as_secs().to_string(),
        ),
        (
            "--db-retry",
            DatabaseAssigner::DEFAULT_RETRY_FOR.as_secs().to_string(),
        ),
        (
            "--lease-window",
            DatabaseAssigner::DEFAULT_LEASE_WINDOW.as_secs().to_string(),
        ),
    ];
    let help = all_help();
    for (flag, value) in &expected {
        let mut seen = 0;
        for (sub, flags) in &help {
            let Some(f) = flags.get(*flag) else { continue };
            seen += 1;
            assert_eq!(
                f.default.as_deref(),
                Some(value.as_str()),
                "ringflake {sub} --help: {flag}'s default is not the library's"
            );
        }
        assert!(seen > 0, "no command has {flag} any more: update this test");
    }
}

/// Every doc page's Rust blocks run as doc tests: each is included in the library's
/// `crates/ringflake/src/lib.rs`.
#[test]
fn every_doc_page_is_a_doctest() {
    let lib = std::fs::read_to_string(root().join("crates/ringflake/src/lib.rs")).unwrap();
    let mut pages = vec!["README.md".to_string()];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            pages.push(format!("docs/{name}"));
        }
    }
    assert!(
        pages.len() > 5,
        "docs/ has fewer pages than expected: {pages:?}"
    );
    for page in pages {
        let include = format!("include_str!(\"../../../{page}\")");
        assert!(
            lib.contains(&include),
            "crates/ringflake/src/lib.rs does not compile {page}: add #[doc = {include}]"
        );
    }
}

/// The Markdown files a reader follows links between.
fn markdown_pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md"), root().join("CONTRIBUTING.md")];
    let mut docs = Vec::new();
    collect(&root().join("docs"), &mut docs);
    collect(&root().join("deploy"), &mut docs);
    pages.extend(
        docs.into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "md")),
    );
    pages
}

/// GitHub's anchors for the headings of a Markdown text (outside code blocks).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let Some(title) = line.strip_prefix('#').filter(|_| !fenced) else {
            continue;
        };
        let title = title.trim_start_matches('#');
        if !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let n = seen.entry(slug.clone()).or_insert(0);
        out.insert(if *n == 0 {
            slug.clone()
        } else {
            format!("{slug}-{n}")
        });
        *n += 1;
    }
    out
}

/// The `[text](target)` targets of a Markdown text, outside code blocks and code spans, with
/// their line numbers.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Code spans hold no links.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        for (at, _) in prose.match_indices("](") {
            let rest = &prose[at + 2..];
            if let Some(end) = rest.find(')') {
                out.push((n + 1, rest[..end].to_string()));
            }
        }
    }
    out
}

#[test]
fn relative_links_point_at_files_and_headings() {
    let mut bad = Vec::new();
    let mut checked = 0;
    for page in markdown_pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let rel = page.strip_prefix(root()).unwrap().display().to_string();
        for (n, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let file = if path.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(path)
            };
            if !file.exists() {
                bad.push(format!("{rel}:{n}: {target}: no file {}", file.display()));
                continue;
            }
            if !anchor.is_empty() {
                let target_text = std::fs::read_to_string(&file).unwrap_or_default();
                if !anchors(&target_text).contains(anchor) {
                    bad.push(format!("{rel}:{n}: {target}: no heading #{anchor}"));
                }
            }
        }
    }
    assert!(checked > 20, "found only {checked} relative links");
    assert!(bad.is_empty(), "dead links:\n{}", bad.join("\n"));
}

/// The transcripts of `ringflake parse` (exact) and `ringflake layout … --today …` (abridged: each
/// shown line in order) in the docs print what the binary prints, on any day: a layout transcript
/// must pin the day it plans from. They run in the repository's root with nothing else beside
/// them, so a transcript of public IDs reads them with the key file it names
/// (`tests/data/example-id.key`), never with one the test supplies: one made with another key
/// than it names prints other IDs, and fails.
#[test]
fn deterministic_transcripts_print_what_the_docs_show() {
    let dir = root();
    // `segments` transcripts write their own SQLite file: in a directory of this run's, never in
    // the repository.
    let scratch = tempfile::tempdir().unwrap();
    let mut replayed = 0;
    for (file, text) in scanned_files()
        .into_iter()
        .filter(|(f, _)| f.ends_with(".md"))
    {
        let lines: Vec<&str> = text.lines().collect();
        for (n, line) in lines.iter().enumerate() {
            let Some(command) = line.strip_prefix("$ ") else {
                continue;
            };
            let (tz, command) = match command.strip_prefix("TZ=") {
                Some(rest) => rest.split_once(' ').unwrap(),
                None => ("UTC", command),
            };
            let Some(args) = command.strip_prefix("ringflake ") else {
                continue;
            };
            let args: Vec<&str> = args.split_whitespace().collect();
            // `segments` on a file of the transcript's own (each run in a new directory).
            let exact = args[0] == "parse" || args[0] == "segments";
            let layout = args[0] == "layout";
            if !(exact || layout) {
                continue;
            }
            // The planner counts from today: a transcript that does not pin the day prints
            // something else tomorrow.
            assert!(
                !layout || args.contains(&"--today"),
                "{file}:{}: a `ringflake layout` transcript must pin the day with --today: {line}",
                n + 1
            );
            let shown: Vec<&str> = lines[n + 1..]
                .iter()
                .take_while(|l| !l.starts_with("$ ") && !l.starts_with("```"))
                .copied()
                .filter(|l| !l.is_empty() && *l != "…")
                .collect();
            let cwd = if args[0] == "segments" {
                scratch.path()
            } else {
                dir.as_path()
            };
            let out = ringflake(cwd).env("TZ", tz).args(&args).output().unwrap();
            let printed = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let printed: Vec<&str> = printed.lines().filter(|l| !l.is_empty()).collect();
            let at = format!("{file}:{}: {line}", n + 1);
            if exact {
                assert_eq!(printed, shown, "{at}");
            } else {
                let mut rest = printed.iter();
                for want in shown {
                    assert!(
                        rest.any(|got| *got == want),
                        "{at}: not printed (in order): {want}"
                    );
                }
            }
            replayed += 1;
        }
    }
    assert!(replayed >= 4, "replayed only {replayed} transcripts");
}

/// `examples/ringflake.toml` is the `--config` example of docs/service.md: the page shows its
/// tables, the real binary starts on it, its epoch is midnight in the table's zone, and `/parse`
/// answers what the page shows, in that zone.
#[test]
fn config_example_runs_as_documented() {
    let example = std::fs::read_to_string(root().join("examples/ringflake.toml")).unwrap();
    let page = std::fs::read_to_string(root().join("docs/service.md")).unwrap();
    let tables: Vec<&str> = example
        .lines()
        .filter(|l| !l.starts_with('#'))
        .skip_while(|l| l.is_empty())
        .collect();
    let block = page
        .split("```toml\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .unwrap();
    assert_eq!(
        block.lines().collect::<Vec<_>>(),
        tables,
        "docs/service.md's toml block"
    );

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ringflake.toml"), &example).unwrap();
    let serve = Serve::start(dir.path(), &["--config", "ringflake.toml"]);
    let output = serve.output();
    assert!(
        output.contains("generator orders: layout 32/18/13 from 2019-12-31T16:00:00Z"),
        "the orders epoch is not midnight in Asia/Shanghai:\n{output}"
    );

    // The page's transcript, replayed: `/parse/orders/ID` answers what it shows.
    let lines: Vec<&str> = page.lines().collect();
    let mut replayed = 0;
    for (n, line) in lines.iter().enumerate() {
        let Some(url) = line.strip_prefix("$ curl http://127.0.0.1:8080/parse/") else {
            continue;
        };
        let reply = get(serve.addr(), &format!("/parse/{url}"));
        assert_eq!(reply.status, 200, "{url}: {}", reply.body);
        assert_eq!(reply.body, lines[n + 1], "docs/service.md:{}", n + 2);
        replayed += 1;
    }
    assert!(
        replayed >= 2,
        "docs/service.md shows fewer /parse transcripts than expected"
    );

    // A new ID carries the time it was taken, rendered in Beijing time (UTC+8, no summer time).
    let before = common::unix_now() as i64;
    let id = get(serve.addr(), "/id/orders").body.trim_end().to_string();
    let after = common::unix_now() as i64 + 1;
    let parsed = get(serve.addr(), &format!("/parse/orders/{id}")).body;
    let stamp = parsed
        .split("\"timestamp\":\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    let beijing = |t: i64| {
        jiff::Timestamp::from_second(t + 8 * 3600)
            .unwrap()
            .strftime("%Y-%m-%d %H:%M:%S")
            .to_string()
    };
    // An ID may be up to max_lag (1 s) behind the clock, and under light load at most 1 s ahead
    // of it; a second either way of that for the seconds' own width. A wrong zone is hours off.
    let behind = DEFAULT_MAX_LAG.as_secs() as i64 + 1;
    assert!(
        (before - behind..=after + 1).any(|t| beijing(t) == stamp),
        "ID {id} of orders shows {stamp}, not the time of its taking in Beijing ({})",
        beijing(before)
    );
}

/// `ringflake workers` opens its SQLite file read-only: its `--help` must not promise to create it.
#[test]
fn workers_help_says_it_only_reads() {
    let dir = tempfile::tempdir().unwrap();
    let out = ringflake(dir.path())
        .args(["workers", "--help"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    // The flag's line and the next: clap puts the help there when the flags' texts are long.
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.trim_start().starts_with("--db "))
        .unwrap();
    let db = lines[at..(at + 2).min(lines.len())].join(" ");
    assert!(
        db.contains("read-only") && !db.contains("created if missing"),
        "{db}"
    );
}

/// Every `content-length: N` a transcript of the docs shows is the length of the body it shows
/// (the lines after the blank line that ends the head, up to the next command or the end of the
/// block, joined by newlines).
#[test]
fn every_content_length_shown_is_its_bodys() {
    let mut checked = 0;
    for (file, text) in scanned_files()
        .into_iter()
        .filter(|(f, _)| f.ends_with(".md"))
    {
        let lines: Vec<&str> = text.lines().collect();
        for (n, line) in lines.iter().enumerate() {
            let Some(shown) = line.strip_prefix("content-length: ") else {
                continue;
            };
            let shown: usize = shown.trim().parse().unwrap();
            let rest = &lines[n + 1..];
            let head_end = rest
                .iter()
                .position(|l| l.is_empty())
                .unwrap_or_else(|| panic!("{file}:{}: no blank line after the head", n + 1));
            let body: Vec<&str> = rest[head_end + 1..]
                .iter()
                .take_while(|l| !l.starts_with("$ ") && !l.starts_with("```"))
                .copied()
                .collect();
            let body = body.join("\n");
            assert_eq!(
                shown,
                body.len(),
                "{file}:{}: content-length {shown}, but the body shown is {} bytes: {body}",
                n + 1,
                body.len()
            );
            checked += 1;
        }
    }
    assert!(checked >= 1, "no content-length in the docs' transcripts");
}

/// The features of a `ringflake --version` transcript are those the binary prints that a
/// default build has (`cargo install ringflake-cli`: the library's features the command-line
/// crate's manifest turns on, and in turn every feature each of those turns on), every one of
/// them, in `--version`'s order.
#[test]
fn the_features_shown_are_the_default_builds() {
    let out = ringflake(&root()).arg("--version").output().unwrap();
    let version = String::from_utf8(out.stdout).unwrap();
    let features = |line: &str| -> Vec<String> {
        line.split("features: ")
            .nth(1)
            .and_then(|rest| rest.split(')').next())
            .unwrap_or_else(|| panic!("no features in {line:?}"))
            .split(", ")
            .map(str::to_string)
            .collect()
    };
    let defaults = default_features();
    let expected: Vec<String> = features(&version)
        .into_iter()
        .filter(|f| defaults.contains(f))
        .collect();
    assert!(expected.contains(&"sqlite".to_string()), "{version}");
    let mut shown = 0;
    for (file, text) in scanned_files()
        .into_iter()
        .filter(|(f, _)| f.ends_with(".md"))
    {
        let lines: Vec<&str> = text.lines().collect();
        for (n, line) in lines.iter().enumerate() {
            if line.trim() != "$ ringflake --version" {
                continue;
            }
            assert_eq!(
                features(lines[n + 1]),
                expected,
                "{file}:{}: the features a default build's --version prints",
                n + 2
            );
            shown += 1;
        }
    }
    assert!(
        shown >= 1,
        "no `ringflake --version` transcript in the docs"
    );
}

/// The library's features a default build of the binary has: those `ringflake-cli`'s manifest
/// turns on in its `[dependencies]`, and in turn every feature each one turns on (not `dep:` nor
/// `crate/feature` entries).
fn default_features() -> BTreeSet<String> {
    let cli = std::fs::read_to_string(root().join("crates/ringflake-cli/Cargo.toml")).unwrap();
    let dependencies = cli
        .split("\n[dependencies]\n")
        .nth(1)
        .expect("[dependencies]");
    let line = dependencies
        .lines()
        .find(|l| l.starts_with("ringflake = "))
        .expect("ringflake in ringflake-cli's [dependencies]");
    let wanted: Vec<&str> = line
        .split("features = [")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .expect("ringflake's features")
        .split(',')
        .map(|f| f.trim().trim_matches('"'))
        .filter(|f| !f.is_empty())
        .collect();
    let manifest = std::fs::read_to_string(root().join("crates/ringflake/Cargo.toml")).unwrap();
    let section = manifest
        .split("\n[features]\n")
        .nth(1)
        .and_then(|s| s.split("\n[").next())
        .expect("a [features] table");
    let table: BTreeMap<&str, Vec<&str>> = section
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(" = "))
        .map(|(name, list)| {
            let items = list
                .trim_matches(['[', ']'])
                .split(',')
                .map(|i| i.trim().trim_matches('"'))
                .filter(|i| !i.is_empty() && !i.contains(':') && !i.contains('/'))
                .collect();
            (name.trim(), items)
        })
        .collect();
    let mut seen = BTreeSet::new();
    let mut todo = wanted;
    while let Some(f) = todo.pop() {
        if seen.insert(f.to_string()) {
            todo.extend(table.get(f).into_iter().flatten().copied());
        }
    }
    seen
}

/// The start-up line of `--metrics-listen` names the routes that moved to the internal address
/// and those both addresses answer, as the real listeners answer them: every route of the service
/// is asked of both, and the line must name exactly those the main address answers with 404 and
/// the internal one does not, then exactly those both answer.
#[test]
fn the_metrics_listen_line_names_the_routes_that_moved() {
    let dir = tempfile::tempdir().unwrap();
    let serve = Serve::start(
        dir.path(),
        &["--worker-id", "3", "--metrics-listen", "127.0.0.1:0"],
    );
    let output = serve.output();
    let line = output
        .lines()
        .find(|l| l.starts_with("ringflake: metrics on http://"))
        .unwrap_or_else(|| panic!("no metrics line:\n{output}"));
    let internal: std::net::SocketAddr = line["ringflake: metrics on http://".len()..]
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    // Every route of the service, as the two addresses' 404s list what each serves.
    let mut routes = BTreeSet::new();
    for addr in [serve.addr(), internal] {
        let listing = get(addr, "/nothing").body;
        routes.extend(
            listing
                .split("try GET ")
                .nth(1)
                .unwrap_or_else(|| panic!("{listing}"))
                .trim_end_matches(['"', '}'])
                .replace(" or ", ", ")
                .split(", ")
                .map(str::to_string),
        );
    }
    assert!(routes.len() > 8, "{routes:?}");
    let mut there_only = BTreeSet::new();
    let mut both = BTreeSet::new();
    for route in &routes {
        let path = route
            .replace("{name}", "default")
            .replace("{id}", "1")
            .replace("{key}", "x")
            .replace("=N", "=1")
            .replace("=ID", "=1");
        let main = get(serve.addr(), &path).status != 404;
        let inside = get(internal, &path).status != 404;
        match (main, inside) {
            (false, true) => {
                there_only.insert(route.clone());
            }
            (true, true) => {
                both.insert(route.clone());
            }
            _ => {}
        }
    }
    let said = |part: usize, end: &str| -> BTreeSet<String> {
        line.split("; ")
            .nth(part)
            .and_then(|p| p.split(end).next())
            .unwrap_or_else(|| panic!("no '{end}' in {line}"))
            .replace(" and ", ", ")
            .split(", ")
            .map(str::to_string)
            .collect()
    };
    let said_moved = said(1, " answer there");
    let said_both = said(2, " answer on both");
    assert!(there_only.contains("/metrics") && both.contains("/healthz"));
    assert_eq!(said_moved, there_only, "{line}");
    assert_eq!(said_both, both, "{line}");
}
