//! Interrupt counts per CPU as the kernel keeps them: /proc/interrupts (device IRQs by number
//! and name, and the system vectors LOC, RES, CAL, TLB, NMI ...), /proc/softirqs (by vector)
//! and the steal time of /proc/stat, read as snapshots whose differences cover a window.

use std::collections::BTreeMap;

/// One per-CPU table: the CPU of each column, and its rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Table {
    /// The CPU number of each count column (the header's `CPU0 CPU1 ...`; offline CPUs have
    /// no column).
    pub cpus: Vec<usize>,
    pub rows: Vec<Row>,
}

/// One row: its key (`36`, `LOC`, `TIMER`), its name (the device for a numbered IRQ, the
/// description for a vector; empty for softirqs) and a count per column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub key: String,
    pub name: String,
    pub counts: Vec<u64>,
}

impl Table {
    /// Parse the text of /proc/interrupts or /proc/softirqs. Rows that do not hold one count
    /// per CPU (ERR, MIS) are left out.
    pub fn parse(text: &str) -> Table {
        let mut lines = text.lines();
        let cpus: Vec<usize> = lines
            .next()
            .unwrap_or("")
            .split_whitespace()
            .filter_map(|w| w.strip_prefix("CPU")?.parse().ok())
            .collect();
        let mut rows = Vec::new();
        for line in lines {
            let Some((key, rest)) = line.split_once(':') else {
                continue;
            };
            let mut words = rest.split_whitespace();
            let counts: Vec<u64> = words
                .by_ref()
                .take(cpus.len())
                .map_while(|w| w.parse().ok())
                .collect();
            if counts.len() != cpus.len() || cpus.is_empty() {
                continue;
            }
            let tail: Vec<&str> = words.collect();
            let key = key.trim().to_string();
            // A numbered IRQ's description is "<chip> <hwirq>-<trigger> <device>": its name
            // is the device.
            let name = if key.chars().all(|c| c.is_ascii_digit()) && tail.len() > 2 {
                tail[2..].join(" ")
            } else {
                tail.join(" ")
            };
            rows.push(Row { key, name, counts });
        }
        Table { cpus, rows }
    }

    /// The count of row `key` on `cpu`.
    pub fn count(&self, key: &str, cpu: usize) -> Option<u64> {
        let col = self.cpus.iter().position(|&c| c == cpu)?;
        self.rows
            .iter()
            .find(|r| r.key == key)?
            .counts
            .get(col)
            .copied()
    }

    /// The name of a numbered IRQ (its device), when the table lists it.
    pub fn irq_name(&self, irq: i32) -> Option<&str> {
        let key = irq.to_string();
        self.rows
            .iter()
            .find(|r| r.key == key)
            .map(|r| r.name.as_str())
    }
}

/// The text of the three files a snapshot reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcText {
    pub interrupts: String,
    pub softirqs: String,
    pub stat: String,
}

/// What /proc said at one moment: each file's counts with the time it was read
/// (CLOCK_MONOTONIC ns, the tracer's clock: the middle of its read).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// When /proc/interrupts was read.
    pub time_ns: u64,
    /// When /proc/softirqs was read.
    pub softirqs_ns: u64,
    /// The files as read (kept so that a window can be recorded as a fixture).
    pub text: ProcText,
    pub interrupts: Table,
    pub softirqs: Table,
    /// Steal time per CPU, ns (from /proc/stat's USER_HZ ticks).
    pub steal_ns: BTreeMap<usize, u64>,
}

impl Snapshot {
    /// Read /proc/interrupts, /proc/softirqs and /proc/stat now; a file that cannot be read
    /// leaves its table empty.
    pub fn take() -> Snapshot {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        let now = || crate::evidence::clock::read(libc::CLOCK_MONOTONIC);
        let t0 = now();
        let interrupts = read("/proc/interrupts");
        let t1 = now();
        let softirqs = read("/proc/softirqs");
        let t2 = now();
        let text = ProcText {
            interrupts,
            softirqs,
            stat: read("/proc/stat"),
        };
        Snapshot::from_text(((t0 + t1) / 2, (t1 + t2) / 2), text, user_hz())
    }

