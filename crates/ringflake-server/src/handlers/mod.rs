//! The answers of `ringflake serve`: a request in, a response out, by the route the request
//! matches in the [route table](super::model::routes); the status page and Leaf's routes in
//! their own modules; gRPC calls in [`grpc`].
//!
//! Client mistakes get a 4xx with
//! `{"error":"…"}` saying what was wrong; a generator that cannot issue gets a 503 with the same
//! shape naming why, as its [`Health`](ringflake::Health) says (time bits exhausted, lease lost,
//! filler down, worker id reserved ahead of the clock, state file failing), with `Retry-After`
//! when the end is known; a take that waits longer than `--max-wait` ([`App::max_wait`]) at the
//! lead cap under demand above the rate gets a 503 with `Retry-After` too. Takes that wait are
//! served first come, first served (the library's queue, see
//! [`ringflake::CachedUidGenerator::next_ids_async`]).
//!
//! With a token file, the ID and parse routes answer 401 without a valid bearer token. A bad value is shown in an error bounded and
//! escaped ([`crate::text::echo`]).

pub mod fast;
pub mod grpc;
pub mod large;
pub mod leaf;
pub mod query;
pub mod segments;
pub mod status;

use super::model::app::App;
use super::model::auth::Denied;
use super::model::routes::{Endpoint, METHODS, Route, listing_on, route};
use crate::text::{echo, json_error, json_ids, json_text_ids, parse_uid, quoted, to_json};
use bytes::Bytes;
use http_body_util::{Either, Full};
use hyper::body::Incoming;
use hyper::header::{ALLOW, CONTENT_TYPE, HeaderValue, RETRY_AFTER, WWW_AUTHENTICATE};
use hyper::{Method, Request, Response, StatusCode};
use large::{IdsJson, Large};
use query::{count, format, query, usage};
use ringflake::{Error, IdFormat};
use std::future::Future;

/// The 404 for a generator `name` that does not exist, naming those that do; the name shown
/// bounded and escaped ([`quoted`]).
fn no_generator(app: &App, name: &str) -> Reply {
    let message = format!(
        "no generator {}: the generators are {}",
        quoted(name),
        app.generators.names()
    );
    error(StatusCode::NOT_FOUND, &message)
}

/// An answer's body: in one piece, or a large `/ids` answer written as its client reads
/// (`large`).
pub type Answer = Either<Full<Bytes>, Large<IdsJson>>;

/// A response.
pub type Reply = Response<Answer>;

const TEXT: HeaderValue = HeaderValue::from_static("text/plain; charset=utf-8");
const JSON: HeaderValue = HeaderValue::from_static("application/json");
const HTML: HeaderValue = HeaderValue::from_static("text/html; charset=utf-8");
const PROMETHEUS: HeaderValue =
    HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8");

fn respond(status: StatusCode, content_type: HeaderValue, body: impl Into<Bytes>) -> Reply {
    let mut r = Response::new(Either::Left(Full::new(body.into())));
    *r.status_mut() = status;
    r.headers_mut().insert(CONTENT_TYPE, content_type);
    r
}

fn error(status: StatusCode, message: &str) -> Reply {
    respond(status, JSON, json_error(message))
}

/// A take of `app`'s generator failed with `e`, or waited [`App::max_wait`] in vain (`None`): 503,
/// never the client's fault. A take's own error says why (time bits exhausted, lease expired,
/// state file), except at the lead cap: then, if the generator's health says it cannot serve
/// (its worker id reserved ahead of the clock), the answer names that reason and asks to retry
/// when it ends; else the generator is at its lead cap under demand above its rate.
fn unavailable(app: &App, e: Option<&Error>) -> Reply {
    if let Some(e) = e
        && !matches!(e, Error::LeadLimitReached { .. })
    {
        return error(StatusCode::SERVICE_UNAVAILABLE, &e.to_string());
    }
    let health = app.generator.stats().health(&app.layout);
    if health.is_available() {
        return match e {
            Some(e) => error(StatusCode::SERVICE_UNAVAILABLE, &e.to_string()),
            None => still_waiting(app),
        };
    }
    let mut r = error(StatusCode::SERVICE_UNAVAILABLE, &health.to_string());
    if let Some(until) = health.until() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        if let Ok(v) = HeaderValue::from_str(&until.saturating_sub(now).max(1).to_string()) {
            r.headers_mut().insert(RETRY_AFTER, v);
        }
    }
    r
}

