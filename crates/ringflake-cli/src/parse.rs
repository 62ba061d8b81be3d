//! `ringflake parse ID…`: UidGenerator's `parseUID` JSON for each ID, one per line; with no ID
//! or `-`, the IDs are read from standard input, one a line (`ringflake gen -n 5 | ringflake
//! parse`). IDs in decimal or a text form (`--format`, else told by each ID's text); public IDs
//! read back with `--id-key-file`.

use crate::args::ParseArgs;
use ringflake_server::text::{parse_uid, stdout_error};
use std::io::Write;

/// Prints one JSON line per good ID; bad IDs are reported and make the exit non-zero.
pub fn run(a: &ParseArgs) -> Result<(), String> {
    let (tz, layout) = a.layout.zone_and_layout()?;
    let key = ringflake_server::text::id_key(a.id_key_file.as_deref())?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut bad = 0;
    let stdin_lines;
    let ids: Box<dyn Iterator<Item = Result<String, String>>> =
        if a.ids.is_empty() || a.ids == ["-"] {
            if a.ids.is_empty() && std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                return Err("no ID: give IDs as arguments, or pipe them in, one a line \
                            (ringflake gen -n 5 | ringflake parse)"
                    .into());
            }
            stdin_lines = std::io::stdin().lock();
            Box::new(
                std::io::BufRead::lines(stdin_lines)
                    .map(|l| l.map_err(|e| format!("cannot read standard input: {e}")))
                    // Blank lines (a trailing one, CRLF endings) are not IDs.
                    .filter(|l| l.as_ref().map_or(true, |l| !l.trim().is_empty()))
                    .map(|l| l.map(|l| l.trim().to_string())),
            )
        } else {
            Box::new(a.ids.iter().cloned().map(Ok))
        };
    for text in ids {
        let text = text?;
        match parse_uid(&text, a.format.format(), key.as_ref(), &layout, &tz) {
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
