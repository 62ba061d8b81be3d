//! The tests of `args`: the flags' names, value parsers and stated defaults (a file of their
//! own, so that `args` keeps to the flags).

use crate::args::*;
use clap::{CommandFactory, Parser};
use ringflake::{DEFAULT_EPOCH_SECONDS, DEFAULT_MAX_LEAD, Layout, LeadPolicy};

#[test]
fn lead_policy_names() {
    let policy = |args: &[&str]| {
        let cli = Cli::try_parse_from([&["ringflake", "serve"], args].concat()).unwrap();
        match cli.command {
            Command::Serve(a) => LeadPolicy::from(a.ring.lead_policy),
            _ => unreachable!(),
        }
    };
    assert_eq!(policy(&[]), LeadPolicy::Wait);
    assert_eq!(policy(&["--lead-policy", "wait"]), LeadPolicy::Wait);
    assert_eq!(policy(&["--lead-policy", "fail"]), LeadPolicy::Fail);
    assert!(Cli::try_parse_from(["ringflake", "serve", "--lead-policy", "later"]).is_err());
}

/// Values of the wrong form name the form expected.
#[test]
fn value_errors_show_the_expected_form() {
    let e = socket_addr("localhost:18088").unwrap_err();
    assert!(
        e.contains("IP:PORT like 127.0.0.1:8080") && e.contains("localhost: 127.0.0.1"),
        "{e}"
    );
    assert_eq!(socket_addr("[::1]:80").unwrap().port(), 80);
    assert_eq!(whole_number("1_000_000"), Ok(1_000_000));
    assert_eq!(whole_number("4,194,304"), Ok(4_194_304));
    for bad in ["1e6", "2.5", "-3", ""] {
        let e = whole_number(bad).unwrap_err();
        assert!(e.contains("expected digits, like 1000000"), "{bad}: {e}");
    }
    assert!(
        whole_number("99999999999999999999")
            .unwrap_err()
            .contains("too large")
    );
    assert_eq!(count("0"), Err("0 IDs: give at least 1".into()));
    assert_eq!(count("5"), Ok(5));
}

/// The defaults the help text states are the library's.
#[test]
fn help_states_the_library_defaults() {
    let cli = Cli::command();
    let serve = cli.find_subcommand("serve").unwrap();
    let help = |id: &str| {
        serve
            .get_arguments()
            .find(|a| a.get_id() == id)
            .and_then(|a| a.get_help())
            .map(|h| h.to_string())
            .unwrap_or_default()
    };
    let d = Layout::default();
    for (id, value) in [
        ("time_bits", u64::from(d.time_bits())),
        ("worker_bits", u64::from(d.worker_bits())),
        ("seq_bits", u64::from(d.seq_bits())),
        ("max_lead", DEFAULT_MAX_LEAD.as_secs()),
        ("max_wait", DEFAULT_MAX_WAIT.as_secs()),
    ] {
        let text = help(id);
        assert!(
            text.ends_with(&format!("[default: {value}]")),
            "{id}: {text}"
        );
    }
    assert!(help("state_file").ends_with(&format!("[default: {DEFAULT_STATE_FILE}]")));
    assert_eq!(d.epoch_seconds(), DEFAULT_EPOCH_SECONDS);
    assert!(help("epoch").contains("[default: 2025-01-01 UTC]"));
    assert_eq!(
        jiff::Timestamp::from_second(DEFAULT_EPOCH_SECONDS)
            .unwrap()
            .to_string(),
        "2025-01-01T00:00:00Z"
    );
}
