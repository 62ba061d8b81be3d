//! A request's query and how a route is used: the parameters a route takes, each checked
//! (`format`, `count`), and the usage an error states.

use super::super::model::routes::{Endpoint, MAX_COUNT, Route};
use crate::text::{DIGITS_ONLY, echo, is_plain_decimal, quoted};
use ringflake::IdFormat;

/// The `format` parameter, as an error's usage states it.
const FORMATS: &str = "format=decimal|base32|base62";

/// How a route is used, for an error: `use /ids?count=N with N in 1..=100000`.
pub fn usage(route: &Route) -> String {
    match route.endpoint {
        Endpoint::Ids => format!("use {} with N in 1..={MAX_COUNT} [&{FORMATS}]", route.usage),
        Endpoint::Parse => format!(
            "use {} with an ID in decimal, base32 or base62 [?{FORMATS}]",
            route.usage
        ),
        Endpoint::IdsOf => format!("use {} [&{FORMATS}]", route.usage),
        Endpoint::Id | Endpoint::IdOf | Endpoint::ParseOf => {
            format!("use {} [?{FORMATS}]", route.usage)
        }
        Endpoint::SegmentGet => super::segments::usage(route),
        _ => format!("use {}", route.usage),
    }
}

/// The `format` parameter of a route that takes one, from its query pairs: `None` if absent
/// (decimal out; parse: told by the ID's text).
pub fn format(route: &Route, query: &[(&str, &str)]) -> Result<Option<IdFormat>, String> {
    let Some(value) = query
        .iter()
        .find_map(|&(name, value)| (name == "format").then_some(value))
    else {
        return Ok(None);
    };
    IdFormat::ALL
        .into_iter()
        .find(|f| f.name() == value)
        .map(Some)
        .ok_or_else(|| {
            format!(
                "format {} is not an ID format: {}",
                quoted(value),
                usage(route)
            )
        })
}

/// The query parameters of a request on `route`, as `(name, value)` pairs (a name without `=`
/// has the value `""`; empty pairs, `a=1&&b=2`, are skipped). One rule for every route that takes
/// parameters: each at most once, and no other; a route that ignores its query gets none.
pub fn query<'q>(route: &Route, query: Option<&'q str>) -> Result<Vec<(&'q str, &'q str)>, String> {
    let Some(known) = route.endpoint.parameters() else {
        return Ok(Vec::new());
    };
    // No query, as most requests for IDs come: nothing to read.
    if query.is_none_or(str::is_empty) {
        return Ok(Vec::new());
    }
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for pair in query.into_iter().flat_map(|q| q.split('&')) {
        if pair.is_empty() {
            continue;
        }
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        if !known.contains(&name) {
            let takes = match known {
                [] => format!("{} takes none", route.usage),
                _ => usage(route),
            };
            return Err(format!("unknown query parameter {}: {takes}", quoted(name)));
        }
        if pairs.iter().any(|(n, _)| *n == name) {
            let times = query
                .into_iter()
                .flat_map(|q| q.split('&'))
                .filter(|p| p.split_once('=').map_or(*p, |(n, _)| n) == name)
                .count();
            return Err(format!(
                "query parameter {name} given {times} times: give it once; {}",
                usage(route)
            ));
        }
        pairs.push((name, value));
    }
    Ok(pairs)
}

