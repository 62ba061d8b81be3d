//! `ringflake parse ID…`: UidGenerator's `parseUID` JSON for each ID, one per line.

use crate::args::ParseArgs;
use crate::text::{parse_uid, stdout_error};
use std::io::Write;

/// Prints one JSON line per good ID; bad IDs are reported and make the exit non-zero.
pub fn run(a: &ParseArgs) -> Result<(), String> {
    let (tz, layout) = a.layout.zone_and_layout()?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut bad = 0;
    for text in &a.ids {
        match parse_uid(text, &layout, &tz) {
            Ok(json) => {
                if let Err(e) = writeln!(out, "{json}") {
                    return stdout_error(e);
                }
            }
            Err(message) => {
                let _ = out.flush();
                eprintln!("ringflake: error: {message}");
                bad += 1;
            }
        }
    }
    match bad {
        0 => Ok(()),
        1 => Err("1 ID could not be parsed".into()),
        n => Err(format!("{n} IDs could not be parsed")),
    }
}
