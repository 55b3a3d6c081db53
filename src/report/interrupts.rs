//! The interrupts that arrived on a probe's CPUs during its windows, as one line of its
//! evidence (--verbose): the rows that counted most, and the rate per 1,000 of the probe's
//! operations, so a figure can say "3 timer ticks per 1,000 round trips".

use crate::model::Measurement;
use crate::units::interval::fmt_thousands;

/// Rows named on the line; the rest are counted in one "+N more".
const NAMED: usize = 4;

/// The line (None when the run did not read interrupts): "interrupts on CPU 1 over 40
/// windows: 73 (1.8 per 1,000 round trips): LOC 70 · IRQ 42 virtio1-req.0 2 · CAL 1".
pub fn line(m: &Measurement) -> Option<String> {
    let irqs = m.evidence.interrupts.as_ref()?;
    let cpus = match irqs.cpus.as_slice() {
        [one] => format!("CPU {one}"),
        many => format!(
            "CPUs {}",
            many.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(",")
        ),
    };
    let total = irqs.total();
    let ops = m.evidence.rusage.iterations;
    let rate = if ops > 0 {
        let word = m.raw_unit.per().map_or("iteration", |p| p.name());
        let plural = if word.ends_with('s') { "" } else { "s" };
        format!(
            " ({} per 1,000 {word}{plural})",
            crate::units::fmt_num(1000.0 * total as f64 / ops as f64)
        )
    } else {
        String::new()
    };
    let mut rows = irqs.by_row();
    rows.sort_by_key(|r| std::cmp::Reverse(r.2));
    let mut named: Vec<String> = rows
        .iter()
        .take(NAMED)
        .map(|(key, name, n)| {
            if key.chars().all(|c| c.is_ascii_digit()) {
                format!("IRQ {key} {name} {}", fmt_thousands(*n))
            } else {
                format!("{key} {}", fmt_thousands(*n))
            }
        })
        .collect();
    if rows.len() > NAMED {
        named.push(format!("+{} more", rows.len() - NAMED));
    }
    let windows = if irqs.windows == 1 {
        "window"
    } else {
        "windows"
    };
    let list = if named.is_empty() {
        String::new()
    } else {
        format!(": {}", named.join(" · "))
    };
    Some(format!(
        "interrupts on {cpus} over {} {windows}: {}{rate}{list}",
        fmt_thousands(irqs.windows),
        fmt_thousands(total)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{InterruptCount, Interrupts};

    fn count(key: &str, name: &str, cpu: usize, count: u64) -> InterruptCount {
        InterruptCount {
            key: key.into(),
            name: name.into(),
            cpu,
            count,
        }
    }

    #[test]
    fn the_line_names_the_rows_that_counted_most_and_the_rate() {
        let run = crate::input::parse_run(include_str!("../../tests/fixtures/run-quick.json"), "f")
            .unwrap();
        let mut m = run.measurements[0].clone();
        assert_eq!(line(&m), None, "a run that read no interrupts");
        m.evidence.rusage.iterations = 10_000;
        m.raw_unit = "ns/round trip".into();
        m.evidence.interrupts = Some(Interrupts {
            cpus: vec![1],
            windows: 40,
            counts: vec![
                count("42", "virtio1-req.0", 1, 2),
                count("LOC", "Local timer interrupts", 1, 28),
            ],
        });
        assert_eq!(
            line(&m).unwrap(),
            "interrupts on CPU 1 over 40 windows: 30 (3.00 per 1,000 round trips): LOC 28 · \
             IRQ 42 virtio1-req.0 2"
        );
    }

    /// Under its row with --verbose (not by default), and in the JSON, where a run read them.
    #[test]
    fn verbose_and_the_json_carry_them() {
        let mut run =
            crate::input::parse_run(include_str!("../../tests/fixtures/run-quick.json"), "f")
                .unwrap();
        let term = crate::report::term::Term::plain(80);
        let json = crate::report::export::to_json(&run);
        assert!(!json.contains("\"interrupts\""), "none read, none written");
        run.measurements[0].evidence.interrupts = Some(Interrupts {
            cpus: vec![0],
            windows: 3,
            counts: vec![count("LOC", "Local timer interrupts", 0, 5)],
        });
        let verbose = crate::report::table::render_detail(&run, &term, true);
        assert!(
            verbose.contains("interrupts on CPU 0 over 3 windows: 5"),
            "{verbose}"
        );
        let brief = crate::report::table::render_detail(&run, &term, false);
        assert!(!brief.contains("interrupts on CPU"), "{brief}");
        let json = crate::report::export::to_json(&run);
        let back = crate::input::parse_run(&json, "j").unwrap();
        assert_eq!(
            back.measurements[0].evidence.interrupts,
            run.measurements[0].evidence.interrupts
        );
    }
}