    /// The snapshot of files read at `times` (/proc/interrupts, /proc/softirqs), /proc/stat
    /// counting `hz` ticks a second.
    pub fn from_text(times: (u64, u64), text: ProcText, hz: u64) -> Snapshot {
        Snapshot {
            time_ns: times.0,
            softirqs_ns: times.1,
            interrupts: Table::parse(&text.interrupts),
            softirqs: Table::parse(&text.softirqs),
            steal_ns: parse_steal(&text.stat, hz),
            text,
        }
    }
}

/// The kernel's USER_HZ (the unit of /proc/stat), 100 where sysconf does not say.
pub fn user_hz() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        hz as u64
    } else {
        100
    }
}

/// Steal time per CPU, ns, from the `cpuN` lines of /proc/stat (the eighth value).
pub fn parse_steal(stat: &str, hz: u64) -> BTreeMap<usize, u64> {
    stat.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let cpu: usize = w.next()?.strip_prefix("cpu")?.parse().ok()?;
            let steal: u64 = w.nth(7)?.parse().ok()?;
            Some((cpu, steal * 1_000_000_000 / hz.max(1)))
        })
        .collect()
}

/// Row `key` on `cpu` from `before` to `after` (None when either lacks it; 0 if it went back).
pub fn delta(before: &Table, after: &Table, key: &str, cpu: usize) -> Option<u64> {
    Some(
        after
            .count(key, cpu)?
            .saturating_sub(before.count(key, cpu)?),
    )
}

/// The interrupts of a probe's windows: /proc/interrupts read at each window's opening and
/// closing edge, every row's delta on every CPU summed; [`Windows::finish`] keeps the
/// probe's CPUs. The reads fall outside the windows (the recorder's order), so what they
/// cost is in no figure.
#[derive(Debug, Clone, Default)]
pub struct Windows {
    open: Option<Table>,
    /// (key, cpu) → count, in the order rows were first seen.
    counts: Vec<(String, usize, u64)>,
    names: BTreeMap<String, String>,
    windows: u64,
}

impl Windows {
    /// A window opens: the table as it stands (None: unreadable, the window is not counted).
    pub fn opening(&mut self, table: Option<Table>) {
        self.open = table;
    }

    /// The window closes: each row's delta since it opened, added up.
    pub fn closing(&mut self, table: Option<Table>) {
        let (Some(before), Some(after)) = (self.open.take(), table) else {
            return;
        };
        self.windows += 1;
        for row in &after.rows {
            self.names
                .entry(row.key.clone())
                .or_insert_with(|| row.name.clone());
            for &cpu in &after.cpus {
                let Some(d) = delta(&before, &after, &row.key, cpu) else {
                    continue;
                };
                match self
                    .counts
                    .iter_mut()
                    .find(|(k, c, _)| *k == row.key && *c == cpu)
                {
                    Some(x) => x.2 += d,
                    None => self.counts.push((row.key.clone(), cpu, d)),
                }
            }
        }
    }

    /// What arrived on `cpus` over the windows counted (None when none was).
    pub fn finish(&self, cpus: &[usize]) -> Option<crate::model::Interrupts> {
        if self.windows == 0 {
            return None;
        }
        let mut cpus = cpus.to_vec();
        cpus.sort_unstable();
        cpus.dedup();
        Some(crate::model::Interrupts {
            counts: self
                .counts
                .iter()
                .filter(|(_, cpu, n)| *n > 0 && cpus.contains(cpu))
                .map(|(key, cpu, count)| crate::model::InterruptCount {
                    key: key.clone(),
                    name: self.names.get(key).cloned().unwrap_or_default(),
                    cpu: *cpu,
                    count: *count,
                })
                .collect(),
            cpus,
            windows: self.windows,
        })
    }
}

