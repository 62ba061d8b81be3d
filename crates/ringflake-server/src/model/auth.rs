//! Bearer tokens for the ID and parse routes (`--auth-token-file`).
//!
//! The file holds one token a line; blank lines and lines starting with `#` are ignored, and
//! spaces around a token are trimmed. A token is printable ASCII without spaces (what an
//! `Authorization` header carries as is), at least [`MIN_TOKEN_LEN`] characters. Only the tokens'
//! SHA-256 digests are kept; a request's token is hashed and compared with every digest in
//! constant time (no early exit, on the first match or the first differing byte), so neither the
//! answer's timing nor its length tells how much of a guess was right. No token is ever written
//! to a log, an error or an answer: errors about the file name the file and the line.
//!
//! SIGHUP reloads the file ([`Auth::reload`]); a file that cannot be read or holds no valid token
//! leaves the tokens in use unchanged. The serving threads see a reload through a generation
//! counter that they only read per request: each keeps its own copy of the digests and takes the
//! lock only after a reload.

use sha2::{Digest, Sha256};
use std::cell::RefCell;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use subtle::{Choice, ConstantTimeEq};

/// The shortest token accepted: 16 characters (`openssl rand -hex 32` makes 64).
pub const MIN_TOKEN_LEN: usize = 16;

/// The largest token file read: 1 MiB.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// The tokens, as SHA-256 digests.
struct Tokens(Vec<[u8; 32]>);

/// What every serving thread shares: the file, the digests, and how often they were replaced.
struct Shared {
    path: PathBuf,
    generation: AtomicU64,
    tokens: RwLock<Arc<Tokens>>,
}

/// The tokens of `--auth-token-file`, shared by every serving thread.
#[derive(Clone)]
pub struct Auth(Arc<Shared>);

/// Why a request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denied {
    /// No `Authorization: Bearer …` header.
    Missing,
    /// A bearer token that is not one of the file's (or more than one `Authorization` header).
    Invalid,
}

thread_local! {
    /// This thread's copy of the digests: which `Shared` (by address), its generation, the digests.
    static COPY: RefCell<Option<(usize, u64, Arc<Tokens>)>> = const { RefCell::new(None) };
}

impl Auth {
    /// Reads `path`; the error names the file (and the line), never a token.
    pub fn load(path: &Path) -> Result<Auth, String> {
        let tokens = read(path)?;
        Ok(Auth(Arc::new(Shared {
            path: path.to_path_buf(),
            generation: AtomicU64::new(0),
            tokens: RwLock::new(Arc::new(tokens)),
        })))
    }

    /// The token file.
    pub fn path(&self) -> &Path {
        &self.0.path
    }

    /// How many tokens are in use.
    pub fn count(&self) -> usize {
        self.current().0.len()
    }

