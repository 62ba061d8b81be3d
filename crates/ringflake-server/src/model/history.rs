//! A generator's recent issue counts, from which the status page draws its chart.

use std::collections::VecDeque;
use std::sync::Mutex;

/// How many samples a generator's history keeps: two minutes at one a second.
pub const SAMPLES: usize = 120;

/// One sample: when (unix milliseconds) and how many IDs the generator had issued.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// When, in unix milliseconds.
    pub at_ms: i64,
    /// The generator's issued count then.
    pub issued: u64,
}

/// A generator's recent issue counts: at most [`SAMPLES`] + 1 samples (one more than rates).
#[derive(Debug, Default)]
pub struct History(Mutex<VecDeque<Sample>>);

impl History {
    /// Adds a sample, dropping the oldest beyond [`SAMPLES`] + 1.
    pub fn push(&self, sample: Sample) {
        let mut h = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if h.len() > SAMPLES {
            h.pop_front();
        }
        h.push_back(sample);
    }

    /// IDs issued per second between consecutive samples, oldest first (at most [`SAMPLES`]).
    pub fn rates(&self) -> Vec<f64> {
        let h = self.0.lock().unwrap_or_else(|e| e.into_inner());
        h.iter()
            .zip(h.iter().skip(1))
            .map(|(a, b)| {
                let seconds = (b.at_ms - a.at_ms).max(1) as f64 / 1000.0;
                b.issued.saturating_sub(a.issued) as f64 / seconds
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_from_samples() {
        let h = History::default();
        assert!(h.rates().is_empty());
        h.push(Sample {
            at_ms: 1_000,
            issued: 0,
        });
        h.push(Sample {
            at_ms: 2_000,
            issued: 500,
        });
        h.push(Sample {
            at_ms: 2_500,
            issued: 1_000,
        });
        assert_eq!(h.rates(), [500.0, 1_000.0]);
        for i in 0..1_000 {
            h.push(Sample {
                at_ms: 3_000 + i,
                issued: 0,
            });
        }
        assert_eq!(h.rates().len(), SAMPLES, "bounded");
    }
}
