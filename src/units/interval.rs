//! The one precision rule for a figure and its 95% interval, in every view (terminal, HTML,
//! Markdown, plots' labels):
//!
//! - the half-width has at most two significant digits ("±0.073", "±52", "±1.2k" never
//!   "±0.0727");
//! - the figure has at most three significant digits and never more decimals than its
//!   half-width shows (a figure is printed no more precisely than its interval: "1.2 ±0.4",
//!   not "1.23 ±0.4"), and the half-width never more decimals than the figure ("2.05 ±0.01",
//!   not "2.05 ±0.013");
//! - a half-width that rounds to zero at the figure's last digit is written as a bound, half a
//!   unit of that digit: "22.3 ±<0.05", never "±0";
//! - an interval whose sides differ (the smaller below 0.6 of the larger) is written "+a/−b";
//! - a figure whose interval reaches beyond ±50% of it is noise: "unstable (±130)", never a
//!   number (model::Status::Unstable).

use super::Unit;

/// The smaller side of an interval at least this share of the larger: written "±larger".
/// (Conservative: the ± shows the larger side for both.)
const SYMMETRIC: f64 = 0.6;

/// Decimals (negative: tens, hundreds...) that show `digits` significant digits of `x`.
fn decimals_for(x: f64, digits: i32) -> i32 {
    let a = x.abs();
    if !(a.is_finite() && a > 0.0) {
        return 0;
    }
    let mut d = digits - 1 - a.log10().floor() as i32;
    // Rounding may carry into a new digit (0.0996 at 2 digits is 0.10): one decimal fewer.
    if round_at(a, d) >= 10f64.powi(digits - d) {
        d -= 1;
    }
    d
}

/// `x` rounded at `d` decimals (negative: to tens, hundreds...).
fn round_at(x: f64, d: i32) -> f64 {
    if d >= 0 {
        let k = 10f64.powi(d);
        (x * k).round() / k
    } else {
        let k = 10f64.powi(-d);
        (x / k).round() * k
    }
}

/// `x` written with `d` decimals (none when `d` ≤ 0, after rounding to tens... when < 0).
fn write_at(x: f64, d: i32) -> String {
    let r = round_at(x, d);
    let s = format!("{r:.prec$}", prec = d.max(0) as usize);
    // "-0.00" reads as a sign without a value.
    if r == 0.0 {
        s.trim_start_matches('-').to_string()
    } else {
        s
    }
}

/// The decimals of a figure written alone: three significant digits, and every integer
/// digit of a figure of 100 or more (a rounded "1230" would invent a zero).
fn figure_decimals(v: f64) -> i32 {
    decimals_for(v, 3).max(0)
}

/// One side of an interval at `d` decimals, or the bound it is below when it rounds to
/// zero there: "0.073", "<0.005".
fn side(h: f64, d: i32) -> String {
    if round_at(h, d) == 0.0 || !h.is_finite() {
        format!("<{}", write_at(0.5 * 10f64.powi(-d), d + 1))
    } else {
        write_at(h, d)
    }
}

/// A figure and its interval as text: ("0.731", "±0.073"), ("22.3", "±<0.05"),
/// ("0.731", "+0.13/−0.012"). `lo` ≤ `v` ≤ `hi` (an interval that does not hold its figure
/// is widened to it).
pub fn fmt_estimate(v: f64, lo: f64, hi: f64) -> (String, String) {
    if !v.is_finite() {
        return (crate::units::fmt_num(v), String::new());
    }
    let up = (hi - v).max(0.0);
    let down = (v - lo).max(0.0);
    let (small, large) = (up.min(down), up.max(down));
    let symmetric = !large.is_finite() || small >= SYMMETRIC * large;
    // The figure is as precise as the interval's tightest side allows (two significant
    // digits of it), and never past its own three.
    let tight = if symmetric { large } else { small };
    let d = if tight > 0.0 && tight.is_finite() {
        figure_decimals(v).min(decimals_for(tight, 2))
    } else {
        figure_decimals(v)
    };
    let figure = write_at(v, d);
    if !large.is_finite() {
        return (figure, "±∞".into());
    }
    let spread = if symmetric {
        format!("±{}", side(large, d))
    } else {
        // Each side to its own two significant digits, never past the figure's decimals; a
        // side of zero is a bound at the figure's last digit ("1.13 +<0.005/−0.01", not the
        // "+<0.5" a zero's own digits would give).
        let at = |h: f64| {
            let own = if h > 0.0 {
                decimals_for(h, 2).min(d)
            } else {
                d
            };
            side(h, own)
        };
        let (a, b) = (at(up), at(down));
        // Sides that read the same once rounded are one ± ("+3/−3" says nothing more).
        if a == b {
            format!("±{a}")
        } else {
            format!("+{a}/−{b}")
        }
    };
    (figure, spread)
}

