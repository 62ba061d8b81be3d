//! The ID spaces of `serve`'s generators ([`Spaces`]): which worker id each generator holds, on
//! which layout, in which namespace. A worker id whose IDs another generator of the same
//! namespace could hand out too ([`Layout::shared_id`]) is refused: at start, once a generator
//! has its worker id (a fixed one before anything is opened), and whenever a generator takes a
//! new one after losing its lease ([`Guarded`]).

use ringflake::{Assignment, Error, FieldOrder, Layout, TimeUnit, WorkerIdAssigner};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// One generator, as the check names it.
pub struct Member {
    /// Its name: `default`, or its table's.
    pub name: String,
    /// Its layout.
    pub layout: Layout,
    /// Its namespace (`--namespace`, the `namespace` key), if any.
    pub namespace: Option<String>,
    /// Its worker id source, described (`sqlite file ringflake.db`).
    pub source: String,
}

/// A generator and the worker ids it holds: the one it serves, and, from a heal until the next,
/// the one before (its IDs may still be handed out until the generator has switched).
struct Entry {
    member: Member,
    held: Vec<u64>,
}

/// The generators of one `serve`, and their worker ids.
pub struct Spaces {
    entries: Mutex<Vec<Entry>>,
}

/// The longest a generator refused a worker id waits before it asks its source again.
const MAX_PAUSE: Duration = Duration::from_secs(30);

impl Spaces {
    /// The generators `members`, in order (their index is their place), holding nothing yet.
    pub fn new(members: Vec<Member>) -> Arc<Spaces> {
        let entries = members
            .into_iter()
            .map(|member| Entry {
                member,
                held: Vec::new(),
            })
            .collect();
        Arc::new(Spaces {
            entries: Mutex::new(entries),
        })
    }

    /// Generator `index` serves worker id `worker_id` from now on (or is about to): refused,
    /// naming both generators, their worker ids and layouts, if another generator of the same
    /// namespace holds a worker id whose IDs it could hand out too.
    pub fn claim(&self, index: usize, worker_id: u64) -> Result<(), String> {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let me = &entries[index].member;
        for (j, other) in entries.iter().enumerate() {
            if j == index || other.member.namespace != me.namespace {
                continue;
            }
            for &theirs in &other.held {
                if let Some(id) = me.layout.shared_id(worker_id, &other.member.layout, theirs) {
                    return Err(overlap((me, worker_id), (&other.member, theirs), id));
                }
            }
        }
        let held = &mut entries[index].held;
        *held = match held.last() {
            Some(&before) if before != worker_id => vec![before, worker_id],
            _ => vec![worker_id],
        };
        Ok(())
    }
}

/// The refusal of `a` beside `b`, `id` being an ID both could hand out.
fn overlap((a, wa): (&Member, u64), (b, wb): (&Member, u64), id: u64) -> String {
    format!(
        "generators {} and {} could hand out the same IDs: {} has worker id {wa} ({}) on layout \
         {}, {} has worker id {wb} ({}) on layout {}, and ID {id} is one both can make. Give \
         them worker ids whose IDs never meet (generators on one layout taking ids from one \
         worker table always get distinct ones); or, only if their IDs never meet (never \
         stored, compared or sent together), declare separate ID spaces with a namespace of \
         their own (namespace = \"NAME\")",
        a.name,
        b.name,
        a.name,
        a.source,
        layout_text(&a.layout),
        b.name,
        b.source,
        layout_text(&b.layout),
    )
}

/// A layout for a person: `31/10/22 from 2025-01-01`, with its tick when not a second and its
/// field order when the sequence is above the worker id.
pub fn layout_text(layout: &Layout) -> String {
    let mut text = format!(
        "{}/{}/{} from {}",
        layout.time_bits(),
        layout.worker_bits(),
        layout.seq_bits(),
        ringflake_server::text::epoch_text(layout)
    );
    if layout.unit() != TimeUnit::Seconds {
        text.push_str(&format!(" in {} ticks", layout.unit()));
    }
    if layout.order() == FieldOrder::SequenceAboveWorker {
        text.push_str(", sequence above worker id");
    }
    text
}

/// Generator `index`'s worker id source, whose new ids after a heal are checked against the
/// other generators' ([`Spaces::claim`]) before the generator serves under them. The id of the
/// boot itself is checked once the generator is built, where a refusal stops the start.
pub struct Guarded<'a> {
    /// The source.
    pub inner: &'a dyn WorkerIdAssigner,
    /// The generators of this `serve`.
    pub spaces: Arc<Spaces>,
    /// This generator's place among them.
    pub index: usize,
}

