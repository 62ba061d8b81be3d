//! Public IDs through a keyed permutation: FF1 format-preserving encryption (NIST SP 800-38G)
//! over the 63-bit ID space, so that an ID shown to the world does not tell its order, the
//! volume between two IDs, its worker or its time (feature `id-key`).
//!
//! FF1 and AES-256 are the `fpe` and `aes` crates'; this module only hands FF1 the ID as a
//! numeral string of 63 binary digits, most significant first, without allocating (fpe's own
//! numeral strings allocate per call, and its byte-oriented one cannot be 63 bits long). The
//! tests check that the result is exactly fpe's FF1 over its own numeral string.
//!
//! # What it hides, and what it does not
//!
//! - Hidden: the order of IDs (a later ID's public form is as likely below as above an earlier
//!   one's), the volume between two IDs (consecutive IDs have unrelated public forms), the worker
//!   id and the time: without the key, a public ID is a uniformly scattered number below 2^63.
//! - Not hidden from anyone who holds the key: they read every public ID back (that is what
//!   [`IdCipher::decrypt`] and `ringflake parse --id-key-file` do). Keep the key like a password:
//!   a file only the service reads, never in a log line, `/status` or `Debug` output.
//! - It is not authentication: anyone can make up a number below 2^63 and it decrypts to some
//!   ID; whether that ID was ever issued is the application's question, as with plain IDs.
//! - It is deterministic: the same ID always has the same public ID (it can be a key in a URL),
//!   and two IDs never share one, since it is a permutation (no collision is possible).
//! - The public ID is still a number in `0..2^63`, so it fits a signed 64-bit column and every
//!   [text form](crate::IdFormat); it no longer sorts by time: order by the private ID.
//!
//! The construction, for another implementation to read the same IDs: FF1 with AES-256, radix 2,
//! 63 numerals (the ID's bits from bit 62 down to bit 0), an empty tweak.

use crate::Error;
use aes::Aes256;
use fpe::ff1::{FF1, NumeralString, Operations};
use std::fmt;
use std::path::Path;

/// The largest ID: `2^63 - 1`.
const MAX_ID: u64 = i64::MAX as u64;

/// The most of a key file read: a key is 64 hex digits, a line ending and perhaps a comment-free
/// blank line; anything longer is not a key.
const MAX_KEY_FILE_BYTES: u64 = 4096;

/// A keyed permutation of the IDs (`0..2^63`): [`encrypt`](IdCipher::encrypt) turns an ID into
/// its public ID, [`decrypt`](IdCipher::decrypt) turns it back; see the
/// [below](#what-it-hides-and-what-it-does-not) for what it hides and what it does
/// not. A 256-bit key: 64 hex digits in a file (`openssl rand -hex 32 > id.key`).
///
/// `Debug` shows no key material: `IdCipher { .. }`.
///
/// # What it hides, and what it does not
///
/// It hides the order of IDs, the volume between them, their worker and their time from anyone
/// without the key; anyone with the key reads them all. It is not authentication (any number
/// decrypts to some ID), the same ID always gives the same public ID, and no two IDs share one.
/// A call costs about a microsecond (ten AES-256 blocks; `benches/id_key.rs`).
///
/// # Examples
///
/// ```
/// use ringflake::IdCipher;
///
/// let key = IdCipher::from_hex(&"7f".repeat(32))?;
/// let ids = [256_584_189_548_167_168, 256_584_189_548_167_169];
/// let public = [key.encrypt(ids[0])?, key.encrypt(ids[1])?];
/// assert!(public[0] <= i64::MAX as u64 && public[1] <= i64::MAX as u64);
/// assert_ne!(public[1], public[0] + 1);
/// assert_eq!(key.decrypt(public[0])?, ids[0]);
/// assert_eq!(format!("{key:?}"), "IdCipher { .. }");
/// # Ok::<(), ringflake::Error>(())
/// ```
pub struct IdCipher {
    ff1: FF1<Aes256>,
}