/// Whether an interval reaches beyond ±50% of its figure (or the figure is zero and the
/// interval is not): noise, not a number.
pub fn is_unstable(v: f64, lo: f64, hi: f64) -> bool {
    let a = v.abs();
    !(v.is_finite() && lo.is_finite() && hi.is_finite()) || (hi - v) > 0.5 * a || (v - lo) > 0.5 * a
}

/// The spread of an unstable figure: its interval's larger side to two significant digits,
/// "±131", "±1.1".
pub fn fmt_spread(v: f64, lo: f64, hi: f64) -> String {
    let large = (hi - v).max(v - lo).max(0.0);
    if !large.is_finite() {
        return "±∞".into();
    }
    format!("±{}", write_at(large, decimals_for(large, 2)))
}

/// A figure in `unit` with its interval, time units rescaled to the figure ("ns/switch" →
/// "µs/switch"): "1.93 ±0.03 µs/switch", "22.3 ±<0.05 µs/RPC", or, when the interval reaches
/// beyond ±50% of it, [`fmt_unstable`].
pub fn fmt_figure(v: f64, lo: f64, hi: f64, unit: &Unit) -> String {
    if is_unstable(v, lo, hi) {
        return fmt_unstable(v, lo, hi, unit);
    }
    let (f, s, unit) = fmt_estimate_in(v, lo, hi, unit);
    let space = if unit.is_empty() { "" } else { " " };
    format!("{f} {s}{space}{unit}")
}

/// [`fmt_estimate`] in `unit` rescaled to the figure: ("1.93", "±0.03", "µs/switch"), for a
/// view that sets the three apart (the HTML cell bolds the figure); [`fmt_figure`] joins them.
pub fn fmt_estimate_in(v: f64, lo: f64, hi: f64, unit: &Unit) -> (String, String, String) {
    let (d, unit) = scaled_unit(v, unit);
    let (f, s) = fmt_estimate(v / d, lo / d, hi / d);
    (f, s, unit)
}

/// The figure [`fmt_figure`] prints, without its interval, its time unit scaled to it:
/// "45 µs" for 45.3 µs ±19 µs (as "45 ±19 µs" does), "7.45 µs" for ±0.096 µs. For a column
/// whose intervals are elsewhere (a summary beside the table that prints them), so that one
/// figure reads the same in both. Whether the figure is noise is the caller's to say first.
pub fn fmt_figure_alone(v: f64, lo: f64, hi: f64, unit: &Unit) -> String {
    let (d, unit) = scaled_unit(v, unit);
    let space = if unit.is_empty() { "" } else { " " };
    let (f, _) = fmt_estimate(v / d, lo / d, hi / d);
    format!("{f}{space}{unit}")
}

/// Noise written as what it is, with its spread and never its median: "unstable (±1.1
/// µs/RPC)", the unit scaled to the spread.
pub fn fmt_unstable(v: f64, lo: f64, hi: f64, unit: &Unit) -> String {
    format!("unstable ({})", fmt_spread_with_unit(v, lo, hi, unit))
}

/// An unstable figure's spread in its unit, "±131 ns": what [`fmt_unstable`] puts in
/// parentheses, for a view that says "unstable" on its own (the HTML badge).
pub fn fmt_spread_with_unit(v: f64, lo: f64, hi: f64, unit: &Unit) -> String {
    let magnitude = v.abs().max((hi - v).max(v - lo));
    let (d, unit) = scaled_unit(magnitude, unit);
    let space = if unit.is_empty() { "" } else { " " };
    format!("{}{space}{unit}", fmt_spread(v / d, lo / d, hi / d))
}

