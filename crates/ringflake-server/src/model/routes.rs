//! The route table of `ringflake serve`: [`ROUTES`] is the one list of what the service
//! answers. Requests are matched against it, and the 404 answer and `serve`'s help line list it.
//! Each listener serves the routes of its [`Exposure`]; a token file guards the ID, parse and
//! Leaf routes.

use hyper::Method;

/// Every route, in the order a person is told about them.
pub const ROUTES: [Route; 14] = [
    Route {
        usage: "/",
        endpoint: Endpoint::Page,
    },
    Route {
        usage: "/id",
        endpoint: Endpoint::Id,
    },
    Route {
        usage: "/id/{name}",
        endpoint: Endpoint::IdOf,
    },
    Route {
        usage: "/ids?count=N",
        endpoint: Endpoint::Ids,
    },
    Route {
        usage: "/ids/{name}?count=N",
        endpoint: Endpoint::IdsOf,
    },
    Route {
        usage: "/parse/{id}",
        endpoint: Endpoint::Parse,
    },
    Route {
        usage: "/parse/{name}/{id}",
        endpoint: Endpoint::ParseOf,
    },
    Route {
        usage: "/status",
        endpoint: Endpoint::Status,
    },
    Route {
        usage: "/metrics",
        endpoint: Endpoint::Metrics,
    },
    Route {
        usage: "/healthz",
        endpoint: Endpoint::Healthz,
    },
    Route {
        usage: "/livez",
        endpoint: Endpoint::Livez,
    },
    Route {
        usage: "/api/snowflake/get/{key}",
        endpoint: Endpoint::LeafGet,
    },
    Route {
        usage: "/decodeSnowflakeId?snowflakeId=ID",
        endpoint: Endpoint::LeafDecode,
    },
    Route {
        usage: "/api/segment/get/{key}",
        endpoint: Endpoint::SegmentGet,
    },
];

/// The methods every route answers (the service only reads); any other gets a 405.
pub const METHODS: [Method; 2] = [Method::GET, Method::HEAD];

/// A path the service answers, and what answers it.
pub struct Route {
    /// The route as requests write it and people read it: a path (`/id`), a path with its query
    /// (`/ids?count=N`), or a path ending in parameters (`/parse/{id}`, `/parse/{name}/{id}`:
    /// the rest of the path, with as many `/` as the parameters have between them).
    pub usage: &'static str,
    /// What answers it.
    pub endpoint: Endpoint,
}

/// What a route answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// The status page (HTML), see `handlers::status`.
    Page,
    /// One ID, `text/plain`, decimal or in the form `format` names.
    Id,
    /// [`Endpoint::Id`] from the generator named in the path.
    IdOf,
    /// A JSON array of `count` IDs as strings (decimal or in the form `format` names),
    /// `1 <= count <= MAX_COUNT`, and no more than the generator's `max_batch`.
    Ids,
    /// [`Endpoint::Ids`] from the generator named in the path.
    IdsOf,
    /// UidGenerator's `parseUID` JSON of the ID in the path.
    Parse,
    /// [`Endpoint::Parse`] with the layout of the generator named in the path.
    ParseOf,
    /// Every generator's state as JSON, what the status page shows.
    Status,
    /// Leaf's `/api/snowflake/get/{key}`: [`Endpoint::Id`] from generator `key`, else `default`.
    LeafGet,
    /// Leaf's `/decodeSnowflakeId?snowflakeId=ID`, see `handlers::leaf`.
    LeafDecode,
    /// Leaf's segment mode, `/api/segment/get/{key}[?count=N]`: the next number of business
    /// tag `key` of `leaf_alloc`, see `handlers::segments`.
    SegmentGet,
    /// The Prometheus series of the generator.
    Metrics,
    /// 200 `{"status":"ok",…}`, or 503 with the reason the generator cannot serve: readiness.
    Healthz,
    /// 200 `ok` whenever the process answers, whatever the generators' health: liveness (a
    /// restart does not help a generator that cannot serve yet, see `/healthz`).
    Livez,
}

/// Which routes a listener serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exposure {
    /// Every route: the one listener of a service without `--metrics-listen`.
    All,
    /// The ID, parse and Leaf routes and `/healthz`: the main listener beside a `--metrics-listen`
    /// one.
    Ids,
    /// The status page, `/status`, `/metrics` and `/healthz`: the `--metrics-listen` listener.
    Internal,
}