/// What a client without a token is told to send (RFC 6750).
const BEARER: HeaderValue = HeaderValue::from_static("Bearer realm=\"ringflake\"");
/// ... and a client whose token is not one of the file's.
const BEARER_INVALID: HeaderValue =
    HeaderValue::from_static("Bearer realm=\"ringflake\", error=\"invalid_token\"");

/// Whether the service's token file, if it has one, lets a request with `headers` have
/// `endpoint`: the ID routes need one of its bearer tokens; every other route is open.
fn admitted(app: &App, endpoint: Endpoint, headers: &hyper::HeaderMap) -> Result<(), Denied> {
    match &app.auth {
        Some(auth) if endpoint.guarded() => auth.check(headers),
        _ => Ok(()),
    }
}

/// The 401 for a request the token file refuses; the token it sent is never shown.
fn unauthorized(denied: Denied) -> Reply {
    let (message, challenge) = match denied {
        Denied::Missing => (
            "missing bearer token: send Authorization: Bearer <token> with a token of the \
             service's token file",
            BEARER,
        ),
        Denied::Invalid => (
            "invalid bearer token: not one of the service's token file",
            BEARER_INVALID,
        ),
    };
    let mut r = error(StatusCode::UNAUTHORIZED, message);
    r.headers_mut().insert(WWW_AUTHENTICATE, challenge);
    r
}

/// Answers one request, and says which route it asked for (its index in the route table, for
/// the request series; `None`: no route).
pub async fn handle(app: &App, req: &Request<Incoming>) -> (Reply, Option<usize>) {
    let found = route(req.uri().path(), app.exposure);
    let index = found.map(|(i, _, _)| i);
    let reply = match decide(app, req, found) {
        Ok(reply) => reply,
        Err(take) => take.run().await,
    };
    (reply, index)
}

/// The answer to a request that needs no wait, with its route as `handle` says it: every route
/// but a take that finds no ID ready and a batch. `None`: `handle` it. The service answers
/// most requests this way, with no future to keep between polls. The request's body is not read
/// (the routes take only GETs and HEADs), so any body type does.
pub fn answer_now<B>(app: &App, req: &Request<B>) -> Option<(Reply, Option<usize>)> {
    let found = route(req.uri().path(), app.exposure);
    let index = found.map(|(i, _, _)| i);
    match decide(app, req, found) {
        Ok(reply) => Some((reply, index)),
        Err(take) => {
            take.set_aside();
            None
        }
    }
}

/// A take an answer waits for, its request checked: one ID, or a batch of `n`, from `app`.
enum Take<'a> {
    /// One ID, ended with `end`, in `format`; a public ID if `public` and the service has a key.
    One {
        app: &'a App,
        end: &'static str,
        format: IdFormat,
        public: bool,
    },
    /// A batch of `n` IDs in `format`.
    Batch {
        app: &'a App,
        n: usize,
        format: IdFormat,
    },
    /// One number of the segment mode's `tag`, claimed from this thread's cached handle, to
    /// wait for.
    SegmentWait {
        app: &'a App,
        route: &'static Route,
        tag: &'a str,
        pending: ringflake::PendingNumber,
    },
    /// Numbers of the segment mode's `tag` (`count`: `?count=N`; with `take` false, HEAD's
    /// checks alone).
    Segment {
        app: &'a App,
        route: &'static Route,
        tag: &'a str,
        count: Option<usize>,
        take: bool,
    },
}

