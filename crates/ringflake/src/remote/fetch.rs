//! The fetcher: one thread per [`RemoteGenerator`](super::RemoteGenerator), with a
//! single-threaded Tokio runtime of its own, that keeps the buffer filled ahead of demand.
//!
//! Each round it publishes the clock's second (what takes judge staleness by), drops the stale
//! IDs at the head, measures the demand (the head's advance per second), and when fewer IDs are
//! buffered than half of what the demand takes in [`HORIZON`], streams the difference from the
//! service (`IdService.Stream`, chunks written to the buffer as they arrive). Otherwise it sleeps
//! until a take finds the buffer empty or [`TICK`] passes. A failed fetch marks the service down
//! (takes on an empty buffer then fail at once with the reason) and is retried after a delay
//! that doubles up to [`MAX_BACKOFF`]; the channel reconnects by itself.

use super::shared::{Settings, Shared, describe};
use crate::grpc::StreamRequest;
use crate::grpc::id_service_client::IdServiceClient;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

/// How long the buffer should last at the measured demand when it is refilled: 250 ms.
pub(crate) const HORIZON: Duration = Duration::from_millis(250);

/// The longest the fetcher sleeps between rounds: 20 ms.
pub(crate) const TICK: Duration = Duration::from_millis(20);

/// The first retry delay after a failed fetch; it doubles up to [`MAX_BACKOFF`].
const MIN_BACKOFF: Duration = Duration::from_millis(50);
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// The most IDs a `Stream` message carries, as asked: 8,192 (64 KiB).
const CHUNK: u32 = 8_192;

/// Adds `authorization: Bearer <token>` to every call when a token is set.
#[derive(Clone)]
pub(crate) struct Token(pub(crate) Option<tonic::metadata::MetadataValue<tonic::metadata::Ascii>>);

impl tonic::service::Interceptor for Token {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(value) = &self.0 {
            request
                .metadata_mut()
                .insert("authorization", value.clone());
        }
        Ok(request)
    }
}

/// The client stub the fetcher calls.
pub(crate) type Client = IdServiceClient<InterceptedService<Channel, Token>>;

/// The demand, as the head's advance per second, remembered with a slow decay so that a short
/// lull does not shrink the next batch at once.
struct Demand {
    head: u64,
    at: Instant,
    per_second: f64,
}

impl Demand {
    fn update(&mut self, head: u64, now: Instant) {
        let elapsed = now.duration_since(self.at).as_secs_f64();
        if elapsed < 0.005 {
            return;
        }
        let rate = head.saturating_sub(self.head) as f64 / elapsed;
        self.per_second = if rate >= self.per_second {
            rate
        } else {
            0.8 * self.per_second + 0.2 * rate
        };
        self.head = head;
        self.at = now;
    }

    /// How many IDs the buffer should hold: [`HORIZON`] of demand, within `min..=max`.
    fn target(&self, min: u64, max: u64) -> u64 {
        ((self.per_second * HORIZON.as_secs_f64()) as u64).clamp(min, max)
    }
}

impl Settings {
    /// The clock's tick under the served layout.
    pub(crate) fn delta_now(&self) -> u64 {
        delta_now(self.epoch_millis, self.tick_millis)
    }
}

/// The clock's tick under the layout's epoch (0 before the epoch): its delta second for a
/// layout of 1 s ticks.
pub(crate) fn delta_now(epoch_millis: i64, tick_millis: u64) -> u64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    u64::try_from(
        (i128::try_from(now).unwrap_or(i128::MAX) - i128::from(epoch_millis)).max(0)
            / i128::from(tick_millis.max(1)),
    )
    .unwrap_or(0)
}