    fn current(&self) -> Arc<Tokens> {
        Arc::clone(&self.0.tokens.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Reads the file again and uses its tokens from the next request on; on error the tokens in
    /// use stay. Returns how many tokens there are now.
    pub fn reload(&self) -> Result<usize, String> {
        let tokens = read(&self.0.path)?;
        let n = tokens.0.len();
        *self.0.tokens.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(tokens);
        self.0.generation.fetch_add(1, Ordering::Release);
        Ok(n)
    }

    /// Checks the request's `Authorization` headers.
    pub fn check(&self, headers: &hyper::HeaderMap) -> Result<(), Denied> {
        let mut values = headers.get_all(hyper::header::AUTHORIZATION).iter();
        let Some(value) = values.next() else {
            return Err(Denied::Missing);
        };
        if values.next().is_some() {
            return Err(Denied::Invalid);
        }
        let token = bearer(value.as_bytes()).ok_or(Denied::Missing)?;
        let digest: [u8; 32] = Sha256::digest(token).into();
        let key = Arc::as_ptr(&self.0) as usize;
        let generation = self.0.generation.load(Ordering::Acquire);
        let found = COPY.with(|copy| {
            let mut copy = copy.borrow_mut();
            let fresh = matches!(&*copy, Some((k, g, _)) if *k == key && *g == generation);
            if !fresh {
                *copy = Some((key, generation, self.current()));
            }
            let tokens = &copy.as_ref().expect("just set").2;
            // Every digest is compared, whatever matched before.
            let mut found = Choice::from(0);
            for known in &tokens.0 {
                found |= known.ct_eq(&digest);
            }
            bool::from(found)
        });
        if found { Ok(()) } else { Err(Denied::Invalid) }
    }
}

/// The token of an `Authorization: Bearer <token>` value (the scheme in any case, RFC 9110), if
/// that is what it is.
fn bearer(value: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = value.split_at_checked(6)?;
    if !scheme.eq_ignore_ascii_case(b"bearer") || !rest.starts_with(b" ") {
        return None;
    }
    let token = rest.trim_ascii();
    (!token.is_empty()).then_some(token)
}

/// The tokens of the file at `path`.
fn read(path: &Path) -> Result<Tokens, String> {
    let shown = path.display();
    let file =
        std::fs::File::open(path).map_err(|e| format!("cannot read token file {shown}: {e}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read token file {shown}: {e}"))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "token file {shown} is larger than {MAX_FILE_BYTES} bytes: one token a line"
        ));
    }
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| format!("token file {shown} is not UTF-8 text: one token a line"))?;
    let mut tokens = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let token = line.trim();
        if token.is_empty() || token.starts_with('#') {
            continue;
        }
        let n = i + 1;
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(format!(
                "token file {shown} line {n}: a token is printable ASCII without spaces"
            ));
        }
        if token.len() < MIN_TOKEN_LEN {
            return Err(format!(
                "token file {shown} line {n}: a token of {} characters is too short: at least \
                 {MIN_TOKEN_LEN} (openssl rand -hex 32 makes one)",
                token.len()
            ));
        }
        if let Some(word) = placeholder(token) {
            return Err(format!(
                "token file {shown} line {n}: the token contains {word:?}, the mark of a \
                 placeholder, not a secret: put a random one there (openssl rand -hex 32)"
            ));
        }
        tokens.push(Sha256::digest(token.as_bytes()).into());
    }
    if tokens.is_empty() {
        return Err(format!(
            "token file {shown} holds no token: one token a line (blank lines and lines starting \
             with # are ignored)"
        ));
    }
    Ok(Tokens(tokens))
}

/// Words that mark a token as a placeholder copied from an example (deploy/kubernetes/secret.yaml
/// holds `replace-me-with-a-long-random-token`), compared in lower case.
pub const PLACEHOLDER_WORDS: [&str; 6] = [
    "replace-me",
    "replaceme",
    "changeme",
    "change-me",
    "example",
    "placeholder",
];

/// The placeholder word `token` contains, if any (in any case).
fn placeholder(token: &str) -> Option<&'static str> {
    let lower = token.to_ascii_lowercase();
    PLACEHOLDER_WORDS.into_iter().find(|w| lower.contains(w))
}

