//! The `ringflake` command: an HTTP ID service (`serve`), `gen` and `parse` for scripts and Java
//! migrators, a layout planner (`layout`) and a look at the worker table (`workers`).
//!
//! A thin layer over the library: the generator, layouts, worker tables, metrics and the planner
//! all live in `ringflake`; this binary only reads flags, speaks HTTP and prints. This file only
//! dispatches: each command is a module of its own. Its rooms, each importing only those before
//! it: the flags (`args`), turning them into generators (`generators`), the service (`serve`:
//! its model, handlers and server).
// One `unsafe` block in the binary, with its SAFETY comment: the declaration of glibc's
// `malloc_trim` (serve/model/memory.rs); everything else is safe code.
#![deny(unsafe_code)]

mod args;
#[cfg(test)]
mod args_tests;
mod completions;
mod r#gen;
mod generators;
mod layout;
mod log;
mod parse;
mod segment_args;
mod segments;
mod sources;
mod workers;

use args::{Cli, Command};
use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches};
use std::process::ExitCode;

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let result = match &cli.command {
        Command::Serve(a) => {
            // --log or RINGFLAKE_LOG, else RUST_LOG: a bad one exits 2, as a bad flag does.
            let from_default = sub_source(&matches, "log") == Some(ValueSource::DefaultValue);
            let directives = match log::directives(&a.log, from_default) {
                Ok(d) => d,
                Err(message) => {
                    eprintln!("ringflake: error: {message}");
                    return ExitCode::from(2);
                }
            };
            // The service logs through its subscriber; its fatal error reaches standard error
            // whatever the filter (a JSON line with --log-format json).
            return match log::install(&directives, a.log_format).and_then(|()| {
                ringflake_server::run(&generators::serve::config(a), || {
                    let plans = generators::serve::plans(a, &matches)?;
                    Ok((plans, generators::segments::plan(a, &matches)?))
                })
            }) {
                Ok(()) => ExitCode::SUCCESS,
                Err(message) => {
                    log::fatal(&message, a.log_format);
                    ExitCode::FAILURE
                }
            };
        }
        Command::Gen(a) => r#gen::run(a, &matches),
        Command::Parse(a) => parse::run(a),
        Command::Layout(a) => layout::run(a),
        Command::Workers(a) => workers::run(a, &matches),
        Command::Segments { action } => segments::run(action, &matches),
        Command::Completions(a) => completions::completions(a, Cli::command()),
        Command::Man(a) => completions::man(a, Cli::command()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ringflake: error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Where the subcommand's argument `id` got its value.
fn sub_source(matches: &clap::ArgMatches, id: &str) -> Option<ValueSource> {
    matches.subcommand()?.1.value_source(id)
}
