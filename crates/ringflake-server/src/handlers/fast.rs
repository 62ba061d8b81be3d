//! The ID routes' fast path: `GET /id` and `GET /api/segment/get/{tag}` without a query string,
//! told from the request's path bytes before the route table is walked, answered with the ID
//! (or the tag's number) ready now, its header written into the request's own header map
//! (cleared), which hyper made of the previous answer's on the connection, and its digits held in
//! the answer itself ([`Short`]): nothing is allocated, and the route table, the query's checks
//! and the formats are skipped, since the request has none of them. Everything else, and any
//! request of these routes that the fast path cannot answer at once (a token refused, no ID
//! ready, a number to wait for), goes the general way ([`super::answer_now`],
//! [`super::handle`]), which answers exactly as before.
//!
//! What the general way checks is checked here too: the listener serves the route, the token
//! file's bearer token (only when the service has a token file: one branch otherwise), the ID
//! key's public ID, the tag's hidden volume.

use super::{Answer, NEWLINE, TEXT, admitted, id_reply, segment_reply, segments};
use crate::model::app::App;
use crate::model::routes::{Endpoint, ROUTES};
use bytes::Buf;
use hyper::header::CONTENT_TYPE;
use hyper::{HeaderMap, Method, Request, Response};
use ringflake::IdFormat;

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
/// and can be answered now, its body made by `wrap` (the server's body type, made in place);
/// `None`: the general way answers it (nothing was taken, or a number taken was set aside for
/// it). The request's header map becomes the answer's (`text`) once the answer is sure.
#[inline]
pub fn answer<B, T>(
    app: &App,
    req: &mut Request<B>,
    wrap: impl FnOnce(Fast) -> T,
) -> Option<(Response<T>, usize)> {
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
            Some(_) => {
                id_reply(app, id, NEWLINE, IdFormat::Decimal, true).map(|b| wrap(Fast::Reply(b)))
            }
            None => text(req, wrap(Fast::Short(Short::id(id)))),
        };
        return Some((reply, ID_ROUTE));
    }
    let tag = path.strip_prefix(SEGMENT_PREFIX)?;
    if tag.is_empty() || tag.contains('/') || !allowed(app, Endpoint::SegmentGet, req.headers()) {
        return None;
    }
    let reply = match segments::now(app, tag)? {
        segments::Now::Number(n) => text(req, wrap(Fast::Short(Short::number(n)))),
        segments::Now::Answer(answer) => segment_reply(answer).map(|b| wrap(Fast::Reply(b))),
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
    endpoint.served_on(app.exposure) && admitted(app, endpoint, headers).is_ok()
}

/// A short body (an ID's or a number's digits, and a newline) held in the answer itself: no
/// allocation to make, none to free, nothing shared to count.
#[derive(Debug, Clone, Copy)]
pub struct Short {
    bytes: [u8; Short::ROOM],
    /// The first byte not yet written.
    at: u8,
    len: u8,
}

impl Short {
    /// The most a short body holds: 20 digits of a `u64` (or a sign and 19 of an `i64`) and a
    /// newline.
    const ROOM: usize = 24;

    /// ID `id`'s decimal digits and a newline, as `/id` answers.
    pub fn id(id: u64) -> Short {
        Short::digits(itoa::Buffer::new().format(id), true)
    }

    /// Number `n`'s decimal digits, bare, as Leaf's segment route answers.
    pub fn number(n: i64) -> Short {
        Short::digits(itoa::Buffer::new().format(n), false)
    }

    /// `text` (itoa's digits), then a newline if `newline`, copied into the room.
    fn digits(text: &str, newline: bool) -> Short {
        let mut bytes = [0u8; Short::ROOM];
        bytes[..text.len()].copy_from_slice(text.as_bytes());
        let mut len = text.len();
        if newline {
            bytes[len] = b'\n';
            len += 1;
        }
        Short {
            bytes,
            at: 0,
            len: len as u8,
        }
    }
}

impl Buf for Short {
    fn remaining(&self) -> usize {
        usize::from(self.len - self.at)
    }

    fn chunk(&self) -> &[u8] {
        &self.bytes[usize::from(self.at)..usize::from(self.len)]
    }

    fn advance(&mut self, n: usize) {
        assert!(n <= self.remaining(), "advanced past a short body's end");
        self.at += n as u8;
    }
}

/// The fast path's answer's body: a [`Short`] one, or one of the general way's (an error).
pub enum Fast {
    /// The digits.
    Short(Short),
    /// Any other answer.
    Reply(Answer),
}

/// A `200 text/plain` answer to `req` with `body`, its one header written into the request's
/// header map (cleared): the map hyper made of the previous answer's on this connection, so its
/// room is there already. The answer's own empty map goes to the request in exchange: one empty
/// map made and dropped, not two. The header is appended, not inserted: the map is empty, and
/// `insert`'s search for a value to replace cost 59 instructions more (callgrind).
#[inline]
fn text<B, T>(req: &mut Request<B>, body: T) -> Response<T> {
    let mut r = Response::new(body);
    let headers = r.headers_mut();
    std::mem::swap(headers, req.headers_mut());
    headers.clear();
    headers.append(CONTENT_TYPE, TEXT);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(short: Short) -> String {
        String::from_utf8(short.chunk().to_vec()).expect("digits")
    }

    /// The digits are `itoa`'s (and `to_string`'s), at every length and at the ends.
    #[test]
    fn short_bodies_are_the_digits() {
        let mut ids = vec![
            0,
            1,
            9,
            10,
            99,
            100,
            999,
            1_000,
            9_999,
            10_000,
            12_345,
            u64::MAX,
        ];
        ids.extend((0..64).map(|b| 1u64 << b));
        ids.extend((1..20).map(|e| 10u64.pow(e) - 1));
        ids.extend((1..20).map(|e| 10u64.pow(e)));
        for id in ids {
            assert_eq!(text(Short::id(id)), format!("{id}\n"));
        }
        for n in [0, 1, -1, 42, -10_000, 7_777_777, i64::MAX, i64::MIN] {
            assert_eq!(text(Short::number(n)), n.to_string());
        }
        let mut short = Short::number(12_345);
        assert_eq!(short.remaining(), 5);
        short.advance(2);
        assert_eq!(short.chunk(), b"345");
    }
}
