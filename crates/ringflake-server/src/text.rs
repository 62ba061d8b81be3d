//! Reading IDs from text and writing them, the JSON the service answers (by serde, but for the
//! IDs of `/ids`: see [`json_ids`]), and numbers and dates for people.

use ringflake::{IdCipher, IdFormat, Layout, TimeZone};
use std::fmt::Write as _;

/// The grammar of a decimal number on the command line, in `/parse/{id}` and in `count`: ASCII
/// digits only, no sign, no leading zero (`0` itself excepted), as the errors say.
pub const DIGITS_ONLY: &str = "digits only, no sign or leading zero";

/// How much of a bad value an error shows: the first [`ECHO_CHARS`] characters, then how long it
/// was.
pub const ECHO_CHARS: usize = 32;

/// `value` for an error message: at most [`ECHO_CHARS`] characters, then `…(N bytes)` if it was
/// longer; every character that is not printable ASCII (controls, DEL, non-ASCII, a space) and the
/// quote and backslash are percent-encoded byte by byte (`%00`), so an error never carries raw
/// bytes a client sent, whatever the transport does with them.
pub fn echo(value: &str) -> String {
    let mut out = String::with_capacity(value.len().min(ECHO_CHARS * 3) + 16);
    for (i, c) in value.chars().enumerate() {
        if i == ECHO_CHARS {
            let _ = write!(out, "…({} bytes)", value.len());
            break;
        }
        if c.is_ascii_graphic() && c != '"' && c != '\\' {
            out.push(c);
        } else {
            let mut utf8 = [0u8; 4];
            for b in c.encode_utf8(&mut utf8).bytes() {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
    out
}

/// `value` for an error message in quotes: [`echo`] between `"`.
pub fn quoted(value: &str) -> String {
    format!("\"{}\"", echo(value))
}

/// Whether `text` follows [`DIGITS_ONLY`]: one or more ASCII digits, no leading zero unless it is
/// `0`.
pub fn is_plain_decimal(text: &str) -> bool {
    let b = text.as_bytes();
    !b.is_empty() && b.iter().all(u8::is_ascii_digit) && (b[0] != b'0' || b.len() == 1)
}

/// Reads an ID written in decimal ([`DIGITS_ONLY`]); the error says what is wrong with it, for a
/// person, showing at most [`ECHO_CHARS`] characters of it.
pub fn parse_id(text: &str) -> Result<u64, String> {
    let max = i64::MAX;
    if text.is_empty() {
        return Err(format!("empty ID: expected a decimal number in 0..={max}"));
    }
    if let Some(digits) = text.strip_prefix('-')
        && is_plain_decimal(digits)
        && digits != "0"
    {
        return Err(format!(
            "ID -{} is negative: no UidGenerator ID has its sign bit set; expected 0..={max}",
            echo(digits)
        ));
    }
    if !is_plain_decimal(text) {
        let why = if text.bytes().all(|b| b.is_ascii_digit()) {
            "has a leading zero"
        } else {
            "is not a decimal number"
        };
        return Err(format!(
            "ID {} {why}: expected {DIGITS_ONLY}, in 0..={max}",
            quoted(text)
        ));
    }
    match text.parse::<u64>() {
        Ok(id) if id <= max as u64 => Ok(id),
        _ => Err(format!(
            "ID {} is out of range: expected at most {max} (63 bits)",
            echo(text)
        )),
    }
}

/// Reads an ID as `parse`, `/parse/{id}` and gRPC's `Parse` take one: written in `format`, or
/// in the form its text shows ([`IdFormat::detect`]) when none is named; decimal by
/// [`parse_id`]'s grammar and words. With a key the text is a public ID, and the ID is what the
/// key turns it back into.
pub fn read_id(
    text: &str,
    format: Option<IdFormat>,
    key: Option<&IdCipher>,
) -> Result<u64, String> {
    let id = match format.unwrap_or_else(|| IdFormat::detect(text)) {
        IdFormat::Decimal => parse_id(text)?,
        other => other.decode(text).map_err(|e| e.to_string())?,
    };
    match key {
        Some(key) => key.decrypt(id).map_err(|e| e.to_string()),
        None => Ok(id),
    }
}

/// UidGenerator's `parseUID` JSON for an ID written as [`read_id`] reads it, as `parse` prints
/// it and `/parse/{id}` answers it; the error says what is wrong, for a person.
pub fn parse_uid(
    text: &str,
    format: Option<IdFormat>,
    key: Option<&IdCipher>,
    layout: &Layout,
    tz: &TimeZone,
) -> Result<String, String> {
    let id = read_id(text, format, key)?;
    let parsed = layout.parse(id).map_err(|e| e.to_string())?;
    parsed.to_java_string_in(tz).map_err(|e| e.to_string())
}

/// The key of `--id-key-file`, read once; the error names the file, never its content.
pub fn id_key(path: Option<&std::path::Path>) -> Result<Option<IdCipher>, String> {
    path.map(IdCipher::from_key_file)
        .transpose()
        .map_err(|e| e.to_string())
}

/// A failed write to standard output: a closed pipe (`ringflake gen -n 1000000 | head`) ends
/// output quietly, as `seq` does; anything else is an error.
pub fn stdout_error(e: std::io::Error) -> Result<(), String> {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(format!("cannot write to standard output: {e}"))
    }
}

/// `value` as compact JSON, by serde: the service's answers (`/status`, `/healthz`, the errors)
/// are structs that derive `Serialize`. Writing them cannot fail (string keys, no fallible
/// `Serialize`); were it to, the answer says so as JSON rather than panicking.
pub fn to_json(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value)
        .unwrap_or_else(|_| String::from("{\"error\":\"the answer could not be written as JSON\"}"))
}

/// `{"error":"<message>"}`.
pub fn json_error(message: &str) -> String {
    #[derive(serde::Serialize)]
    struct Error<'a> {
        error: &'a str,
    }
    to_json(&Error { error: message })
}