impl Take<'_> {
    /// Gives up this take for [`handle`] to make again: a segment number it claimed is set
    /// aside for the next request of its tag on this thread ([`segments::set_aside`]); the
    /// other takes have taken nothing yet.
    fn set_aside(self) {
        if let Take::SegmentWait {
            app, tag, pending, ..
        } = self
        {
            segments::set_aside(app, tag, pending);
        }
    }

    /// Takes, waiting for the IDs at most [`App::max_wait`], and answers.
    async fn run(self) -> Reply {
        match self {
            Take::One {
                app,
                end,
                format,
                public,
            } => match bounded(app, app.generator.next_id_async()).await {
                Some(Ok(id)) => id_reply(app, id, end, format, public),
                Some(Err(e)) => unavailable(app, Some(&e)),
                None => unavailable(app, None),
            },
            Take::Batch { app, n, format } => batch(app, n, format).await,
            Take::SegmentWait {
                app,
                route,
                tag,
                pending,
            } => segment_reply(segments::wait(app, route, tag, pending).await),
            Take::Segment {
                app,
                route,
                tag,
                count,
                take,
            } => segment(app, route, tag, count, take).await,
        }
    }
}

/// The answer to `req`, whose route is `found` ([`route`]), if it needs no wait; else the take
/// it waits for.
fn decide<'a, B>(
    app: &'a App,
    req: &'a Request<B>,
    found: Option<(usize, &'static Route, &'a str)>,
) -> Result<Reply, Take<'a>> {
    let path = req.uri().path();
    if !METHODS.contains(req.method()) {
        let allow: Vec<&str> = METHODS.iter().map(Method::as_str).collect();
        let mut r = error(
            StatusCode::METHOD_NOT_ALLOWED,
            &format!(
                "method {} not allowed on {}: use {}",
                echo(req.method().as_str()),
                echo(path),
                allow.join(" or ")
            ),
        );
        if let Ok(allow) = HeaderValue::from_str(&allow.join(", ")) {
            r.headers_mut().insert(ALLOW, allow);
        }
        return Ok(r);
    }
    let Some((_, route, param)) = found else {
        return Ok(error(
            StatusCode::NOT_FOUND,
            &format!(
                "no route {}: try {}",
                echo(path),
                listing_on(app.exposure, " or ")
            ),
        ));
    };
    if let Err(denied) = admitted(app, route.endpoint, req.headers()) {
        return Ok(unauthorized(denied));
    }
    let query = match query(route, req.uri().query()) {
        Ok(query) => query,
        Err(message) => return Ok(error(StatusCode::BAD_REQUEST, &message)),
    };
    let format = match format(route, &query) {
        Ok(format) => format,
        Err(message) => return Ok(error(StatusCode::BAD_REQUEST, &message)),
    };
    // HEAD answers what GET would, headers only, and takes no ID.
    let take = req.method() != Method::HEAD;
    let reply = match route.endpoint {
        Endpoint::Id if take => return id(app, NEWLINE, format.unwrap_or_default(), true),
        Endpoint::Id => respond(StatusCode::OK, TEXT, Bytes::new()),
        Endpoint::Ids => return ids(app, route, &query, format.unwrap_or_default(), take),
        Endpoint::Parse => parse(app, route, param, format),
        Endpoint::IdOf | Endpoint::IdsOf | Endpoint::ParseOf => {
            let (name, rest) = param.split_once('/').unwrap_or((param, ""));
            let Some(target) = app.named(name) else {
                return Ok(no_generator(app, name));
            };
            match route.endpoint {
                Endpoint::IdOf if take => {
                    return id(target, NEWLINE, format.unwrap_or_default(), true);
                }
                Endpoint::IdOf => respond(StatusCode::OK, TEXT, Bytes::new()),
                Endpoint::IdsOf => {
                    return ids(target, route, &query, format.unwrap_or_default(), take);
                }
                _ => parse(target, route, rest, format),
            }
        }
        // Leaf's route needs a key, as Spring's `{key}` does (a 404 without one).
        Endpoint::LeafGet if param.is_empty() => error(
            StatusCode::NOT_FOUND,
            &format!("missing key: use {} with any key", route.usage),
        ),
        // A keyed service hands out public IDs only: Leaf's plain ones could equal one of them.
        Endpoint::LeafGet if app.id_key.is_some() => error(
            StatusCode::NOT_FOUND,
            &format!(
                "{} is not served with --id-key-file: the service hands out public IDs only \
                 (/id, /ids), and the plain IDs of Leaf's route could equal one of them; take \
                 IDs from /id",
                route.usage
            ),
        ),
        Endpoint::LeafGet => {
            // Leaf's snowflake service ignores the key; here it names a generator, if any.
            let target = app.named(param).unwrap_or(app);
            if take {
                // Leaf's clients read the body as a number (Java's Long.parseLong): no newline,
                // decimal, and the plain ID, as Leaf's decode route reads it.
                return id(target, "", IdFormat::Decimal, false);
            }
            respond(StatusCode::OK, TEXT, Bytes::new())
        }
        Endpoint::SegmentGet => {
            let count = match query.iter().any(|(name, _)| *name == "count") {
                true => match count(route, &query) {
                    Ok(n) => Some(n),
                    Err(message) => return Ok(error(StatusCode::BAD_REQUEST, &message)),
                },
                false => None,
            };
            // One number of a tag this thread has served, the common case: answered now, with
            // no future, the tag matched as the path's `&str`.
            if take && count.is_none() && !param.is_empty() {
                match segments::now(app, param) {
                    Some(segments::Now::Number(n)) => return Ok(number_reply(n)),
                    Some(segments::Now::Answer(answer)) => return Ok(segment_reply(answer)),
                    Some(segments::Now::Wait(pending)) => {
                        return Err(Take::SegmentWait {
                            app,
                            route,
                            tag: param,
                            pending,
                        });
                    }
                    None => {}
                }
            }
            return Err(Take::Segment {
                app,
                route,
                tag: param,
                count,
                take,
            });
        }
        Endpoint::LeafDecode => {
            let (status, body) = leaf::decode(req.uri().query(), &app.layout, &app.tz);
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
            respond(status, JSON, body)
        }
        Endpoint::Page => respond(
            StatusCode::OK,
            HTML,
            status::page(&app.generators, &segments::view(app), &app.limits),
        ),
        Endpoint::Status => respond(
            StatusCode::OK,
            JSON,
            status::json(&app.generators, segments::view(app), &app.limits),
        ),
        Endpoint::Metrics => metrics(app),
        Endpoint::Healthz => healthz(app),
        Endpoint::Livez => respond(StatusCode::OK, TEXT, "ok\n"),
    };
    Ok(reply)
}

