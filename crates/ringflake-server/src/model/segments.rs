//! Meituan Leaf's segment mode in the service: the [`SegmentGenerator`] over the `leaf_alloc`
//! table of the worker database ([`Plan`], plain values from the flags), which tags hand out
//! public numbers through the ID key ([`Hidden`]), and its Prometheus series.

use ringflake::{IdCipher, SegmentGenerator, SegmentMetrics, SegmentTable};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The segment generator to boot, as plain values and the table it claims ranges from.
///
/// The caller opens the table (`SegmentTable::sqlite`, `::mysql`, `::postgres`, with its CA
/// file, timeout and replication settings), so this crate needs none of the database drivers;
/// a table that could not be described is kept as its error, and the route answers 503 with it.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The worker database's `leaf_alloc`, or why it could not be opened.
    pub table: Result<SegmentTable, String>,
    /// `--segment-state-dir`, or the state file's beside it; `None` with `--no-state-file`.
    pub state_dir: Option<PathBuf>,
    /// `--segment-max-wait`.
    pub max_wait: Duration,
    /// `--segment-refresh`.
    pub refresh: Duration,
    /// `--hide-volume`.
    pub hidden: Hidden,
}

/// The tags whose numbers go out through the ID key's permutation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hidden {
    /// None (no `--hide-volume`).
    None,
    /// Every tag (`--hide-volume '*'`).
    All,
    /// These.
    Tags(BTreeSet<String>),
}

impl Hidden {
    /// Whether `tag`'s numbers are hidden.
    pub fn hides(&self, tag: &str) -> bool {
        match self {
            Hidden::None => false,
            Hidden::All => true,
            Hidden::Tags(tags) => tags.contains(tag),
        }
    }
}

/// The service's segment mode: its generator (or why it could not start), the key, the series.
pub struct Segments {
    /// The generator, or why there is none (the table could not be read or created): the route
    /// answers 503 with it, and the rest of the service runs.
    pub generator: Result<SegmentGenerator, String>,
    /// How the numbers' volume is hidden (`--hide-volume`).
    pub hidden: Hidden,
    /// The key of the public IDs (`--id-key-file`), if any.
    pub key: Option<Arc<IdCipher>>,
    /// The segment mode's series, their handles registered once.
    pub metrics: SegmentMetrics,
    /// Where `leaf_alloc` is, described.
    pub table: String,
}

impl Segments {
    /// Boots the generator of `plan`; a failure is kept (and logged), not fatal.
    pub fn boot(plan: &Plan, key: Option<Arc<IdCipher>>) -> Segments {
        let described = plan.table.as_ref().map_or_else(
            |_| "the worker database".to_string(),
            SegmentTable::describe,
        );
        let generator = plan.table.clone().and_then(|t| {
            let builder = || {
                SegmentGenerator::builder(t.clone())
                    .max_wait(plan.max_wait)
                    .refresh_interval(plan.refresh)
            };
            let Some(dir) = &plan.state_dir else {
                return builder().build().map_err(|e| e.to_string());
            };
            match builder().state_dir(dir).build() {
                // Another live process holds the directory: run without one rather than
                // share its ranges (a restart then loses what is left, as Leaf's does).
                Err(ringflake::Error::StateFile { path, reason }) => {
                    tracing::warn!(
                        target: crate::log::TARGET,
                        state_dir = %path,
                        "segment state directory {path} not used ({reason}): a restart \
                         of this process loses what is left of each biz_tag's two segments"
                    );
                    builder().build()
                }
                other => other,
            }
            .map_err(|e| e.to_string())
        });
        if let Err(e) = &generator {
            tracing::warn!(
                target: crate::log::TARGET,
                table = %described,
                error = %e,
                "segment mode off: {e}; /api/segment/get answers 503 until a restart"
            );
        }
        Segments {
            generator,
            hidden: plan.hidden.clone(),
            key,
            metrics: SegmentMetrics::new(),
            table: described,
        }
    }

    /// `n` of `tag` as handed out: through the key's permutation if `tag`'s volume is hidden.
    ///
    /// # Errors
    ///
    /// A negative number of a hidden tag, which the permutation (of `0..2^63`) cannot take.
    #[inline]
    pub fn public(&self, tag: &str, n: i64) -> Result<i64, String> {
        match &self.key {
            // Inlined up to here: a service without a key pays one branch per number.
            Some(key) => self.hidden_if(key, tag, n),
            None => Ok(n),
        }
    }

    /// [`Segments::public`] with a key.
    fn hidden_if(&self, key: &IdCipher, tag: &str, n: i64) -> Result<i64, String> {
        if !self.hidden.hides(tag) {
            return Ok(n);
        }
        u64::try_from(n)
            .ok()
            .and_then(|n| key.encrypt(n).ok())
            .map(|p| p as i64)
            .ok_or_else(|| {
                format!(
                    "biz_tag {tag}: number {n} cannot be hidden: the ID key permutes 0 to {} \
                     (set the row's max_id to 0 or more)",
                    i64::MAX
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_numbers_are_a_permutation_within_positive_longs() {
        let key = Arc::new(IdCipher::new(&[9; 32]));
        let s = Segments {
            generator: Err("off".into()),
            hidden: Hidden::Tags(BTreeSet::from(["orders".to_string()])),
            key: Some(key),
            metrics: SegmentMetrics::new(),
            table: String::new(),
        };
        assert_eq!(s.public("users", 5), Ok(5));
        let hidden: BTreeSet<i64> = (1..=1000).map(|n| s.public("orders", n).unwrap()).collect();
        assert_eq!(hidden.len(), 1000, "no two numbers share a public one");
        assert!(hidden.iter().all(|&p| p >= 0));
        // Consecutive numbers are far apart: the volume does not show.
        let (a, b) = (
            s.public("orders", 1).unwrap(),
            s.public("orders", 2).unwrap(),
        );
        assert!(a.abs_diff(b) > 1_000_000, "{a} {b}");
        let e = s.public("orders", -3).unwrap_err();
        assert!(e.contains("number -3 cannot be hidden"), "{e}");
        assert!(Hidden::All.hides("x") && !Hidden::None.hides("x"));
    }
}