/// A warning if every user of the machine can read the file (`what`: "token file", "ID key
/// file"), for the start-up output.
pub fn exposure_warning(what: &str, path: &Path) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(path).ok()?.permissions().mode();
        (mode & 0o004 != 0).then(|| {
            format!(
                "ringflake: warning: {what} {} is readable by every user (mode {:o}): chmod \
                 600 it\n",
                path.display(),
                mode & 0o777
            )
        })
    }
    #[cfg(not(unix))]
    {
        let _ = (what, path);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::{AUTHORIZATION, HeaderValue};

    fn file(text: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
        f
    }

    fn headers(values: &[&str]) -> hyper::HeaderMap {
        let mut h = hyper::HeaderMap::new();
        for v in values {
            h.append(AUTHORIZATION, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn tokens_comments_and_blank_lines() {
        let f = file("# ops\n\n  0123456789abcdef  \nsecond-token-here-0001\n#last\n");
        let auth = Auth::load(f.path()).unwrap();
        assert_eq!(auth.count(), 2);
        assert_eq!(auth.check(&headers(&["Bearer 0123456789abcdef"])), Ok(()));
        assert_eq!(
            auth.check(&headers(&["bearer   second-token-here-0001 "])),
            Ok(())
        );
        for (values, denied) in [
            (&[][..], Denied::Missing),
            (&["Basic 0123456789abcdef"][..], Denied::Missing),
            (&["Bearer"][..], Denied::Missing),
            (&["Bearer "][..], Denied::Missing),
            (&["Bearer0123456789abcdef"][..], Denied::Missing),
            (&["Bearer 0123456789abcdeF"][..], Denied::Invalid),
            (&["Bearer 0123456789abcde"][..], Denied::Invalid),
            (&["Bearer # ops"][..], Denied::Invalid),
            (
                &["Bearer 0123456789abcdef", "Bearer 0123456789abcdef"][..],
                Denied::Invalid,
            ),
        ] {
            assert_eq!(auth.check(&headers(values)), Err(denied), "{values:?}");
        }
    }

    /// The placeholder of deploy/kubernetes/secret.yaml, and others like it, are refused with the
    /// file and line; a reload with one keeps the tokens in use.
    #[test]
    fn placeholder_tokens_are_refused() {
        let secret = include_str!("../../../../deploy/kubernetes/secret.yaml");
        // The line after `tokens: |`.
        let shipped = secret
            .lines()
            .skip_while(|l| l.trim() != "tokens: |")
            .nth(1)
            .expect("the secret's placeholder token");
        for token in [
            shipped.trim().trim_matches('"'),
            "CHANGEME-0123456789abcdef",
            "an-example-token-0123456789",
            "placeholder-0123456789abcdef",
        ] {
            let f = file(&format!("# ops\n{token}\n"));
            let e = Auth::load(f.path())
                .err()
                .unwrap_or_else(|| panic!("{token} accepted"));
            assert!(e.contains("line 2: the token contains"), "{e}");
            assert!(e.contains(&f.path().display().to_string()), "{e}");
            assert!(!e.contains(token), "{e}");
        }
        let f = file("good-token-0123456789\n");
        let auth = Auth::load(f.path()).unwrap();
        std::fs::write(f.path(), "replace-me-with-a-long-random-token\n").unwrap();
        assert!(auth.reload().is_err());
        assert_eq!(
            auth.check(&headers(&["Bearer good-token-0123456789"])),
            Ok(())
        );
    }

    #[test]
    fn bad_files_name_the_file_and_line_never_the_token() {
        let f = file("# nothing\n\n");
        let e = Auth::load(f.path()).err().unwrap();
        assert!(e.contains("holds no token"), "{e}");
        assert!(e.contains(&f.path().display().to_string()), "{e}");
        let f = file("");
        assert!(
            Auth::load(f.path())
                .err()
                .unwrap()
                .contains("holds no token")
        );
        let f = file("0123456789abcdef\nshort-one\n");
        let e = Auth::load(f.path()).err().unwrap();
        assert!(
            e.contains("line 2: a token of 9 characters is too short"),
            "{e}"
        );
        assert!(!e.contains("short-one"), "{e}");
        let f = file("0123456789 abcdef\n");
        let e = Auth::load(f.path()).err().unwrap();
        assert!(e.contains("line 1: a token is printable ASCII"), "{e}");
        assert!(!e.contains("0123456789"), "{e}");
        let e = Auth::load(Path::new("/nonexistent/tokens")).err().unwrap();
        assert!(
            e.starts_with("cannot read token file /nonexistent/tokens"),
            "{e}"
        );
    }

    #[test]
    fn a_reload_replaces_the_tokens_and_a_bad_one_keeps_them() {
        let f = file("old-token-0123456789\n");
        let auth = Auth::load(f.path()).unwrap();
        let old = headers(&["Bearer old-token-0123456789"]);
        let new = headers(&["Bearer new-token-0123456789"]);
        assert_eq!(auth.check(&old), Ok(()));
        std::fs::write(f.path(), "new-token-0123456789\n").unwrap();
        assert_eq!(auth.reload(), Ok(1));
        assert_eq!(auth.check(&old), Err(Denied::Invalid));
        assert_eq!(auth.check(&new), Ok(()));
        std::fs::write(f.path(), "# emptied\n").unwrap();
        assert!(auth.reload().unwrap_err().contains("holds no token"));
        assert_eq!(auth.check(&new), Ok(()));
    }
}
