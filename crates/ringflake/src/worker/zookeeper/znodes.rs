//! The znodes: Meituan Leaf's, exactly as its `SnowflakeZookeeperHolder` writes and reads them,
//! and ringflake's own beside them, which Leaf never lists.
//!
//! Leaf's (`/snowflake/{leaf.name}/forever`): one persistent znode per `ip:port`, created
//! sequential, named `{ip}:{port}-{10-digit sequence}`; the sequence is the worker id. Its data is
//! Jackson's serialisation of Leaf's `Endpoint`, `{"ip":"…","port":"…","timestamp":<ms>}`, and
//! Leaf reads it back with a default `ObjectMapper`, which **fails on a field it does not know**:
//! so nothing is added to it. Leaf splits each child's name on `-` and parses the second part as an
//! integer, so nothing else may live under `forever` either.
//!
//! ringflake's (`/snowflake/{leaf.name}/ringflake`):
//!
//! - `ids/{sequence}` (persistent): the id is ringflake's to manage (its forever znode was made
//!   by ringflake, or taken over in place from a Leaf node on the same `ip:port`), who holds it,
//!   and its **reach**: the last unix second its holder may issue (a lease, extended ahead of use;
//!   at a clean stop, the last second used). A recycled id starts above it.
//! - `live/{sequence}` (ephemeral): the session of the node serving the id. While it exists the
//!   id is nobody else's; it vanishes when its session ends (closed, or expired on the servers).

use std::fmt::Write as _;

/// Leaf's root for a `leaf.name`: `/snowflake/{name}`.
pub(crate) fn root(name: &str) -> String {
    format!("/snowflake/{name}")
}

/// Leaf's `PATH_FOREVER`.
pub(crate) fn forever(name: &str) -> String {
    format!("{}/forever", root(name))
}

/// ringflake's ids (persistent, one per id it manages).
pub(crate) fn ids(name: &str) -> String {
    format!("{}/ringflake/ids", root(name))
}

/// ringflake's live ids (ephemeral, one per id served now).
pub(crate) fn live(name: &str) -> String {
    format!("{}/ringflake/live", root(name))
}

/// A sequence as ZooKeeper writes it in a sequential znode's name: ten digits.
pub(crate) fn seq(worker_id: u64) -> String {
    format!("{worker_id:010}")
}

/// A child of `forever` as Leaf reads it: `key.split("-")`, the address before the first `-`, the
/// sequence between it and the next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ForeverNode {
    /// The child's name, as listed.
    pub(crate) name: String,
    /// `ip:port`.
    pub(crate) address: String,
    /// The sequence: the worker id.
    pub(crate) worker_id: u64,
}

impl ForeverNode {
    /// Parses a child's name as Leaf does; `None` where Leaf's `Integer.parseInt` would throw
    /// (Leaf then fails to start: such a child is a foreign body under its path).
    pub(crate) fn parse(name: &str) -> Option<ForeverNode> {
        let mut parts = name.split('-');
        let address = parts.next()?;
        let digits = parts.next()?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        // Integer.parseInt: at most i32::MAX.
        let worker_id: i32 = digits.parse().ok()?;
        Some(ForeverNode {
            name: name.to_string(),
            address: address.to_string(),
            worker_id: u64::try_from(worker_id).ok()?,
        })
    }

    /// The name of `address`'s znode for `worker_id`: `{ip}:{port}-{10 digits}`.
    pub(crate) fn name_of(address: &str, worker_id: u64) -> String {
        format!("{address}-{}", seq(worker_id))
    }
}

/// Appends `s` as a JSON string.
fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Leaf's `Endpoint` as Jackson writes it: `{"ip":"10.1.2.3","port":"8080","timestamp":1700000000000}`
/// (fields in declaration order, `port` a string).
pub(crate) fn leaf_data(ip: &str, port: &str, timestamp_ms: i64) -> Vec<u8> {
    let mut out = String::from("{\"ip\":");
    json_string(&mut out, ip);
    out.push_str(",\"port\":");
    json_string(&mut out, port);
    let _ = write!(out, ",\"timestamp\":{timestamp_ms}}}");
    out.into_bytes()
}

/// The value of a top-level field of a flat JSON object (`"key":value`), as text: a string's
/// contents unescaped, a number's digits. `None` if absent or not flat.
fn field(json: &str, key: &str) -> Option<String> {
    let pattern = format!("\"{key}\"");
    let mut rest = json;
    loop {
        let at = rest.find(&pattern)?;
        let after = rest[at + pattern.len()..].trim_start();
        rest = &rest[at + pattern.len()..];
        let Some(value) = after.strip_prefix(':') else {
            continue;
        };
        let value = value.trim_start();
        if let Some(s) = value.strip_prefix('"') {
            let mut out = String::new();
            let mut chars = s.chars();
            while let Some(c) = chars.next() {
                match c {
                    '"' => return Some(out),
                    '\\' => match chars.next()? {
                        'u' => {
                            let hex: String = chars.by_ref().take(4).collect();
                            out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                        }
                        'n' => out.push('\n'),
                        't' => out.push('\t'),
                        'r' => out.push('\r'),
                        c => out.push(c),
                    },
                    c => out.push(c),
                }
            }
            return None;
        }
        let end = value
            .find(|c: char| !(c.is_ascii_digit() || c == '-'))
            .unwrap_or(value.len());
        return (end > 0).then(|| value[..end].to_string());
    }
}

