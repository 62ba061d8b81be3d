//! First come, first served for the takes that wait: a FIFO of places, one per waiting take.
//!
//! At the lead cap (rule 4) IDs become ready one second's worth at a time, when the clock moves.
//! Takes that find too few ready queue here in the order they arrived; only the head of the queue
//! takes from the ring, so no take that arrives later is handed the IDs a waiter is waiting for
//! (the `try_next_id` and async fast paths look at [`Queue::is_empty`] first). A waiter that gives
//! up leaves its place (dropping it), having taken nothing; the next one becomes the head and is
//! woken.
//!
//! This is a ticket queue in the manner of a FIFO ticket lock (Mellor-Crummey and Scott,
//! "Algorithms for scalable synchronization on shared-memory multiprocessors", 1991), with
//! explicit entries instead of a `now serving` counter so that a waiter can leave from the
//! middle: every waiter keeps a [`Waker`] (a blocking one's unparks its [`Thread`]). It is touched only
//! by takes that wait and by batches, never on the per-ID path of `next_id` or a
//! [`LocalTaker`](crate::LocalTaker), which claim their place in the ring's order with their one
//! atomic add and wait for it there.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::thread::Thread;
use std::time::Duration;

/// The waiting takes, in the order they arrived.
#[derive(Debug, Default)]
pub(super) struct Queue {
    state: Mutex<State>,
    /// Places in the queue: what the lock-free [`is_empty`](Self::is_empty) reads.
    places: AtomicU64,
    /// IDs the places still want, head included: the queue ahead of a newcomer.
    wanted: AtomicU64,
}

#[derive(Debug, Default)]
struct State {
    next_ticket: u64,
    entries: VecDeque<Entry>,
}

#[derive(Debug)]
struct Entry {
    ticket: u64,
    /// IDs this place still wants.
    wanted: u64,
    /// How to wake it when it becomes the head, once it has waited.
    wake: Option<Waker>,
}

/// Wakes a blocking waiter: unparks its thread.
struct Unpark(Thread);

impl std::task::Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// What the queue holds at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Waiting {
    /// Takes waiting, the head included.
    pub(super) takes: u64,
    /// IDs they still want.
    pub(super) ids: u64,
}

impl Queue {
    fn state(&self) -> MutexGuard<'_, State> {
        crate::lock::lock(&self.state)
    }

    /// Whether no take waits. A take that finds it empty may take ready IDs without queueing: it
    /// overtakes nobody.
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.places.load(Ordering::SeqCst) == 0
    }

    /// Takes and IDs waiting now.
    pub(super) fn waiting(&self) -> Waiting {
        Waiting {
            takes: self.places.load(Ordering::Relaxed),
            ids: self.wanted.load(Ordering::Relaxed),
        }
    }

    /// Queues a take that wants `wanted` IDs, behind every place already there.
    pub(super) fn join(&self, wanted: u64) -> Place<'_> {
        let mut st = self.state();
        let ticket = st.next_ticket;
        st.next_ticket += 1;
        st.entries.push_back(Entry {
            ticket,
            wanted,
            wake: None,
        });
        self.places.fetch_add(1, Ordering::SeqCst);
        self.wanted.fetch_add(wanted, Ordering::Relaxed);
        Place {
            queue: self,
            ticket,
        }
    }
}

/// A take's place in the [`Queue`]; leaving it (dropping it) gives it up and wakes the next head.
#[derive(Debug)]
pub(super) struct Place<'q> {
    queue: &'q Queue,
    ticket: u64,
}

impl Place<'_> {
    /// Whether this place is at the head of the queue: its take's turn.
    pub(super) fn is_head(&self) -> bool {
        self.queue
            .state()
            .entries
            .front()
            .is_some_and(|e| e.ticket == self.ticket)
    }

    /// Ready when this place is the head; else keeps `cx`'s waker to be woken when it is.
    pub(super) fn poll_turn(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut st = self.queue.state();
        let mut entries = st.entries.iter_mut();
        if entries.next().is_some_and(|e| e.ticket == self.ticket) {
            return Poll::Ready(());
        }
        if let Some(e) = entries.find(|e| e.ticket == self.ticket)
            && !e.wake.as_ref().is_some_and(|w| w.will_wake(cx.waker()))
        {
            e.wake = Some(cx.waker().clone());
        }
        Poll::Pending
    }

    /// Waits, parked, until this place is the head (blocking takes).
    pub(super) fn wait_turn(&self) {
        let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
        let mut cx = Context::from_waker(&waker);
        // The timeout only bounds a lost wake-up; the head's leaving unparks the next one.
        while self.poll_turn(&mut cx).is_pending() {
            std::thread::park_timeout(Duration::from_millis(10));
        }
    }
}

