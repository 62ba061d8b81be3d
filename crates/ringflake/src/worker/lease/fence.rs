//! The one rule of the fence, for every worker id held by a session or a key with a time to
//! live (ZooKeeper's ephemeral znode, etcd's lease, a Redis key's TTL): [`cut_off`].

use std::time::Duration;

/// The one rule of the fence: a node stops serving once the newest call the servers answered was
/// sent a third of a session timeout (a TTL) ago or more.
///
/// The servers expire a session one session timeout after they last heard from it, and not
/// before (a new ZooKeeper or etcd leader gives every session or lease a whole timeout again;
/// a Redis key's TTL runs from the write every replica confirmed); they heard from this node no
/// earlier than when it sent the newest call they answered. Its ephemeral znode, and with it
/// the id, can therefore go to another node no sooner than `timeout` after that send. The client
/// itself learns of the expiry only once it reconnects, which a node cut off from the ensemble
/// cannot: it must stop on its own clock, with room left for the keeper's next look (it looks
/// every tenth of the timeout, and a call takes at most another tenth: the leases' `tick`) and for
/// the filler to drop the ring (a round, 250 ms). A third of the timeout leaves that room: stopped
/// by `0.53 × timeout + 0.25 s` after the send at the latest (2.4 s of ZooKeeper's least timeout,
/// 4 s; 5.6 s of the default 10 s), while a server that pauses for less than a third of the
/// timeout (a collection, an election) stops nothing.
pub(crate) fn cut_off(since_answered: Duration, session_timeout: Duration) -> bool {
    since_answered >= session_timeout / 3
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The boundary: serving up to just under a third of the session timeout, not at it.
    #[test]
    fn cut_off_at_a_third_of_the_session_timeout() {
        let t = Duration::from_secs(9);
        assert!(!cut_off(Duration::from_millis(2_999), t));
        assert!(cut_off(Duration::from_secs(3), t));
        // ZooKeeper's least timeout (2 ticks of 2 s): 1.33 s.
        assert!(cut_off(
            Duration::from_millis(1_334),
            Duration::from_secs(4)
        ));
        assert!(!cut_off(
            Duration::from_millis(1_333),
            Duration::from_secs(4)
        ));
    }
}
