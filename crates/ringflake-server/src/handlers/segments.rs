//! Meituan Leaf's segment mode on the service:
//!
//! - `GET /api/segment/get/{biz_tag}` (Leaf's `LeafController`): the tag's next number, the
//!   decimal number as the plain-text body, as Leaf answers it (Feign clients read it with
//!   `Long.parseLong`); with `?count=N` (ringflake's, 1 to 100,000), a JSON array of `N`
//!   numbers as strings, increasing (across a range's end included).
//! - gRPC `SegmentNext` and `SegmentBatch` of `ringflake.v1.IdService`, the same numbers.
//! - The status page's segment table and `/status`'s `segments`.
//!
//! Leaf answers every failure with an HTTP 500 (Spring's `LeafServerException`); here each has
//! its status and a JSON message naming the tag: 404 for a tag not in `leaf_alloc` (or deleted
//! from it), 400 for one a URL cannot carry or a bad count, 503 with `Retry-After` when the
//! next range is late (both segments used up after `--segment-max-wait`) or the segment mode
//! could not start, 500 for a row at fault (a step of 0, `max_id` at its end). Tags with
//! `--hide-volume` hand out their numbers through the ID key's permutation on every route.

use crate::model::app::App;
use crate::model::routes::{MAX_COUNT, Route};
use crate::model::segments::Segments;
use hyper::StatusCode;
use ringflake::{Error, SegmentError, SegmentGenerator};
use serde::Serialize;
use std::fmt::Write as _;

/// What a request is answered: the status, the body (JSON for a batch and for errors, the bare
/// number otherwise), and the seconds after which to retry, if retrying may help.
#[derive(Debug)]
pub struct Answer {
    /// The HTTP status.
    pub status: StatusCode,
    /// Whether `body` is JSON (else the bare number, as Leaf answers it).
    pub json: bool,
    /// The body.
    pub body: String,
    /// The seconds after which to retry, if retrying may help.
    pub retry_after: Option<u32>,
}

impl Answer {
    fn ok(json: bool, body: String) -> Answer {
        Answer {
            status: StatusCode::OK,
            json,
            body,
            retry_after: None,
        }
    }

    /// An error: `{"error":"…"}`.
    fn error(status: StatusCode, message: &str, retry_after: Option<u32>) -> Answer {
        Answer {
            status,
            json: true,
            body: crate::text::json_error(message),
            retry_after,
        }
    }
}

/// Why the segment mode cannot answer at all: off, or not started.
enum Off {
    /// `--no-segments`, or no worker database.
    Disabled,
    /// The generator could not start: why.
    Failed(String),
}

/// The segment mode's generator, or why there is none.
fn generator(app: &App) -> Result<(&Segments, &SegmentGenerator), Off> {
    let segments = app.segments.as_deref().ok_or(Off::Disabled)?;
    match &segments.generator {
        Ok(g) => Ok((segments, g)),
        Err(why) => Err(Off::Failed(why.clone())),
    }
}

impl Off {
    fn message(&self) -> String {
        match self {
            Off::Disabled => "segment mode off: serve runs with --no-segments, or takes its \
                              worker ids from no database (segments need --db, --mysql or \
                              --postgres)"
                .into(),
            Off::Failed(why) => format!("segment mode off: it could not start: {why}"),
        }
    }
}

/// The HTTP status of a take's error.
fn status_of(e: &Error) -> StatusCode {
    match e {
        Error::Segment(SegmentError::UnknownTag { .. } | SegmentError::Removed { .. }) => {
            StatusCode::NOT_FOUND
        }
        Error::Segment(SegmentError::InvalidTag { .. } | SegmentError::Count { .. }) => {
            StatusCode::BAD_REQUEST
        }
        Error::Segment(
            SegmentError::BadRow { .. }
            | SegmentError::Overflow { .. }
            | SegmentError::WentBackwards { .. },
        ) => StatusCode::INTERNAL_SERVER_ERROR,
        Error::Segment(SegmentError::NotReady {
            cause: Some(_),
            waited,
            ..
        }) if waited.is_zero() => {
            // The row at fault: no wait helps.
            StatusCode::INTERNAL_SERVER_ERROR
        }
        _ => StatusCode::SERVICE_UNAVAILABLE,
    }
}

/// The answer to a failed take: its status, and a retry after 1 s when retrying may help.
fn failed(e: &Error) -> Answer {
    let status = status_of(e);
    let retry = (status == StatusCode::SERVICE_UNAVAILABLE).then_some(1);
    Answer::error(status, &e.to_string(), retry)
}

