//! What can go wrong with a business tag: [`SegmentError`], carried by
//! [`Error::Segment`](crate::Error::Segment).

use std::fmt;
use std::time::Duration;

/// The longest `biz_tag`: the width of Leaf's `biz_tag VARCHAR(128)` column.
pub const MAX_TAG_LEN: usize = 128;

/// A business tag's error, each naming the tag, the value refused and the limit it broke.
///
/// ```
/// use ringflake::{Error, SegmentError};
///
/// let err = Error::Segment(SegmentError::UnknownTag { tag: "orders".into(), tags: 2 });
/// assert_eq!(
///     err.to_string(),
///     "no biz_tag \"orders\" in leaf_alloc (2 tags served): add it with `ringflake segments add \
///      orders` or INSERT INTO leaf_alloc"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SegmentError {
    /// The tag has no row in `leaf_alloc` (as last read).
    UnknownTag {
        /// The tag asked for (at most [`MAX_TAG_LEN`] characters of it, escaped).
        tag: String,
        /// How many tags are served.
        tags: usize,
    },
    /// A tag that ringflake cannot serve: empty, longer than [`MAX_TAG_LEN`] bytes, or with a
    /// character a URL path cannot carry as it is (only `A-Z a-z 0-9 - . _ ~` are allowed).
    InvalidTag {
        /// The tag (at most [`MAX_TAG_LEN`] characters of it, escaped).
        tag: String,
        /// What is wrong, with the limit.
        reason: String,
    },
    /// The tag's row was deleted from `leaf_alloc` while it was served: nothing more is handed
    /// out for it.
    Removed {
        /// The tag.
        tag: String,
    },
    /// A column of the tag's row holds a value ringflake refuses (a `step` of 0 or less, or
    /// above Leaf's `INT`).
    BadRow {
        /// The tag.
        tag: String,
        /// The column.
        column: &'static str,
        /// Its value.
        value: i64,
        /// What is allowed.
        allowed: &'static str,
    },
    /// The tag's next range would pass the largest number, 2^63 - 1.
    Overflow {
        /// The tag.
        tag: String,
        /// The row's `max_id`.
        max_id: i64,
        /// The step the claim asked for.
        step: i64,
    },
    /// The row's `max_id` went below a number this node already held: the table was reset, and
    /// the range claimed would repeat numbers.
    WentBackwards {
        /// The tag.
        tag: String,
        /// The first number of the range the claim gave.
        start: i64,
        /// The end of the highest range this node held for the tag.
        held: i64,
    },
    /// No number within the wait bound: both segments were used up and the next range could
    /// not be claimed in time (the database is slow or down, or the step is small for the
    /// demand).
    NotReady {
        /// The tag.
        tag: String,
        /// How long the take waited.
        waited: Duration,
        /// Why the next range is late: the last claim's error, if one failed.
        cause: Option<String>,
    },
    /// A batch of `count` numbers outside `1..=max`.
    Count {
        /// The count asked for.
        count: u64,
        /// The largest batch.
        max: u64,
    },
    /// The generator was shut down.
    Shutdown,
}