impl WorkerIdAssigner for Guarded<'_> {
    fn assign_worker_id(&self, layout: &Layout) -> Result<u64, Error> {
        self.inner.assign_worker_id(layout)
    }

    fn assign(&self, layout: &Layout) -> Result<Assignment, Error> {
        self.inner.assign(layout)
    }

    fn retaker(&self) -> Option<Box<dyn WorkerIdAssigner + Send + Sync>> {
        Some(Box::new(Retaker {
            inner: self.inner.retaker()?,
            spaces: Arc::clone(&self.spaces),
            index: self.index,
            booted: AtomicBool::new(false),
            refused: Mutex::new(None),
        }))
    }
}

/// The source a generator takes a new worker id from after losing its lease, checked. Its first
/// answer is the boot's own worker id, which the library claims from it once the build's checks
/// have passed (so that a refused start claims nothing): that one is the source's, unchecked
/// here, and checked once the generator is built, where a refusal stops the start.
struct Retaker {
    inner: Box<dyn WorkerIdAssigner + Send + Sync>,
    spaces: Arc<Spaces>,
    index: usize,
    /// The boot's worker id has been taken: every later one is a heal's, checked.
    booted: AtomicBool,
    /// After a refusal: until when the source is not asked again, the pause after that, and why.
    refused: Mutex<Option<(Instant, Duration, String)>>,
}

impl WorkerIdAssigner for Retaker {
    fn assign_worker_id(&self, layout: &Layout) -> Result<u64, Error> {
        self.assign(layout).map(|a| a.worker_id)
    }

