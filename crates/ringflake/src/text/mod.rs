//! IDs as text: decimal, Crockford base32 and base62, the forms that fit a URL ([`IdFormat`]);
//! `Layout::parse_text` and `ParsedId::to_text` in [`parse`]. Nothing here imports the rest of
//! the crate: the crate's error and layout import it.

mod parse;

use std::fmt;
use std::str::FromStr;

/// The largest ID: `2^63 - 1`.
const MAX_ID: u64 = i64::MAX as u64;

/// Crockford's base32 digits, by value.
const BASE32: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// The base62 digits, by value, in ASCII order.
const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Not a digit of the alphabet, in the decoding tables.
const NONE: u8 = 0xFF;

/// Base32's decoding table: upper and lower case, and Crockford's aliases `I L → 1`, `O → 0`.
const BASE32_VALUES: [u8; 256] = {
    let mut table = [NONE; 256];
    let mut i = 0;
    while i < 32 {
        let c = BASE32[i];
        table[c as usize] = i as u8;
        table[c.to_ascii_lowercase() as usize] = i as u8;
        i += 1;
    }
    let aliases = [
        (b'O', 0),
        (b'o', 0),
        (b'I', 1),
        (b'i', 1),
        (b'L', 1),
        (b'l', 1),
    ];
    let mut a = 0;
    while a < aliases.len() {
        table[aliases[a].0 as usize] = aliases[a].1;
        a += 1;
    }
    table
};

/// Base62's decoding table.
const BASE62_VALUES: [u8; 256] = {
    let mut table = [NONE; 256];
    let mut i = 0;
    while i < 62 {
        table[BASE62[i] as usize] = i as u8;
        i += 1;
    }
    table
};

/// A form an ID is written in: an ID is a 63-bit number. Written in decimal it takes up to 19
/// characters, and JavaScript's numbers lose its last digits above 2^53; these three forms each
/// read back to the same number.
///
/// | form | characters | alphabet | sorts like the IDs |
/// |---|---|---|---|
/// | [`IdFormat::Decimal`] | 1 to 19 | `0-9` | only as numbers (`"9"` sorts after `"10"` as text) |
/// | [`IdFormat::Base32`] | 13, fixed | Crockford's: `0-9`, `A-Z` without `I L O U`; read in either case, with `I`/`L` read as `1` and `O` as `0` | byte by byte, in any collation that orders `0-9` before `A-Z` (ASCII, UTF-8, case-insensitive ones too, as it has one case) |
/// | [`IdFormat::Base62`] | 11, fixed | `0-9A-Za-z` | byte by byte (ASCII, UTF-8, `C` collation) only: not under a case-insensitive collation (MySQL's default `utf8mb4_0900_ai_ci`, `ORDER BY` in most locales), where `a` and `A` compare equal |
///
/// The fixed-width forms are zero-padded on the left (`0000000000001` is ID 1), so a shorter text
/// never stands for a smaller ID: between two IDs `a < b` exactly when `text(a) < text(b)`
/// comparing bytes.
///
/// # Compatibility
///
/// Base32 is the form of TSID (`f4b6a3/tsid-creator`'s `Tsid.toString()`/`Tsid.from(String)`)
/// and of `ferroid`'s `Base32SnowExt`: the 64-bit number in 13 Crockford digits, most significant
/// first, the first carrying the top 4 bits; upper case out, either case in, `I`/`i`/`L`/`l` read
/// as `1` and `O`/`o` as `0`; no hyphens, no check symbol. An ID's base32 text is its TSID text.
/// Where they differ: TSID accepts a first character up to `F` and ferroid any (dropping the 65th
/// bit); here a text above the largest 63-bit ID (first character above `7`) is refused as
/// [`IdTextError::Overflow`], as is a base62 text above it, so every accepted text is exactly one
/// ID.
///
/// Base62 has no one standard; this is the common digit order `0-9A-Za-z` (ASCII order, which is
/// what makes it sort) over the whole number, zero-padded to 11 characters.
///
/// Writing an ID as text happens at the edge (the service's answers, `gen`'s output), never when
/// a generator takes it; [`IdFormat::encode`] allocates nothing.
///
/// # Examples
///
/// ```
/// use ringflake::IdFormat;
///
/// let id = 256_584_189_548_167_168;
/// assert_eq!(IdFormat::Decimal.encode(id).as_str(), "256584189548167168");
/// assert_eq!(IdFormat::Base32.encode(id).as_str(), "073WHYR0G0000");
/// assert_eq!(IdFormat::Base62.encode(id).as_str(), "0Ix9oXm4KOW");
/// for format in IdFormat::ALL {
///     assert_eq!(format.decode(format.encode(id).as_str())?, id);
/// }
/// assert_eq!(IdFormat::Base32.decode("073whyr0g0ooo")?, id); // any case, O for 0
/// # Ok::<(), ringflake::IdTextError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum IdFormat {
    /// Decimal digits, no sign, no leading zero: `256584189548167168`.
    #[default]
    Decimal,
    /// Crockford base32, 13 characters: `073WHYR0G0000`.
    Base32,
    /// Base62 (`0-9A-Za-z`), 11 characters: `0Ix9oXm4KOW`.
    Base62,
}