/// Runs a take for at most [`App::max_wait`]; `None` if it waited longer (it is dropped, which
/// the async takes allow: a take dropped while it waits has taken nothing), or if it cannot be
/// served at once while the generator's health says it cannot serve (a worker id reserved ahead
/// of the clock for an hour is not waited for: [`unavailable`] then names the reason at once).
async fn bounded<T>(app: &App, take: impl Future<Output = T>) -> Option<T> {
    tokio::pin!(take);
    // The take is polled once first: one that completes at once never looks at the health.
    if let Ok(done) = tokio::time::timeout(std::time::Duration::ZERO, &mut take).await {
        return Some(done);
    }
    if !app.generator.stats().health(&app.layout).is_available() {
        return None;
    }
    tokio::time::timeout(app.max_wait, take).await.ok()
}

/// The answer to a take that waited [`App::max_wait`] in vain: 503, with a `Retry-After` of the
/// seconds the queue left behind needs at the cap's rate (`2^seq_bits` IDs a second), at least 1.
fn still_waiting(app: &App) -> Reply {
    let (message, retry) = app.still_waiting("request");
    let mut r = error(StatusCode::SERVICE_UNAVAILABLE, &message);
    if let Ok(value) = HeaderValue::from_str(&retry.to_string()) {
        r.headers_mut().insert(RETRY_AFTER, value);
    }
    r
}

