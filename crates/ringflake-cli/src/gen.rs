//! `ringflake gen -n N`: N new IDs, one per line, in decimal or a text form (`--format`), as
//! public IDs with `--id-key-file`.

use crate::args::GenArgs;
use crate::generators;
use ringflake::{IdFormat, LeadPolicy};
use ringflake_server::model::plan::Lead;
use ringflake_server::text::stdout_error;
use std::io::{BufWriter, Write};

/// The largest batch `gen` takes at once.
const BATCH: u64 = 4096;

/// Prints `-n` IDs, taken from the generator in batches (never larger than the lead cap allows:
/// a tiny layout with a small cap holds fewer than [`BATCH`] IDs at once).
pub fn run(a: &GenArgs, matches: &clap::ArgMatches) -> Result<(), String> {
    let (_, layout) = a.layout.zone_and_layout()?;
    let format = IdFormat::from(a.format);
    let key = ringflake_server::text::id_key(a.id_key_file.as_deref())?;
    let state = a.state.path(matches)?;
    let source = a.worker.source(matches)?.keeping(state.as_deref());
    let generator = generators::generator(layout, &source, None, state.as_deref(), None)?;
    if state.is_none() && source.known_id().is_some() {
        // A worker id the next run gets again (fixed, or from the host name), and nothing that
        // starts that run above this one's IDs: what serve says at start, on standard error.
        let lead = match generator.max_lead() {
            Some(cap) => Lead::Capped(cap.as_secs(), LeadPolicy::Wait),
            None => Lead::Unbounded,
        };
        eprint!(
            "{}",
            ringflake_server::startup::state_line(None, generator.worker_id(), lead)
        );
    }
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let batch_len = generator.max_batch().map_or(BATCH, |max| max.min(BATCH));
    let mut batch = vec![0u64; batch_len as usize];
    let mut left = a.count;
    while left > 0 {
        let n = left.min(batch.len() as u64) as usize;
        generator
            .next_ids(&mut batch[..n])
            .map_err(|e| e.to_string())?;
        for &id in &batch[..n] {
            let id = match &key {
                Some(key) => key.encrypt(id).map_err(|e| e.to_string())?,
                None => id,
            };
            let text = format.encode(id);
            if let Err(e) = out
                .write_all(text.as_bytes())
                .and_then(|()| out.write_all(b"\n"))
            {
                return stdout_error(e);
            }
        }
        left -= n as u64;
    }
    out.flush().or_else(stdout_error)
}