impl IdFormat {
    /// Every form, in the order people are told about them.
    ///
    /// ```
    /// assert_eq!(ringflake::IdFormat::ALL.len(), 3);
    /// ```
    pub const ALL: [IdFormat; 3] = [IdFormat::Decimal, IdFormat::Base32, IdFormat::Base62];

    /// The form's name, as `--format` and `?format=` spell it.
    ///
    /// ```
    /// assert_eq!(ringflake::IdFormat::Base32.name(), "base32");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            IdFormat::Decimal => "decimal",
            IdFormat::Base32 => "base32",
            IdFormat::Base62 => "base62",
        }
    }

    /// How many characters the form takes: the fixed width, or the most for decimal.
    ///
    /// ```
    /// use ringflake::IdFormat;
    ///
    /// assert_eq!(IdFormat::Base32.max_len(), 13);
    /// assert_eq!(IdFormat::Base62.max_len(), 11);
    /// assert_eq!(IdFormat::Decimal.max_len(), 19);
    /// ```
    pub const fn max_len(self) -> usize {
        match self {
            IdFormat::Decimal => 19,
            IdFormat::Base32 => 13,
            IdFormat::Base62 => 11,
        }
    }

    /// Whether two IDs' texts in this form compare as bytes the way the IDs compare as numbers:
    /// true for the fixed-width forms, false for decimal.
    ///
    /// ```
    /// use ringflake::IdFormat;
    ///
    /// assert!(IdFormat::Base32.sorts_as_bytes() && IdFormat::Base62.sorts_as_bytes());
    /// assert!(!IdFormat::Decimal.sorts_as_bytes()); // "9" > "10"
    /// ```
    pub const fn sorts_as_bytes(self) -> bool {
        !matches!(self, IdFormat::Decimal)
    }

    /// Writes `id` in this form. Total over `u64`, allocation-free; a number above `2^63 - 1`
    /// is no ID, and its text does not [`decode`](Self::decode).
    ///
    /// ```
    /// use ringflake::IdFormat;
    ///
    /// assert_eq!(IdFormat::Base32.encode(1).as_str(), "0000000000001");
    /// assert_eq!(IdFormat::Base32.encode(i64::MAX as u64).as_str(), "7ZZZZZZZZZZZZ");
    /// assert_eq!(IdFormat::Base62.encode(i64::MAX as u64).as_str(), "AzL8n0Y58m7");
    /// assert_eq!(IdFormat::Decimal.encode(0).to_string(), "0");
    /// ```
    pub fn encode(self, id: u64) -> IdText {
        let mut text = IdText {
            buf: [b'0'; 20],
            len: 0,
        };
        match self {
            IdFormat::Decimal => {
                // Two digits at a time (itoa), about a quarter of the divisions of one at a time.
                let mut digits = itoa::Buffer::new();
                let digits = digits.format(id).as_bytes();
                text.buf[..digits.len()].copy_from_slice(digits);
                text.len = digits.len() as u8;
            }
            IdFormat::Base32 => {
                for (i, c) in text.buf[..13].iter_mut().enumerate() {
                    *c = BASE32[((id >> (60 - 5 * i)) & 31) as usize];
                }
                text.len = 13;
            }
            IdFormat::Base62 => {
                let mut n = id;
                for c in text.buf[..11].iter_mut().rev() {
                    *c = BASE62[(n % 62) as usize];
                    n /= 62;
                }
                text.len = 11;
            }
        }
        text
    }

    /// Reads an ID written in this form.
    ///
    /// # Errors
    ///
    /// An [`IdTextError`] naming what is wrong: the length and the one expected
    /// ([`IdTextError::Length`]), the first character outside the alphabet and its position
    /// ([`IdTextError::Character`]), a decimal's leading zero ([`IdTextError::LeadingZero`]), or
    /// a number above `2^63 - 1` ([`IdTextError::Overflow`]).
    ///
    /// ```
    /// use ringflake::{IdFormat, IdTextError};
    ///
    /// assert_eq!(IdFormat::Base62.decode("0000000000z")?, 61);
    /// assert_eq!(
    ///     IdFormat::Base32.decode("00000000000U1").unwrap_err().to_string(),
    ///     "invalid character 'U' at position 12 of a base32 ID: expected 0-9 and A-Z without \
    ///      U (either case; I and L read as 1, O as 0)"
    /// );
    /// assert!(matches!(
    ///     IdFormat::Base32.decode("8000000000000"),
    ///     Err(IdTextError::Overflow { .. })
    /// ));
    /// # Ok::<(), IdTextError>(())
    /// ```
    pub fn decode(self, text: &str) -> Result<u64, IdTextError> {
        let len = text.chars().count();
        let fixed = match self {
            IdFormat::Decimal => (1..=19).contains(&len),
            IdFormat::Base32 | IdFormat::Base62 => len == self.max_len(),
        };
        if !fixed {
            return Err(IdTextError::Length {
                format: self,
                found: len,
            });
        }
        let table = match self {
            IdFormat::Decimal => None,
            IdFormat::Base32 => Some(&BASE32_VALUES),
            IdFormat::Base62 => Some(&BASE62_VALUES),
        };
        let radix: u64 = match self {
            IdFormat::Decimal => 10,
            IdFormat::Base32 => 32,
            IdFormat::Base62 => 62,
        };
        let mut value: u64 = 0;
        let mut overflow = false;
        for (i, c) in text.chars().enumerate() {
            let digit = match (table, c) {
                (None, '0'..='9') => Some(c as u64 - u64::from(b'0')),
                (Some(table), c) if c.is_ascii() => Some(table[c as usize])
                    .filter(|&d| d != NONE)
                    .map(u64::from),
                _ => None,
            };
            let Some(digit) = digit else {
                return Err(IdTextError::Character {
                    format: self,
                    position: i + 1,
                    found: c,
                });
            };
            if self == IdFormat::Decimal && i == 0 && digit == 0 && len > 1 {
                return Err(IdTextError::LeadingZero { found: len });
            }
            match value.checked_mul(radix).and_then(|v| v.checked_add(digit)) {
                Some(v) => value = v,
                None => overflow = true,
            }
        }
        if overflow || value > MAX_ID {
            return Err(IdTextError::Overflow {
                format: self,
                text: text.to_string(),
            });
        }
        Ok(value)
    }

    /// The form `text` is written in, told by its length and its characters: 13 characters are
    /// base32 and 11 base62, unless they are only digits (or a sign and digits) without a leading
    /// zero, which is decimal; any other text is taken for a decimal, so that its error says
    /// what is wrong with it as a number.
    ///
    /// A decimal never starts with `0`, and the fixed-width forms of most IDs do (a base32 text
    /// starts with `0` below 2^60, a base62 text below 62^10, about 2^59.5). A base32 or base62
    /// text made only of digits *and* starting with another digit reads as decimal: where texts
    /// are not decimal, name their form.
    ///
    /// ```
    /// use ringflake::IdFormat;
    ///
    /// assert_eq!(IdFormat::detect("17179877377"), IdFormat::Decimal);
    /// assert_eq!(IdFormat::detect("073WHYR0G0000"), IdFormat::Base32);
    /// assert_eq!(IdFormat::detect("0Ix9oXm4KOW"), IdFormat::Base62);
    /// assert_eq!(IdFormat::detect("12x"), IdFormat::Decimal);
    /// ```
    pub fn detect(text: &str) -> IdFormat {
        let digits = text
            .strip_prefix(['-', '+'])
            .unwrap_or(text)
            .bytes()
            .all(|b| b.is_ascii_digit());
        if digits && !text.starts_with('0') {
            return IdFormat::Decimal;
        }
        match text.chars().count() {
            13 => IdFormat::Base32,
            11 => IdFormat::Base62,
            _ => IdFormat::Decimal,
        }
    }
}