/// What ends `/id`'s answer: a newline, so that `curl /id` leaves the shell's prompt on a line
/// of its own. Leaf's route answers the bare digits, as Leaf does.
const NEWLINE: &str = "\n";

/// The ID the HTTP routes hand out for `id`: its public ID with `--id-key-file`, else itself.
/// The key refuses only IDs above 2^63 - 1, which no generator makes; were it to, the answer is
/// a 500 ([`refused`]).
fn public(app: &App, id: u64) -> Result<u64, Error> {
    match &app.id_key {
        Some(key) => key.encrypt(id),
        None => Ok(id),
    }
}

/// The 500 for an ID the key refused.
fn refused(e: &Error) -> Reply {
    error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string())
}

/// One ID in `format`, followed by `end`; its public ID if `public` and the service has a key:
/// answered now if one is ready, else the take to wait for.
fn id<'a>(
    app: &'a App,
    end: &'static str,
    format: IdFormat,
    public: bool,
) -> Result<Reply, Take<'a>> {
    // An ID ready in the ring while no take waits, the common case, is taken and answered at
    // once, without a timer or a future; a take that has to wait (queued behind the others) is
    // bounded by max_wait.
    match app.generator.try_next_id() {
        Some(id) => Ok(id_reply(app, id, end, format, public)),
        None => Err(Take::One {
            app,
            end,
            format,
            public,
        }),
    }
}

/// The answer with ID `id` of `app`'s generator in `format`, followed by `end`; its public ID if
/// `public` and the service has a key.
fn id_reply(app: &App, id: u64, end: &'static str, format: IdFormat, public: bool) -> Reply {
    let id = match public.then(|| self::public(app, id)) {
        Some(Ok(public)) => public,
        Some(Err(e)) => return refused(&e),
        None => id,
    };
    // The text and `end` in one buffer, copied once into the body: no formatter, and a body of
    // exactly its length.
    let text = format.encode(id);
    let text = text.as_bytes();
    let mut body = [0u8; 32];
    let len = text.len() + end.len();
    body[..text.len()].copy_from_slice(text);
    body[text.len()..len].copy_from_slice(end.as_bytes());
    respond(StatusCode::OK, TEXT, Bytes::copy_from_slice(&body[..len]))
}

/// How the lead cap's largest batch is made: `(max-lead 10 s + 1) x 2^22 IDs a second`, or for
/// ticks shorter than a second `(max-lead 10 s x 1000 ticks + 1) x 2^12 IDs a tick`.
pub(crate) fn cap_terms(layout: &ringflake::Layout, lead: u64) -> String {
    match layout.unit() {
        ringflake::TimeUnit::Seconds => {
            format!(
                "(max-lead {lead} s + 1) x 2^{} IDs a second",
                layout.seq_bits()
            )
        }
        unit => format!(
            "(max-lead {lead} s x {} ticks of {unit} + 1) x 2^{} IDs a tick",
            unit.per_second(),
            layout.seq_bits()
        ),
    }
}

/// Why `count` IDs cannot be taken at once: more than the lead cap holds.
fn too_many(app: &App, count: u64, max: u64) -> Reply {
    let lead = app.generator.max_lead().map_or(0, |d| d.as_secs());
    error(
        StatusCode::BAD_REQUEST,
        &format!(
            "count {count} is more than the generator can take at once: at most {max} IDs \
             ({}); ask for fewer",
            cap_terms(&app.layout, lead)
        ),
    )
}

