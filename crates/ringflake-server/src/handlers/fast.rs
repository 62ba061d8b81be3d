//! The ID routes' fast path: `GET /id` and `GET /api/segment/get/{tag}` without a query string,
//! told from the request's path bytes before the route table is walked, answered with the ID
//! (or the tag's number) ready now, and written into the request's own header map (cleared),
//! which hyper handed over from the previous answer on the connection: no header map is
//! allocated, and the route table, the query's checks and the formats are skipped, since the
//! request has none of them. Everything else, and any request of these routes that the fast
//! path cannot answer at once (a token refused, no ID ready, a number to wait for, a query), goes
//! the general way ([`super::answer_now`], [`super::handle`]), which answers exactly as before.
//!
//! What the general way checks is checked here too: the listener serves the route, the token
//! file's bearer token (only when the service has a token file: one branch otherwise), the ID
//! key's public ID, the tag's hidden volume.

use super::{NEWLINE, Reply, TEXT, id_reply, segment_reply, segments};
use crate::model::app::App;
use crate::model::routes::{Endpoint, ROUTES};
use bytes::{Bytes, BytesMut};
use http_body_util::{Either, Full};
use hyper::header::CONTENT_TYPE;
use hyper::{HeaderMap, Method, Request, Response};
use ringflake::IdFormat;
use std::cell::RefCell;

/// The index of `endpoint`'s route in [`ROUTES`], found at compile time.
const fn index_of(endpoint: Endpoint) -> usize {
    let mut i = 0;
    while i < ROUTES.len() {
        if ROUTES[i].endpoint as u8 == endpoint as u8 {
            return i;
        }
        i += 1;
    }
    panic!("an endpoint without a route")
}

/// `/id`'s index in [`ROUTES`] (the request series' label).
pub const ID_ROUTE: usize = index_of(Endpoint::Id);
/// `/api/segment/get/{key}`'s.
pub const SEGMENT_ROUTE: usize = index_of(Endpoint::SegmentGet);

/// The segment route's path before its tag.
const SEGMENT_PREFIX: &str = "/api/segment/get/";

/// The answer to `req` and its route's index, if it is one of the ID routes' common requests
/// and can be answered now; `None`: the general way answers it (nothing was taken). The
/// request's header map is taken for the answer's (cleared) once the answer is sure.
pub fn answer<B>(app: &App, req: &mut Request<B>) -> Option<(Reply, usize)> {
    if req.method() != Method::GET || req.uri().query().is_some() {
        return None;
    }
    let path = req.uri().path();
    if path == "/id" {
        if !allowed(app, Endpoint::Id, req.headers()) {
            return None;
        }
        let id = app.generator.try_next_id()?;
        let reply = match app.id_key {
            // The key's answer (and its rare refusal) as the general way makes it.
            Some(_) => id_reply(app, id, NEWLINE, IdFormat::Decimal, true),
            None => text(take_headers(req), digits(id, NEWLINE)),
        };
        return Some((reply, ID_ROUTE));
    }
    let tag = path.strip_prefix(SEGMENT_PREFIX)?;
    if tag.is_empty() || tag.contains('/') || !allowed(app, Endpoint::SegmentGet, req.headers()) {
        return None;
    }
    let reply = match segments::now(app, tag)? {
        segments::Now::Number(n) => text(take_headers(req), digits(n, "")),
        segments::Now::Answer(answer) => segment_reply(answer),
        segments::Now::Wait(pending) => {
            // Kept for the general way, which claims it again for this request.
            segments::set_aside(app, tag, pending);
            return None;
        }
    };
    Some((reply, SEGMENT_ROUTE))
}

/// Whether the listener serves `endpoint` and the request may have it: with a token file, a
/// valid bearer token (a refusal is answered by the general way).
fn allowed(app: &App, endpoint: Endpoint, headers: &HeaderMap) -> bool {
    endpoint.served_on(app.exposure)
        && match &app.auth {
            None => true,
            Some(auth) => auth.check(headers).is_ok(),
        }
}

/// The request's header map, cleared, for its answer: the map hyper made of the previous
/// answer's on this connection, so its room is there already.
fn take_headers<B>(req: &mut Request<B>) -> HeaderMap {
    let mut headers = std::mem::take(req.headers_mut());
    headers.clear();
    headers
}

thread_local! {
    /// The serving thread's room for the fast path's bodies: each body is split off it, sharing
    /// its allocation (a reference count, no allocation of its own); once hyper has dropped the
    /// bodies written, the room is reclaimed whole ([`BytesMut::reserve`] finds it unique).
    static BODIES: RefCell<BytesMut> = RefCell::new(BytesMut::new());
}

/// The room [`BODIES`] takes at a time: a few hundred answers.
const ROOM: usize = 4096;

/// `n`'s decimal digits followed by `end`, as the body: written into this thread's room
/// ([`BODIES`]), with no allocation once the room is there.
fn digits(n: impl itoa::Integer, end: &str) -> Bytes {
    let mut buffer = itoa::Buffer::new();
    let text = buffer.format(n).as_bytes();
    BODIES.with(|room| {
        let mut room = room.borrow_mut();
        if room.capacity() < text.len() + end.len() {
            room.reserve(ROOM);
        }
        room.extend_from_slice(text);
        room.extend_from_slice(end.as_bytes());
        room.split().freeze()
    })
}

/// A `200 text/plain` answer with `body`, its one header in `headers`.
fn text(mut headers: HeaderMap, body: Bytes) -> Reply {
    headers.insert(CONTENT_TYPE, TEXT);
    let mut r = Response::new(Either::Left(Full::new(body)));
    *r.headers_mut() = headers;
    r
}