/// The `count` parameter of `/ids` ([`DIGITS_ONLY`], 1..=[`MAX_COUNT`]), from its query pairs.
pub fn count(route: &Route, query: &[(&str, &str)]) -> Result<usize, String> {
    let usage = usage(route);
    let value = query
        .iter()
        .find_map(|&(name, value)| (name == "count").then_some(value))
        .ok_or_else(|| format!("missing query parameter count: {usage}"))?;
    if !is_plain_decimal(value) {
        let why = if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
            "has a leading zero"
        } else {
            "is not a number"
        };
        return Err(format!(
            "count {} {why}: expected {DIGITS_ONLY}; {usage}",
            quoted(value)
        ));
    }
    match value.parse::<usize>() {
        Ok(n) if (1..=MAX_COUNT).contains(&n) => Ok(n),
        _ => Err(format!("count {} out of range: {usage}", echo(value))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::routes::ROUTES;

    /// The route of `endpoint`.
    fn of(endpoint: Endpoint) -> &'static Route {
        ROUTES
            .iter()
            .find(|r| r.endpoint == endpoint)
            .expect("route")
    }

    /// `count` as `/ids` reads it from a query string.
    fn count_of(q: Option<&str>) -> Result<usize, String> {
        let ids = of(Endpoint::Ids);
        count(ids, &query(ids, q)?)
    }

    #[test]
    fn counts() {
        assert_eq!(count_of(Some("count=5")), Ok(5));
        assert_eq!(count_of(Some("count=100000")), Ok(100_000));
        assert_eq!(count_of(Some("&count=7&")), Ok(7));
        for (query, error) in [
            (
                None,
                "missing query parameter count: use /ids?count=N with N in 1..=100000",
            ),
            (Some("count=0"), "count 0 out of range"),
            (Some("count=100001"), "out of range"),
            (Some("count=99999999999999999999999"), "out of range"),
            (
                Some("count=ten"),
                r#"count "ten" is not a number: expected digits only"#,
            ),
            (Some("count="), r#"count "" is not a number"#),
            (Some("count"), r#"count "" is not a number"#),
            (Some("count=+5"), r#"count "+5" is not a number"#),
            (Some("count=-5"), r#"count "-5" is not a number"#),
            (Some("count=%35"), r#"count "%35" is not a number"#),
            (Some("count=010"), r#"count "010" has a leading zero"#),
            (
                Some("count=10&count=20"),
                "query parameter count given 2 times: give it once",
            ),
            (Some("count=1&count=2&count"), "count given 3 times"),
            (
                Some("x=1&count=5"),
                r#"unknown query parameter "x": use /ids?count=N"#,
            ),
        ] {
            let message = count_of(query).unwrap_err();
            assert!(message.contains(error), "{query:?}: {message}");
        }
        let long = format!("count={}", "1".repeat(10_000));
        let message = count_of(Some(&long)).unwrap_err();
        assert!(message.contains("…(10000 bytes) out of range"), "{message}");
        assert!(message.len() < 150, "{message}");
    }

    #[test]
    fn queries_of_other_routes() {
        let id = of(Endpoint::Id);
        assert_eq!(query(id, None), Ok(vec![]));
        assert_eq!(query(id, Some("")), Ok(vec![]));
        assert_eq!(
            query(id, Some("count=5")),
            Err(
                r#"unknown query parameter "count": use /id [?format=decimal|base32|base62]"#
                    .into()
            )
        );
        assert_eq!(
            query(id, Some("format=base32")),
            Ok(vec![("format", "base32")])
        );
        let ids = of(Endpoint::Ids);
        let pairs = query(ids, Some("count=2&format=base62")).unwrap();
        assert_eq!(format(ids, &pairs), Ok(Some(IdFormat::Base62)));
        assert_eq!(format(ids, &[("count", "2")]), Ok(None));
        let e = format(ids, &[("format", "Base32")]).unwrap_err();
        assert!(
            e.starts_with(r#"format "Base32" is not an ID format: use /ids?count=N"#),
            "{e}"
        );
        let e = format(id, &[("format", "%00hex")]).unwrap_err();
        assert!(
            e.contains(r#""%2500hex""#) || e.contains(r#""%00hex""#),
            "{e}"
        );
        let parse = of(Endpoint::Parse);
        assert!(
            query(parse, Some("a%00=1"))
                .unwrap_err()
                .contains(r#""a%00""#)
        );
        let parse_of = of(Endpoint::ParseOf);
        assert!(query(parse_of, Some("x=1")).is_err());
        assert!(query(of(Endpoint::IdsOf), Some("count=1&count=2")).is_err());
        // Probes, scrapers and Leaf's routes (read as Spring does) may add what they like.
        for e in [
            Endpoint::Page,
            Endpoint::Status,
            Endpoint::Metrics,
            Endpoint::Healthz,
            Endpoint::LeafGet,
            Endpoint::LeafDecode,
        ] {
            assert_eq!(query(of(e), Some("x=1&x=2")), Ok(vec![]));
        }
    }
}
