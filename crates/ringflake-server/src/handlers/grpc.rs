//! gRPC on the service's listener: `ringflake.v1.IdService` (the repository's
//! `proto/ringflake/v1/ringflake.proto`), the standard `grpc.health.v1.Health` and server
//! reflection (v1 and v1alpha), beside the HTTP routes on the same port and the same HTTP/2
//! connections (the server's `versions` tells the versions apart).
//!
//! A request is gRPC when its content type is `application/grpc…`; [`Services::call`] sends it by
//! path to one of tonic's generated servers. What the HTTP routes check, these check the same
//! way: the listener's [`Exposure`] (`IdService` and reflection where the ID routes are, health
//! on every listener, as `/healthz`), the bearer tokens (`authorization` metadata, `IdService`
//! only, as the ID and parse routes), the counts' limits, and a take bounded by `--max-wait`
//! ([`App::max_wait`]). Errors are status codes whose messages read as the HTTP ones do. Every
//! service decodes requests of at most
//! [`GRPC_MAX_REQUEST_BYTES`](crate::model::limits::GRPC_MAX_REQUEST_BYTES): a larger
//! one is refused from its length prefix, before it is read.
//!
//! `Stream` takes a chunk from the generator only when the previous one has been handed to
//! hyper, which asks for the next only when HTTP/2 flow control lets it send: a client that reads
//! slowly holds the server to its windows (a few hundred KiB), whatever count it asked for.
//! `Batch` and `Stream` of more than [`LARGE_IDS`](crate::model::limits::LARGE_IDS) IDs
//! are large answers ([`super::large`]): each waits for its turn, and is abandoned when its client
//! stops reading. With `--id-key-file`, `Next`, `Batch` and `Stream` are refused
//! (`FAILED_PRECONDITION`): the service hands out public IDs only, and their plain IDs could
//! equal one of them.

use super::large::Large;
use crate::model::app::App;
use crate::model::auth::Denied;
use crate::model::limits::{GRPC_MAX_REQUEST_BYTES, Turn};
use crate::model::routes::{Exposure, MAX_COUNT};
use hyper::body::Incoming;
use hyper::{Request, Response};
use ringflake::Error;
use ringflake::grpc::id_service_server::{IdService, IdServiceServer};
use ringflake::grpc::{
    BatchRequest, BatchResponse, Chunk, NextRequest, NextResponse, ParseRequest, ParseResponse,
    SegmentBatchRequest, SegmentBatchResponse, SegmentNextRequest, SegmentNextResponse,
    StreamRequest,
};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::body::Body;
use tonic::codegen::Service as _;
use tonic::metadata::{MetadataMap, MetadataValue};
use tonic::{Code, Status};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_server::{Health, HealthServer};
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};

/// The largest `chunk` a `Stream` message may carry: 65,536 IDs (512 KiB).
pub const MAX_CHUNK: u32 = 65_536;

/// The chunk of a `Stream` that names none: 8,192 IDs (64 KiB a message).
pub const DEFAULT_CHUNK: u32 = 8_192;

/// How often a health `Watch` looks at the generators again.
const WATCH_EVERY: Duration = Duration::from_secs(1);

/// The trailer that tells a client when to retry, in milliseconds, which gRPC's retry policies
/// obey (the HTTP routes' `Retry-After`).
const RETRY_PUSHBACK: &str = "grpc-retry-pushback-ms";