    /// A new worker id that no other generator's IDs can meet. A refused one is held while the
    /// source is asked once more (so that it cannot give the same one again), then let go of;
    /// if the second one is refused too, the generator serves nothing and the source is asked
    /// again after a pause (1 s, doubling up to 30 s).
    fn assign(&self, layout: &Layout) -> Result<Assignment, Error> {
        if !self.booted.swap(true, Ordering::SeqCst) {
            return self.inner.assign(layout);
        }
        let mut refused = self.refused.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((until, _, why)) = refused.as_ref()
            && Instant::now() < *until
        {
            return Err(Error::WorkerAssignment(why.clone()));
        }
        let first = self.inner.assign(layout)?;
        let Err(why) = self.spaces.claim(self.index, first.worker_id) else {
            *refused = None;
            return Ok(first);
        };
        let second = self.inner.assign(layout);
        let refused_id = first.worker_id;
        drop(first);
        let why = match second {
            Ok(again) => match self.spaces.claim(self.index, again.worker_id) {
                Ok(()) => {
                    tracing::warn!(
                        worker_id = refused_id,
                        taken = again.worker_id,
                        error = %why,
                        "new worker id {refused_id} refused: {why}; took worker id {} instead",
                        again.worker_id
                    );
                    *refused = None;
                    return Ok(again);
                }
                Err(also) => format!("{why}; and the next one: {also}"),
            },
            Err(e) => format!("{why}; and the source gave no other: {e}"),
        };
        let pause = refused
            .as_ref()
            .map_or(Duration::from_secs(1), |(_, p, _)| (*p * 2).min(MAX_PAUSE));
        tracing::error!(
            worker_id = refused_id,
            error = %why,
            retry_s = pause.as_secs(),
            "new worker id {refused_id} refused, nothing is served: {why}; the source is asked \
             again in {} s",
            pause.as_secs()
        );
        *refused = Some((Instant::now() + pause, pause, why.clone()));
        Err(Error::WorkerAssignment(why))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringflake::{DEFAULT_EPOCH_SECONDS, FixedWorkerId};
    use std::sync::atomic::{AtomicU64, Ordering};

    fn member(name: &str, layout: Layout, namespace: Option<&str>) -> Member {
        Member {
            name: name.into(),
            layout,
            namespace: namespace.map(String::from),
            source: format!("source of {name}"),
        }
    }

    #[test]
    fn generators_of_one_namespace_never_meet() {
        let later = Layout::new(31, 10, 22, DEFAULT_EPOCH_SECONDS + 1).unwrap();
        let spaces = Spaces::new(vec![
            member("default", Layout::default(), None),
            member("orders", Layout::default(), None),
            member("later", later, None),
            member("billing", Layout::default(), Some("billing")),
        ]);
        spaces.claim(0, 1).unwrap();
        let err = spaces.claim(1, 1).unwrap_err();
        assert_eq!(
            err.split(". Give").next().unwrap(),
            "generators orders and default could hand out the same IDs: orders has worker id 1 \
             (source of orders) on layout 31/10/22 from 2025-01-01, default has worker id 1 \
             (source of default) on layout 31/10/22 from 2025-01-01, and ID 4194304 is one \
             both can make"
        );
        assert!(err.ends_with("(namespace = \"NAME\")"), "{err}");
        spaces.claim(1, 2).unwrap();
        // Another epoch, the same bits: the same IDs.
        let err = spaces.claim(2, 2).unwrap_err();
        assert!(err.starts_with("generators later and orders"), "{err}");
        assert!(err.contains("31/10/22 from 2025-01-01T00:00:01Z"), "{err}");
        spaces.claim(2, 3).unwrap();
        // Another namespace: not checked.
        spaces.claim(3, 1).unwrap();
        // A generator claiming again keeps its previous id until the next claim: both count.
        spaces.claim(0, 4).unwrap();
        assert!(
            spaces
                .claim(2, 1)
                .unwrap_err()
                .contains("default has worker id 1")
        );
        assert!(
            spaces
                .claim(2, 4)
                .unwrap_err()
                .contains("default has worker id 4")
        );
        spaces.claim(0, 5).unwrap();
        spaces.claim(2, 1).unwrap();
    }

    #[test]
    fn layouts_are_named_with_their_tick_and_order() {
        assert_eq!(layout_text(&Layout::default()), "31/10/22 from 2025-01-01");
        assert_eq!(
            layout_text(&Layout::twitter()),
            "41/10/12 from 2010-11-04T01:42:54.657Z in 1ms ticks"
        );
        assert_eq!(
            layout_text(&Layout::sonyflake()),
            "39/16/8 from 2014-09-01 in 10ms ticks, sequence above worker id"
        );
    }

    /// A source that gives worker ids from a counter, each once.
    struct Counter(AtomicU64);

    impl WorkerIdAssigner for Counter {
        fn assign_worker_id(&self, _: &Layout) -> Result<u64, Error> {
            Ok(self.0.fetch_add(1, Ordering::SeqCst))
        }
        fn retaker(&self) -> Option<Box<dyn WorkerIdAssigner + Send + Sync>> {
            Some(Box::new(Counter(AtomicU64::new(
                self.0.load(Ordering::SeqCst),
            ))))
        }
    }

    /// After a heal, a worker id another generator holds is refused: the source is asked once
    /// more, while the refused one is held; refused twice, nothing is served, and the source is
    /// not asked again before the pause is over.
    #[test]
    fn a_heal_into_another_generators_id_is_refused() {
        let d = Layout::default();
        let spaces = Spaces::new(vec![member("default", d, None), member("orders", d, None)]);
        spaces.claim(0, 5).unwrap();
        let counter = Counter(AtomicU64::new(5));
        let retaker = Guarded {
            inner: &counter,
            spaces: Arc::clone(&spaces),
            index: 1,
        }
        .retaker()
        .unwrap();
        // The boot's own worker id (the first asked) is the source's: checked once built.
        assert_eq!(retaker.assign_worker_id(&d).unwrap(), 5);
        // A heal's: 6 is default's now, refused, and 7 taken instead.
        spaces.claim(0, 6).unwrap();
        assert_eq!(retaker.assign_worker_id(&d).unwrap(), 7);
        spaces.claim(0, 8).unwrap();
        spaces.claim(0, 9).unwrap();
        // 8 and 9 are default's (its last two): both refused.
        let err = retaker.assign_worker_id(&d).unwrap_err().to_string();
        assert!(err.contains("orders has worker id 8"), "{err}");
        assert!(
            err.contains("and the next one: generators orders and default"),
            "{err}"
        );
        assert!(err.contains("orders has worker id 9"), "{err}");
        // Within the pause, the same answer without asking the source.
        let again = retaker.assign_worker_id(&d).unwrap_err().to_string();
        assert_eq!(again, err);
        std::thread::sleep(Duration::from_millis(1100));
        assert_eq!(retaker.assign_worker_id(&d).unwrap(), 10);
        // A fixed id has no other: nothing to retake.
        let fixed = FixedWorkerId(3);
        let guarded = Guarded {
            inner: &fixed,
            spaces,
            index: 1,
        };
        assert!(guarded.retaker().is_none());
    }
}