/// `/ids?count=N`, checked: the batch to take ([`batch`]); with `take` false (HEAD), the checks
/// alone: the status GET would answer, no ID taken.
fn ids<'a>(
    app: &'a App,
    route: &Route,
    query: &[(&str, &str)],
    format: IdFormat,
    take: bool,
) -> Result<Reply, Take<'a>> {
    let n = match count(route, query) {
        Ok(n) => n,
        Err(message) => return Ok(error(StatusCode::BAD_REQUEST, &message)),
    };
    // Refused before anything is taken: the cap can never hold such a batch.
    if let Some(max) = app.generator.max_batch()
        && n as u64 > max
    {
        return Ok(too_many(app, n as u64, max));
    }
    if !take {
        return Ok(respond(StatusCode::OK, JSON, Bytes::new()));
    }
    Err(Take::Batch { app, n, format })
}

/// A batch of `n` IDs of `app`'s generator in `format`, taken within [`App::max_wait`]. The IDs
/// are taken in the handler itself: if the client goes away, hyper drops this future, and a
/// batch dropped while it waits for the filler takes nothing more. A large answer (more than
/// [`LARGE_IDS`](super::model::limits::LARGE_IDS) IDs) waits for its turn first, at most
/// [`App::max_wait`], and is written as the client reads ([`large`]).
async fn batch(app: &App, n: usize, format: IdFormat) -> Reply {
    let turn = match large::turn(app, n as u64).await {
        Ok(turn) => turn,
        Err(message) => return no_turn(&message),
    };
    let mut ids = vec![0u64; n];
    match bounded(app, app.generator.next_ids_async(&mut ids)).await {
        Some(Ok(())) => {
            if app.id_key.is_some() {
                for id in &mut ids {
                    *id = match public(app, *id) {
                        Ok(public) => public,
                        Err(e) => return refused(&e),
                    };
                }
            }
            let Some(turn) = turn else {
                let mut body = Vec::new();
                match format {
                    IdFormat::Decimal => json_ids(&ids, &mut body),
                    other => json_text_ids(&ids, other, &mut body),
                }
                return respond(StatusCode::OK, JSON, body);
            };
            let body = Large::new(IdsJson::new(ids, format), turn, &app.limits);
            let mut r = Response::new(Either::Right(body));
            r.headers_mut().insert(CONTENT_TYPE, JSON);
            r
        }
        Some(Err(Error::BatchTooLarge { count, max })) => too_many(app, count, max),
        Some(Err(e)) => unavailable(app, Some(&e)),
        None => unavailable(app, None),
    }
}

/// `/api/segment/get/{biz_tag}[?count=N]`. A large batch holds a turn of
/// `--max-large-answers` while it is written, as a large `/ids` does, and is written as its
/// client reads.
async fn segment(app: &App, route: &Route, tag: &str, count: Option<usize>, take: bool) -> Reply {
    if take && let Some(n) = count.filter(|&n| n > super::model::limits::LARGE_IDS) {
        let turn = match large::turn(app, n as u64).await {
            Ok(turn) => turn,
            Err(message) => return no_turn(&message),
        };
        if let Some(turn) = turn {
            return match segments::batch(app, route, tag, n).await {
                Ok(numbers) => {
                    let json = IdsJson::new(numbers, IdFormat::Decimal);
                    let mut r = Response::new(Either::Right(Large::new(json, turn, &app.limits)));
                    r.headers_mut().insert(CONTENT_TYPE, JSON);
                    r
                }
                Err(answer) => segment_reply(answer),
            };
        }
    }
    segment_reply(segments::get(app, route, tag, count, take).await)
}

/// Leaf's answer of one number: the bare digits, no newline, written into a buffer on the stack
/// and copied once into the body.
fn number_reply(n: i64) -> Reply {
    let mut digits = itoa::Buffer::new();
    let text = digits.format(n);
    respond(
        StatusCode::OK,
        TEXT,
        Bytes::copy_from_slice(text.as_bytes()),
    )
}

/// A segment mode's answer as the HTTP reply.
fn segment_reply(answer: segments::Answer) -> Reply {
    let kind = if answer.json { JSON } else { TEXT };
    let mut r = respond(answer.status, kind, answer.body);
    if let Some(seconds) = answer.retry_after {
        r.headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from(seconds));
    }
    r
}

