//! Byte sizes as users write them (`0`, `4k`, `4K`, `4KiB`, `1.5M`, `256MB`, `1g`, `4096`)
//! and back, in the binary units lmbench and sysfs use (k = 1024). This is the ONE size
//! grammar of the tool: every option, the sysfs cache reader and the simulator's options
//! parse through [`parse_size`], and every size label comes from [`fmt_size`].

/// Sizes above this are refused as typos (1 PiB: no machine this tool measures has it).
const LIMIT: u128 = 1 << 50;

/// The limit as a size the grammar takes (there is no `p` suffix).
const LIMIT_WRITTEN: &str = "1024t";

/// The sizes a refusal suggests: each one accepted by every size option (none is zero).
const EXAMPLES: [&str; 5] = ["4096", "4k", "4KiB", "1.5m", "2g"];

/// Parse one size: a decimal number (fractions allowed with a suffix: `1.5m`), optionally a
/// suffix k/m/g/t in either case, optionally followed by `b` or `ib` (`4KiB`, `4kb`), with
/// optional space before the suffix. Arithmetic is exact and checked; fractions of a byte
/// round to the nearest byte.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let bad = || {
        format!(
            "'{s}' is not a size: use e.g. {} or {}",
            EXAMPLES[..EXAMPLES.len() - 1].join(", "),
            EXAMPLES[EXAMPLES.len() - 1]
        )
    };
    let t = s.trim().to_ascii_lowercase();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let shift: u32 = match suffix.trim_start() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(bad()),
    };
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.is_empty() && frac.is_empty()
        || !int.chars().all(|c| c.is_ascii_digit())
        || !frac.chars().all(|c| c.is_ascii_digit())
        || frac.len() > 9
    {
        return Err(bad());
    }
    let too_large = || format!("'{s}' is too large (at most {LIMIT_WRITTEN})");
    let int: u128 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| too_large())?
    };
    let mult = 1u128 << shift;
    let mut bytes = int.checked_mul(mult).ok_or_else(too_large)?;
    if !frac.is_empty() {
        let den = 10u128.pow(frac.len() as u32);
        let f: u128 = frac.parse().map_err(|_| bad())?;
        // Round half up to a whole byte.
        bytes = bytes
            .checked_add((f * mult + den / 2) / den)
            .ok_or_else(too_large)?;
    }
    if bytes > LIMIT {
        return Err(too_large());
    }
    Ok(bytes as u64)
}

/// [`parse_size`] for options where zero bytes means nothing to measure.
pub fn parse_nonzero_size(s: &str) -> Result<u64, String> {
    match parse_size(s)? {
        0 => Err(format!("'{s}': the size must be above zero")),
        v => Ok(v),
    }
}

/// Compact label in the option grammar, so a label can be typed back: `0`, `48k`, `1m`,
/// `1.5m`, `2g`; three significant digits when the size is not round (`4.88k`), plain
/// bytes below 1 KiB (`100b`).
pub fn fmt_size(b: u64) -> String {
    const K: u64 = 1 << 10;
    const M: u64 = 1 << 20;
    const G: u64 = 1 << 30;
    const T: u64 = 1 << 40;
    if b == 0 {
        return "0".into();
    }
    if b < K {
        return format!("{b}b");
    }
    let (unit, suffix) = if b >= T {
        (T, "t")
    } else if b >= G {
        (G, "g")
    } else if b >= M {
        (M, "m")
    } else {
        (K, "k")
    };
    if b.is_multiple_of(unit) {
        return format!("{}{suffix}", b / unit);
    }
    let v = crate::units::fmt_num(b as f64 / unit as f64);
    let v = if v.contains('.') {
        v.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        v
    };
    format!("{v}{suffix}")
}

/// How [`fmt_bytes`] writes a byte count (all in binary units, k = 1024).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteStyle {
    /// `512 B`, `32 KiB`, `1.5 MiB`, `2 GiB`: one decimal at most, none when it rounds to
    /// zero. Prose, facts and axes; the fleet's stored machine facts are written with it, so
    /// its rounding is part of the history's format.
    Trimmed,
    /// `48 KiB`, `1.0 KiB`, `23.5 GiB`: no decimal when the value is whole in its unit, else
    /// one (kept even when it is `.0`). The machine description's cache and memory sizes.
    Tenths,
    /// `1.50 GiB` from 1 GiB up, whole MiB below (`563 MiB`): memory and disk amounts in
    /// refusals and notes, where the comparison with the room left matters.
    GibMib,
}

