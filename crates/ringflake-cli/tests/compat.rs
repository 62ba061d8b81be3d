//! Bit-exact compatibility with Baidu UidGenerator, checked against vectors produced by the real
//! Java code (JVM time zone UTC): `tests/data/uidgenerator-vectors-utc.tsv`.
//!
//! Every row is classified by computing whether its inputs fit the layout, never by its position
//! in the file: rows that fit must give Java's ID and Java's `parseUID` string exactly; rows whose
//! delta, worker id or sequence exceeds its field show Java's spill-over, which ringflake refuses
//! with the matching typed error.

mod common;

use ringflake::{Error, Layout, TimeZone};

const VECTORS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/uidgenerator-vectors-utc.tsv"
);

const HEADER: [&str; 9] = [
    "config",
    "epochStr",
    "epochSeconds",
    "deltaSeconds",
    "workerId",
    "sequence",
    "uid",
    "uidHex",
    "parseUID",
];

/// One data row of the vectors file.
#[derive(Debug)]
struct Row {
    line: usize,
    time_bits: u32,
    worker_bits: u32,
    seq_bits: u32,
    epoch_str: String,
    epoch_seconds: i64,
    delta: u64,
    worker: u64,
    seq: u64,
    uid: i64,
    uid_hex: String,
    parse_uid: String,
}

impl Row {
    fn layout(&self) -> Layout {
        Layout::with_epoch_date(
            self.time_bits,
            self.worker_bits,
            self.seq_bits,
            &self.epoch_str,
            &TimeZone::UTC,
        )
        .unwrap_or_else(|e| panic!("line {}: cannot build the layout: {e}", self.line))
    }
}

/// Which field of a row does not fit its layout, in the order `compose` checks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Overflow {
    Delta,
    Worker,
    Sequence,
}

fn overflow_of(row: &Row, layout: &Layout) -> Option<Overflow> {
    if row.delta > layout.max_delta_seconds() {
        Some(Overflow::Delta)
    } else if row.worker > layout.max_worker_id() {
        Some(Overflow::Worker)
    } else if row.seq > layout.max_sequence() {
        Some(Overflow::Sequence)
    } else {
        None
    }
}

/// Parses `A(29,21,13)` into (29, 21, 13).
fn parse_config(config: &str, line: usize) -> (u32, u32, u32) {
    let inner = config
        .split_once('(')
        .and_then(|(_, rest)| rest.strip_suffix(')'))
        .unwrap_or_else(|| panic!("line {line}: config {config:?} is not of the form X(t,w,s)"));
    let bits: Vec<u32> = inner
        .split(',')
        .map(|b| {
            b.trim()
                .parse()
                .unwrap_or_else(|_| panic!("line {line}: bad width {b:?} in {config:?}"))
        })
        .collect();
    assert_eq!(
        bits.len(),
        3,
        "line {line}: config {config:?} needs 3 widths"
    );
    (bits[0], bits[1], bits[2])
}

fn num<T: std::str::FromStr>(field: &str, name: &str, line: usize) -> T {
    field
        .parse()
        .unwrap_or_else(|_| panic!("line {line}: column {name} = {field:?} is not a number"))
}

/// Reads and parses the vectors file; a missing or malformed file fails the test.
fn load() -> Vec<Row> {
    let text = std::fs::read_to_string(VECTORS).unwrap_or_else(|e| {
        panic!(
            "cannot read the UidGenerator compat vectors at {VECTORS}: {e}. \
             They are part of the repository (tests/data/); this test does not skip \
             without them."
        )
    });
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
    let (_, header) = lines.next().expect("the vectors file has no header row");
    assert_eq!(
        header.split('\t').collect::<Vec<_>>(),
        HEADER,
        "unexpected header in {VECTORS}"
    );
    lines
        .map(|(line, l)| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(
                f.len(),
                HEADER.len(),
                "line {line}: expected 9 columns: {l:?}"
            );
            let (time_bits, worker_bits, seq_bits) = parse_config(f[0], line);
            Row {
                line,
                time_bits,
                worker_bits,
                seq_bits,
                epoch_str: f[1].to_string(),
                epoch_seconds: num(f[2], "epochSeconds", line),
                delta: num(f[3], "deltaSeconds", line),
                worker: num(f[4], "workerId", line),
                seq: num(f[5], "sequence", line),
                uid: num(f[6], "uid", line),
                uid_hex: f[7].to_string(),
                parse_uid: f[8].to_string(),
            }
        })
        .collect()
}

