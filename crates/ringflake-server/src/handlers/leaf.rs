//! The routes of Meituan Leaf's server that a Leaf client calls for snowflake IDs, answered as
//! Leaf's controllers answer them, so that a client moving from Leaf changes only its address:
//!
//! - `GET /api/snowflake/get/{key}` (Leaf's `LeafController`): one ID, the decimal number as the
//!   plain-text body. Leaf's snowflake generator ignores the key; here it names the generator
//!   (the `default` one when no generator has that name). The routes module answers it with
//!   `/id`'s own handler.
//! - `GET /decodeSnowflakeId?snowflakeId=ID` (Leaf's `LeafMonitorController`): the ID's fields as
//!   a JSON object of strings, `{"workerId":"…","sequenceId":"…","timestamp":"<millis>(<yyyy-MM-dd
//!   HH:mm:ss.SSS>)"}`, in the key order Java's `HashMap` gives them, decoded with the layout and
//!   zone of the `default` generator (Leaf decodes with its own fixed 41/10/12 layout from
//!   2010-11-04). A value that is not an ID answers `{"errorMsg":"…"}`, Leaf's field, with a 400
//!   (Leaf answers it with a 200).

use crate::text::{parse_id, to_json};
use ringflake::{Layout, TimeZone};
use serde::Serialize;

/// The answer to `/decodeSnowflakeId` with `query`: the status code (200 or 400) and the JSON.
pub fn decode(query: Option<&str>, layout: &Layout, tz: &TimeZone) -> (u16, String) {
    let value = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|pair| pair.strip_prefix("snowflakeId="));
    let fields = match value {
        None => Err(
            "missing query parameter snowflakeId: use /decodeSnowflakeId?snowflakeId=ID"
                .to_string(),
        ),
        Some(text) => decoded(text, layout, tz),
    };
    match fields {
        Ok(json) => (200, json),
        Err(message) => {
            /// ringflake's own error (Leaf has none for a bad ID).
            #[derive(Serialize)]
            struct Error {
                #[serde(rename = "errorMsg")]
                error_msg: String,
            }
            (400, to_json(&Error { error_msg: message }))
        }
    }
}

/// Leaf's fields of the ID `text`.
fn decoded(text: &str, layout: &Layout, tz: &TimeZone) -> Result<String, String> {
    let id = parse_id(text).map_err(|e| format!("snowflakeId: {e}"))?;
    let parsed = layout.parse(id).map_err(|e| e.to_string())?;
    // The date as `/parse` renders it (UidGenerator's pattern, whatever the year), then Leaf's
    // milliseconds: those of a millisecond layout's IDs (`--layout leaf`), else 000 (whole
    // seconds).
    let java = parsed.to_java_string_in(tz).map_err(|e| e.to_string())?;
    let date = java
        .split("\"timestamp\":\"")
        .nth(1)
        .and_then(|rest| rest.split(['"', '.']).next())
        .ok_or_else(|| format!("cannot render the second of ID {id}"))?;
    let millis = match layout.unit() {
        ringflake::TimeUnit::Seconds => i128::from(parsed.unix_seconds) * 1000,
        _ => i128::from(parsed.unix_millis),
    };
    /// Leaf's `decodeSnowflakeId` answer, its fields in Leaf's order, each a string, as Leaf's
    /// clients read them byte for byte (`fields_in_javas_order`).
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Decoded {
        worker_id: String,
        sequence_id: String,
        timestamp: String,
    }
    Ok(to_json(&Decoded {
        worker_id: parsed.worker_id.to_string(),
        sequence_id: parsed.sequence.to_string(),
        timestamp: format!("{millis}({date}.{:03})", millis.rem_euclid(1000)),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_in_javas_order() {
        let layout = Layout::new(29, 21, 13, 1_474_329_600).unwrap();
        let (status, body) = decode(Some("snowflakeId=17179877377"), &layout, &TimeZone::UTC);
        assert_eq!(status, 200);
        assert_eq!(
            body,
            r#"{"workerId":"1","sequenceId":"1","timestamp":"1474329601000(2016-09-20 00:00:01.000)"}"#
        );
        // A millisecond layout answers in its milliseconds, as Leaf does: Leaf's own ID for
        // 2020-01-01T00:00:00.123Z, worker 5, sequence 9.
        let id = ((1_577_836_800_123u64 - 1_288_834_974_657) << 22) | (5 << 12) | 9;
        let (status, body) = decode(
            Some(&format!("snowflakeId={id}")),
            &Layout::leaf(),
            &TimeZone::UTC,
        );
        assert_eq!(status, 200);
        assert_eq!(
            body,
            r#"{"workerId":"5","sequenceId":"9","timestamp":"1577836800123(2020-01-01 00:00:00.123)"}"#
        );
        for bad in [
            None,
            Some("x=1"),
            Some("snowflakeId=abc"),
            Some("snowflakeId=-5"),
        ] {
            let (status, body) = decode(bad, &layout, &TimeZone::UTC);
            assert_eq!(status, 400, "{bad:?}");
            assert!(body.starts_with("{\"errorMsg\":\""), "{body}");
        }
    }
}
