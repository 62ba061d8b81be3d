//! `ringflake gen -n N`: N new IDs, one per line.

use crate::args::{self, GenArgs};
use crate::text::stdout_error;
use std::io::{BufWriter, Write};

/// Prints `-n` IDs, taken from the generator in batches.
pub fn run(a: &GenArgs, matches: &clap::ArgMatches) -> Result<(), String> {
    let (_, layout) = a.layout.zone_and_layout()?;
    let source = a.worker.source(matches)?;
    let generator = args::generator(layout, &source, None)?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut batch = vec![0u64; 4096];
    let mut left = a.count;
    while left > 0 {
        let n = left.min(batch.len() as u64) as usize;
        generator
            .next_ids(&mut batch[..n])
            .map_err(|e| e.to_string())?;
        for id in &batch[..n] {
            if let Err(e) = writeln!(out, "{id}") {
                return stdout_error(e);
            }
        }
        left -= n as u64;
    }
    out.flush().or_else(stdout_error)
}