/// Whether `req` is a gRPC call (content type `application/grpc`, `application/grpc+proto`, …).
pub fn is_grpc<B>(req: &Request<B>) -> bool {
    req.headers()
        .get(hyper::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/grpc"))
}

/// The gRPC services of one connection.
pub struct Services {
    app: Arc<App>,
    ids: IdServiceServer<Ids>,
    health: HealthServer<Checks>,
}

/// A gRPC service with its type erased (reflection's is an opaque type).
type Erased = Box<
    dyn Fn(Request<Incoming>) -> Pin<Box<dyn Future<Output = Response<Body>> + Send>> + Send + Sync,
>;

/// The reflection services, v1 and v1alpha (what grpcurl and grpcio's tools ask), built once for
/// the process: they parse the descriptors.
struct Reflection {
    v1: Erased,
    v1alpha: Erased,
}

fn erase<S>(service: S) -> Erased
where
    S: tonic::codegen::Service<
            Request<Incoming>,
            Response = Response<Body>,
            Error = std::convert::Infallible,
        > + Clone
        + Send
        + Sync
        + 'static,
    S::Future: Send + 'static,
{
    Box::new(move |req| {
        let mut service = service.clone();
        Box::pin(async move { service.call(req).await.unwrap_or_else(|e| match e {}) })
    })
}

fn reflection() -> Result<&'static Reflection, String> {
    static REFLECTION: OnceLock<Result<Reflection, String>> = OnceLock::new();
    REFLECTION
        .get_or_init(|| {
            let builder = || {
                tonic_reflection::server::Builder::configure()
                    .register_encoded_file_descriptor_set(ringflake::grpc::FILE_DESCRIPTOR_SET)
                    .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
            };
            let failed = |e: tonic_reflection::server::Error| {
                format!("cannot set up gRPC server reflection: {e}")
            };
            Ok(Reflection {
                v1: erase(
                    builder()
                        .build_v1()
                        .map_err(failed)?
                        .max_decoding_message_size(GRPC_MAX_REQUEST_BYTES),
                ),
                v1alpha: erase(
                    builder()
                        .build_v1alpha()
                        .map_err(failed)?
                        .max_decoding_message_size(GRPC_MAX_REQUEST_BYTES),
                ),
            })
        })
        .as_ref()
        .map_err(Clone::clone)
}

impl Services {
    /// The services answering from `app` (the listener's).
    pub fn new(app: &Arc<App>) -> Services {
        Services {
            app: Arc::clone(app),
            // Every request is a name, a count, an ID or a symbol: a few hundred bytes at most.
            ids: IdServiceServer::new(Ids {
                app: Arc::clone(app),
            })
            .max_decoding_message_size(GRPC_MAX_REQUEST_BYTES),
            health: HealthServer::new(Checks {
                app: Arc::clone(app),
            })
            .max_decoding_message_size(GRPC_MAX_REQUEST_BYTES),
        }
    }

    /// `answer`, written on the turn its handler took if it is a large one ([`Handoff`]).
    fn hand_over(&self, mut answer: Response<Body>) -> Response<Body> {
        let turn = answer
            .extensions_mut()
            .remove::<Handoff>()
            .and_then(Handoff::take);
        match turn {
            Some(turn) => answer.map(|body| Body::new(Large::new(body, turn, &self.app.limits))),
            None => answer,
        }
    }

    /// Answers one gRPC call.
    pub async fn call(&self, req: Request<Incoming>) -> Response<Body> {
        let path = req.uri().path();
        let service = path
            .strip_prefix('/')
            .and_then(|p| p.split_once('/'))
            .map_or("", |(service, _)| service);
        let ids_here = self.app.exposure != Exposure::Internal;
        match service {
            ID_SERVICE if ids_here => {
                if let Some(auth) = &self.app.auth
                    && let Err(denied) = auth.check(req.headers())
                {
                    return unauthenticated(denied).into_http();
                }
                let mut ids = self.ids.clone();
                let answer = ids.call(req).await.unwrap_or_else(|e| match e {});
                self.hand_over(answer)
            }
            HEALTH => {
                let mut health = self.health.clone();
                health.call(req).await.unwrap_or_else(|e| match e {})
            }
            "grpc.reflection.v1.ServerReflection" | "grpc.reflection.v1alpha.ServerReflection"
                if ids_here =>
            {
                let reflection = match reflection() {
                    Ok(r) => r,
                    Err(message) => return Status::internal(message).into_http(),
                };
                if service.contains("v1alpha") {
                    (reflection.v1alpha)(req).await
                } else {
                    (reflection.v1)(req).await
                }
            }
            _ => {
                let services = if ids_here {
                    "ringflake.v1.IdService, grpc.health.v1.Health, \
                     grpc.reflection.v1.ServerReflection and \
                     grpc.reflection.v1alpha.ServerReflection"
                } else {
                    "grpc.health.v1.Health (the IDs are on the main listener)"
                };
                Status::unimplemented(format!(
                    "no gRPC method {}: this listener serves {services}",
                    crate::text::echo(path)
                ))
                .into_http()
            }
        }
    }
}