/// A large answer that found no turn within [`App::max_wait`] (`message` says so): 503, retry
/// in a second.
fn no_turn(message: &str) -> Reply {
    let mut r = error(StatusCode::SERVICE_UNAVAILABLE, message);
    r.headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

/// `/parse/{id}`: the ID in `format`, or in the form its text shows; with `--id-key-file` a
/// public ID, read back through the key.
fn parse(app: &App, route: &Route, text: &str, format: Option<IdFormat>) -> Reply {
    if text.is_empty() {
        let message = format!("missing ID: {}", usage(route));
        return error(StatusCode::BAD_REQUEST, &message);
    }
    match parse_uid(text, format, app.id_key.as_deref(), &app.layout, &app.tz) {
        Ok(json) => respond(StatusCode::OK, JSON, json),
        Err(message) => error(StatusCode::BAD_REQUEST, &message),
    }
}

fn metrics(app: &App) -> Reply {
    match app.metrics.as_deref() {
        Some((handle, reporters)) => {
            for reporter in reporters {
                reporter.sample();
            }
            if let Some(s) = &app.segments
                && let Ok(g) = &s.generator
            {
                s.metrics.record(&g.stats());
            }
            let mut body = handle.render();
            crate::model::requests::render(&mut body);
            app.limits.render(&mut body);
            crate::model::process::render(&mut body);
            respond(StatusCode::OK, PROMETHEUS, body)
        }
        None => error(
            StatusCode::NOT_FOUND,
            "metrics are not enabled in this build",
        ),
    }
}

/// `/healthz`: the default generator's state; and with several generators, any other that cannot
/// serve makes the service unavailable too, its reason prefixed with its name. 503 while
/// unavailable (`reason` says why, `until` when it ends if known); 200 while serving, idle, held
/// at the lead cap or with its lease at risk (`state` says which, `detail` what it means, `until`
/// when it ends if known).
fn healthz(app: &App) -> Reply {
    let s = app.generator.stats();
    let health = s.health(&app.layout);
    let others = || {
        app.generators.iter().skip(1).find_map(|g| {
            let health = g.app.generator.stats().health(&g.app.layout);
            (!health.is_available()).then(|| (format!("generator {}: {health}", g.name), health))
        })
    };
    let own = (!health.is_available()).then(|| (health.to_string(), health));
    match own.or_else(others) {
        Some((reason, why)) => {
            /// `/healthz` while unavailable.
            #[derive(serde::Serialize)]
            struct Unavailable {
                status: &'static str,
                reason: String,
                state: &'static str,
                until: Option<i64>,
                worker_id: u64,
            }
            let body = to_json(&Unavailable {
                status: "unavailable",
                reason,
                state: "unavailable",
                until: why.until(),
                worker_id: s.worker_id,
            });
            respond(StatusCode::SERVICE_UNAVAILABLE, JSON, body)
        }
        None => {
            /// `/healthz` while available; `detail` and `until` unless simply serving.
            #[derive(serde::Serialize)]
            struct Available {
                status: &'static str,
                worker_id: u64,
                state: &'static str,
                #[serde(skip_serializing_if = "Option::is_none")]
                detail: Option<String>,
                #[serde(skip_serializing_if = "Option::is_none")]
                until: Option<Option<i64>>,
                available: u64,
                capacity: u64,
                lead_seconds: u64,
                lag_seconds: u64,
                remaining_seconds: u64,
                issued: u64,
            }
            let serving = health == ringflake::Health::Serving;
            let body = to_json(&Available {
                status: "ok",
                worker_id: s.worker_id,
                state: health.state(),
                detail: (!serving).then(|| health.to_string()),
                until: (!serving).then(|| health.until()),
                available: s.available,
                capacity: s.capacity,
                lead_seconds: s.lead_seconds,
                lag_seconds: s.lag_seconds,
                remaining_seconds: s.remaining_seconds,
                issued: s.issued,
            });
            respond(StatusCode::OK, JSON, body)
        }
    }
}