/// What only the async takes (`take_async`) do with their place.
#[cfg(feature = "tokio")]
impl Place<'_> {
    /// Waits until this place is the head.
    pub(super) async fn turn(&self) {
        std::future::poll_fn(|cx| self.poll_turn(cx)).await;
    }

    /// The head handed out `n` of the IDs it wants: the queue behind it is that much shorter.
    pub(super) fn served(&self, n: u64) {
        let mut st = self.queue.state();
        if let Some(e) = st.entries.iter_mut().find(|e| e.ticket == self.ticket) {
            let n = n.min(e.wanted);
            e.wanted -= n;
            self.queue.wanted.fetch_sub(n, Ordering::Relaxed);
        }
    }
}

impl Drop for Place<'_> {
    /// Leaves the queue, served or not; if this place was the head, the next one is woken.
    fn drop(&mut self) {
        let q = self.queue;
        let mut st = q.state();
        let Some(at) = st.entries.iter().position(|e| e.ticket == self.ticket) else {
            return;
        };
        if let Some(e) = st.entries.remove(at) {
            q.wanted.fetch_sub(e.wanted, Ordering::Relaxed);
        }
        q.places.fetch_sub(1, Ordering::SeqCst);
        if at == 0
            && let Some(waker) = st.entries.front_mut().and_then(|next| next.wake.take())
        {
            waker.wake();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;

    /// A waker that counts its wake-ups.
    #[derive(Default)]
    struct Count(AtomicUsize);

    impl std::task::Wake for Count {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn turn(place: &Place<'_>, waker: &Arc<Count>) -> bool {
        let waker = Waker::from(Arc::clone(waker));
        place.poll_turn(&mut Context::from_waker(&waker)).is_ready()
    }

    #[test]
    fn places_are_served_in_the_order_they_came() {
        let q = Queue::default();
        assert!(q.is_empty());
        let wakers: Vec<Arc<Count>> = (0..4).map(|_| Arc::default()).collect();
        let places: Vec<Place<'_>> = (1..=4).map(|n| q.join(n * 100)).collect();
        assert_eq!(
            q.waiting(),
            Waiting {
                takes: 4,
                ids: 1000
            }
        );
        let heads: Vec<bool> = places
            .iter()
            .zip(&wakers)
            .map(|(p, w)| turn(p, w))
            .collect();
        assert_eq!(heads, [true, false, false, false]);
        let mut places = places.into_iter();
        drop(places.next()); // the head is done: the second is woken, nobody else
        let counts: Vec<usize> = wakers.iter().map(|w| w.0.load(Ordering::SeqCst)).collect();
        assert_eq!(counts, [0, 1, 0, 0]);
        assert_eq!(q.waiting(), Waiting { takes: 3, ids: 900 });
        let rest: Vec<Place<'_>> = places.collect();
        assert!(turn(&rest[0], &wakers[1]));
        assert!(!turn(&rest[2], &wakers[3]));
    }

    /// What the head hands out no longer counts as wanted; leaving takes the rest along.
    #[cfg(feature = "tokio")]
    #[test]
    fn the_head_served_shortens_the_queue() {
        let q = Queue::default();
        let head = q.join(100);
        let next = q.join(200);
        head.served(60);
        assert_eq!(q.waiting(), Waiting { takes: 2, ids: 240 });
        next.served(10); // not the head, but its count is its own
        assert_eq!(q.waiting().ids, 230);
        head.served(1000); // never below zero
        assert_eq!(q.waiting().ids, 190);
        drop(head);
        assert_eq!(q.waiting(), Waiting { takes: 1, ids: 190 });
    }

    #[test]
    fn a_waiter_that_leaves_from_the_middle_overtakes_nobody_and_wakes_nobody() {
        let q = Queue::default();
        let wakers: Vec<Arc<Count>> = (0..3).map(|_| Arc::default()).collect();
        let a = q.join(1);
        let b = q.join(2);
        let c = q.join(3);
        assert!(turn(&a, &wakers[0]));
        assert!(!turn(&b, &wakers[1]));
        assert!(!turn(&c, &wakers[2]));
        drop(b);
        assert_eq!(q.waiting(), Waiting { takes: 2, ids: 4 });
        assert!(wakers.iter().all(|w| w.0.load(Ordering::SeqCst) == 0));
        assert!(!turn(&c, &wakers[2]), "c still waits for a");
        drop(a);
        assert_eq!(wakers[2].0.load(Ordering::SeqCst), 1);
        assert!(c.is_head());
        drop(c);
        assert!(q.is_empty());
        assert_eq!(q.waiting(), Waiting::default());
    }

    #[test]
    fn a_blocked_thread_is_unparked_when_its_turn_comes() {
        let q = Arc::new(Queue::default());
        let first = q.join(1);
        let (tx, rx) = std::sync::mpsc::channel();
        let q2 = Arc::clone(&q);
        let waiter = std::thread::spawn(move || {
            let place = q2.join(1);
            tx.send(()).unwrap();
            place.wait_turn();
        });
        rx.recv().unwrap();
        assert_eq!(q.waiting().takes, 2);
        drop(first);
        waiter.join().unwrap();
        assert!(q.is_empty());
    }
}