impl fmt::Display for IdFormat {
    /// The form's [name](IdFormat::name).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for IdFormat {
    type Err = String;

    /// A form by its [name](IdFormat::name), in lower case.
    ///
    /// ```
    /// use ringflake::IdFormat;
    ///
    /// assert_eq!("base62".parse::<IdFormat>(), Ok(IdFormat::Base62));
    /// assert_eq!(
    ///     "hex".parse::<IdFormat>(),
    ///     Err(r#"unknown ID format "hex": expected decimal, base32 or base62"#.to_string())
    /// );
    /// ```
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        IdFormat::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| {
                let shown: String = s
                    .chars()
                    .take(32)
                    .collect::<String>()
                    .escape_debug()
                    .to_string();
                format!("unknown ID format \"{shown}\": expected decimal, base32 or base62")
            })
    }
}

/// An ID written by [`IdFormat::encode`]: at most 20 ASCII characters, on the stack.
///
/// ```
/// let text = ringflake::IdFormat::Base62.encode(61);
/// assert_eq!(text.as_str(), "0000000000z");
/// assert_eq!(text.as_bytes().len(), 11);
/// assert_eq!(format!("/orders/{text}"), "/orders/0000000000z");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct IdText {
    buf: [u8; 20],
    len: u8,
}