/// The divisor and unit that suit a magnitude: time units ("ns...") rescaled, others kept.
fn scaled_unit(magnitude: f64, unit: &Unit) -> (f64, String) {
    if unit.is_time() {
        let (d, suffix) = super::time_unit(magnitude);
        (d, unit.rescaled(suffix))
    } else {
        (1.0, unit.to_string())
    }
}

/// A figure and its interval's bounds, for a view whose column reads "[95% CI]": the figure
/// by [`fmt_estimate`] and each bound at the figure's decimals, "0.997 [0.990, 1.003]"; or,
/// when the interval reaches beyond ±50% of it, "unstable (±0.41)".
pub fn fmt_bounds(v: f64, lo: f64, hi: f64) -> String {
    if is_unstable(v, lo, hi) {
        return format!("unstable ({})", fmt_spread(v, lo, hi));
    }
    let (figure, _) = fmt_estimate(v, lo, hi);
    let d = figure.split_once('.').map_or(0, |(_, f)| f.len() as i32);
    format!("{figure} [{}, {}]", write_at(lo, d), write_at(hi, d))
}

/// A relative change and its interval, in percent of the base, by the same rule: (0.0512,
/// [0.031, 0.071]) → "+5.1% ±2.0"; a half-width below the last digit → "+5% ±<0.5".
pub fn fmt_percent(change: f64, lo: f64, hi: f64) -> String {
    let (v, s) = fmt_estimate(100.0 * change, 100.0 * lo, 100.0 * hi);
    let sign = if change > 0.0 && !v.starts_with('-') && v != "0" {
        "+"
    } else {
        ""
    };
    format!("{sign}{v}% {s}")
}