/// Whether `msg` contains `n` as a whole number (not as part of a longer one).
fn names_number(msg: &str, n: u64) -> bool {
    msg.split(|c: char| !c.is_ascii_digit())
        .any(|token| token == n.to_string())
}

#[test]
fn vectors_file_is_complete() {
    let rows = load();
    assert_eq!(rows.len(), 26, "data rows in {VECTORS}");
    let configs: std::collections::BTreeSet<_> = rows
        .iter()
        .map(|r| (r.time_bits, r.worker_bits, r.seq_bits))
        .collect();
    assert_eq!(configs.len(), 2, "two layouts: {configs:?}");
}

#[test]
fn epochs_match_java() {
    let rows = load();
    for row in &rows {
        assert_eq!(
            row.layout().epoch_seconds(),
            row.epoch_seconds,
            "line {}: epochStr {:?} in UTC",
            row.line,
            row.epoch_str
        );
    }
}

/// Java's arithmetic, spill-over included: `delta << (w + s) | worker << s | seq` as a signed long.
#[test]
fn java_values_are_the_unmasked_formula() {
    for row in load() {
        let shift = row.worker_bits + row.seq_bits;
        let java = (row.delta << shift) | (row.worker << row.seq_bits) | row.seq;
        assert_eq!(java as i64, row.uid, "line {}", row.line);
        assert_eq!(format!("{java:#018x}"), row.uid_hex, "line {}", row.line);
    }
}

#[test]
fn in_range_rows_match_java_ids_and_parse_strings() {
    let mut checked = 0;
    for row in load() {
        let layout = row.layout();
        if overflow_of(&row, &layout).is_some() {
            continue;
        }
        let id = layout
            .compose(row.delta, row.worker, row.seq)
            .unwrap_or_else(|e| panic!("line {}: compose failed: {e}", row.line));
        assert_eq!(id as i64, row.uid, "line {}: compose", row.line);
        assert_eq!(format!("{id:#018x}"), row.uid_hex, "line {}: hex", row.line);

        let parts = layout.decompose(id).expect("non-negative id");
        assert_eq!(
            (parts.delta_seconds, parts.worker_id, parts.sequence),
            (row.delta, row.worker, row.seq),
            "line {}: decompose",
            row.line
        );
        let parsed = layout.parse(id).expect("non-negative id");
        assert_eq!(
            parsed.unix_seconds,
            row.epoch_seconds + row.delta as i64,
            "line {}: unix seconds",
            row.line
        );
        let java = parsed
            .to_java_string_in(&TimeZone::UTC)
            .unwrap_or_else(|e| panic!("line {}: to_java_string_in failed: {e}", row.line));
        assert_eq!(java, row.parse_uid, "line {}: parseUID", row.line);
        checked += 1;
    }
    assert!(checked >= 16, "only {checked} in-range rows checked");
}

#[test]
fn overflow_rows_are_refused_with_typed_errors() {
    let mut checked = 0;
    let mut kinds = std::collections::BTreeMap::new();
    for row in load() {
        let layout = row.layout();
        let Some(kind) = overflow_of(&row, &layout) else {
            continue;
        };
        let err = layout
            .compose(row.delta, row.worker, row.seq)
            .expect_err(&format!(
                "line {}: compose must refuse what Java spills ({})",
                row.line, row.uid
            ));
        let (value, max) = match (kind, &err) {
            (Overflow::Delta, Error::DeltaOutOfRange { delta, max }) => {
                assert_eq!(*max, layout.max_delta_seconds());
                (*delta, *max)
            }
            (Overflow::Worker, Error::WorkerIdOutOfRange { worker_id, max }) => {
                assert_eq!(*max, layout.max_worker_id());
                (*worker_id, *max)
            }
            (Overflow::Sequence, Error::SequenceOutOfRange { sequence, max }) => {
                assert_eq!(*max, layout.max_sequence());
                (*sequence, *max)
            }
            _ => panic!("line {}: expected a {kind:?} error, got {err:?}", row.line),
        };
        let input = match kind {
            Overflow::Delta => row.delta,
            Overflow::Worker => row.worker,
            Overflow::Sequence => row.seq,
        };
        assert_eq!(value, input, "line {}: refused value", row.line);
        let msg = err.to_string();
        assert!(
            names_number(&msg, value) && names_number(&msg, max),
            "line {}: message {msg:?} must name the value {value} and the max {max}",
            row.line
        );
        *kinds.entry(format!("{kind:?}")).or_insert(0) += 1;
        checked += 1;
    }
    assert!(checked >= 6, "only {checked} overflow rows checked");
    for kind in ["Delta", "Worker", "Sequence"] {
        assert!(
            kinds.get(kind).copied().unwrap_or(0) >= 2,
            "{kind} overflow once per layout: {kinds:?}"
        );
    }
}

