//! libpq's `key=value` connection strings: the keys ringflake reads itself taken out, the rest
//! left for tokio-postgres.

/// The URL parameters ringflake reads itself.
pub(super) const TLS_KEYS: &[&str] = &["sslmode", "sslrootcert"];

/// The `key=value` connection string `s` without the keys in `keys` (case-insensitive), and
/// those taken out. A string this cannot split (an unclosed quote) is left whole, for
/// tokio-postgres to refuse with its own message.
pub(super) fn take_key_values(s: &str, keys: &[&str]) -> (String, Vec<(String, String)>) {
    let mut pairs = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            break;
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| !c.is_whitespace() && *c != '=') {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next() != Some('=') {
            return (s.to_string(), Vec::new());
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    Some('\'') => break,
                    Some('\\') => match chars.next() {
                        Some(c) => value.push(c),
                        None => return (s.to_string(), Vec::new()),
                    },
                    Some(c) => value.push(c),
                    None => return (s.to_string(), Vec::new()),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    match chars.next() {
                        Some(c) => value.push(c),
                        None => return (s.to_string(), Vec::new()),
                    }
                } else {
                    value.push(c);
                }
            }
        }
        pairs.push((key, value));
    }
    let (taken, kept): (Vec<_>, Vec<_>) = pairs
        .into_iter()
        .partition(|(k, _)| keys.iter().any(|t| t.eq_ignore_ascii_case(k)));
    let rest: Vec<String> = kept
        .iter()
        .map(|(k, v)| format!("{k}='{}'", v.replace('\\', "\\\\").replace('\'', "\\'")))
        .collect();
    (rest.join(" "), taken)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_values_split_with_quotes_and_escapes() {
        let (rest, taken) =
            take_key_values(r"host=db password='it\'s' sslmode=require a=b\ c", TLS_KEYS);
        assert_eq!(rest, r"host='db' password='it\'s' a='b c'");
        assert_eq!(taken, vec![("sslmode".to_string(), "require".to_string())]);
        // Unclosed quote: left whole for tokio-postgres to refuse.
        let (rest, taken) = take_key_values("host='db sslmode=require", TLS_KEYS);
        assert_eq!(rest, "host='db sslmode=require");
        assert!(taken.is_empty());
    }
}