impl Endpoint {
    /// Whether a listener of `exposure` serves this endpoint: the ID routes on the main one, the
    /// operators' (the status page, `/status`, `/metrics`) on the internal one, `/healthz` on
    /// both.
    pub fn served_on(self, exposure: Exposure) -> bool {
        match self {
            Endpoint::Healthz | Endpoint::Livez => true,
            _ if self.guarded() => exposure != Exposure::Internal,
            _ => exposure != Exposure::Ids,
        }
    }

    /// Whether a token file guards this endpoint: the routes that take or read IDs (ID, parse
    /// and Leaf, named or not).
    pub fn guarded(self) -> bool {
        matches!(
            self,
            Endpoint::Id
                | Endpoint::IdOf
                | Endpoint::Ids
                | Endpoint::IdsOf
                | Endpoint::Parse
                | Endpoint::ParseOf
                | Endpoint::LeafGet
                | Endpoint::LeafDecode
                | Endpoint::SegmentGet
        )
    }

    /// The query parameters this endpoint takes; `None`: it ignores its query string (the
    /// probes and scrapers' routes, whose clients may add their own).
    pub fn parameters(self) -> Option<&'static [&'static str]> {
        match self {
            Endpoint::Ids | Endpoint::IdsOf => Some(&["count", "format"]),
            Endpoint::Id | Endpoint::IdOf | Endpoint::Parse | Endpoint::ParseOf => {
                Some(&["format"])
            }
            Endpoint::SegmentGet => Some(&["count"]),
            // Leaf's routes read their parameters as Spring does, ignoring any other.
            Endpoint::LeafGet
            | Endpoint::LeafDecode
            | Endpoint::Page
            | Endpoint::Status
            | Endpoint::Metrics
            | Endpoint::Healthz
            | Endpoint::Livez => None,
        }
    }
}

/// What a request's path is matched against, read once from a route's usage: a whole path
/// (`/id`), or a prefix and the number of `/` its parameters have between them (`/parse/` and
/// 1 for `/parse/{name}/{id}`).
struct Pattern {
    /// The path, or the prefix before the parameters.
    path: &'static str,
    /// The `/` between the parameters, if the route has any.
    slashes: Option<usize>,
}

impl Pattern {
    fn of(route: &Route) -> Pattern {
        let usage = route.usage.split_once('?').map_or(route.usage, |(p, _)| p);
        match usage.split_once('{') {
            Some((prefix, params)) => Pattern {
                path: prefix,
                slashes: Some(params.matches('/').count()),
            },
            None => Pattern {
                path: usage,
                slashes: None,
            },
        }
    }

    /// The path parameter if `path` is this route's (`""` for a route without one).
    fn matches<'p>(&self, path: &'p str) -> Option<&'p str> {
        // The byte after the first `/` tells most routes apart without comparing strings: a
        // path of this route has this route's (`/` alone has none, as no path of its but `/`).
        if path.as_bytes().get(1) != self.path.as_bytes().get(1) {
            return None;
        }
        match self.slashes {
            Some(slashes) => {
                let param = path.strip_prefix(self.path)?;
                (param.bytes().filter(|&b| b == b'/').count() == slashes).then_some(param)
            }
            None => (path == self.path).then_some(""),
        }
    }
}

/// [`ROUTES`]' patterns, read once: a request matches its path against them without parsing a
/// route's usage again.
static PATTERNS: std::sync::LazyLock<Vec<Pattern>> =
    std::sync::LazyLock::new(|| ROUTES.iter().map(Pattern::of).collect());

/// The route `path` asks for on a listener of `exposure`: its index in [`ROUTES`], the route,
/// and its path parameter.
pub fn route(path: &str, exposure: Exposure) -> Option<(usize, &'static Route, &str)> {
    ROUTES
        .iter()
        .zip(PATTERNS.iter())
        .enumerate()
        .filter(|(_, (r, _))| r.endpoint.served_on(exposure))
        .find_map(|(i, (r, p))| Some((i, r, p.matches(path)?)))
}

/// The routes for a person to read, `last` before the final one:
/// `GET /id, /ids?count=N, /parse/{id}, /metrics or /healthz`.
pub fn listing(last: &str) -> String {
    listing_on(Exposure::All, last)
}

/// The routes a listener of `exposure` serves, for a person to read.
pub fn listing_on(exposure: Exposure, last: &str) -> String {
    let served = usages(|e| e.served_on(exposure));
    let (final_one, others) = served.split_last().expect("routes");
    format!("{} {}{last}{final_one}", METHODS[0], others.join(", "))
}