/// A large answer's turn, from its handler (which waited for it before taking any ID) to
/// [`Services::hand_over`], in the response's extensions (which hold only what can be cloned).
#[derive(Clone)]
struct Handoff(Arc<Mutex<Option<Turn>>>);

impl Handoff {
    fn new(turn: Turn) -> Self {
        Handoff(Arc::new(Mutex::new(Some(turn))))
    }

    fn take(self) -> Option<Turn> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// `response` carrying `turn`, if any, for [`Services::hand_over`].
fn with_turn<T>(mut response: tonic::Response<T>, turn: Option<Turn>) -> tonic::Response<T> {
    if let Some(turn) = turn {
        response.extensions_mut().insert(Handoff::new(turn));
    }
    response
}

/// The turn of an answer of `count` IDs ([`super::large::turn`]); `UNAVAILABLE` with a retry
/// in a second if a large one found none.
async fn turn(app: &App, count: u64) -> Result<Option<Turn>, Status> {
    super::large::turn(app, count)
        .await
        .map_err(|message| retry_later(message, 1))
}

/// The refusal of `Next`, `Batch` and `Stream` by a service with `--id-key-file`: it hands out
/// public IDs only, and these plain ones could equal one of them.
fn keyed(app: &App, method: &str) -> Result<(), Status> {
    match app.id_key {
        Some(_) => Err(Status::failed_precondition(format!(
            "{method} is not served with --id-key-file: the service hands out public IDs only \
             (/id, /ids), and {method}'s plain IDs could equal one of them; take IDs from /id \
             and /ids, or run a service without a key for plain IDs (docs/ids-in-urls.md)"
        ))),
        None => Ok(()),
    }
}

/// The services' full names, as paths and health checks name them.
const ID_SERVICE: &str = ringflake::grpc::SERVICE_NAME;
const HEALTH: &str = "grpc.health.v1.Health";

/// The status for a call the token file refuses; the token it sent is never shown.
fn unauthenticated(denied: Denied) -> Status {
    Status::unauthenticated(match denied {
        Denied::Missing => {
            "missing bearer token: send the metadata authorization: Bearer <token> with a token \
             of the service's token file"
        }
        Denied::Invalid => "invalid bearer token: not one of the service's token file",
    })
}

/// `IdService`, answering from the generators of the listener's [`App`].
struct Ids {
    app: Arc<App>,
}

impl Ids {
    /// The generator a request names (`""`: the default one).
    fn target(&self, name: &str) -> Result<&App, Status> {
        if name.is_empty() {
            return Ok(&self.app);
        }
        self.app.named(name).ok_or_else(|| {
            Status::not_found(format!(
                "no generator {}: the generators are {}",
                crate::text::quoted(name),
                self.app.generators.names()
            ))
        })
    }
}

/// A generator error: the service cannot issue now, never the client's fault. At the lead cap
/// (policy `fail`) the trailer `grpc-retry-pushback-ms` says when to retry, as for a take that
/// waited there in vain.
fn unavailable(e: &Error) -> Status {
    match e {
        Error::LeadLimitReached { .. } => retry_later(format!("{e}; retry in 1 s"), 1),
        e => Status::unavailable(e.to_string()),
    }
}

/// The status of a segment take the HTTP route would answer `answer` (NOT_FOUND,
/// INVALID_ARGUMENT, INTERNAL for a row at fault, else UNAVAILABLE with its retry delay).
fn refused(answer: super::segments::Answer) -> Status {
    let message = serde_json::from_str::<serde_json::Value>(&answer.body)
        .ok()
        .and_then(|v| v["error"].as_str().map(str::to_string))
        .unwrap_or(answer.body);
    match answer.status.as_u16() {
        404 => Status::not_found(message),
        400 => Status::invalid_argument(message),
        500 => Status::internal(message),
        _ => retry_later(message, u64::from(answer.retry_after.unwrap_or(1))),
    }
}

/// UNAVAILABLE with `message`, and the retry delay in the trailer `grpc-retry-pushback-ms`.
fn retry_later(message: String, seconds: u64) -> Status {
    let mut metadata = MetadataMap::new();
    if let Ok(value) = MetadataValue::try_from(seconds.saturating_mul(1000).to_string()) {
        metadata.insert(RETRY_PUSHBACK, value);
    }
    Status::with_metadata(Code::Unavailable, message, metadata)
}

/// A take that waited `--max-wait` in vain: UNAVAILABLE, with the retry delay in the trailer
/// `grpc-retry-pushback-ms`: what the queue left behind needs at the cap's rate (`2^seq_bits`
/// IDs a second), at least a second, as the HTTP routes' `Retry-After`.
fn still_waiting(app: &App) -> Status {
    let (message, retry) = app.still_waiting("call");
    retry_later(message, retry)
}

/// Why `count` IDs cannot be taken at once: more than the lead cap holds.
fn too_many(app: &App, what: &str, count: u64, max: u64) -> Status {
    let lead = app.generator.max_lead().map_or(0, |d| d.as_secs());
    Status::invalid_argument(format!(
        "{what} {count} is more than the generator can take at once: at most {max} IDs \
         ({}); ask for fewer",
        crate::handlers::cap_terms(&app.layout, lead)
    ))
}

/// Takes `out.len()` IDs, waiting at most `--max-wait` ([`App::max_wait`]).
async fn take(app: &App, what: &str, out: &mut [u64]) -> Result<(), Status> {
    match tokio::time::timeout(app.max_wait, app.generator.next_ids_async(out)).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(Error::BatchTooLarge { count, max })) => Err(too_many(app, what, count, max)),
        Ok(Err(e)) => Err(unavailable(&e)),
        Err(_) => Err(still_waiting(app)),
    }
}

