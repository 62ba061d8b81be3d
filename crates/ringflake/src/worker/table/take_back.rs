//! A restart keeps its worker id: the row of the predecessor in the same state directory, taken
//! back once the owner file proves that predecessor gone (see
//! [`DatabaseAssigner::keep_worker_id`] and the `owner` module's rule).

use super::DatabaseAssigner;
use crate::worker::node::NodeInfo;
use crate::worker::owner::Owned;
use crate::{Clock, Error, SystemClock};
use std::path::Path;
use std::time::Instant;

impl DatabaseAssigner {
    /// The predecessor's row, taken back (see [`keep_worker_id`](Self::keep_worker_id)): its
    /// id, the second the state file records (the new holder starts after it) and the lease
    /// written; `None` if there is nothing to take back.
    pub(super) fn take_back(
        &self,
        owned: &Owned,
        state: &Path,
        max: u64,
        node: &NodeInfo,
        deadline: Option<Instant>,
    ) -> Result<Option<(u64, i64, i64)>, Error> {
        let Some(gone) = owned.predecessor() else {
            return Ok(None);
        };
        if gone.table != self.table.describe() || gone.worker_id > max {
            return Ok(None);
        }
        // A free lock proves the holder gone only on the very file it locked, on this boot.
        if let Some(why) = owned.unproven() {
            tracing::info!(
                worker_id = gone.worker_id,
                state_file = %state.display(),
                reason = why,
                "worker id {} not taken back: {why}; taking a worker id as a fresh boot does",
                gone.worker_id,
            );
            return Ok(None);
        }
        // Everything the predecessor issued is below what the state file records; without the
        // file, nothing says where its IDs ended.
        let Some(reach) = crate::reach::ReachFile::new(state)
            .read()?
            .of(gone.worker_id)
        else {
            return Ok(None);
        };
        let rows = self.retrying(deadline, || self.table.list())?;
        let Some(row) = rows.into_iter().find(|r| {
            r.id == gone.worker_id
                && r.host_name == gone.host_name
                && r.port == gone.port
                && r.lease_until > 0
        }) else {
            return Ok(None);
        };
        let until = SystemClock.now_seconds().max(reach) + self.window;
        let taken = self.retrying(deadline, || {
            self.table.claim(row.id, row.lease_until, node, until)
        })?;
        if taken {
            self.durable(
                row.id,
                (until, row.lease_until),
                "its predecessor's row, taken back",
                deadline,
            )?;
            tracing::info!(
                worker_id = row.id,
                state_file = %state.display(),
                after_second = reach,
                "worker id taken back from the gone predecessor in this state directory"
            );
        }
        Ok(taken.then_some((row.id, reach, until)))
    }
}