impl fmt::Display for SegmentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SegmentError::UnknownTag { tag, tags } => write!(
                f,
                "no biz_tag \"{tag}\" in leaf_alloc ({tags} tag{} served): add it with \
                 `ringflake segments add {tag}` or INSERT INTO leaf_alloc",
                if *tags == 1 { "" } else { "s" }
            ),
            SegmentError::InvalidTag { tag, reason } => {
                write!(f, "biz_tag \"{tag}\" cannot be served: {reason}")
            }
            SegmentError::Removed { tag } => write!(
                f,
                "biz_tag \"{tag}\" was deleted from leaf_alloc: nothing more is handed out for it"
            ),
            SegmentError::BadRow {
                tag,
                column,
                value,
                allowed,
            } => write!(
                f,
                "biz_tag \"{tag}\": {column} {value} refused: allowed {allowed}"
            ),
            SegmentError::Overflow { tag, max_id, step } => write!(
                f,
                "biz_tag \"{tag}\": max_id {max_id} + step {step} passes the largest number, {}: \
                 no range is left",
                i64::MAX
            ),
            SegmentError::WentBackwards { tag, start, held } => write!(
                f,
                "biz_tag \"{tag}\": the claimed range starts at {start}, below {held}, the end of \
                 a range this node held: max_id went backwards (the row was reset?), refused \
                 rather than repeat numbers; set max_id to at least {held}"
            ),
            SegmentError::NotReady { tag, waited, cause } => {
                write!(
                    f,
                    "biz_tag \"{tag}\": no number within {:.1} s: both segments are used up and \
                     the next range is not claimed yet",
                    waited.as_secs_f64()
                )?;
                match cause {
                    Some(cause) => write!(f, " ({cause})"),
                    None => write!(f, " (a larger step in leaf_alloc helps under bursts)"),
                }
            }
            SegmentError::Count { count, max } => {
                write!(f, "count {count} out of range: expected 1 to {max}")
            }
            SegmentError::Shutdown => write!(f, "segment generator shut down"),
        }
    }
}

impl std::error::Error for SegmentError {}

/// Checks that `tag` can be served: 1..=[`MAX_TAG_LEN`] bytes of `A-Z a-z 0-9 - . _ ~` (a URL
/// path carries them as they are).
///
/// # Errors
///
/// [`SegmentError::InvalidTag`] naming what is wrong: the length and the limit, or the first
/// character refused and its position.
#[cfg(feature = "segment")]
pub(crate) fn check_tag(tag: &str) -> Result<(), SegmentError> {
    let invalid = |reason: String| SegmentError::InvalidTag {
        tag: shown(tag),
        reason,
    };
    if tag.is_empty() {
        return Err(invalid("empty: expected 1 to 128 characters".into()));
    }
    if tag.len() > MAX_TAG_LEN {
        return Err(invalid(format!(
            "{} bytes long: at most {MAX_TAG_LEN} (leaf_alloc's biz_tag VARCHAR(128))",
            tag.len()
        )));
    }
    if let Some((at, c)) = tag
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~')))
    {
        return Err(invalid(format!(
            "character {c:?} at byte {at}: a tag may hold only A-Z a-z 0-9 - . _ ~ (what a URL \
             path carries as it is)"
        )));
    }
    Ok(())
}

/// A tag as an error shows it: at most [`MAX_TAG_LEN`] characters, control characters and
/// quotes escaped, then the length if it was cut.
#[cfg(feature = "segment")]
pub(crate) fn shown(tag: &str) -> String {
    let mut out: String = tag
        .chars()
        .take(MAX_TAG_LEN)
        .flat_map(char::escape_default)
        .collect();
    let chars = tag.chars().count();
    if chars > MAX_TAG_LEN {
        out.push_str(&format!("…({chars} characters)"));
    }
    out
}

#[cfg(all(test, feature = "segment"))]
mod tests {
    use super::*;

    #[test]
    fn tags_are_checked_by_length_and_characters() {
        assert!(check_tag("leaf-segment_test.v2~").is_ok());
        assert!(check_tag(&"a".repeat(128)).is_ok());
        let e = check_tag(&"a".repeat(129)).unwrap_err().to_string();
        assert!(e.contains("129 bytes long: at most 128"), "{e}");
        assert!(e.contains("…(129 characters)"), "{e}");
        let e = check_tag("order id").unwrap_err().to_string();
        assert!(e.contains("character ' ' at byte 5"), "{e}");
        let e = check_tag("a/b").unwrap_err().to_string();
        assert!(e.contains("'/' at byte 1"), "{e}");
        let e = check_tag("\u{1b}[31m").unwrap_err().to_string();
        assert!(e.contains("\\u{1b}[31m"), "{e}");
        assert!(check_tag("").unwrap_err().to_string().contains("empty"));
        assert!(check_tag("订单").is_err());
    }
}