impl IdCipher {
    /// The permutation of a 256-bit key.
    ///
    /// ```
    /// let key = ringflake::IdCipher::new(&[7; 32]);
    /// assert_eq!(key.decrypt(key.encrypt(42)?)?, 42);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn new(key: &[u8; 32]) -> IdCipher {
        // Radix 2 is always valid (2..=2^16), and the key is AES-256's length.
        match FF1::<Aes256>::new(key, 2) {
            Ok(ff1) => IdCipher { ff1 },
            Err(_) => unreachable!("radix 2 is a valid FF1 radix"),
        }
    }

    /// The permutation of a key written as 64 hex digits (either case; whitespace around them
    /// ignored).
    ///
    /// # Errors
    ///
    /// [`Error::IdKey`] saying what is wrong (the length, or the position of a character that is
    /// not a hex digit), never showing the text.
    ///
    /// ```
    /// use ringflake::IdCipher;
    ///
    /// assert!(IdCipher::from_hex(&"aB".repeat(32)).is_ok());
    /// let err = IdCipher::from_hex("secret").unwrap_err().to_string();
    /// assert!(err.contains("expected 64 hex digits") && !err.contains("secret"), "{err}");
    /// ```
    pub fn from_hex(hex: &str) -> Result<IdCipher, Error> {
        Self::parse_hex(hex, "(given as text)")
    }

    /// The permutation of the key in a file: 64 hex digits (`openssl rand -hex 32 > id.key`),
    /// whitespace around them ignored.
    ///
    /// # Errors
    ///
    /// [`Error::IdKey`] naming the file and what is wrong with it (it cannot be read, is larger
    /// than a key file, or does not hold 64 hex digits), never its content.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("id.key");
    /// std::fs::write(&path, format!("{}\n", "0123456789abcdef".repeat(4))).unwrap();
    /// let key = ringflake::IdCipher::from_key_file(&path)?;
    /// assert_eq!(key.decrypt(key.encrypt(7)?)?, 7);
    /// assert!(ringflake::IdCipher::from_key_file(dir.path().join("missing")).is_err());
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn from_key_file(path: impl AsRef<Path>) -> Result<IdCipher, Error> {
        use std::io::Read as _;
        let path = path.as_ref();
        let shown = path.display().to_string();
        let fail = |reason: String| Error::IdKey {
            path: shown.clone(),
            reason,
        };
        let file = std::fs::File::open(path).map_err(|e| fail(format!("cannot open it: {e}")))?;
        let mut bytes = Vec::new();
        file.take(MAX_KEY_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| fail(format!("cannot read it: {e}")))?;
        if bytes.len() as u64 > MAX_KEY_FILE_BYTES {
            return Err(fail(format!(
                "larger than {MAX_KEY_FILE_BYTES} bytes: expected 64 hex digits (a 256-bit key; \
                 make one with `openssl rand -hex 32`)"
            )));
        }
        let text = String::from_utf8(bytes).map_err(|_| {
            fail(
                "not text: expected 64 hex digits (a 256-bit key; make one with \
                  `openssl rand -hex 32`)"
                    .into(),
            )
        })?;
        Self::parse_hex(&text, &shown)
    }

    fn parse_hex(text: &str, path: &str) -> Result<IdCipher, Error> {
        let fail = |reason: String| Error::IdKey {
            path: path.to_string(),
            reason,
        };
        let hex = text.trim().as_bytes();
        if hex.len() != 64 {
            return Err(fail(format!(
                "expected 64 hex digits (a 256-bit key; make one with `openssl rand -hex 32`), \
                 found {} characters",
                hex.len()
            )));
        }
        let mut key = [0u8; 32];
        for (i, pair) in hex.chunks_exact(2).enumerate() {
            let digit = |at: usize| {
                char::from(pair[at % 2]).to_digit(16).ok_or_else(|| {
                    fail(format!(
                        "character {} is not a hex digit: expected 64 hex digits (0-9, a-f)",
                        2 * i + at % 2 + 1
                    ))
                })
            };
            key[i] = (digit(0)? * 16 + digit(1)?) as u8;
        }
        Ok(IdCipher::new(&key))
    }

    /// The public ID of `id`: another number in `0..2^63`, the same one every time.
    ///
    /// # Errors
    ///
    /// [`Error::NegativeId`] if `id` is above `2^63 - 1`.
    ///
    /// ```
    /// let key = ringflake::IdCipher::new(&[1; 32]);
    /// assert!(key.encrypt(u64::MAX).is_err());
    /// assert_eq!(key.encrypt(5)?, key.encrypt(5)?);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn encrypt(&self, id: u64) -> Result<u64, Error> {
        self.ff1
            .encrypt(&[], &Bits63(id))
            .map(|b| b.0)
            .map_err(|_| Error::NegativeId { id })
    }

    /// The ID whose public ID is `public`. A public ID made with another key decrypts to an
    /// unrelated ID, not to an error: the permutation cannot tell.
    ///
    /// # Errors
    ///
    /// [`Error::NegativeId`] if `public` is above `2^63 - 1`.
    ///
    /// ```
    /// use ringflake::IdCipher;
    ///
    /// let (mine, other) = (IdCipher::new(&[1; 32]), IdCipher::new(&[2; 32]));
    /// let public = mine.encrypt(1_000)?;
    /// assert_eq!(mine.decrypt(public)?, 1_000);
    /// assert_ne!(other.decrypt(public)?, 1_000);
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn decrypt(&self, public: u64) -> Result<u64, Error> {
        self.ff1
            .decrypt(&[], &Bits63(public))
            .map(|b| b.0)
            .map_err(|_| Error::NegativeId { id: public })
    }
}

