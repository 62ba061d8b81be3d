//! The process's time zone, read as the C library's `tzset` and the JVM read it (the `TZ`
//! variable, `/etc/localtime`, a TZif file, a POSIX rule, an IANA name, `TZDIR`), but refusing
//! what cannot be a time zone instead of reading it without end: the zone `parseUID` renders
//! timestamps in and an `--epoch` date is midnight of. [`crate::Layout`] packs bits; this is
//! where its dates find their zone.

use crate::Error;
use jiff::tz::TimeZone;
use std::ffi::OsStr;
use std::io::Read;
use std::path::Path;

/// The largest time zone file [`system_time_zone`] reads: 1 MiB. A real TZif file is a few KB
/// (the largest under `/usr/share/zoneinfo` on a Debian system, leap seconds included, 3.9 KB).
///
/// ```
/// use ringflake::{MAX_TIME_ZONE_FILE_BYTES, time_zone_from_tz};
///
/// let dir = tempfile::tempdir().unwrap();
/// let huge = dir.path().join("huge");
/// std::fs::write(&huge, vec![0u8; MAX_TIME_ZONE_FILE_BYTES as usize + 1]).unwrap();
/// let err = time_zone_from_tz(Some(huge.as_os_str())).unwrap_err();
/// assert!(err.to_string().contains("more than the limit of 1048576 bytes"));
/// ```
pub const MAX_TIME_ZONE_FILE_BYTES: u64 = 1 << 20;

/// The process's local time zone: the `TZ` variable, else `/etc/localtime`, else UTC, as the C
/// library's `tzset` and the JVM read it, but refusing what cannot be a time zone instead of
/// reading it without end. [`time_zone_from_tz`] with the value of `TZ`.
///
/// # Errors
///
/// [`Error::TimeZone`] naming the variable, its value and the limit it broke; see
/// [`time_zone_from_tz`].
///
/// # Examples
///
/// ```
/// // Whatever the machine's zone is, it is read within bounds and has an offset.
/// let tz = ringflake::system_time_zone()?;
/// let offset = tz.to_offset(jiff::Timestamp::UNIX_EPOCH);
/// assert!(offset.seconds().abs() <= 26 * 3600);
/// # Ok::<(), ringflake::Error>(())
/// ```
pub fn system_time_zone() -> Result<TimeZone, Error> {
    time_zone_from_tz(std::env::var_os("TZ").as_deref())
}

/// The time zone a value of the `TZ` variable names (`None`: unset), as
/// [`system_time_zone`] reads it, without touching the process's environment:
///
/// - unset: the file `/etc/localtime` (named after its link into a `zoneinfo` directory), or UTC
///   if there is none; on platforms without it, the operating system's zone;
/// - empty: UTC;
/// - an absolute path, or `:` followed by one (`man tzset`): that TZif file, which must be a
///   regular file of at most [`MAX_TIME_ZONE_FILE_BYTES`] (so `/dev/zero`, `/dev/urandom`, a
///   FIFO or a directory are refused before anything is read), and is read no further than that;
/// - a POSIX rule such as `CST-8` or `EST5EDT,M3.2.0,M11.1.0`;
/// - else (with or without a leading `:`) an IANA name such as `Asia/Shanghai`, looked up in the
///   system's time zone database (else the one compiled in); with `TZDIR` set, the file
///   `TZDIR/<name>` read as above if there is one, else the database compiled in.
///
/// Unlike `jiff`'s [`TimeZone::try_system`], a relative name that is not in the database is an
/// error, not a file to read relative to the working directory.
///
/// # Errors
///
/// [`Error::TimeZone`] naming `TZ=<value>` (or `/etc/localtime`) and why: not a regular file,
/// larger than the limit, not a TZif file, unreadable, an unknown name, not UTF-8.
///
/// # Examples
///
/// ```
/// use ringflake::{Error, TimeZone, time_zone_from_tz};
/// use std::ffi::OsStr;
///
/// let zone = |tz: &str| time_zone_from_tz(Some(OsStr::new(tz)));
/// let noon_utc = jiff::Timestamp::from_second(1_735_732_800).unwrap();
/// assert_eq!(zone("Asia/Shanghai")?.to_offset(noon_utc).seconds(), 8 * 3600);
/// assert_eq!(zone("CST-8")?.to_offset(noon_utc).seconds(), 8 * 3600);
/// assert_eq!(zone("")?, TimeZone::UTC);
///
/// let err = zone("/dev/zero").unwrap_err();
/// assert!(matches!(err, Error::TimeZone { .. }));
/// assert_eq!(err.to_string(), "time zone TZ=/dev/zero: not a regular file (a TZif file of at most 1048576 bytes was expected)");
/// assert!(zone("Not/A_Zone").unwrap_err().to_string().contains("unknown time zone name"));
/// # Ok::<(), ringflake::Error>(())
/// ```
pub fn time_zone_from_tz(tz: Option<&OsStr>) -> Result<TimeZone, Error> {
    let Some(value) = tz else {
        return local_time_zone();
    };
    let setting = format!("TZ={}", value.to_string_lossy());
    if value.is_empty() {
        // The convention of Unix tools (and jiff's): an empty TZ is UTC.
        return Ok(TimeZone::UTC);
    }
    let Some(text) = value.to_str() else {
        return Err(zone_error(&setting, "not UTF-8".into()));
    };
    let implementation = text.strip_prefix(':');
    let rest = implementation.unwrap_or(text);
    if Path::new(rest).is_absolute() {
        return zone_file(Path::new(rest), &setting, None);
    }
    if implementation.is_none()
        && let Ok(tz) = TimeZone::posix(text)
    {
        return Ok(tz);
    }
    named_zone(rest, &setting)
}

