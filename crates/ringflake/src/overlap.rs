//! Whether two generators can hand out the same ID: the one exact test behind `serve`'s refusal
//! of overlapping generators ([`Layout::shared_id`]).
//!
//! A generator with worker id `w` on a layout can make exactly the 64-bit values whose worker
//! field holds `w` and whose time field lies in `0..=max_delta` (the time field is always the top
//! field, whatever the order of the two below it; the sequence takes every value): the values
//! `x <= hi` with `x & mask == value`, where `mask` covers the worker field, `value` is `w` in
//! it, and `hi` is the largest value with the time field at `max_delta`. Two such sets meet if
//! and only if the two worker fields agree on the bits they share and the smallest value that
//! satisfies both, `value_a | value_b`, lies below both `hi`.

use crate::Layout;

impl Layout {
    /// The smallest ID that worker `worker_id` of this layout and worker `other_worker_id` of
    /// `other` could both make, over the layouts' whole lifetimes; `None` when no ID of one can
    /// ever be an ID of the other. Epochs and ticks do not matter, only bits: two generators with
    /// the same widths and worker id make the same IDs (at different moments) whatever their
    /// epochs. A worker id that does not fit its layout makes no ID.
    ///
    /// # Layout
    ///
    /// One layout with two worker ids never meets; with different widths or field orders the
    /// answer depends on the bits the two worker fields share.
    ///
    /// ```
    /// use ringflake::Layout;
    ///
    /// let default = Layout::default(); // 31/10/22: the worker field is bits 22 to 31
    /// assert_eq!(default.shared_id(1, &default, 1), Some(1 << 22));
    /// assert_eq!(default.shared_id(1, &default, 2), None);
    /// // Another epoch, the same bits: the same IDs.
    /// let later = Layout::new(31, 10, 22, default.epoch_seconds() + 1)?;
    /// assert_eq!(default.shared_id(1, &later, 1), Some(1 << 22));
    /// // Twitter's worker field (bits 12 to 21) lies in the default's sequence: every pair meets.
    /// assert_eq!(default.shared_id(1, &Layout::twitter(), 5), Some(1 << 22 | 5 << 12));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn shared_id(&self, worker_id: u64, other: &Layout, other_worker_id: u64) -> Option<u64> {
        let (mask_a, value_a, hi_a) = self.worker_space(worker_id)?;
        let (mask_b, value_b, hi_b) = other.worker_space(other_worker_id)?;
        if (value_a ^ value_b) & mask_a & mask_b != 0 {
            return None;
        }
        // Every common ID has these bits set: it is the smallest.
        let smallest = value_a | value_b;
        (smallest <= hi_a.min(hi_b)).then_some(smallest)
    }

    /// The IDs worker `worker_id` can make, as the worker field's mask, the worker id in it, and
    /// the largest value (the time field at `max_delta`, every lower bit set); `None` if the id
    /// does not fit.
    fn worker_space(&self, worker_id: u64) -> Option<(u64, u64, u64)> {
        if worker_id > self.max_worker_id() {
            return None;
        }
        let shift = self.worker_shift();
        // At most 2^63 - 1: max_delta stops below the sign bit.
        let hi = ((u128::from(self.max_delta()) + 1) << self.time_shift()) - 1;
        Some((
            self.max_worker_id() << shift,
            worker_id << shift,
            u64::try_from(hi).unwrap_or(u64::MAX),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DEFAULT_EPOCH_SECONDS, FieldOrder, TimeUnit};

    /// A layout of seconds, its widths adding up to 64 at most (below 63: narrower IDs).
    fn layout(t: u32, w: u32, s: u32) -> Layout {
        let epoch = DEFAULT_EPOCH_SECONDS * 1000;
        Layout::with_unit(t, w, s, epoch, TimeUnit::Seconds, FieldOrder::default()).unwrap()
    }

    /// The answer is an ID both layouts decode to the worker ids asked, and nothing smaller is.
    fn check(a: &Layout, wa: u64, b: &Layout, wb: u64) -> Option<u64> {
        let shared = a.shared_id(wa, b, wb);
        assert_eq!(shared, b.shared_id(wb, a, wa), "symmetric");
        if let Some(id) = shared {
            assert_eq!(a.decompose(id).unwrap().worker_id, wa);
            assert_eq!(b.decompose(id).unwrap().worker_id, wb);
        }
        shared
    }

    #[test]
    fn one_layout_meets_only_on_the_same_worker_id() {
        let d = Layout::default();
        assert_eq!(check(&d, 0, &d, 0), Some(0));
        assert_eq!(check(&d, 1, &d, 1), Some(1 << 22));
        assert_eq!(check(&d, 1023, &d, 1023), Some(1023 << 22));
        assert_eq!(check(&d, 1, &d, 2), None);
        assert_eq!(check(&d, 0, &d, 1023), None);
        // Epochs and ticks change nothing: the bits are the same.
        let ms = Layout::with_unit(31, 10, 22, 0, TimeUnit::Millis, FieldOrder::default()).unwrap();
        assert_eq!(check(&d, 7, &ms, 7), Some(7 << 22));
        assert_eq!(check(&d, 7, &ms, 8), None);
    }

    #[test]
    fn worker_fields_that_share_bits_must_agree_on_them() {
        // Bits 21..=31 against bits 22..=31: the wider one's worker id shifted down by one.
        let d = Layout::default();
        let wide = layout(31, 11, 21);
        assert_eq!(check(&d, 1, &wide, 2), Some(1 << 22));
        assert_eq!(check(&d, 1, &wide, 3), Some(3 << 21));
        assert_eq!(check(&d, 1, &wide, 4), None);
        assert_eq!(check(&d, 1, &wide, 1), None);
        // Sonyflake's machine id sits at the bottom, below its sequence: it never shares a bit
        // with the default's worker field, so every pair meets.
        let sony = Layout::sonyflake();
        assert_eq!(check(&d, 1, &sony, 5), Some(1 << 22 | 5));
        assert_eq!(check(&sony, 5, &sony, 6), None);
    }

    #[test]
    fn the_largest_value_bounds_the_meeting() {
        // 23 bits in all (values below 2^23), worker bits 10..=12; the default's worker 1 is
        // bit 22, inside it; worker 2 is bit 23, beyond it.
        let small = layout(10, 3, 10);
        let d = Layout::default();
        assert_eq!(check(&small, 0, &d, 1), Some(1 << 22));
        assert_eq!(check(&small, 0, &d, 2), None);
        assert_eq!(check(&small, 1, &d, 1), Some(1 << 22 | 1 << 10));
        // js53 stops below 2^53: the default's worker ids from 2^(53-22) = 2048 up would be
        // beyond it, and ids up to 1023 all fit.
        let js = Layout::js53();
        assert_eq!(check(&js, 0, &d, 1023), Some(1023 << 22));
        // Layouts of 64 bits stop below the sign bit, as the IDs do.
        let discord = Layout::discord();
        assert_eq!(check(&discord, 1, &discord, 1), Some(1 << 12));
        let top = layout(1, 40, 22);
        assert_eq!(
            check(&top, (1 << 40) - 1, &top, (1 << 40) - 1),
            Some(((1 << 40) - 1) << 22)
        );
    }

    #[test]
    fn a_worker_id_beyond_its_layout_makes_no_id() {
        let d = Layout::default();
        assert_eq!(d.shared_id(1024, &d, 1024), None);
        assert_eq!(d.shared_id(u64::MAX, &d, 0), None);
    }
}