impl IdText {
    /// The text.
    ///
    /// ```
    /// assert_eq!(ringflake::IdFormat::Decimal.encode(42).as_str(), "42");
    /// ```
    pub fn as_str(&self) -> &str {
        // Always ASCII: written from the alphabets above.
        std::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }

    /// The text's bytes (ASCII).
    ///
    /// ```
    /// assert_eq!(ringflake::IdFormat::Decimal.encode(42).as_bytes(), b"42");
    /// ```
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..usize::from(self.len)]
    }
}

impl fmt::Display for IdText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl fmt::Debug for IdText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl AsRef<str> for IdText {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

/// Why a text is not an ID in the form it was read in. Each message names the form, what was
/// found and what was expected; none repeats more than one character of the text, except
/// [`IdTextError::Overflow`]'s, whose text is at most 19 characters of the form's alphabet.
///
/// # Examples
///
/// ```
/// use ringflake::{IdFormat, IdTextError};
///
/// let err = IdFormat::Base62.decode("AzL8n0Y58m8").unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "base62 ID \"AzL8n0Y58m8\" is above the largest ID, AzL8n0Y58m7 \
///      (2^63 - 1 = 9223372036854775807)"
/// );
/// assert_eq!(
///     IdFormat::Base32.decode("0758RGGA0000").unwrap_err(),
///     IdTextError::Length { format: IdFormat::Base32, found: 12 }
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdTextError {
    /// The text is not as long as the form's IDs: base32 takes exactly 13 characters, base62
    /// exactly 11, decimal 1 to 19.
    Length {
        /// The form it was read in.
        format: IdFormat,
        /// Its length, in characters.
        found: usize,
    },
    /// A character outside the form's alphabet (the first one).
    Character {
        /// The form it was read in.
        format: IdFormat,
        /// Its position, counting characters from 1.
        position: usize,
        /// The character.
        found: char,
    },
    /// A decimal with a leading zero (`010`): each ID has one decimal text.
    LeadingZero {
        /// The text's length, in characters.
        found: usize,
    },
    /// A number above the largest ID, `2^63 - 1`.
    Overflow {
        /// The form it was read in.
        format: IdFormat,
        /// The text (at most 19 characters of the form's alphabet).
        text: String,
    },
}

impl fmt::Display for IdTextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IdTextError::Length { format, found } => {
                let expected = match format {
                    IdFormat::Decimal => "1 to 19 digits".to_string(),
                    other => format!("exactly {} characters", other.max_len()),
                };
                write!(
                    f,
                    "a {format} ID has {expected}, found {found} character{}",
                    if *found == 1 { "" } else { "s" }
                )
            }
            IdTextError::Character {
                format,
                position,
                found,
            } => {
                let alphabet = match format {
                    IdFormat::Decimal => "digits 0-9",
                    IdFormat::Base32 => {
                        "0-9 and A-Z without U (either case; I and L read as 1, O as 0)"
                    }
                    IdFormat::Base62 => "0-9, A-Z and a-z",
                };
                // A character that is not printable ASCII is shown by its code point, so that
                // the message carries no raw byte of the text.
                if found.is_ascii_graphic() {
                    write!(f, "invalid character {found:?}")?;
                } else {
                    write!(f, "invalid character U+{:04X}", u32::from(*found))?;
                }
                write!(
                    f,
                    " at position {position} of a {format} ID: expected {alphabet}"
                )
            }
            IdTextError::LeadingZero { found } => write!(
                f,
                "a decimal ID of {found} digits has a leading zero: expected no leading zero"
            ),
            IdTextError::Overflow { format, text } => write!(
                f,
                "{format} ID \"{text}\" is above the largest ID, {} (2^63 - 1 = {MAX_ID})",
                format.encode(MAX_ID)
            ),
        }
    }
}