thread_local! {
    /// Each serving thread's handles of the tags it served, and the generator they are of (its
    /// address): a take from a cached handle touches no shared reference count nor the tags'
    /// lock, as `/id` touches nothing shared but the ring. A handle whose tag was removed hands
    /// out nothing (its takes go the slow way, which caches the tag's new handle if it is back).
    static HANDLES: std::cell::RefCell<Handles> = const {
        std::cell::RefCell::new(Handles {
            generator: 0,
            tags: Vec::new(),
        })
    };
}

/// A serving thread's cached handles: sorted by tag, so that a request's tag (a `&str` of its
/// path) is found by binary search, comparing bytes: no `String` built, nothing hashed.
struct Handles {
    /// The address of the generator the handles are of.
    generator: usize,
    /// `(tag, handle, a number set aside)`, sorted by tag.
    tags: Vec<Cached>,
}

/// A tag's cached handle, and a number it claimed that a request set aside ([`set_aside`]).
type Cached = (
    Box<str>,
    ringflake::SegmentTag,
    Option<ringflake::PendingNumber>,
);

impl Handles {
    /// Where `tag` is (or would be) in the sorted list.
    fn find(&self, tag: &str) -> Result<usize, usize> {
        self.tags.binary_search_by(|(t, _, _)| (**t).cmp(tag))
    }
}

/// At most this many tags are cached per serving thread (a client asking for many tags gets the
/// slow way for the others).
const CACHED_TAGS: usize = 1024;

/// One number of `tag` from this thread's cached handle: taken now, or the take to wait for (a
/// number set aside first, if any); `None` when no handle is cached. The tag is matched as the
/// `&str` it is: nothing allocated.
fn cached_number(g: &SegmentGenerator, tag: &str) -> Option<Result<i64, ringflake::PendingNumber>> {
    let generator = g as *const SegmentGenerator as usize;
    HANDLES.with(|h| {
        let mut h = h.borrow_mut();
        if h.generator != generator {
            return None;
        }
        let i = h.find(tag).ok()?;
        let (_, handle, aside) = &mut h.tags[i];
        Some(match aside.take() {
            Some(pending) => Err(pending),
            None => handle.try_next_id(),
        })
    })
}

/// Keeps `pending`, a number of `tag` [`now`] claimed for a request that was not answered at
/// once, for the next request of `tag` on this thread (the same request, once it is handled
/// the slow way, or another): a number claimed is handed out, never dropped, which would leave
/// a gap in the tag's numbers.
pub fn set_aside(app: &App, tag: &str, pending: ringflake::PendingNumber) {
    let Some(Ok(g)) = app.segments.as_deref().map(|s| s.generator.as_ref()) else {
        return;
    };
    let generator = g as *const SegmentGenerator as usize;
    HANDLES.with(|h| {
        let mut h = h.borrow_mut();
        if h.generator != generator {
            return;
        }
        if let Ok(i) = h.find(tag) {
            h.tags[i].2 = Some(pending);
        }
    });
}

/// Caches `handle` for this thread (replacing a stale one).
fn cache(g: &SegmentGenerator, tag: &str, handle: &ringflake::SegmentTag) {
    let generator = g as *const SegmentGenerator as usize;
    HANDLES.with(|h| {
        let mut h = h.borrow_mut();
        if h.generator != generator {
            h.generator = generator;
            h.tags.clear();
        }
        match h.find(tag) {
            Ok(i) => h.tags[i].1 = handle.clone(),
            Err(i) if h.tags.len() < CACHED_TAGS => {
                h.tags.insert(i, (tag.into(), handle.clone(), None));
            }
            Err(_) => {}
        }
    });
}

/// What [`now`] found for one number of a tag.
pub enum Now {
    /// The number, as handed out (public where the tag's volume is hidden).
    Number(i64),
    /// The number claimed, to wait for (`wait`).
    Wait(ringflake::PendingNumber),
    /// The answer to give instead.
    Answer(Answer),
}

/// One number of `tag` (not empty) from this serving thread's cached handle, without a future:
/// what `/api/segment/get/{tag}` answers most requests with. `None`: no handle cached (or the
/// segment mode is off), [`get`] answers.
pub fn now(app: &App, tag: &str) -> Option<Now> {
    let segments = app.segments.as_deref()?;
    let g = segments.generator.as_ref().ok()?;
    Some(match cached_number(g, tag)? {
        Ok(n) => match segments.public(tag, n) {
            Ok(n) => Now::Number(n),
            Err(m) => Now::Answer(Answer::error(StatusCode::INTERNAL_SERVER_ERROR, &m, None)),
        },
        Err(pending) => Now::Wait(pending),
    })
}

