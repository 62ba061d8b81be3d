//! Keeping passwords out of what the server clients show: the secrets a database URL carries,
//! and their removal from messages.

/// The passwords a database URL may carry, raw and percent-decoded: `user:secret@` in the
/// authority and `password=secret` as a parameter (URL query or PostgreSQL key=value form).
pub(crate) fn url_passwords(url: &str) -> Vec<String> {
    let mut found = Vec::new();
    if let Some((_, rest)) = url.split_once("://") {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        if let Some((userinfo, _)) = authority.rsplit_once('@')
            && let Some((_, pass)) = userinfo.split_once(':')
        {
            found.push(pass.to_string());
        }
    }
    let mut rest = url;
    while let Some(at) = rest.find("password=") {
        rest = &rest[at + "password=".len()..];
        let value = rest
            .split(|c: char| c == '&' || c.is_whitespace())
            .next()
            .unwrap_or("");
        found.push(value.trim_matches('\'').to_string());
    }
    let decoded: Vec<String> = found.iter().map(|p| percent_decode(p)).collect();
    found.extend(decoded);
    found.retain(|p| !p.is_empty());
    found.sort();
    found.dedup();
    found
}

/// `text` with every occurrence of each secret replaced by `***`.
pub(crate) fn redact(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    // Longest first, so a secret that contains another is removed whole.
    let mut secrets: Vec<&String> = secrets.iter().filter(|s| !s.is_empty()).collect();
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    for secret in secrets {
        out = out.replace(secret.as_str(), "***");
    }
    out
}

/// `s` with its `%XX` escapes decoded (invalid UTF-8 replaced).
pub(crate) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::{redact, url_passwords};

    #[test]
    fn passwords_are_found_and_redacted() {
        let url = "mysql://app:s%40cret@db:3306/ids";
        let secrets = url_passwords(url);
        assert_eq!(secrets, vec!["s%40cret".to_string(), "s@cret".to_string()]);
        assert_eq!(
            redact("bad s@cret and s%40cret", &secrets),
            "bad *** and ***"
        );
        let kv = "host=db user=app password='pw1' dbname=ids";
        assert_eq!(url_passwords(kv), vec!["pw1".to_string()]);
        let query = "postgres://db/ids?user=app&password=pw2";
        assert_eq!(url_passwords(query), vec!["pw2".to_string()]);
        assert!(url_passwords("postgres://app@db/ids").is_empty());
    }
}
