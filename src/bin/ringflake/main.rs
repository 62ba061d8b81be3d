//! The `ringflake` command: an HTTP ID service (`serve`), `gen` and `parse` for scripts and Java
//! migrators, a layout planner (`layout`) and a look at the worker table (`workers`).
//!
//! A thin layer over the library: the generator, layouts, worker tables, metrics and the planner
//! all live in `ringflake`; this binary only reads flags, speaks HTTP and prints. This file only
//! dispatches: each command is a module of its own. Its rooms, each importing only those before
//! it: the flags (`args`), turning them into generators (`generators`), the service (`serve`:
//! its model, handlers and server).
#![forbid(unsafe_code)]

mod args;
mod r#gen;
mod generators;
mod layout;
mod log;
mod parse;
mod serve;
mod text;
mod workers;

use args::{Cli, Command};
use clap::{CommandFactory, FromArgMatches};
use std::process::ExitCode;

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let result = match &cli.command {
        Command::Serve(a) => {
            // The service logs through its subscriber, its fatal error included (a JSON line
            // with --log-format json).
            return match log::install(&a.log, a.log_format).and_then(|()| {
                serve::run(&generators::serve::config(a), || {
                    generators::serve::plans(a, &matches)
                })
            }) {
                Ok(()) => ExitCode::SUCCESS,
                Err(message) => {
                    if tracing::dispatcher::has_been_set() {
                        tracing::error!(target: log::TARGET, "error: {message}");
                    } else {
                        eprintln!("ringflake: error: {message}");
                    }
                    ExitCode::FAILURE
                }
            };
        }
        Command::Gen(a) => r#gen::run(a, &matches),
        Command::Parse(a) => parse::run(a),
        Command::Layout(a) => layout::run(a),
        Command::Workers(a) => workers::run(a, &matches),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ringflake: error: {message}");
            ExitCode::FAILURE
        }
    }
}