/// A whole number with thousands separators: 100000 → "100,000".
pub fn fmt_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pm(v: f64, h: f64) -> String {
        let (f, s) = fmt_estimate(v, v - h, v + h);
        format!("{f} {s}")
    }

    /// The figure alone reads as it does beside its interval, unit scaled to it.
    #[test]
    fn a_figure_alone_has_the_digits_it_has_beside_its_interval() {
        assert_eq!(
            fmt_figure(45_300.0, 26_300.0, 64_300.0, &"ns".into()),
            "45 ±19 µs"
        );
        assert_eq!(
            fmt_figure_alone(45_300.0, 26_300.0, 64_300.0, &"ns".into()),
            "45 µs"
        );
        assert_eq!(
            fmt_figure_alone(7451.85, 7355.85, 7547.85, &"ns".into()),
            "7.45 µs"
        );
        assert_eq!(fmt_figure_alone(0.731, 0.719, 0.865, &"".into()), "0.731");
    }

    #[test]
    fn the_half_width_has_at_most_two_significant_digits() {
        assert_eq!(pm(0.731, 0.0727), "0.731 ±0.073");
        assert_eq!(pm(135.0, 52.3), "135 ±52");
        assert_eq!(pm(4.97, 0.0992), "4.97 ±0.10");
        assert_eq!(pm(2.05, 0.0996), "2.05 ±0.10");
        assert_eq!(pm(16386.0, 1234.0), "16400 ±1200");
    }

    #[test]
    fn never_more_decimals_than_the_figure_and_the_figure_no_more_than_its_interval() {
        // The half-width stops at the figure's last digit ...
        assert_eq!(pm(2.05, 0.013), "2.05 ±0.01");
        assert_eq!(pm(810.0, 6.64), "810 ±7");
        assert_eq!(pm(1.41, 0.0130), "1.41 ±0.01");
        // ... and the figure at the half-width's second significant digit.
        assert_eq!(pm(1.234, 0.43), "1.23 ±0.43");
        assert_eq!(pm(1.234, 4.3), "1.2 ±4.3");
        assert_eq!(pm(42.7, 131.0), "40 ±130");
    }

    #[test]
    fn a_half_width_that_rounds_to_zero_is_a_bound() {
        assert_eq!(pm(1.22, 0.0005), "1.22 ±<0.005");
        assert_eq!(pm(22.3, 0.005), "22.3 ±<0.05");
        assert_eq!(pm(22300.0, 0.0), "22300 ±<0.5");
        assert_eq!(pm(810.0, 0.2), "810 ±<0.5");
        assert!(!pm(5.0, 0.0).contains("±0"));
    }

    #[test]
    fn asymmetric_intervals_give_each_side() {
        // README's old example: 0.731 in [0.719, 0.865] is not "±0.073".
        let (f, s) = fmt_estimate(0.731, 0.719, 0.865);
        assert_eq!(format!("{f} {s}"), "0.731 +0.13/−0.012");
        // Sides within 0.6 of each other: the larger, as ± (it covers both).
        let (f, s) = fmt_estimate(10.0, 9.1, 11.0);
        assert_eq!(format!("{f} {s}"), "10.0 ±1.0");
        let (f, s) = fmt_estimate(2.25, 2.04, 2.58);
        assert_eq!(format!("{f} {s}"), "2.25 ±0.33");
        let (f, s) = fmt_estimate(1.41, 1.37, 1.43);
        assert_eq!(format!("{f} {s}"), "1.41 +0.02/−0.04");
        // A side of zero (the median is the interval's top) is a bound at the figure's last
        // digit: an rpc part read "1.13 +<0.5/−0.01 µs".
        let (f, s) = fmt_estimate(1.13, 1.12, 1.13);
        assert_eq!(format!("{f} {s}"), "1.13 +<0.005/−0.01");
        let (f, s) = fmt_estimate(341.0, 340.0, 350.0);
        assert_eq!(format!("{f} {s}"), "341 +9/−1");
        let (f, s) = fmt_estimate(341.0, 341.0, 350.0);
        assert_eq!(format!("{f} {s}"), "341 +9/−<0.5");
    }

    #[test]
    fn noise_is_unstable_not_a_number() {
        assert!(is_unstable(42.7, -88.0, 174.0));
        assert!(is_unstable(100.0, 90.0, 151.0));
        assert!(is_unstable(100.0, 49.0, 110.0));
        assert!(!is_unstable(100.0, 51.0, 149.0));
        assert!(is_unstable(0.0, 0.0, 1.0));
        assert!(is_unstable(1.0, 0.9, f64::INFINITY));
        assert_eq!(fmt_spread(42.7, -88.0, 174.0), "±130");
        assert_eq!(fmt_spread(176.0, -897.0, 1249.0), "±1100");
        assert_eq!(fmt_spread(1.76, -8.97, 12.49), "±11");
        assert_eq!(fmt_spread(0.176, -0.897, 1.249), "±1.1");
    }

    #[test]
    fn figures_carry_their_unit_scaled_to_the_figure() {
        assert_eq!(
            fmt_figure(1930.0, 1900.0, 1960.0, &"ns/switch".into()),
            "1.93 ±0.03 µs/switch"
        );
        assert_eq!(
            fmt_figure(22300.0, 22299.9, 22300.1, &"ns/RPC".into()),
            "22.3 ±<0.05 µs/RPC"
        );
        assert_eq!(
            fmt_figure(176.0, -897.0, 1249.0, &"ns/RPC".into()),
            "unstable (±1.1 µs/RPC)"
        );
        assert_eq!(
            fmt_figure(1.0, 0.9, 1.1, &"faults/page".into()),
            "1.00 ±0.10 faults/page"
        );
        assert_eq!(fmt_figure(3.0, 2.9, 3.1, &"".into()), "3.00 ±0.10");
    }

    #[test]
    fn bounds_are_written_at_the_figures_decimals() {
        assert_eq!(
            fmt_bounds(0.99684, 0.99012, 1.00331),
            "0.997 [0.990, 1.003]"
        );
        assert_eq!(fmt_bounds(12.34, 9.0, 15.0), "12.3 [9.0, 15.0]");
        assert_eq!(fmt_bounds(0.753, 0.409, 1.16), "unstable (±0.41)");
    }

    #[test]
    fn percentages_and_thousands() {
        assert_eq!(fmt_percent(0.0512, 0.031, 0.071), "+5.1% ±2.0");
        assert_eq!(fmt_percent(1.968, 1.609, 2.327), "+197% ±36");
        assert_eq!(fmt_percent(-0.05, -0.0501, -0.0499), "-5.00% ±0.01");
        assert_eq!(fmt_percent(-0.05, -0.05001, -0.04999), "-5.00% ±<0.005");
        assert_eq!(fmt_thousands(100_000), "100,000");
        assert_eq!(fmt_thousands(999), "999");
        assert_eq!(fmt_thousands(1_234_567), "1,234,567");
        assert_eq!(fmt_thousands(0), "0");
    }
}