#[tonic::async_trait]
impl IdService for Ids {
    async fn segment_next(
        &self,
        request: tonic::Request<SegmentNextRequest>,
    ) -> Result<tonic::Response<SegmentNextResponse>, Status> {
        let numbers = super::segments::grpc_take(&self.app, &request.get_ref().biz_tag, 1)
            .await
            .map_err(refused)?;
        let id = numbers.first().copied().unwrap_or_default();
        Ok(tonic::Response::new(SegmentNextResponse { id }))
    }

    async fn segment_batch(
        &self,
        request: tonic::Request<SegmentBatchRequest>,
    ) -> Result<tonic::Response<SegmentBatchResponse>, Status> {
        let request = request.into_inner();
        // A large batch holds a turn while tonic writes it, as `Batch` does.
        let turn = match request.count {
            n if (1..=MAX_COUNT as u32).contains(&n) => turn(&self.app, u64::from(n)).await?,
            _ => None,
        };
        let ids = super::segments::grpc_take(&self.app, &request.biz_tag, request.count)
            .await
            .map_err(refused)?;
        Ok(with_turn(
            tonic::Response::new(SegmentBatchResponse { ids }),
            turn,
        ))
    }

    async fn next(
        &self,
        request: tonic::Request<NextRequest>,
    ) -> Result<tonic::Response<NextResponse>, Status> {
        let app = self.target(&request.get_ref().generator)?;
        keyed(app, "Next")?;
        // An ID ready in the ring is taken without arming a timer.
        let id = match app.generator.try_next_id() {
            Some(id) => id,
            None => match tokio::time::timeout(app.max_wait, app.generator.next_id_async()).await {
                Ok(Ok(id)) => id,
                Ok(Err(e)) => return Err(unavailable(&e)),
                Err(_) => return Err(still_waiting(app)),
            },
        };
        Ok(tonic::Response::new(NextResponse { id }))
    }