impl fmt::Debug for IdCipher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("IdCipher { .. }")
    }
}

/// An ID as FF1's numeral string: 63 binary numerals, bit 62 first.
struct Bits63(u64);

/// A part of a [`Bits63`] during FF1's rounds: its `len` numerals as the number they spell
/// (at most 32 of them).
struct Half {
    value: u64,
    len: usize,
}

/// The big-endian bytes of a [`Half`], the last `len` of `buf`.
struct HalfBytes {
    buf: [u8; 8],
    len: usize,
}

impl AsRef<[u8]> for HalfBytes {
    fn as_ref(&self) -> &[u8] {
        &self.buf[8 - self.len..]
    }
}

impl Operations for Half {
    type Bytes = HalfBytes;

    fn numeral_count(&self) -> usize {
        self.len
    }

    /// `b` bytes of the number, big-endian: a half is at most 32 bits, and `b` is
    /// `ceil(32 / 8) = 4` for 63 numerals.
    fn to_be_bytes(&self, _radix: u32, b: usize) -> HalfBytes {
        HalfBytes {
            buf: self.value.to_be_bytes(),
            len: b.min(8),
        }
    }

    /// `(self + NUM(other)) mod 2^m`: only the low `m <= 32` bits of `NUM(other)` matter, so
    /// it is read modulo 2^64 (the bytes shifted out of a `u64` are multiples of 2^64).
    fn add_mod_exp(self, other: impl Iterator<Item = u8>, _radix: u32, m: usize) -> Self {
        let y = other.fold(0u64, |acc, b| (acc << 8) | u64::from(b));
        Half {
            value: self.value.wrapping_add(y) & low_bits(m),
            len: m,
        }
    }

    /// `(self - NUM(other)) mod 2^m`, as [`add_mod_exp`](Self::add_mod_exp).
    fn sub_mod_exp(self, other: impl Iterator<Item = u8>, _radix: u32, m: usize) -> Self {
        let y = other.fold(0u64, |acc, b| (acc << 8) | u64::from(b));
        Half {
            value: self.value.wrapping_sub(y) & low_bits(m),
            len: m,
        }
    }
}

/// `2^m - 1`, for `m < 64`.
fn low_bits(m: usize) -> u64 {
    (1u64 << m) - 1
}

impl NumeralString for Bits63 {
    type Ops = Half;

    fn is_valid(&self, radix: u32) -> bool {
        radix == 2 && self.0 <= MAX_ID
    }

    fn numeral_count(&self) -> usize {
        63
    }

    /// `u = 31` numerals (bits 62..32), then `v = 32` (bits 31..0).
    fn split(&self) -> (Half, Half) {
        (
            Half {
                value: self.0 >> 32,
                len: 31,
            },
            Half {
                value: self.0 & low_bits(32),
                len: 32,
            },
        )
    }