fn zone_error(setting: &str, reason: String) -> Error {
    Error::TimeZone {
        setting: setting.to_string(),
        reason,
    }
}

/// `TZ` unset: `/etc/localtime`, or UTC without one, as `tzset` does.
#[cfg(unix)]
fn local_time_zone() -> Result<TimeZone, Error> {
    let path = Path::new("/etc/localtime");
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TimeZone::UTC),
        _ => zone_file(path, "/etc/localtime", None),
    }
}

/// `TZ` unset: the operating system's zone (no file to read on these platforms).
#[cfg(not(unix))]
fn local_time_zone() -> Result<TimeZone, Error> {
    if let Some(tz) = std::env::var_os("TZ") {
        // jiff would honour it: check it as ours.
        return time_zone_from_tz(Some(tz.as_os_str()));
    }
    TimeZone::try_system()
        .map_err(|e| zone_error("of the operating system", format!("cannot be read: {e}")))
}

/// Reads a TZif file within [`MAX_TIME_ZONE_FILE_BYTES`], refusing anything but a regular file
/// before opening it (opening a FIFO would block). Named `name`, else after the part of its
/// path, or of its link's target, that follows `zoneinfo/`, else after its path.
fn zone_file(path: &Path, setting: &str, name: Option<&str>) -> Result<TimeZone, Error> {
    let refuse = |reason: String| zone_error(setting, reason);
    check_zone_file(path, setting)?;
    let mut file = std::fs::File::open(path).map_err(|e| refuse(format!("cannot open: {e}")))?;
    // Checked again on what was opened: the path may have changed in between.
    let meta = file
        .metadata()
        .map_err(|e| refuse(format!("cannot read: {e}")))?;
    if !meta.is_file() {
        return Err(refuse(not_regular()));
    }
    let mut data = Vec::new();
    (&mut file)
        .take(MAX_TIME_ZONE_FILE_BYTES + 1)
        .read_to_end(&mut data)
        .map_err(|e| refuse(format!("cannot read: {e}")))?;
    if data.len() as u64 > MAX_TIME_ZONE_FILE_BYTES {
        return Err(refuse(format!(
            "grew past the limit of {MAX_TIME_ZONE_FILE_BYTES} bytes while being read"
        )));
    }
    let name = name
        .map(str::to_string)
        .or_else(|| zoneinfo_name(path))
        .or_else(|| {
            std::fs::read_link(path)
                .ok()
                .and_then(|t| zoneinfo_name(&t))
        })
        .unwrap_or_else(|| path.display().to_string());
    TimeZone::tzif(&name, &data).map_err(|e| refuse(format!("not a TZif time zone file: {e}")))
}

/// Refuses anything but a regular file of at most [`MAX_TIME_ZONE_FILE_BYTES`], without opening
/// it.
fn check_zone_file(path: &Path, setting: &str) -> Result<(), Error> {
    let refuse = |reason: String| zone_error(setting, reason);
    let meta = std::fs::metadata(path).map_err(|e| refuse(format!("cannot read: {e}")))?;
    if !meta.is_file() {
        return Err(refuse(not_regular()));
    }
    if meta.len() > MAX_TIME_ZONE_FILE_BYTES {
        return Err(refuse(format!(
            "{} bytes, more than the limit of {MAX_TIME_ZONE_FILE_BYTES} bytes (a TZif file is a few KB)",
            meta.len()
        )));
    }
    Ok(())
}

fn not_regular() -> String {
    format!(
        "not a regular file (a TZif file of at most {MAX_TIME_ZONE_FILE_BYTES} bytes was expected)"
    )
}

/// The zone name in a path into a zoneinfo directory: `Asia/Shanghai` for
/// `/usr/share/zoneinfo/Asia/Shanghai`.
fn zoneinfo_name(path: &Path) -> Option<String> {
    let text = path.to_str()?;
    let name = &text[text.rfind("zoneinfo/")? + "zoneinfo/".len()..];
    (!name.is_empty()).then(|| name.to_string())
}

/// An IANA name, from the system's time zone database (the one compiled in if there is none).
/// With `TZDIR` set, the database would be read from there without bounds, so instead the file
/// `TZDIR/<name>` is read as any zone file, within the bound, else the name is looked up in the
/// database compiled in.
fn named_zone(name: &str, setting: &str) -> Result<TimeZone, Error> {
    let unknown = |e: jiff::Error| {
        zone_error(
            setting,
            format!(
                "unknown time zone name ({e}); expected an IANA name such as Asia/Shanghai, a \
                 POSIX rule such as CST-8, or an absolute path to a TZif file"
            ),
        )
    };
    let Some(dir) = std::env::var_os("TZDIR") else {
        return jiff::tz::db().get(name).map_err(unknown);
    };
    let file = Path::new(&dir).join(name);
    match std::fs::symlink_metadata(&file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => jiff::tz::TimeZoneDatabase::bundled()
            .get(name)
            .map_err(unknown),
        _ => zone_file(
            &file,
            &format!("{setting} (file {} in TZDIR)", file.display()),
            Some(name),
        ),
    }
}