/// /proc/interrupts now, None where it cannot be read.
pub fn read_table() -> Option<Table> {
    let text = std::fs::read_to_string("/proc/interrupts").ok()?;
    let t = Table::parse(&text);
    (!t.cpus.is_empty()).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recorded /proc/interrupts text around one window: the deltas on the probe's CPU,
    /// named, the other CPU's left out; two windows add up; an unreadable edge counts none.
    #[test]
    fn a_window_counts_the_interrupts_on_the_probes_cpus() {
        let before = Table::parse(INTERRUPTS);
        let after = Table::parse(include_str!("../../tests/fixtures/noise/interrupts.after"));
        let mut w = Windows::default();
        w.opening(Some(before.clone()));
        w.closing(Some(after.clone()));
        let one = w.finish(&[1]).unwrap();
        assert_eq!(one.cpus, vec![1]);
        assert_eq!(one.windows, 1);
        let rows = one.by_row();
        // CPU 1: LOC 753388 → 753461, IRQ 42 9352 → 9353.
        assert!(
            rows.contains(&("LOC", "Local timer interrupts", 73)),
            "{rows:?}"
        );
        assert!(
            rows.iter().any(|(k, _, n)| *k == "42" && *n == 1),
            "{rows:?}"
        );
        assert!(
            !rows.iter().any(|(k, _, _)| *k == "CAL"),
            "CAL moved on CPU 0 only"
        );
        assert!(one.counts.iter().all(|c| c.cpu == 1 && c.count > 0));
        let zero = w.finish(&[0]).unwrap();
        assert!(zero
            .by_row()
            .contains(&("LOC", "Local timer interrupts", 80)));
        assert!(zero
            .by_row()
            .contains(&("CAL", "Function call interrupts", 2)));
        // A second window adds to the first.
        w.opening(Some(before));
        w.closing(Some(after));
        let two = w.finish(&[1]).unwrap();
        assert_eq!(two.windows, 2);
        assert_eq!(two.total(), 2 * one.total());
        // An edge that could not be read: the window is not counted.
        let mut none = Windows::default();
        none.opening(None);
        none.closing(Some(Table::parse(INTERRUPTS)));
        assert!(none.finish(&[1]).is_none());
    }

    const INTERRUPTS: &str = include_str!("../../tests/fixtures/noise/interrupts.before");
    const SOFTIRQS: &str = include_str!("../../tests/fixtures/noise/softirqs.before");

    #[test]
    fn interrupts_parse_by_cpu_with_device_names() {
        let t = Table::parse(INTERRUPTS);
        assert_eq!(t.cpus, vec![0, 1]);
        assert_eq!(t.count("LOC", 0), Some(735110));
        assert_eq!(t.count("LOC", 1), Some(753388));
        assert_eq!(t.count("LOC", 2), None);
        assert_eq!(t.irq_name(36), Some("virtio1-req.0"));
        assert_eq!(t.irq_name(24), Some("ACPI:Ged"));
        assert!(t.rows.iter().all(|r| r.key != "ERR" && r.key != "MIS"));
        let s = Table::parse(SOFTIRQS);
        assert_eq!(s.count("TIMER", 1), Some(85843));
        assert_eq!(s.rows.len(), 10);
    }

    #[test]
    fn a_missing_cpu_column_is_read_by_its_header() {
        // CPU 1 offline: the columns are CPU0 and CPU2.
        let t = Table::parse("    CPU0 CPU2\nLOC: 5 7 Local timer interrupts\n");
        assert_eq!(t.count("LOC", 2), Some(7));
        assert_eq!(t.count("LOC", 1), None);
        let after = Table::parse("    CPU0 CPU2\nLOC: 9 8 Local timer interrupts\n");
        assert_eq!(delta(&t, &after, "LOC", 0), Some(4));
        assert_eq!(delta(&t, &after, "RES", 0), None);
    }

    #[test]
    fn steal_is_the_eighth_value_in_ns() {
        let s = parse_steal(
            "cpu  1 2 3 4 5 6 7 8 0 0\ncpu0 1 2 3 4 5 6 7 30 0 0\ncpu1 0 0 0 0 0 0 0 0\n",
            100,
        );
        assert_eq!(s.get(&0), Some(&300_000_000));
        assert_eq!(s.get(&1), Some(&0));
        assert_eq!(s.len(), 2);
    }
}