#[test]
fn every_row_is_either_in_range_or_overflow() {
    let rows = load();
    let overflow = rows
        .iter()
        .filter(|r| overflow_of(r, &r.layout()).is_some())
        .count();
    let in_range = rows.len() - overflow;
    assert!(overflow >= 6, "{overflow} overflow rows");
    assert!(in_range >= 16, "{in_range} in-range rows");
    // Java's spill-over shows only in overflow rows: every in-range row's Java ID is non-negative
    // and every row with a negative Java ID is an overflow row.
    for r in &rows {
        if r.uid < 0 {
            assert!(
                overflow_of(r, &r.layout()).is_some(),
                "line {}: negative Java ID from in-range input",
                r.line
            );
        }
    }
}

/// Java's `parseUID` after the year 9999, from issue 13 (the real Java classes, JVM zone UTC):
/// layout 41/10/12 from 2000-01-01, the largest ID. Java prints the year with five digits where
/// ringflake used to refuse the date.
#[test]
fn after_year_9999_java_prints_every_digit_of_the_year() {
    let layout = Layout::with_epoch_date(41, 10, 12, "2000-01-01", &TimeZone::UTC).unwrap();
    let parsed = layout.parse(9_223_372_036_854_775_807).unwrap();
    assert_eq!(
        parsed.to_java_string_in(&TimeZone::UTC).unwrap(),
        r#"{"UID":"9223372036854775807","timestamp":"71684-04-09 01:12:31","workerId":"1023","sequence":"4095"}"#
    );
    // Asia/Shanghai has been +08:00 without daylight saving time since 1991: 8 hours later.
    let shanghai = TimeZone::get("Asia/Shanghai").unwrap();
    assert!(
        parsed
            .to_java_string_in(&shanghai)
            .unwrap()
            .contains(r#""timestamp":"71684-04-09 09:12:31""#)
    );
}

const FAR_FUTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/java-far-future-dates.tsv"
);

/// Seconds after the year 9999 rendered by Java's `SimpleDateFormat` (as `parseUID` renders them)
/// in six zones, three with daylight saving time (New York, London, Sydney): ringflake renders
/// each the same, through the public `parse` of a 61/1/1 layout from the unix epoch.
#[test]
fn far_future_dates_match_java_in_six_zones() {
    let text = std::fs::read_to_string(FAR_FUTURE)
        .unwrap_or_else(|e| panic!("cannot read {FAR_FUTURE}: {e}; it is part of the repository"));
    let layout = Layout::new(61, 1, 1, 0).unwrap();
    let mut rows = 0;
    let mut zones = std::collections::BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.starts_with("second\t") || line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 3, "line {}: {line:?}", i + 1);
        let second: u64 = f[0].parse().unwrap();
        let tz = TimeZone::get(f[1]).unwrap();
        let parsed = layout.parse(second << 2).unwrap();
        assert_eq!(parsed.unix_seconds, second as i64);
        let json = parsed
            .to_java_string_in(&tz)
            .unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        let want = format!(r#""timestamp":"{}""#, f[2]);
        assert!(json.contains(&want), "line {}: {json} lacks {want}", i + 1);
        rows += 1;
        zones.insert(f[1].to_string());
    }
    assert_eq!(rows, 756);
    assert_eq!(zones.len(), 6);
}

/// The same vector through the binary: `ringflake parse` and serve's `/parse/{id}` print Java's
/// five-digit year (both used to answer "cannot be rendered as a date").
#[test]
fn parse_and_serve_render_the_year_71684() {
    let dir = tempfile::tempdir().unwrap();
    let layout = [
        "--time-bits",
        "41",
        "--worker-bits",
        "10",
        "--seq-bits",
        "12",
        "--epoch",
        "2000-01-01",
        "--tz",
        "UTC",
    ];
    let want = r#"{"UID":"9223372036854775807","timestamp":"71684-04-09 01:12:31","workerId":"1023","sequence":"4095"}"#;
    let out = common::ringflake(dir.path())
        .arg("parse")
        .arg("9223372036854775807")
        .args(layout)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "parse failed: {stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim_end(), want);

    let mut args = vec!["--worker-id", "1"];
    args.extend(layout);
    let serve = common::Serve::start(dir.path(), &args);
    let reply = common::get(serve.addr(), "/parse/9223372036854775807");
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body.trim_end(), want);
}