    async fn batch(
        &self,
        request: tonic::Request<BatchRequest>,
    ) -> Result<tonic::Response<BatchResponse>, Status> {
        let request = request.into_inner();
        let app = self.target(&request.generator)?;
        let count = request.count;
        if !(1..=MAX_COUNT as u32).contains(&count) {
            return Err(Status::invalid_argument(format!(
                "count {count} out of range: Batch takes 1 to {MAX_COUNT} IDs (Stream takes more)"
            )));
        }
        if let Some(max) = app.generator.max_batch()
            && u64::from(count) > max
        {
            return Err(too_many(app, "count", u64::from(count), max));
        }
        keyed(app, "Batch")?;
        let turn = turn(app, u64::from(count)).await?;
        let mut ids = vec![0u64; count as usize];
        take(app, "count", &mut ids).await?;
        Ok(with_turn(tonic::Response::new(BatchResponse { ids }), turn))
    }

    type StreamStream = ReceiverStream<Result<Chunk, Status>>;

    async fn stream(
        &self,
        request: tonic::Request<StreamRequest>,
    ) -> Result<tonic::Response<Self::StreamStream>, Status> {
        let request = request.into_inner();
        let app = self.target(&request.generator)?.clone();
        if request.count == 0 {
            return Err(Status::invalid_argument(
                "count 0 out of range: Stream takes at least 1 ID",
            ));
        }
        let max = app.generator.max_batch();
        let chunk = match request.chunk {
            0 => max.map_or(DEFAULT_CHUNK, |m| {
                DEFAULT_CHUNK.min(u32::try_from(m).unwrap_or(u32::MAX))
            }),
            c if c > MAX_CHUNK => {
                return Err(Status::invalid_argument(format!(
                    "chunk {c} out of range: a Stream message carries 1 to {MAX_CHUNK} IDs \
                     (0: {DEFAULT_CHUNK})"
                )));
            }
            c => c,
        };
        if let Some(max) = max
            && u64::from(chunk) > max
        {
            return Err(too_many(&app, "chunk", u64::from(chunk), max));
        }
        keyed(&app, "Stream")?;
        let turn = turn(&app, request.count).await?;
        // One chunk in the channel, one being taken: the producer waits for the encoder, which
        // waits for HTTP/2's flow control.
        let (tx, rx) = mpsc::channel(1);
        tokio::spawn(async move {
            let mut left = request.count;
            while left > 0 {
                let n = left.min(u64::from(chunk)) as usize;
                let Ok(permit) = tx.reserve().await else {
                    return; // the client went away: nothing more is taken
                };
                let mut ids = vec![0u64; n];
                match take(&app, "chunk", &mut ids).await {
                    Ok(()) => permit.send(Ok(Chunk { ids })),
                    Err(status) => {
                        permit.send(Err(status));
                        return;
                    }
                }
                left -= n as u64;
            }
        });
        Ok(with_turn(
            tonic::Response::new(ReceiverStream::new(rx)),
            turn,
        ))
    }

    async fn parse(
        &self,
        request: tonic::Request<ParseRequest>,
    ) -> Result<tonic::Response<ParseResponse>, Status> {
        let mut request = request.into_inner();
        let app = self.target(&request.generator)?;
        if !request.text.is_empty() {
            request.id = text_id(app, &request)?;
        }
        let parsed = app
            .layout
            .parse(request.id)
            .map_err(|e| Status::invalid_argument(format!("ID {}: {e}", request.id)))?;
        let parse_uid = parsed
            .to_java_string_in(&app.tz)
            .map_err(|e| Status::invalid_argument(format!("ID {}: {e}", request.id)))?;
        let parts = app
            .layout
            .decompose(request.id)
            .map_err(|e| Status::invalid_argument(format!("ID {}: {e}", request.id)))?;
        Ok(tonic::Response::new(ParseResponse {
            id: request.id,
            delta_seconds: parts.delta_seconds,
            unix_seconds: parsed.unix_seconds,
            worker_id: parsed.worker_id,
            sequence: parsed.sequence,
            parse_uid,
            layout: Some(ringflake::grpc::Layout {
                time_bits: app.layout.time_bits(),
                worker_bits: app.layout.worker_bits(),
                seq_bits: app.layout.seq_bits(),
                epoch_seconds: app.layout.epoch_seconds(),
                tick_millis: app.layout.unit().millis() as u32,
                epoch_millis: app.layout.epoch_millis(),
            }),
        }))
    }
}

