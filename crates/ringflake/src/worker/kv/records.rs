//! The two records a key-value source keeps per worker id, as text an operator can read with
//! `etcdctl get` or `redis-cli`, and that ringflake recognises as its own:
//!
//! - the holder: `ringflake 1 holder <token> host <host> pid <pid> since <unix second>` (and
//!   ` generator <name>` for a named generator of `serve --config`); the token is drawn at
//!   every boot, so no other process, a copy or a clone among them, ever writes the same one;
//! - the reach: `ringflake 1 reach <unix second> holder <token>`: the last second the holder
//!   of the token may issue.
//!
//! Anything else under the source's prefix is another program's: never overwritten.

use crate::worker::node::{host_name, random_below};

/// The first words of every record ringflake writes.
const MAGIC: &str = "ringflake 1 ";

/// Who holds a worker id: one boot of one generator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Holder {
    /// 128 random bits, in hex: this boot's alone.
    pub(crate) token: String,
    /// The host name, for people.
    pub(crate) host: String,
    /// The process id, for people.
    pub(crate) pid: u32,
    /// When the boot took the id.
    pub(crate) since: i64,
    /// The generator's name, for one of several in a process.
    pub(crate) generator: Option<String>,
}

impl Holder {
    /// A holder for this boot, taking an id at `since`.
    pub(crate) fn new(since: i64, generator: Option<String>) -> Holder {
        Holder {
            token: format!(
                "{:016x}{:016x}",
                random_below(u64::MAX),
                random_below(u64::MAX)
            ),
            host: host_name()
                .unwrap_or_else(|| "unknown".into())
                .replace(char::is_whitespace, "_"),
            pid: std::process::id(),
            since,
            generator,
        }
    }

    /// The record, as stored.
    pub(crate) fn text(&self) -> String {
        let mut s = format!(
            "{MAGIC}holder {} host {} pid {} since {}",
            self.token, self.host, self.pid, self.since
        );
        if let Some(g) = &self.generator {
            s.push_str(" generator ");
            s.push_str(g);
        }
        s
    }

    /// A stored holder record; `None` if it is not ringflake's.
    pub(crate) fn parse(text: &str) -> Option<Holder> {
        let rest = text.strip_prefix(MAGIC)?;
        let words: Vec<&str> = rest.split(' ').collect();
        let mut h = Holder {
            token: String::new(),
            host: String::new(),
            pid: 0,
            since: 0,
            generator: None,
        };
        let mut seen = 0;
        for pair in words.chunks(2) {
            let [key, value] = pair else { return None };
            match *key {
                "holder" => h.token = value.to_string(),
                "host" => h.host = value.to_string(),
                "pid" => h.pid = value.parse().ok()?,
                "since" => h.since = value.parse().ok()?,
                "generator" => h.generator = Some(value.to_string()),
                _ => return None,
            }
            seen += 1;
        }
        (seen >= 4 && !h.token.is_empty()).then_some(h)
    }

    /// For people: `host-a pid 4711` (`orders@host-a pid 4711`).
    pub(crate) fn who(&self) -> String {
        match &self.generator {
            Some(g) => format!("{g}@{} pid {}", self.host, self.pid),
            None => format!("{} pid {}", self.host, self.pid),
        }
    }
}

/// The reach record of a holder: `reach` is the last second the holder of `token` may issue.
pub(crate) fn reach_text(reach: i64, token: &str) -> String {
    format!("{MAGIC}reach {reach} holder {token}")
}

/// A stored reach record: the second and the holder's token; `None` if it is not ringflake's.
pub(crate) fn parse_reach(text: &str) -> Option<(i64, String)> {
    let rest = text.strip_prefix(MAGIC)?;
    let mut words = rest.split(' ');
    match (
        words.next(),
        words.next(),
        words.next(),
        words.next(),
        words.next(),
    ) {
        (Some("reach"), Some(second), Some("holder"), Some(token), None) => {
            Some((second.parse().ok()?, token.to_string()))
        }
        _ => None,
    }
}

/// The beginning of a value that is not ringflake's, for a message.
pub(crate) fn shown(value: &[u8]) -> String {
    let text = String::from_utf8_lossy(value);
    let mut cut: String = text.chars().take(40).collect();
    if text.chars().count() > 40 {
        cut.push('…');
    }
    format!("{cut:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_foreign_ones_are_not_taken_for_ours() {
        let h = Holder::new(1_800_000_000, Some("orders".into()));
        assert_eq!(h.token.len(), 32);
        assert_eq!(Holder::parse(&h.text()), Some(h.clone()));
        assert!(h.who().starts_with("orders@"), "{}", h.who());
        let plain = Holder {
            generator: None,
            ..h.clone()
        };
        assert_eq!(Holder::parse(&plain.text()), Some(plain));
        assert_ne!(Holder::new(1, None).token, h.token);
        let r = reach_text(1_800_000_009, &h.token);
        assert_eq!(parse_reach(&r), Some((1_800_000_009, h.token.clone())));
        for foreign in [
            "",
            "1",
            "worker-7",
            "ringflake 2 reach 1 holder x",
            "ringflake 1 reach x holder y",
        ] {
            assert_eq!(parse_reach(foreign), None, "{foreign}");
            assert_eq!(Holder::parse(foreign), None, "{foreign}");
        }
        assert_eq!(
            shown(b"{\"owner\":\"billing\"}"),
            "\"{\\\"owner\\\":\\\"billing\\\"}\""
        );
    }
}
