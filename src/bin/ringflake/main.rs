//! The `ringflake` command: an HTTP ID service (`serve`), `gen` and `parse` for scripts and Java
//! migrators, a layout planner (`layout`) and a look at the worker table (`workers`).
//!
//! A thin layer over the library: the generator, layouts, worker tables, metrics and the planner
//! all live in `ringflake`; this binary only reads flags, speaks HTTP and prints. This file only
//! dispatches: each command is a module of its own, the flags are in `args`.
#![forbid(unsafe_code)]

mod args;
mod r#gen;
mod layout;
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
        Command::Serve(a) => serve::run(a, &matches),
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
