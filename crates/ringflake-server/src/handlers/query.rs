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
