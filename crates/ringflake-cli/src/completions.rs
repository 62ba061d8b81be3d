//! `ringflake completions SHELL` and `ringflake man [COMMAND]`: what a shell and `man` need,
//! generated from the flags clap knows (clap_complete, clap_mangen), so they never drift from
//! `--help`.

use clap::Args;
use std::io::Write;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell
    #[arg(value_name = "SHELL", value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// The command whose page to print (serve, gen, parse, layout, workers, completions); none:
    /// the page of ringflake itself
    #[arg(value_name = "COMMAND")]
    pub command: Option<String>,
}

/// Prints the completion script of `a.shell` for `cmd` (the whole command line) on standard
/// output.
pub fn completions(a: &CompletionsArgs, mut cmd: clap::Command) -> Result<(), String> {
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "ringflake", &mut out);
    write(&out)
}

/// Prints the man page (roff) of `cli` (`ringflake`), or of `ringflake-COMMAND`, on standard
/// output.
pub fn man(a: &ManArgs, cli: clap::Command) -> Result<(), String> {
    let mut out = Vec::new();
    render(cli, a.command.as_deref(), &mut out)?;
    write(&out)
}

/// The man page of `cli` (`None`) or of one of its commands, as roff.
fn render(mut cli: clap::Command, command: Option<&str>, out: &mut Vec<u8>) -> Result<(), String> {
    cli.build();
    let page = match command {
        None => cli,
        Some(name) => {
            let names: Vec<String> = cli
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .collect();
            let sub = cli.find_subcommand(name).cloned().ok_or_else(|| {
                format!("no command {name:?}: expected one of {}", names.join(", "))
            })?;
            // The page's name and title as man names them: ringflake-serve.
            // Leaked once per run: clap takes a name as a `&'static str`.
            let full: &'static str = Box::leak(format!("ringflake-{name}").into_boxed_str());
            sub.name(full).bin_name(full)
        }
    };
    clap_mangen::Man::new(page)
        .render(out)
        .map_err(|e| format!("cannot render the man page: {e}"))
}

/// Writes `bytes` to standard output.
fn write(bytes: &[u8]) -> Result<(), String> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .or_else(ringflake_server::text::stdout_error)
}