/// The answer to a number [`now`] found claimed but not ready: waited for; a handle whose tag
/// was removed since goes the slow way ([`get`]), which finds the tag again if it is back.
pub async fn wait(
    app: &App,
    route: &Route,
    tag: &str,
    pending: ringflake::PendingNumber,
) -> Answer {
    match pending.wait_async().await {
        Ok(n) => match app.segments.as_deref().map(|s| s.public(tag, n)) {
            Some(Ok(n)) => Answer::ok(false, n.to_string()),
            Some(Err(m)) => Answer::error(StatusCode::INTERNAL_SERVER_ERROR, &m, None),
            None => get(app, route, tag, None, true).await,
        },
        Err(Error::Segment(SegmentError::Removed { .. })) => get(app, route, tag, None, true).await,
        Err(e) => failed(&e),
    }
}

/// The numbers of a take: `count` of them (`None`: one, Leaf's answer), public where the tag's
/// volume is hidden; with `fetch` false (HEAD), none, the checks alone. Else the answer to give
/// instead.
async fn take(app: &App, tag: &str, count: Option<usize>, fetch: bool) -> Result<Vec<i64>, Answer> {
    let (segments, g) = generator(app).map_err(|off| {
        let retry = matches!(off, Off::Failed(_)).then_some(60);
        Answer::error(StatusCode::SERVICE_UNAVAILABLE, &off.message(), retry)
    })?;
    let handle = g.tag(tag).map_err(|e| failed(&e))?;
    cache(g, tag, &handle);
    if !fetch {
        return Ok(Vec::new());
    }
    let mut numbers = vec![0i64; count.unwrap_or(1)];
    handle
        .next_ids_async(&mut numbers)
        .await
        .map_err(|e| failed(&e))?;
    for x in &mut numbers {
        *x = segments
            .public(tag, *x)
            .map_err(|m| Answer::error(StatusCode::INTERNAL_SERVER_ERROR, &m, None))?;
    }
    Ok(numbers)
}

/// `/api/segment/get/{biz_tag}[?count=N]` (`count` checked by the caller); with `fetch` false
/// (HEAD), the checks alone. One number of a tag this thread has served is answered by [`now`]
/// first.
pub async fn get(app: &App, route: &Route, tag: &str, count: Option<usize>, fetch: bool) -> Answer {
    if tag.is_empty() {
        return missing_tag(route);
    }
    let numbers = match take(app, tag, count, fetch).await {
        Ok(numbers) => numbers,
        Err(answer) => return answer,
    };
    match (fetch, count, numbers.first()) {
        (false, _, _) | (_, _, None) => Answer::ok(count.is_some(), String::new()),
        // Leaf's answer: the bare digits, no newline.
        (true, None, Some(x)) => Answer::ok(false, x.to_string()),
        (true, Some(_), Some(_)) => Answer::ok(true, json_numbers(&numbers)),
    }
}

/// The 404 of a route without a tag.
fn missing_tag(route: &Route) -> Answer {
    let message = format!(
        "missing biz_tag: use {} with a tag of leaf_alloc",
        route.usage
    );
    Answer::error(StatusCode::NOT_FOUND, &message, None)
}

/// `?count=N`'s JSON array: each number as a string, as `/ids` writes IDs.
fn json_numbers(numbers: &[i64]) -> String {
    let mut body = String::with_capacity(numbers.len() * 22 + 2);
    body.push('[');
    for (i, x) in numbers.iter().enumerate() {
        let _ = write!(body, "{}\"{x}\"", if i == 0 { "" } else { "," });
    }
    body.push(']');
    body
}

/// A large `?count=N` (its caller holds its turn of `--max-large-answers`): the numbers, which
/// the caller writes as its client reads, as a large `/ids`; else the answer to give instead
/// (a refusal, or an answer written whole for a table whose numbers went below 0).
pub async fn batch(app: &App, route: &Route, tag: &str, count: usize) -> Result<Vec<u64>, Answer> {
    if tag.is_empty() {
        return Err(missing_tag(route));
    }
    let numbers = take(app, tag, Some(count), true).await?;
    if numbers.iter().any(|&x| x < 0) {
        return Err(Answer::ok(true, json_numbers(&numbers)));
    }
    Ok(numbers.into_iter().map(|x| x as u64).collect())
}

/// gRPC's `SegmentNext` and `SegmentBatch` (`count` numbers; 1 for `SegmentNext`): the numbers,
/// or the answer an HTTP request would get (the gRPC server turns it into its status).
pub async fn grpc_take(app: &App, tag: &str, count: u32) -> Result<Vec<i64>, Answer> {
    if !(1..=MAX_COUNT as u32).contains(&count) {
        let message =
            format!("count {count} out of range: SegmentBatch takes 1 to {MAX_COUNT} numbers");
        return Err(Answer::error(StatusCode::BAD_REQUEST, &message, None));
    }
    take(app, tag, Some(count as usize), true).await
}