/// The one byte formatter for display, in `style`; [`fmt_size`] is the other way a size is
/// written: the compact label of the option grammar that a user types back (`32k`).
pub fn fmt_bytes(v: f64, style: ByteStyle) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    const GIB: f64 = (1u64 << 30) as f64;
    const MIB: f64 = (1u64 << 20) as f64;
    if style == ByteStyle::GibMib {
        return if v >= GIB {
            format!("{:.2} GiB", v / GIB)
        } else {
            format!("{:.0} MiB", v / MIB)
        };
    }
    let mut x = v;
    let mut i = 0;
    while x.abs() >= 1024.0 && i + 1 < UNITS.len() {
        x /= 1024.0;
        i += 1;
    }
    let number = match style {
        ByteStyle::Tenths if x.fract() == 0.0 => format!("{x:.0}"),
        ByteStyle::Tenths => format!("{x:.1}"),
        _ => format!("{x:.1}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string(),
    };
    format!("{number} {}", UNITS[i])
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
        assert_eq!(parse_size("4K").unwrap(), 4096);
        assert_eq!(parse_size("4KiB").unwrap(), 4096);
        assert_eq!(parse_size("4 kb").unwrap(), 4096);
        assert_eq!(parse_size("1.5M").unwrap(), 3 << 19);
        assert_eq!(parse_size("32768K\n").unwrap(), 32 << 20);
        assert_eq!(parse_size("1t").unwrap(), 1 << 40);
        assert_eq!(parse_size(".5k").unwrap(), 512);
        for bad in [
            "", "k", "-4k", "4x", "four", "nan", "1.2.3k", "4kk", "4 k b", "inf", ".",
        ] {
            let e = parse_size(bad).unwrap_err();
            assert!(e.contains("is not a size"), "{bad:?}: {e}");
        }
        assert!(parse_size("9999999g").unwrap_err().contains("too large"));
        // Checked arithmetic: a value that would wrap u64 is refused, not wrapped.
        assert!(parse_size("18446744073709551615k")
            .unwrap_err()
            .contains("too large"));
        assert!(parse_size("99999999999999999999999999999999999999999")
            .unwrap_err()
            .contains("too large"));
        assert_eq!(parse_nonzero_size("4k").unwrap(), 4096);
        // What a refusal suggests is taken, also where zero is not.
        let e = parse_size("4x").unwrap_err();
        assert!(e.ends_with("use e.g. 4096, 4k, 4KiB, 1.5m or 2g"), "{e}");
        for ex in EXAMPLES {
            assert!(parse_nonzero_size(ex).is_ok(), "{ex}");
        }
        let e = parse_size("1025t").unwrap_err();
        assert!(e.ends_with("is too large (at most 1024t)"), "{e}");
        assert_eq!(parse_size(LIMIT_WRITTEN).unwrap() as u128, LIMIT);
        assert!(parse_nonzero_size("0").unwrap_err().contains("above zero"));
    }

    #[test]
    fn each_byte_style_writes_its_own_way() {
        let t = |v: u64| fmt_bytes(v as f64, ByteStyle::Tenths);
        assert_eq!(t(48 * 1024), "48 KiB");
        assert_eq!(t(32 << 20), "32 MiB");
        assert_eq!(t(100), "100 B");
        assert_eq!(t(1536), "1.5 KiB");
        // Where the styles part: a value not whole in its unit that rounds to .0.
        assert_eq!(t(1030), "1.0 KiB");
        assert_eq!(fmt_bytes(1030.0, ByteStyle::Trimmed), "1 KiB");
        let g = |v: u64| fmt_bytes(v as f64, ByteStyle::GibMib);
        assert_eq!(g(3 << 29), "1.50 GiB");
        assert_eq!(g(1 << 30), "1.00 GiB");
        assert_eq!(g(563 << 20), "563 MiB");
        assert_eq!(g(100), "0 MiB");
    }

    #[test]
    fn labels_round_trip() {
        for (b, s) in [
            (0, "0"),
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
        assert_eq!(fmt_size(5000), "4.88k");
        assert_eq!(fmt_size(1 << 40), "1t");
    }

    #[test]
    fn bytes_are_binary_units() {
        assert_eq!(fmt_bytes(512.0, ByteStyle::Trimmed), "512 B");
        assert_eq!(fmt_bytes(32768.0, ByteStyle::Trimmed), "32 KiB");
        assert_eq!(fmt_bytes(1.5 * 1048576.0, ByteStyle::Trimmed), "1.5 MiB");
    }
}
