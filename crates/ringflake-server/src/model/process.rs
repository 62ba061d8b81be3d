//! The `process_*` series every Prometheus client library exports (CPU seconds, resident and
//! virtual memory, open and maximum file descriptors, threads, start time), read from `/proc` at
//! each scrape, as the Go and Java clients do; nothing on other systems. Read here rather than
//! by the `metrics-process` crate: a few files, no dependency.

use std::fmt::Write as _;

/// `/proc`'s clock ticks a second (`USER_HZ`): 100 on every Linux architecture, whatever the
/// kernel's own tick rate (`sysconf(_SC_CLK_TCK)` answers it).
const TICKS_PER_SECOND: f64 = 100.0;

/// The process's figures.
#[derive(Debug, Default, PartialEq)]
pub struct Process {
    /// User and system CPU time, in seconds (`process_cpu_seconds_total`).
    pub cpu_seconds: f64,
    /// Resident memory, in bytes (`process_resident_memory_bytes`).
    pub resident_bytes: u64,
    /// Virtual memory, in bytes (`process_virtual_memory_bytes`).
    pub virtual_bytes: u64,
    /// Open file descriptors (`process_open_fds`).
    pub open_fds: u64,
    /// The soft limit on open file descriptors, if known (`process_max_fds`).
    pub max_fds: Option<u64>,
    /// Threads (`process_threads`).
    pub threads: u64,
    /// When the process started, in seconds since the Unix epoch (`process_start_time_seconds`).
    pub start_time_seconds: f64,
}

/// Reads them from `/proc/self`; `None` where there is no `/proc`.
pub fn read() -> Option<Process> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let boot = std::fs::read_to_string("/proc/stat").ok()?;
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let open_fds = std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count() as u64);
    parse(&stat, &status, &boot, &limits, open_fds)
}

/// The figures from the texts of `/proc/self/stat`, `/proc/self/status`, `/proc/stat` and
/// `/proc/self/limits`, and the count of `/proc/self/fd`.
fn parse(stat: &str, status: &str, boot: &str, limits: &str, open_fds: u64) -> Option<Process> {
    // The fields after the command name, which is in parentheses and may hold anything.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // Field 3 (state) is fields[0]: utime is field 14, stime 15, num_threads 20, starttime 22.
    let field = |n: usize| fields.get(n - 3)?.parse::<u64>().ok();
    let kb = |key: &str| {
        status.lines().find_map(|l| {
            let rest = l.strip_prefix(key)?.strip_prefix(':')?;
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
    };
    let btime: u64 = boot
        .lines()
        .find_map(|l| l.strip_prefix("btime ")?.trim().parse().ok())?;
    let max_fds = limits.lines().find_map(|l| {
        let rest = l.strip_prefix("Max open files")?;
        rest.split_whitespace().next()?.parse().ok()
    });
    Some(Process {
        cpu_seconds: (field(14)? + field(15)?) as f64 / TICKS_PER_SECOND,
        resident_bytes: kb("VmRSS").unwrap_or(0) * 1024,
        virtual_bytes: kb("VmSize").unwrap_or(0) * 1024,
        open_fds,
        max_fds,
        threads: field(20)?,
        start_time_seconds: btime as f64 + field(22)? as f64 / TICKS_PER_SECOND,
    })
}

/// Appends the `process_*` series, in Prometheus's text format, if `/proc` has them.
pub fn render(out: &mut String) {
    if let Some(p) = read() {
        render_figures(&p, out);
    }
}

fn render_figures(p: &Process, out: &mut String) {
    let mut series = |name: &str, kind: &str, help: &str, value: String| {
        let _ = write!(
            out,
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}\n"
        );
    };
    series(
        "process_cpu_seconds_total",
        "counter",
        "Total user and system CPU time spent in seconds.",
        p.cpu_seconds.to_string(),
    );
    series(
        "process_resident_memory_bytes",
        "gauge",
        "Resident memory size in bytes.",
        p.resident_bytes.to_string(),
    );
    series(
        "process_virtual_memory_bytes",
        "gauge",
        "Virtual memory size in bytes.",
        p.virtual_bytes.to_string(),
    );
    series(
        "process_open_fds",
        "gauge",
        "Number of open file descriptors.",
        p.open_fds.to_string(),
    );
    if let Some(max) = p.max_fds {
        series(
            "process_max_fds",
            "gauge",
            "Maximum number of open file descriptors.",
            max.to_string(),
        );
    }
    series(
        "process_threads",
        "gauge",
        "Number of OS threads in the process.",
        p.threads.to_string(),
    );
    series(
        "process_start_time_seconds",
        "gauge",
        "Start time of the process since unix epoch in seconds.",
        p.start_time_seconds.to_string(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fields of a real `/proc/self/stat` line (a command name with spaces and a parenthesis
    /// in it), status, /proc/stat and limits.
    #[test]
    fn proc_texts_are_read() {
        let stat = "4242 (ring flake) x) S 1 4242 4242 0 -1 4194560 1200 0 0 0 250 75 0 0 20 0 \
                    9 0 123456 812345344 2100 18446744073709551615";
        let status = "Name:\tringflake\nVmSize:\t  793306 kB\nVmRSS:\t    8400 kB\nThreads:\t9\n";
        let boot = "cpu  1 2 3\nbtime 1764000000\nprocesses 99\n";
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max open files            65536                524288               files\n";
        let p = parse(stat, status, boot, limits, 12).unwrap();
        assert_eq!(
            p,
            Process {
                cpu_seconds: 3.25,
                resident_bytes: 8400 * 1024,
                virtual_bytes: 793306 * 1024,
                open_fds: 12,
                max_fds: Some(65536),
                threads: 9,
                start_time_seconds: 1764000000.0 + 1234.56,
            }
        );
        let mut out = String::new();
        render_figures(&p, &mut out);
        assert!(out.contains("\nprocess_cpu_seconds_total 3.25\n"), "{out}");
        assert!(out.contains("\nprocess_max_fds 65536\n"), "{out}");
        assert!(parse("garbage", status, boot, limits, 1).is_none());
    }

    /// This process's own figures, where there is a `/proc`.
    #[cfg(target_os = "linux")]
    #[test]
    fn this_process() {
        let p = read().expect("/proc/self");
        assert!(
            p.resident_bytes > 0 && p.open_fds >= 3 && p.threads >= 1,
            "{p:?}"
        );
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        // Started before now, and after 2001-09-09 (a fixed second, not one counted back from
        // today: under libfaketime's clock years ahead, /proc's boot time stays the real one).
        assert!(
            p.start_time_seconds <= now + 1.0 && p.start_time_seconds > 1_000_000_000.0,
            "{p:?}"
        );
    }
}