    fn concat(a: Half, b: Half) -> Self {
        Bits63((a.value << b.len) | b.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fpe::ff1::FlexibleNumeralString;
    use proptest::prelude::*;

    fn key() -> IdCipher {
        IdCipher::new(&[0x5a; 32])
    }

    /// fpe's FF1 over its own numeral string of the same 63 bits: the reference.
    fn reference(key: &[u8; 32], id: u64, decrypt: bool) -> u64 {
        let ff1 = FF1::<Aes256>::new(key, 2).unwrap();
        let bits: Vec<u16> = (0..63).rev().map(|b| ((id >> b) & 1) as u16).collect();
        let ns = FlexibleNumeralString::from(bits);
        let out = if decrypt {
            ff1.decrypt(&[], &ns).unwrap()
        } else {
            ff1.encrypt(&[], &ns).unwrap()
        };
        Vec::<u16>::from(out)
            .into_iter()
            .fold(0u64, |acc, bit| (acc << 1) | u64::from(bit))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 256 }))]

        #[test]
        fn is_fpe_s_ff1(id in 0..=MAX_ID, k in any::<[u8; 32]>()) {
            let cipher = IdCipher::new(&k);
            let public = cipher.encrypt(id).unwrap();
            prop_assert_eq!(public, reference(&k, id, false));
            prop_assert_eq!(cipher.decrypt(id).unwrap(), reference(&k, id, true));
        }

        #[test]
        fn reverses(id in 0..=MAX_ID) {
            let public = key().encrypt(id).unwrap();
            prop_assert!(public <= MAX_ID);
            prop_assert_eq!(key().decrypt(public).unwrap(), id);
        }
    }

    /// A permutation: the public IDs of a run of consecutive IDs (what a generator hands out)
    /// are all different, and scattered: about half of the steps go down.
    #[test]
    fn consecutive_ids_scatter() {
        let key = key();
        let start = 256_584_189_548_167_168u64;
        let public: Vec<u64> = (start..start + 10_000)
            .map(|id| key.encrypt(id).unwrap())
            .collect();
        let mut sorted = public.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), public.len());
        let downs = public.windows(2).filter(|w| w[1] < w[0]).count();
        assert!(
            (4_000..6_000).contains(&downs),
            "{downs} of 9999 steps go down"
        );
        // The top bits (time) vary too: not a permutation of the low bits alone.
        let tops: std::collections::BTreeSet<u64> = public.iter().map(|p| p >> 58).collect();
        assert!(tops.len() > 16, "{tops:?}");
        for edge in [0, 1, MAX_ID - 1, MAX_ID] {
            assert_eq!(key.decrypt(key.encrypt(edge).unwrap()).unwrap(), edge);
        }
    }

    #[test]
    fn keys_differ() {
        let (a, b) = (IdCipher::new(&[1; 32]), IdCipher::new(&[2; 32]));
        let same = (0..1_000u64)
            .filter(|&id| a.encrypt(id).unwrap() == b.encrypt(id).unwrap())
            .count();
        assert_eq!(same, 0);
        let public = a.encrypt(123_456).unwrap();
        assert_ne!(b.decrypt(public).unwrap(), 123_456);
    }

    #[test]
    fn out_of_range() {
        assert_eq!(
            key().encrypt(MAX_ID + 1),
            Err(Error::NegativeId { id: MAX_ID + 1 })
        );
        assert!(key().decrypt(u64::MAX).is_err());
    }

    #[test]
    fn key_text() {
        let hex = "0123456789abcdef".repeat(4);
        let a = IdCipher::from_hex(&hex).unwrap();
        let b = IdCipher::from_hex(&format!("  {}\n", hex.to_uppercase())).unwrap();
        assert_eq!(a.encrypt(99).unwrap(), b.encrypt(99).unwrap());
        let mut bytes = [0u8; 32];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = [0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef][i % 8];
        }
        assert_eq!(
            IdCipher::new(&bytes).encrypt(99).unwrap(),
            a.encrypt(99).unwrap()
        );
        let bad = format!("{}g{}", &hex[..10], &hex[11..]);
        let err = IdCipher::from_hex(&bad).unwrap_err().to_string();
        assert!(err.contains("character 11 is not a hex digit"), "{err}");
        assert!(!err.contains(&hex[..10]), "{err}");
        let err = IdCipher::from_hex(&hex[..63]).unwrap_err().to_string();
        assert!(err.contains("found 63 characters"), "{err}");
    }

    #[test]
    fn key_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.key");
        std::fs::write(&path, "a".repeat(5000)).unwrap();
        let err = IdCipher::from_key_file(&path).unwrap_err().to_string();
        assert!(err.contains("larger than 4096 bytes"), "{err}");
        std::fs::write(&path, [0xff, 0xfe]).unwrap();
        let err = IdCipher::from_key_file(&path).unwrap_err().to_string();
        assert!(err.contains("not text"), "{err}");
    }
}