/// The ID of a `Parse` that gives `text`: read in the form `format` names (or the text shows), and
/// with `--id-key-file` back through the key, as `/parse/{id}` reads it.
fn text_id(app: &App, request: &ParseRequest) -> Result<u64, Status> {
    if request.id != 0 {
        return Err(Status::invalid_argument(format!(
            "give id or text, not both: id {} and text {}",
            request.id,
            crate::text::quoted(&request.text)
        )));
    }
    let format = match request.format.as_str() {
        "" => None,
        name => Some(
            ringflake::IdFormat::ALL
                .into_iter()
                .find(|f| f.name() == name)
                .ok_or_else(|| {
                    Status::invalid_argument(format!(
                        "format {} is not an ID format: expected decimal, base32 or base62 \
                         (empty: told by the text)",
                        crate::text::quoted(name)
                    ))
                })?,
        ),
    };
    crate::text::read_id(&request.text, format, app.id_key.as_deref())
        .map_err(Status::invalid_argument)
}

/// `grpc.health.v1.Health`: one service name per generator, as `/healthz` judges them.
///
/// - `""` and `ringflake.v1.IdService`: the service as a whole, `/healthz`'s answer (the default
///   generator, and with several every other one);
/// - a generator's name (`default`, `orders`, …): that generator alone.
///
/// Any other name is `NOT_FOUND` (`Check`) or `SERVICE_UNKNOWN` (`Watch`), as the health
/// protocol asks.
struct Checks {
    app: Arc<App>,
}

impl Checks {
    /// The status of `service`, `None` if there is no such service name.
    fn status(&self, service: &str) -> Option<ServingStatus> {
        let healthy = |app: &App| app.generator.stats().health(&app.layout).is_available();
        let serving = match service {
            "" | ID_SERVICE => {
                healthy(&self.app) && self.app.generators.iter().all(|g| healthy(&g.app))
            }
            name => healthy(self.app.named(name)?),
        };
        Some(if serving {
            ServingStatus::Serving
        } else {
            ServingStatus::NotServing
        })
    }
}

#[tonic::async_trait]
impl Health for Checks {
    async fn check(
        &self,
        request: tonic::Request<HealthCheckRequest>,
    ) -> Result<tonic::Response<HealthCheckResponse>, Status> {
        let service = &request.get_ref().service;
        match self.status(service) {
            Some(status) => Ok(tonic::Response::new(HealthCheckResponse {
                status: status.into(),
            })),
            None => Err(Status::not_found(format!(
                "no health service {}: ask for \"\" (the whole service), {} or a generator: {}",
                crate::text::quoted(service),
                ID_SERVICE,
                self.app.generators.names()
            ))),
        }
    }

    type WatchStream = ReceiverStream<Result<HealthCheckResponse, Status>>;

    async fn watch(
        &self,
        request: tonic::Request<HealthCheckRequest>,
    ) -> Result<tonic::Response<Self::WatchStream>, Status> {
        let service = request.into_inner().service;
        let checks = Checks {
            app: Arc::clone(&self.app),
        };
        let (tx, rx) = mpsc::channel(1);
        tokio::spawn(async move {
            let mut last = None;
            loop {
                let status = checks
                    .status(&service)
                    .unwrap_or(ServingStatus::ServiceUnknown);
                if last != Some(status) {
                    let answer = HealthCheckResponse {
                        status: status.into(),
                    };
                    if tx.send(Ok(answer)).await.is_err() {
                        return;
                    }
                    last = Some(status);
                }
                tokio::select! {
                    _ = tokio::time::sleep(WATCH_EVERY) => {}
                    _ = tx.closed() => return,
                }
            }
        });
        Ok(tonic::Response::new(ReceiverStream::new(rx)))
    }
}