/// The decimal digits of a number, kept so that the next number up costs a digit increment
/// instead of a division per digit: IDs taken together are mostly consecutive (a chunk of the
/// ring is a run of sequences).
struct Decimal {
    buf: [u8; 20],
    start: usize,
    value: u64,
}

impl Decimal {
    fn new(value: u64) -> Self {
        let mut d = Decimal {
            buf: [b'0'; 20],
            start: 20,
            value,
        };
        d.set(value);
        d
    }

    fn set(&mut self, mut n: u64) {
        self.value = n;
        let mut i = self.buf.len();
        loop {
            i -= 1;
            self.buf[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.start = i;
    }

    /// Moves to `n`: by incrementing the digits when `n` is the next number, else afresh.
    fn advance(&mut self, n: u64) {
        if n != self.value.wrapping_add(1) || self.start == 0 {
            self.set(n);
            return;
        }
        self.value = n;
        let mut i = self.buf.len() - 1;
        loop {
            if self.buf[i] != b'9' {
                self.buf[i] += 1;
                return;
            }
            self.buf[i] = b'0';
            if i == self.start {
                self.start -= 1;
                self.buf[self.start] = b'1';
                return;
            }
            i -= 1;
        }
    }

    fn digits(&self) -> &[u8] {
        &self.buf[self.start..]
    }
}

/// Appends `ids` as a JSON array of strings (JavaScript numbers lose digits above 2^53).
///
/// Written by hand, not by serde as the service's other answers are: this is the per-ID path of
/// `/ids`, and `benches/ids_json.rs` measured serde_json writing the same bytes (each ID through
/// `Display`) at 3 to 7 times the cost: 41 µs against 14 µs for 1,000 consecutive IDs, 5.9 ms
/// against 0.79 ms for 100,000 (one run, 2026-11-25, on the shared 2-core CI machine; for one
/// ID the two are within noise, 34 ns against 30 ns).
pub fn json_ids(ids: &[u64], out: &mut Vec<u8>) {
    JsonIds::new(IdFormat::Decimal).piece(ids, true, out);
}

/// Appends `ids` as a JSON array of strings, each written in `format` (base32 and base62 need
/// no escaping: letters and digits). The per-ID cost is [`IdFormat::encode`]'s: a few
/// multiplications, no allocation (`benches/ids_json.rs`, `ids-json/base32-100k`).
pub fn json_text_ids(ids: &[u64], format: IdFormat, out: &mut Vec<u8>) {
    JsonIds::new(format).piece(ids, true, out);
}

/// `/ids`' JSON array of IDs as strings in `format`, written in pieces: the service writes a
/// large answer a piece at a time, as its client reads ([`json_ids`] and [`json_text_ids`]
/// write it in one). The pieces of one array, in order, make the same bytes as one piece.
pub struct JsonIds {
    format: IdFormat,
    /// The last decimal ID written, its digits kept (decimal only).
    decimal: Option<Decimal>,
    /// Whether `[` and an ID have been written.
    opened: bool,
    any: bool,
}

impl JsonIds {
    /// An array yet to be written.
    pub fn new(format: IdFormat) -> Self {
        JsonIds {
            format,
            decimal: None,
            opened: false,
            any: false,
        }
    }

    /// Appends the next `ids` to `out` (after `[` if they are the first), then `]` if `last`.
    pub fn piece(&mut self, ids: &[u64], last: bool, out: &mut Vec<u8>) {
        out.reserve(ids.len() * (self.format.max_len() + 3) + 2);
        if !self.opened {
            out.push(b'[');
            self.opened = true;
        }
        match self.format {
            IdFormat::Decimal => {
                let mut rest = ids;
                if self.decimal.is_none()
                    && let Some((&first, tail)) = ids.split_first()
                {
                    let d = Decimal::new(first);
                    out.push(b'"');
                    out.extend_from_slice(d.digits());
                    out.push(b'"');
                    self.decimal = Some(d);
                    rest = tail;
                }
                if let Some(d) = &mut self.decimal {
                    for &id in rest {
                        d.advance(id);
                        out.extend_from_slice(b",\"");
                        out.extend_from_slice(d.digits());
                        out.push(b'"');
                    }
                }
            }
            format => {
                for &id in ids {
                    if self.any {
                        out.push(b',');
                    }
                    self.any = true;
                    out.push(b'"');
                    out.extend_from_slice(format.encode(id).as_bytes());
                    out.push(b'"');
                }
            }
        }
        if last {
            out.push(b']');
        }
    }

    /// The length in bytes of the whole array of `ids` in `format`, known before it is written
    /// (an answer's `content-length`). Decimal IDs of one batch rise, so their lengths are
    /// counted a run of equal digit counts at a time (a binary search each, at most 20), unless
    /// they do not rise (public IDs): then one by one.
    pub fn len(ids: &[u64], format: IdFormat) -> u64 {
        let n = ids.len() as u64;
        // `[`, `]`, the quotes and the commas between.
        let frame = 2 + 2 * n + n.saturating_sub(1);
        let digits = match format {
            IdFormat::Decimal if ids.is_sorted() => {
                let (mut total, mut rest) = (0u64, ids);
                while let Some(&first) = rest.first() {
                    let width = decimal_digits(first);
                    let run = match 10u64.checked_pow(width) {
                        Some(next) => rest.partition_point(|&id| id < next),
                        None => rest.len(),
                    };
                    total += u64::from(width) * run as u64;
                    rest = &rest[run..];
                }
                total
            }
            IdFormat::Decimal => ids.iter().map(|&id| u64::from(decimal_digits(id))).sum(),
            format => format.max_len() as u64 * n,
        };
        frame + digits
    }
}

/// The decimal digits of `n`: 1 for 0.
fn decimal_digits(n: u64) -> u32 {
    n.checked_ilog10().map_or(1, |l| l + 1)
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The layout's epoch for reading: the date if it is midnight UTC, else the instant in RFC 3339
/// (with Twitter's milliseconds).
pub fn epoch_text(layout: &Layout) -> String {
    let epoch = layout.epoch_seconds();
    match jiff::Timestamp::from_millisecond(layout.epoch_millis()) {
        Ok(t) if layout.epoch_millis().rem_euclid(86_400_000) == 0 => {
            t.to_zoned(jiff::tz::TimeZone::UTC).date().to_string()
        }
        Ok(t) => t.to_string(),
        Err(_) => format!("unix second {epoch}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `json_ids` against the JSON `format!` makes of the same IDs.
    fn assert_json_ids(ids: &[u64]) {
        let mut out = Vec::new();
        json_ids(ids, &mut out);
        let want: Vec<String> = ids.iter().map(|i| format!("\"{i}\"")).collect();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("[{}]", want.join(","))
        );
    }

    #[test]
    fn ids_as_json_strings() {
        assert_json_ids(&[
            0,
            1,
            9,
            10,
            11,
            99,
            100,
            5,
            999,
            1000,
            1001,
            7,
            u64::MAX - 1,
            u64::MAX,
        ]);
        let mut empty = Vec::new();
        json_ids(&[], &mut empty);
        assert_eq!(empty, b"[]");
    }

    /// Written in pieces of any size, an array has the bytes written in one, and the length
    /// counted before: rising IDs across digit counts, IDs that do not rise (public IDs), one
    /// ID, none.
    #[test]
    fn ids_in_pieces() {
        let rising: Vec<u64> = (0..2_000)
            .map(|i| i * i * 7)
            .chain([u64::MAX / 3, u64::MAX - 1, u64::MAX])
            .collect();
        let shuffled: Vec<u64> = rising.iter().map(|&i| i.rotate_left(17) ^ 99).collect();
        for ids in [&rising[..], &shuffled, &[42], &[]] {
            for format in IdFormat::ALL {
                let mut whole = Vec::new();
                JsonIds::new(format).piece(ids, true, &mut whole);
                assert_eq!(
                    JsonIds::len(ids, format),
                    whole.len() as u64,
                    "{format} {}",
                    ids.len()
                );
                for size in [1, 7, 2_048] {
                    let mut pieces = Vec::new();
                    let mut writer = JsonIds::new(format);
                    let mut chunks = ids.chunks(size).peekable();
                    if chunks.peek().is_none() {
                        writer.piece(&[], true, &mut pieces);
                    }
                    while let Some(chunk) = chunks.next() {
                        writer.piece(chunk, chunks.peek().is_none(), &mut pieces);
                    }
                    assert_eq!(pieces, whole, "{format}, pieces of {size}");
                }
            }
        }
    }

    #[test]
    fn ids_in_text_forms() {
        let ids = [0, 61, i64::MAX as u64];
        for format in IdFormat::ALL {
            let mut out = Vec::new();
            json_text_ids(&ids, format, &mut out);
            let want: Vec<String> = ids
                .iter()
                .map(|&i| format!("\"{}\"", format.encode(i)))
                .collect();
            assert_eq!(
                String::from_utf8(out).unwrap(),
                format!("[{}]", want.join(","))
            );
        }
        let mut out = Vec::new();
        json_text_ids(&[], IdFormat::Base32, &mut out);
        assert_eq!(out, b"[]");
        let mut out = Vec::new();
        json_text_ids(&[61], IdFormat::Base62, &mut out);
        assert_eq!(out, br#"["0000000000z"]"#);
    }

    #[test]
    fn ids_read_in_any_form() {
        let id = 256_584_189_548_167_168;
        for text in [
            "256584189548167168",
            "073WHYR0G0000",
            "073whyr0g0ooo",
            "0Ix9oXm4KOW",
        ] {
            assert_eq!(read_id(text, None, None), Ok(id), "{text}");
        }
        assert_eq!(
            read_id("0000000000061", Some(IdFormat::Base32), None),
            Ok(193)
        );
        assert_eq!(
            read_id("0000000000061", None, None),
            Ok(193),
            "from 0: base32"
        );
        assert_eq!(read_id("1000000000061", None, None), Ok(1_000_000_000_061));
        let e = read_id("0Ix9oXm4KOW", Some(IdFormat::Base32), None).unwrap_err();
        assert!(
            e.contains("a base32 ID has exactly 13 characters, found 11"),
            "{e}"
        );
        let key = IdCipher::new(&[3; 32]);
        let public = key.encrypt(id).unwrap();
        let text = IdFormat::Base62.encode(public);
        assert_eq!(read_id(text.as_str(), None, Some(&key)), Ok(id));
        assert_eq!(read_id(text.as_str(), None, None), Ok(public));
    }

    #[test]
    fn consecutive_runs() {
        let ids: Vec<u64> = (9_999_990..10_000_020)
            .chain(i64::MAX as u64 - 3..=i64::MAX as u64)
            .collect();
        assert_json_ids(&ids);
    }

    #[test]
    fn ids_from_text() {
        assert_eq!(parse_id("17179877377"), Ok(17_179_877_377));
        assert_eq!(parse_id("9223372036854775807"), Ok(i64::MAX as u64));
        assert_eq!(parse_id("0"), Ok(0));
        for (text, error) in [
            ("-0", "not a decimal number"),
            ("+5", "not a decimal number"),
            ("010", "has a leading zero"),
            ("00", "has a leading zero"),
            (" 5", "not a decimal number"),
            ("9223372036854775808", "out of range"),
            ("99999999999999999999999", "out of range"),
            ("-5", "negative"),
            ("abc", "not a decimal number"),
            ("1e5", "not a decimal number"),
            ("", "empty"),
        ] {
            let message = parse_id(text).unwrap_err();
            assert!(message.contains(error), "{text:?}: {message}");
        }
    }

    #[test]
    fn echoes_are_bounded_and_escaped() {
        assert_eq!(echo("abc"), "abc");
        assert_eq!(echo("a\0b\"c\\ d\u{7f}é"), "a%00b%22c%5C%20d%7F%C3%A9");
        let long = "x".repeat(10_240);
        assert_eq!(echo(&long), format!("{}…(10240 bytes)", "x".repeat(32)));
        assert_eq!(echo(&"y".repeat(32)), "y".repeat(32));
        let message = parse_id(&"9".repeat(10_240)).unwrap_err();
        assert!(message.len() < 150, "{message}");
        assert!(
            message.contains("…(10240 bytes) is out of range"),
            "{message}"
        );
    }

    #[test]
    fn errors_escape() {
        assert_eq!(json_error("a \"b\"\n"), r#"{"error":"a \"b\"\n"}"#);
    }

    #[test]
    fn separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_048_575), "1,048,575");
    }
}
