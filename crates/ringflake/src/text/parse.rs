//! The text forms on the layout's types: `ParsedId::to_text` and `Layout::parse_text`.

use super::{IdFormat, IdText};
use crate::{Error, Layout, ParsedId};

impl ParsedId {
    /// The ID written in `format`.
    ///
    /// ```
    /// use ringflake::{IdFormat, Layout};
    ///
    /// let parsed = Layout::default().parse(256_584_189_548_167_168)?;
    /// assert_eq!(parsed.to_text(IdFormat::Base32).as_str(), "073WHYR0G0000");
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn to_text(&self, format: IdFormat) -> IdText {
        format.encode(self.id)
    }
}

impl Layout {
    /// Parses an ID written in `format` ([`IdFormat::detect`] tells a form from the text).
    ///
    /// # Errors
    ///
    /// [`Error::IdText`] if `text` is not an ID in `format`.
    ///
    /// ```
    /// use ringflake::{IdFormat, Layout};
    ///
    /// let layout = Layout::default();
    /// let parsed = layout.parse_text("073WHYR0G0000", IdFormat::Base32)?;
    /// assert_eq!(parsed, layout.parse(256_584_189_548_167_168)?);
    /// assert_eq!(parsed, layout.parse_text("0Ix9oXm4KOW", IdFormat::detect("0Ix9oXm4KOW"))?);
    /// assert!(layout.parse_text("0758RGGA0000!", IdFormat::Base32).is_err());
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn parse_text(&self, text: &str, format: IdFormat) -> Result<ParsedId, Error> {
        self.parse(format.decode(text)?)
    }
}