/// The routes whose endpoint `keep` keeps, in the table's order.
pub fn usages(keep: impl Fn(Endpoint) -> bool) -> Vec<&'static str> {
    ROUTES
        .iter()
        .filter(|r| keep(r.endpoint))
        .map(|r| r.usage)
        .collect()
}

/// The largest `count` `/ids` accepts: 100,000 IDs (about 2.2 MB of JSON).
pub const MAX_COUNT: usize = 100_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_routes_requests() {
        let endpoint = |path| route(path, Exposure::All).map(|(_, r, param)| (r.endpoint, param));
        assert_eq!(endpoint("/id"), Some((Endpoint::Id, "")));
        assert_eq!(endpoint("/ids"), Some((Endpoint::Ids, "")));
        assert_eq!(endpoint("/parse/17"), Some((Endpoint::Parse, "17")));
        assert_eq!(endpoint("/parse/"), Some((Endpoint::Parse, "")));
        assert_eq!(endpoint("/metrics"), Some((Endpoint::Metrics, "")));
        assert_eq!(endpoint("/healthz"), Some((Endpoint::Healthz, "")));
        assert_eq!(endpoint("/"), Some((Endpoint::Page, "")));
        assert_eq!(endpoint("/status"), Some((Endpoint::Status, "")));
        assert_eq!(endpoint("/id/orders"), Some((Endpoint::IdOf, "orders")));
        assert_eq!(endpoint("/ids/orders"), Some((Endpoint::IdsOf, "orders")));
        assert_eq!(
            endpoint("/parse/orders/17"),
            Some((Endpoint::ParseOf, "orders/17"))
        );
        assert_eq!(
            endpoint("/api/snowflake/get/orders"),
            Some((Endpoint::LeafGet, "orders"))
        );
        assert_eq!(
            endpoint("/decodeSnowflakeId"),
            Some((Endpoint::LeafDecode, ""))
        );
        assert_eq!(
            endpoint("/api/segment/get/leaf-segment-test"),
            Some((Endpoint::SegmentGet, "leaf-segment-test"))
        );
        assert_eq!(endpoint("/api/segment/get/a/b"), None);
        for path in [
            "/nope",
            "/parse",
            "/parse/a/b/c",
            "/id/a/b",
            "/ids?count=N",
            "/idz",
            "/status/",
        ] {
            assert_eq!(endpoint(path), None, "{path}");
        }
        assert_eq!(
            listing(" or "),
            "GET /, /id, /id/{name}, /ids?count=N, /ids/{name}?count=N, /parse/{id}, \
             /parse/{name}/{id}, /status, /metrics, /healthz, /livez, /api/snowflake/get/{key}, \
             /decodeSnowflakeId?snowflakeId=ID or /api/segment/get/{key}"
        );
    }

    #[test]
    fn listeners_serve_their_routes() {
        let on = |path, exposure| route(path, exposure).map(|(_, r, _)| r.endpoint);
        assert_eq!(on("/metrics", Exposure::Ids), None);
        assert_eq!(on("/id", Exposure::Internal), None);
        assert_eq!(on("/parse/1", Exposure::Internal), None);
        assert_eq!(on("/metrics", Exposure::Internal), Some(Endpoint::Metrics));
        assert_eq!(on("/healthz", Exposure::Internal), Some(Endpoint::Healthz));
        assert_eq!(on("/healthz", Exposure::Ids), Some(Endpoint::Healthz));
        assert_eq!(on("/ids", Exposure::Ids), Some(Endpoint::Ids));
        assert_eq!(
            listing_on(Exposure::Internal, " or "),
            "GET /, /status, /metrics, /healthz or /livez"
        );
        assert_eq!(
            listing_on(Exposure::Ids, " or "),
            "GET /id, /id/{name}, /ids?count=N, /ids/{name}?count=N, /parse/{id}, \
             /parse/{name}/{id}, /healthz, /livez, /api/snowflake/get/{key}, \
             /decodeSnowflakeId?snowflakeId=ID or /api/segment/get/{key}"
        );
        assert_eq!(on("/", Exposure::Ids), None);
        assert_eq!(on("/status", Exposure::Internal), Some(Endpoint::Status));
        assert_eq!(on("/id/orders", Exposure::Internal), None);
        assert_eq!(
            on("/api/snowflake/get/x", Exposure::Ids),
            Some(Endpoint::LeafGet)
        );
    }
}