/// The fetcher's loop, until the generator is dropped.
pub(crate) async fn run(shared: Arc<Shared>, mut client: Client) {
    let mut demand = Demand {
        head: shared.buffer.head(),
        at: Instant::now(),
        per_second: 0.0,
    };
    let mut backoff = MIN_BACKOFF;
    let mut chunk = CHUNK;
    while !shared.stop.load(Ordering::Acquire) {
        shared.buffer.publish_seen(shared.settings.delta_now());
        shared.buffer.sweep();
        demand.update(shared.buffer.head(), Instant::now());
        shared.record();
        let held = shared.buffer.len();
        let target = demand.target(shared.settings.min_fill, shared.settings.capacity / 2);
        if held <= target / 2 {
            let want = (target - held).min(shared.buffer.room());
            if want > 0 {
                let fetched = tokio::select! {
                    r = fetch(&shared, &mut client, want, &mut chunk) => r,
                    _ = shared.stopping.notified() => return,
                };
                match fetched {
                    Ok(()) => {
                        backoff = MIN_BACKOFF;
                        continue;
                    }
                    Err(()) => {
                        // Takes on an empty buffer do not cut the retry delay short.
                        tokio::select! {
                            _ = shared.stopping.notified() => return,
                            _ = tokio::time::sleep(backoff) => {}
                        }
                        backoff = (backoff * 2).min(MAX_BACKOFF);
                        continue;
                    }
                }
            }
        }
        pause(&shared, TICK).await;
    }
}

/// Sleeps `d`, or until a take asks for IDs or the generator is dropped.
async fn pause(shared: &Shared, d: Duration) {
    tokio::select! {
        _ = shared.wake.notified() => {}
        _ = shared.stopping.notified() => shared.stopping.notify_one(),
        _ = tokio::time::sleep(d) => {}
    }
}

/// The first fetch, before the generator is handed to its user: its error if it fails.
pub(crate) async fn first(shared: &Shared, client: &mut Client) -> Result<(), crate::Error> {
    shared.buffer.publish_seen(shared.settings.delta_now());
    let mut chunk = CHUNK;
    match fetch(shared, client, shared.settings.min_fill, &mut chunk).await {
        Ok(()) => Ok(()),
        Err(()) => Err(shared.unavailable(None)),
    }
}

/// Streams `want` IDs into the buffer. On error the service is marked down with the reason.
async fn fetch(shared: &Shared, client: &mut Client, want: u64, chunk: &mut u32) -> Result<(), ()> {
    let started = Instant::now();
    let request = StreamRequest {
        generator: shared.settings.generator.clone(),
        count: want,
        chunk: (*chunk).min(u32::try_from(want).unwrap_or(u32::MAX)),
    };
    let outcome = async {
        let mut stream = client.stream(request).await?.into_inner();
        while let Some(message) = stream.message().await? {
            let written = shared.buffer.push(&message.ids);
            shared
                .fetched
                .fetch_add(message.ids.len() as u64, Ordering::Relaxed);
            shared.arrived.notify_waiters();
            if written < message.ids.len() as u64 {
                break; // the buffer is full: the rest of the stream is not needed
            }
        }
        Ok::<(), tonic::Status>(())
    }
    .await;
    let latency = started.elapsed();
    shared.fetches.fetch_add(1, Ordering::Relaxed);
    shared
        .latency_us
        .store(latency.as_micros() as u64, Ordering::Relaxed);
    #[cfg(feature = "metrics")]
    if let Some(series) = &shared.series {
        series.latency.record(latency.as_secs_f64());
    }
    match outcome {
        Ok(()) => {
            shared.down.store(false, Ordering::Release);
            Ok(())
        }
        Err(status) => {
            // A chunk above what the generator takes at once: ask for smaller ones.
            if status.code() == tonic::Code::InvalidArgument
                && status.message().starts_with("chunk ")
                && *chunk > 1
            {
                *chunk /= 2;
            }
            shared.failures.fetch_add(1, Ordering::Relaxed);
            shared.set_reason(describe(&status));
            shared.down.store(true, Ordering::Release);
            shared.arrived.notify_waiters();
            Err(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_follows_the_demand() {
        let start = Instant::now();
        let mut d = Demand {
            head: 0,
            at: start,
            per_second: 0.0,
        };
        assert_eq!(d.target(1_000, 100_000), 1_000);
        d.update(200_000, start + Duration::from_secs(1));
        assert_eq!(d.target(1_000, 1_000_000), 50_000); // 250 ms of 200,000 a second
        assert_eq!(d.target(1_000, 10_000), 10_000);
        // A lull lowers it slowly.
        d.update(200_000, start + Duration::from_secs(2));
        assert_eq!(d.target(1_000, 1_000_000), 40_000);
        // Too soon to measure: unchanged.
        d.update(300_000, start + Duration::from_millis(2_001));
        assert_eq!(d.target(1_000, 1_000_000), 40_000);
    }
}