/// One tag in `/status`, and the cells the status page shows.
#[derive(Serialize)]
pub struct TagJson {
    pub biz_tag: String,
    pub current_left: u64,
    pub next_left: u64,
    pub step: i64,
    pub table_step: i64,
    pub issued: u64,
    pub at_risk: u64,
    pub claims: u64,
    pub claim_failures: u64,
    pub waits: u64,
    pub not_ready: u64,
    pub hidden: bool,
    pub last_error: Option<String>,
    /// The page's cells: `range`, `next`, `step`, `claims`, `waits`, `error`.
    pub text: std::collections::BTreeMap<&'static str, String>,
}

/// The segment mode as the status page and `/status` show it.
pub struct View {
    /// The title of its card (`Segments: leaf_alloc in …`); `None` when the mode is off.
    pub title: Option<String>,
    /// Why it is not running, when it could not start.
    pub failed: Option<String>,
    /// Every tag served, by name.
    pub tags: Vec<TagJson>,
}

/// One tag's cells on the page.
fn cells(s: &ringflake::SegmentStats) -> std::collections::BTreeMap<&'static str, String> {
    let mut text = std::collections::BTreeMap::new();
    let range = match s.current {
        Some((a, b)) => format!(
            "{} left of [{a}, {b})",
            crate::text::thousands(s.current_left)
        ),
        None => "none yet".into(),
    };
    text.insert("range", range);
    let next = match s.next {
        Some((a, b)) => format!("[{a}, {b})"),
        None => "not claimed yet".into(),
    };
    text.insert("next", next);
    text.insert("step", format!("{} (table {})", s.step, s.table_step));
    let mean_ms = if s.claims == 0 {
        0.0
    } else {
        s.claim_seconds * 1000.0 / s.claims as f64
    };
    text.insert(
        "claims",
        format!(
            "{} ({} failed), {mean_ms:.1} ms each",
            s.claims, s.claim_failures
        ),
    );
    text.insert(
        "waits",
        format!("{} waited, {} not served", s.waits, s.not_ready),
    );
    text.insert("error", s.last_error.clone().unwrap_or_else(|| "-".into()));
    text
}

/// The segment mode's state, for the status page and `/status`.
pub fn view(app: &App) -> View {
    let (segments, g) = match generator(app) {
        Ok(found) => found,
        Err(Off::Disabled) => {
            return View {
                title: None,
                failed: None,
                tags: Vec::new(),
            };
        }
        Err(off) => {
            return View {
                title: Some("Segments".into()),
                failed: Some(off.message()),
                tags: Vec::new(),
            };
        }
    };
    let tags = g
        .stats()
        .into_iter()
        .map(|s| TagJson {
            hidden: segments.hidden.hides(&s.tag),
            text: cells(&s),
            biz_tag: s.tag,
            current_left: s.current_left,
            next_left: s.next_left,
            step: s.step,
            table_step: s.table_step,
            issued: s.issued,
            at_risk: s.at_risk,
            claims: s.claims,
            claim_failures: s.claim_failures,
            waits: s.waits,
            not_ready: s.not_ready,
            last_error: s.last_error,
        })
        .collect();
    View {
        title: Some(format!("Segments: leaf_alloc in {}", segments.table)),
        failed: None,
        tags,
    }
}

/// What the route's usage says: `use /api/segment/get/{key}[?count=N] with N in 1..=100000`.
pub fn usage(route: &Route) -> String {
    format!("use {}[?count=N] with N in 1..={MAX_COUNT}", route.usage)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn errors_have_their_status() {
        let tag = || "t".to_string();
        let cases = [
            (
                SegmentError::UnknownTag {
                    tag: tag(),
                    tags: 1,
                },
                StatusCode::NOT_FOUND,
            ),
            (SegmentError::Removed { tag: tag() }, StatusCode::NOT_FOUND),
            (
                SegmentError::InvalidTag {
                    tag: tag(),
                    reason: "x".into(),
                },
                StatusCode::BAD_REQUEST,
            ),
            (
                SegmentError::NotReady {
                    tag: tag(),
                    waited: Duration::from_secs(5),
                    cause: Some("database down".into()),
                },
                StatusCode::SERVICE_UNAVAILABLE,
            ),
            (
                SegmentError::NotReady {
                    tag: tag(),
                    waited: Duration::ZERO,
                    cause: Some("step 0 refused".into()),
                },
                StatusCode::INTERNAL_SERVER_ERROR,
            ),
            (SegmentError::Shutdown, StatusCode::SERVICE_UNAVAILABLE),
        ];
        for (e, status) in cases {
            let e = Error::Segment(e);
            assert_eq!(status_of(&e), status, "{e}");
            let a = failed(&e);
            assert_eq!(a.status, status);
            assert!(a.body.contains("\"error\""), "{}", a.body);
            assert_eq!(
                a.retry_after.is_some(),
                status == StatusCode::SERVICE_UNAVAILABLE
            );
        }
    }
}
