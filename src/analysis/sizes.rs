//! Byte sizes as users write them (`0`, `4k`, `1m`, `256M`, `1g`, `4096`) and back, in the
//! binary units lmbench and sysfs use (k = 1024).

/// Parse one size. Suffixes k/m/g (optionally followed by `b`/`ib`) are powers of 1024.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_lowercase();
    let t = t
        .strip_suffix("ib")
        .or_else(|| t.strip_suffix('b'))
        .unwrap_or(&t);
    let (num, mult) = match t.chars().last() {
        Some('k') => (&t[..t.len() - 1], 1u64 << 10),
        Some('m') => (&t[..t.len() - 1], 1 << 20),
        Some('g') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    let bad = || format!("'{s}' is not a size: use e.g. 0, 4k, 512k, 1m, 2g or a byte count");
    if num.is_empty() {
        return Err(bad());
    }
    let v: f64 = num.parse().map_err(|_| bad())?;
    if !v.is_finite() || v < 0.0 {
        return Err(bad());
    }
    let bytes = v * mult as f64;
    if bytes > (1u64 << 50) as f64 {
        return Err(format!("'{s}' is absurdly large"));
    }
    Ok(bytes.round() as u64)
}

/// Parse a comma-separated list, keeping the user's order but dropping duplicates.
pub fn parse_size_list(s: &str) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let v = parse_size(part)?;
        if !out.contains(&v) {
            out.push(v);
        }
    }
    if out.is_empty() {
        return Err(format!("'{s}' names no sizes"));
    }
    Ok(out)
}

/// Compact label: `0k`, `48k`, `1m`, `1.5m`, `2g`; exact byte counts that are not whole
/// KiB stay in bytes.
pub fn fmt_size(b: u64) -> String {
    const K: u64 = 1 << 10;
    const M: u64 = 1 << 20;
    const G: u64 = 1 << 30;
    let pick = |unit: u64, suffix: &str| {
        let v = b as f64 / unit as f64;
        if b.is_multiple_of(unit) {
            format!("{}{suffix}", b / unit)
        } else {
            format!("{}{suffix}", trim(v))
        }
    };
    if b == 0 {
        "0k".into()
    } else if b >= G && b.is_multiple_of(G / 4) {
        pick(G, "g")
    } else if b >= M && b.is_multiple_of(M / 4) {
        pick(M, "m")
    } else if b.is_multiple_of(K) {
        pick(K, "k")
    } else {
        format!("{b}b")
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_binary_units() {
        assert_eq!(parse_size("0").unwrap(), 0);
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("48K").unwrap(), 48 * 1024);
        assert_eq!(parse_size("1m").unwrap(), 1 << 20);
        assert_eq!(parse_size("256MiB").unwrap(), 256 << 20);
        assert_eq!(parse_size("1.5m").unwrap(), 3 << 19);
        assert_eq!(parse_size("2g").unwrap(), 2 << 30);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        for bad in ["", "k", "-4k", "4x", "four", "nan"] {
            assert!(parse_size(bad).is_err(), "{bad:?} parsed");
        }
        assert!(parse_size("9999999g").unwrap_err().contains("absurd"));
    }

    #[test]
    fn lists_keep_order_and_drop_duplicates() {
        assert_eq!(
            parse_size_list("0,4k, 16k,4k").unwrap(),
            vec![0, 4096, 16384]
        );
        assert!(parse_size_list("4k,,x").is_err());
        assert!(parse_size_list(" , ").is_err());
    }

    #[test]
    fn labels_round_trip() {
        for (b, s) in [
            (0, "0k"),
            (4096, "4k"),
            (48 << 10, "48k"),
            (1 << 20, "1m"),
            (3 << 19, "1.5m"),
            (32 << 20, "32m"),
            (1 << 30, "1g"),
            (100, "100b"),
        ] {
            assert_eq!(fmt_size(b), s);
            assert_eq!(parse_size(s).unwrap(), b, "{s}");
        }
    }
}
