//! The one number formatter: every figure a person reads (tables, reports, plots, exports'
//! human columns) goes through here, so a value never shows meaningless decimals and counts
//! read as counts. Times use ns/µs/ms/s, counts and rates SI prefixes (k = 1000), byte sizes
//! binary prefixes (k = 1024, the units sysfs and lmbench use; see [`size`]). Every layer
//! may use it.

pub mod interval;
pub mod name;
pub mod size;
pub mod unit;

pub use interval::{
    fmt_estimate, fmt_figure, fmt_percent, fmt_spread, fmt_spread_with_unit, fmt_thousands,
    fmt_unstable, is_unstable,
};
pub use unit::{Per, Unit};

/// Pick a time unit for a nanosecond magnitude: (divisor, suffix).
pub fn time_unit(ns: f64) -> (f64, &'static str) {
    let a = ns.abs();
    if !a.is_finite() || a < 1e3 {
        (1.0, "ns")
    } else if a >= 1e9 {
        (1e9, "s")
    } else if a >= 1e6 {
        (1e6, "ms")
    } else {
        (1e3, "µs")
    }
}

/// Three significant digits, without an exponent and without trailing noise: 1234 → "1234",
/// 85.24 → "85.2", 1.934 → "1.93", 0.7234 → "0.723", 0.0001234 → "0.000123", 0 → "0".
/// Values of 100 and more keep their integer digits (a rounded "1230" would invent zeros).
pub fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return if v.is_nan() {
            "n/a".into()
        } else {
            "∞".into()
        };
    }
    let a = v.abs();
    if a == 0.0 {
        return "0".into();
    }
    if a >= 99.95 {
        return format!("{v:.0}");
    }
    // Decimals so that three significant digits show: 2 for [1, 10), 1 for [10, 100), ...
    let magnitude = a.log10().floor() as i32;
    let decimals = (2 - magnitude).clamp(0, 12) as usize;
    let s = format!("{v:.decimals$}");
    // Rounding may carry into a new digit (9.996 → "10.00"): drop the extra decimal.
    let sig = s
        .trim_start_matches('-')
        .trim_start_matches(['0', '.'])
        .chars()
        .filter(|c| c.is_ascii_digit())
        .count();
    if sig > 3 && decimals > 0 {
        format!("{v:.prec$}", prec = decimals - 1)
    } else {
        s
    }
}

/// A count per operation: "2.00 switches/round trip" at one or more per operation; below
/// one, the count itself, so a rare event never reads as a rounded rate: `fmt_per_op(12,
/// 100_000, "switch", "round trip")` → "12 switches in 100,000 round trips"; none → "0
/// switches".
pub fn fmt_per_op(total: u64, ops: u64, name: &str, op: &str) -> String {
    let ops = ops.max(1);
    if total >= ops {
        let r = total as f64 / ops as f64;
        let name = if (r - 1.0).abs() < 0.005 {
            name.to_string()
        } else {
            plural_noun(name)
        };
        return format!("{} {name}/{op}", fmt_num(r));
    }
    if total == 0 {
        return format!("0 {}", plural_noun(name));
    }
    let count = if total == 1 {
        format!("1 {name}")
    } else {
        format!("{} {}", fmt_thousands(total), plural_noun(name))
    };
    let of = if ops == 1 {
        format!("1 {op}")
    } else {
        format!("{} {}", fmt_thousands(ops), plural_noun(op))
    };
    format!("{count} in {of}")
}

/// "3 processes", "1 process", "2 switches": English plurals for the nouns this tool prints.
pub fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        return format!("1 {noun}");
    }
    format!("{n} {}", plural_noun(noun))
}

/// The plural of a noun this tool prints: "switches", "processes", "round trips"; an
/// abbreviation ("minflt") or a noun already plural stays as it is.
pub fn plural_noun(noun: &str) -> String {
    if noun.ends_with("ss") || noun.ends_with('x') || noun.ends_with("ch") || noun.ends_with("sh") {
        format!("{noun}es")
    } else if noun.ends_with('s') || noun.ends_with("flt") {
        noun.to_string()
    } else {
        format!("{noun}s")
    }
}

