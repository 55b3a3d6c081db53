//! Human-readable time values: one unit chosen for a value and its interval together.

/// Pick a time unit for a nanosecond magnitude: (divisor, suffix).
pub fn time_unit(ns: f64) -> (f64, &'static str) {
    let a = ns.abs();
    if a >= 1e9 {
        (1e9, "s")
    } else if a >= 1e6 {
        (1e6, "ms")
    } else if a >= 1e3 {
        (1e3, "µs")
    } else {
        (1.0, "ns")
    }
}

/// Significant-looking precision for a scaled value.
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// "1.93 µs" for a value in ns.
pub fn fmt_time(ns: f64) -> String {
    let (d, u) = time_unit(ns);
    format!("{} {u}", fmt_num(ns / d))
}

/// Unit strings like "ns/switch" become "µs/switch" when the value is scaled.
pub fn rescale_unit(unit: &str, suffix: &str) -> String {
    match unit.strip_prefix("ns") {
        Some(rest) => format!("{suffix}{rest}"),
        None => unit.to_string(),
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
        assert_eq!(rescale_unit("ns/switch", "µs"), "µs/switch");
        assert_eq!(rescale_unit("faults/page", "µs"), "faults/page");
    }
}