impl std::error::Error for IdTextError {}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every ID a layout can make, weighted towards the edges of the range and of each digit.
    fn ids() -> impl Strategy<Value = u64> {
        prop_oneof![
            0..=MAX_ID,
            0u64..4096,
            (MAX_ID - 4096)..=MAX_ID,
            (0u32..63).prop_map(|b| 1u64 << b),
            (1u32..=63).prop_map(|b| (1u64 << b) - 1),
        ]
    }

    proptest! {
        #[test]
        fn every_form_reads_back(id in ids()) {
            for format in IdFormat::ALL {
                let text = format.encode(id);
                prop_assert_eq!(format.decode(text.as_str()), Ok(id));
                // Told apart unless a fixed-width text is all digits from a digit above 0.
                let ambiguous = text.as_bytes().iter().all(u8::is_ascii_digit)
                    && text.as_bytes()[0] != b'0';
                prop_assert!(IdFormat::detect(text.as_str()) == format || ambiguous);
                if format.sorts_as_bytes() {
                    prop_assert_eq!(text.as_bytes().len(), format.max_len());
                }
            }
            let lower = IdFormat::Base32.encode(id).as_str().to_ascii_lowercase();
            prop_assert_eq!(IdFormat::Base32.decode(&lower), Ok(id));
        }

        #[test]
        fn fixed_width_forms_sort_as_the_ids(a in ids(), b in ids()) {
            for format in [IdFormat::Base32, IdFormat::Base62] {
                let (ta, tb) = (format.encode(a), format.encode(b));
                prop_assert_eq!(a.cmp(&b), ta.as_bytes().cmp(tb.as_bytes()), "{}", format);
                // Base32 has one case: a case-insensitive collation sorts it the same.
                if format == IdFormat::Base32 {
                    let (la, lb) = (ta.as_str().to_lowercase(), tb.as_str().to_ascii_lowercase());
                    prop_assert_eq!(a.cmp(&b), la.cmp(&lb));
                }
            }
        }

        #[test]
        fn decimal_matches_std(id in ids()) {
            prop_assert_eq!(IdFormat::Decimal.encode(id).to_string(), id.to_string());
        }
    }

    #[test]
    fn edges() {
        for (id, b32, b62) in [
            (0, "0000000000000", "00000000000"),
            (1, "0000000000001", "00000000001"),
            (31, "000000000000Z", "0000000000V"),
            (32, "0000000000010", "0000000000W"),
            (61, "000000000001X", "0000000000z"),
            (62, "000000000001Y", "00000000010"),
            (MAX_ID, "7ZZZZZZZZZZZZ", "AzL8n0Y58m7"),
        ] {
            assert_eq!(IdFormat::Base32.encode(id).as_str(), b32);
            assert_eq!(IdFormat::Base62.encode(id).as_str(), b62);
            assert_eq!(IdFormat::Base32.decode(b32), Ok(id));
            assert_eq!(IdFormat::Base62.decode(b62), Ok(id));
        }
        assert_eq!(
            IdFormat::Decimal.encode(MAX_ID).as_str(),
            "9223372036854775807"
        );
        // Decimal does not sort as text.
        assert!(IdFormat::Decimal.encode(9).as_bytes() > IdFormat::Decimal.encode(10).as_bytes());
    }

    /// TSID's own examples (its Javadoc: `0AWE5HZP3SKTK`, `0AWEFCF3YZ350`), read as TSID reads
    /// them, and Crockford's aliases as TSID and ferroid read them.
    #[test]
    fn tsid_texts() {
        let id = IdFormat::Base32.decode("0AWE5HZP3SKTK").unwrap();
        assert_eq!(IdFormat::Base32.encode(id).as_str(), "0AWE5HZP3SKTK");
        assert_eq!(IdFormat::Base32.decode("0awe5hzp3sktk"), Ok(id));
        // Time-sorted: the later TSID of its Javadoc sorts after.
        assert!(IdFormat::Base32.decode("0AWEFCF3YZ350").unwrap() > id);
        let ones = IdFormat::Base32.decode("1111111111111").unwrap();
        for alias in [
            "IIIIIIIIIIIII",
            "iiiiiiiiiiiii",
            "LLLLLLLLLLLLL",
            "lllllllllllll",
        ] {
            assert_eq!(IdFormat::Base32.decode(alias), Ok(ones), "{alias}");
        }
        assert_eq!(IdFormat::Base32.decode("OOOOOOOOOOOOo"), Ok(0));
    }

    #[test]
    fn errors_name_the_value_and_the_limit() {
        let cases: [(IdFormat, &str, &str); 12] = [
            (
                IdFormat::Base32,
                "",
                "a base32 ID has exactly 13 characters, found 0 characters",
            ),
            (IdFormat::Base32, "00000000000000", "found 14 characters"),
            (
                IdFormat::Base62,
                "0000000000",
                "a base62 ID has exactly 11 characters, found 10",
            ),
            (
                IdFormat::Decimal,
                "",
                "a decimal ID has 1 to 19 digits, found 0 characters",
            ),
            (
                IdFormat::Decimal,
                "12345678901234567890",
                "1 to 19 digits, found 20",
            ),
            (
                IdFormat::Base32,
                "000000000000U",
                "invalid character 'U' at position 13 of a base32",
            ),
            (
                IdFormat::Base32,
                "0000-00000000",
                "invalid character '-' at position 5",
            ),
            (
                IdFormat::Base62,
                "00000000é00",
                "invalid character U+00E9 at position 9 of a base62",
            ),
            (
                IdFormat::Decimal,
                "12x",
                "invalid character 'x' at position 3 of a decimal ID",
            ),
            (
                IdFormat::Decimal,
                "010",
                "a decimal ID of 3 digits has a leading zero",
            ),
            (
                IdFormat::Base32,
                "G000000000000",
                "base32 ID \"G000000000000\" is above the largest ID, 7ZZZZZZZZZZZZ (2^63 - 1 = 9223372036854775807)",
            ),
            (
                IdFormat::Decimal,
                "9223372036854775808",
                "decimal ID \"9223372036854775808\" is above the largest ID, 9223372036854775807",
            ),
        ];
        for (format, text, want) in cases {
            let got = format.decode(text).unwrap_err().to_string();
            assert!(got.contains(want), "{format} {text:?}: {got}");
        }
        // Every first character above 7 overflows base32; above u64 too.
        for c in "89ABCDEFGHJKMNPQRSTVWXYZ".chars() {
            let text = format!("{c}000000000000");
            assert!(matches!(
                IdFormat::Base32.decode(&text),
                Err(IdTextError::Overflow { .. })
            ));
        }
        assert!(matches!(
            IdFormat::Base62.decode("zzzzzzzzzzz"),
            Err(IdTextError::Overflow { .. })
        ));
        assert!(matches!(
            IdFormat::Base62.decode("AzL8n0Y58m8"),
            Err(IdTextError::Overflow { .. })
        ));
        assert_eq!(IdFormat::Decimal.decode("0"), Ok(0));
        // A long text is refused by its length, never echoed.
        let long = "Z".repeat(10_000);
        let message = IdFormat::Base32.decode(&long).unwrap_err().to_string();
        assert!(message.len() < 80, "{message}");
    }

    #[test]
    fn detection() {
        assert_eq!(IdFormat::detect("-5"), IdFormat::Decimal);
        assert_eq!(IdFormat::detect("+5"), IdFormat::Decimal);
        assert_eq!(IdFormat::detect("1234567890123"), IdFormat::Decimal);
        // A decimal never has a leading zero: digits from 0 are a fixed-width form.
        assert_eq!(IdFormat::detect("0234567890123"), IdFormat::Base32);
        assert_eq!(IdFormat::detect("02345678901"), IdFormat::Base62);
        assert_eq!(IdFormat::detect("010"), IdFormat::Decimal);
        assert_eq!(IdFormat::detect("0"), IdFormat::Decimal);
        assert_eq!(IdFormat::detect("123456789O123"), IdFormat::Base32);
        assert_eq!(IdFormat::detect("abc"), IdFormat::Decimal);
        assert_eq!(IdFormat::detect(""), IdFormat::Decimal);
    }
}