/// "1.93 µs" for a value in ns.
pub fn fmt_time(ns: f64) -> String {
    let (d, u) = time_unit(ns);
    format!("{} {u}", fmt_num(ns / d))
}

/// A value in `unit` with its unit, time units rescaled: (1930, "ns/switch") →
/// "1.93 µs/switch"; (16386, "faults/page") → "16386 faults/page".
pub fn fmt_with_unit(v: f64, unit: &Unit) -> String {
    if unit.is_time() {
        let (d, suffix) = time_unit(v);
        format!("{} {}", fmt_num(v / d), unit.rescaled(suffix))
    } else {
        format!("{} {unit}", fmt_num(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_follow_magnitude() {
        assert_eq!(fmt_time(0.53), "0.530 ns");
        assert_eq!(fmt_time(85.2), "85.2 ns");
        assert_eq!(fmt_time(1930.0), "1.93 µs");
        assert_eq!(fmt_time(2.5e7), "25.0 ms");
        assert_eq!(fmt_time(999_960.0), "1000 µs");
        assert_eq!(Unit::ns(Per::Switch).rescaled("µs"), "µs/switch");
        assert_eq!(Unit::from("faults/page").rescaled("µs"), "faults/page");
        assert_eq!(
            fmt_with_unit(1930.0, &Unit::ns(Per::Switch)),
            "1.93 µs/switch"
        );
        assert_eq!(
            fmt_with_unit(16386.0, &"faults/page".into()),
            "16386 faults/page"
        );
    }

    #[test]
    fn three_significant_digits_and_no_noise() {
        for (v, s) in [
            (0.0, "0"),
            (1234.0, "1234"),
            (16386.0, "16386"),
            (85.24, "85.2"),
            (1.934, "1.93"),
            (0.7234, "0.723"),
            (0.0001234, "0.000123"),
            (9.996, "10.0"),
            (99.96, "100"),
            (-2.5, "-2.50"),
            (f64::NAN, "n/a"),
            (f64::INFINITY, "∞"),
        ] {
            assert_eq!(fmt_num(v), s, "{v}");
        }
    }

    #[test]
    fn counts_below_one_per_op_read_as_counts() {
        assert_eq!(
            fmt_per_op(16386, 16384, "minflt", "page"),
            "1.00 minflt/page"
        );
        assert_eq!(
            fmt_per_op(32768, 16384, "switch", "round trip"),
            "2.00 switches/round trip"
        );
        assert_eq!(fmt_per_op(16386, 1, "minflt", "op"), "16386 minflt/op");
        assert_eq!(fmt_per_op(0, 5, "majflt", "op"), "0 majflt");
        // A rare event is a count, never a rounded rate ("0.00012 sw/op").
        assert_eq!(
            fmt_per_op(12, 100_000, "switch", "round trip"),
            "12 switches in 100,000 round trips"
        );
        assert_eq!(fmt_per_op(1, 3, "switch", "yield"), "1 switch in 3 yields");
        assert_eq!(
            fmt_per_op(10, 1_000_000, "majflt", "page"),
            "10 majflt in 1,000,000 pages"
        );
    }

    #[test]
    fn plurals() {
        assert_eq!(plural(1, "process"), "1 process");
        assert_eq!(plural(3, "process"), "3 processes");
        assert_eq!(plural(2, "switch"), "2 switches");
        assert_eq!(plural(0, "thread"), "0 threads");
        assert_eq!(plural(4, "migrations"), "4 migrations");
    }

    #[test]
    fn bytes_use_binary_prefixes() {
        use super::size::{fmt_bytes, ByteStyle};
        assert_eq!(fmt_bytes(0.0, ByteStyle::Trimmed), "0 B");
        assert_eq!(fmt_bytes(4096.0, ByteStyle::Trimmed), "4 KiB");
        assert_eq!(fmt_bytes(1536.0 * 1024.0, ByteStyle::Trimmed), "1.5 MiB");
        assert_eq!(fmt_bytes(512.0, ByteStyle::Trimmed), "512 B");
    }
}