/// The `timestamp` of Leaf's data (milliseconds), if it parses.
pub(crate) fn leaf_timestamp(data: &[u8]) -> Option<i64> {
    field(std::str::from_utf8(data).ok()?, "timestamp")?
        .parse()
        .ok()
}

/// Where a ringflake-managed id's forever znode came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Made by ringflake: recyclable once its holder is gone.
    Ringflake,
    /// Taken over in place from a Leaf node on the same `ip:port`: stays that address's, never
    /// recycled to another.
    Leaf,
}

/// ringflake's data of an id (`ids/{sequence}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IdData {
    pub(crate) origin: Origin,
    /// The `ip:port` that holds (or last held) the id.
    pub(crate) holder: String,
    /// The last unix second its holder may issue (or, after a clean stop, issued).
    pub(crate) reach: i64,
}

impl IdData {
    pub(crate) fn to_json(&self) -> Vec<u8> {
        let mut out = String::from("{\"origin\":");
        json_string(
            &mut out,
            match self.origin {
                Origin::Ringflake => "ringflake",
                Origin::Leaf => "leaf",
            },
        );
        out.push_str(",\"holder\":");
        json_string(&mut out, &self.holder);
        let _ = write!(out, ",\"reach\":{}}}", self.reach);
        out.into_bytes()
    }

    pub(crate) fn parse(data: &[u8]) -> Option<IdData> {
        let text = std::str::from_utf8(data).ok()?;
        let origin = match field(text, "origin")?.as_str() {
            "ringflake" => Origin::Ringflake,
            "leaf" => Origin::Leaf,
            _ => return None,
        };
        Some(IdData {
            origin,
            holder: field(text, "holder")?,
            reach: field(text, "reach")?.parse().ok()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Leaf's names and JSON, byte for byte: what `SnowflakeZookeeperHolder.createNode` and
    /// `buildData` write (Jackson, fields in declaration order).
    #[test]
    fn leaf_names_and_data() {
        assert_eq!(forever("orders"), "/snowflake/orders/forever");
        assert_eq!(
            ForeverNode::name_of("10.1.2.3:8080", 7),
            "10.1.2.3:8080-0000000007"
        );
        assert_eq!(
            leaf_data("10.1.2.3", "8080", 1_700_000_000_123),
            br#"{"ip":"10.1.2.3","port":"8080","timestamp":1700000000123}"#
        );
        assert_eq!(
            leaf_timestamp(br#"{"ip":"10.1.2.3","port":"8080","timestamp":1700000000123}"#),
            Some(1_700_000_000_123)
        );
        assert_eq!(leaf_timestamp(b"{\"ip\":\"x\"}"), None);
    }

    /// Leaf's `key.split("-")` and `Integer.parseInt(nodeKey[1])`.
    #[test]
    fn children_parse_as_leaf_parses_them() {
        let n = ForeverNode::parse("10.1.2.3:8080-0000000042").unwrap();
        assert_eq!((n.address.as_str(), n.worker_id), ("10.1.2.3:8080", 42));
        // A later part is ignored, as Leaf ignores nodeKey[2].
        let n = ForeverNode::parse("10.1.2.3:8080-0000000042-x").unwrap();
        assert_eq!(n.worker_id, 42);
        for bad in ["10.1.2.3:8080", "a-", "a-x1", "a-2147483648"] {
            assert_eq!(ForeverNode::parse(bad), None, "{bad}");
        }
        assert_eq!(
            ForeverNode::parse("a-2147483647").map(|n| n.worker_id),
            Some(2_147_483_647)
        );
    }

    #[test]
    fn ringflake_data_round_trips() {
        let d = IdData {
            origin: Origin::Ringflake,
            holder: "127.0.0.1:19020".into(),
            reach: 1_800_000_009,
        };
        assert_eq!(
            d.to_json(),
            br#"{"origin":"ringflake","holder":"127.0.0.1:19020","reach":1800000009}"#
        );
        assert_eq!(IdData::parse(&d.to_json()), Some(d));
        let d = IdData {
            origin: Origin::Leaf,
            holder: "q\"\\".into(),
            reach: -1,
        };
        assert_eq!(IdData::parse(&d.to_json()), Some(d));
        assert_eq!(IdData::parse(b"{}"), None);
    }
}
