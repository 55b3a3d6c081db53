//! Pure parsers for the procfs/sysfs text formats the machine facts are read from.
//!
//! Every function here takes a string and returns data, so each format is unit-tested on
//! recorded snippets from real machines without touching the running host.

use std::collections::BTreeMap;

/// Parses a kernel CPU list such as `"0-3,8,10-11"` (sysfs `online`, `shared_cpu_list`,
/// `thread_siblings_list`, `Cpus_allowed_list`). Malformed pieces are skipped, never fatal;
/// the result is sorted and deduplicated.
pub fn parse_cpu_list(s: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in s.trim().split(',') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        // Ranges may carry a stride ("0-7:2") on newer kernels' cmdline syntax.
        let (range, stride) = match part.split_once(':') {
            Some((r, st)) => (r, st.parse::<usize>().unwrap_or(1).max(1)),
            None => (part, 1),
        };
        match range.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.trim().parse::<usize>(), b.trim().parse::<usize>()) {
                    // Cap absurd ranges so a corrupt file cannot make us allocate gigabytes.
                    if a <= b && b - a <= 1 << 16 {
                        out.extend((a..=b).step_by(stride));
                    }
                }
            }
            None => {
                if let Ok(n) = range.parse::<usize>() {
                    out.push(n);
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Formats CPUs back into the compact kernel list form (`[0,1,2,3,8]` → `"0-3,8"`).
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    format_cpu_runs(&sorted)
}

/// "0-3,6" style list of runs of consecutive CPUs, in the order given ([`format_cpu_list`]
/// for a set in any order).
pub fn format_cpu_runs(cpus: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        let mut end = start;
        while i + 1 < cpus.len() && cpus[i + 1] == end + 1 {
            i += 1;
            end = cpus[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(",")
}

/// Picks the selected value out of a sysfs choice list: `"always [madvise] never"` →
/// `Some("madvise")`. Files with a single plain value (no brackets) return that value.
pub fn parse_bracketed(s: &str) -> Option<String> {
    let s = s.trim();
    if let (Some(a), Some(b)) = (s.find('['), s.find(']')) {
        if a < b {
            return Some(s[a + 1..b].to_string());
        }
    }
    if !s.is_empty() && !s.contains(char::is_whitespace) {
        return Some(s.to_string());
    }
    None
}

/// One `processor` block of /proc/cpuinfo as key → value (keys trimmed, e.g. `"model name"`).
pub type CpuinfoBlock = BTreeMap<String, String>;

/// Splits /proc/cpuinfo into its per-processor blocks (blank-line separated `key : value`).
pub fn parse_cpuinfo(s: &str) -> Vec<CpuinfoBlock> {
    let mut blocks = Vec::new();
    let mut cur = CpuinfoBlock::new();
    for line in s.lines() {
        if line.trim().is_empty() {
            if !cur.is_empty() {
                blocks.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if let Some((k, v)) = line.split_once(':') {
            cur.insert(k.trim().to_string(), v.trim().to_string());
        }
    }
    if !cur.is_empty() {
        blocks.push(cur);
    }
    blocks
}

/// /proc/meminfo as field → bytes (the `kB` unit is applied; unitless fields such as
/// `HugePages_Total` are kept as plain counts).
pub fn parse_meminfo(s: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for line in s.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let mut it = v.split_whitespace();
        let Some(Ok(n)) = it.next().map(str::parse::<u64>) else {
            continue;
        };
        let n = match it.next() {
            Some("kB") => n * 1024,
            _ => n,
        };
        out.insert(k.trim().to_string(), n);
    }
    out
}

/// Jiffies of one CPU line of /proc/stat, split into time spent idle and time spent busy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuTimes {
    /// idle + iowait: the CPU had nothing to run.
    pub idle: u64,
    /// user + nice + system + irq + softirq: the CPU ran something.
    pub busy: u64,
    /// irq + softirq (within `busy`): interrupt work, charged to no task.
    pub irq: u64,
    /// Time a hypervisor gave our virtual CPU's host CPU to someone else.
    pub steal: u64,
}

impl CpuTimes {
    pub fn total(&self) -> u64 {
        self.idle + self.busy + self.steal
    }
}

/// The per-CPU lines (`cpuN ...`) of /proc/stat, keyed by CPU number. The aggregate `cpu`
/// line is skipped. Guest time is already included in user time, so it is not added again.
pub fn parse_proc_stat(s: &str) -> BTreeMap<usize, CpuTimes> {
    let mut out = BTreeMap::new();
    for line in s.lines() {
        let mut it = line.split_whitespace();
        let Some(name) = it.next() else { continue };
        let Some(Ok(cpu)) = name.strip_prefix("cpu").map(str::parse::<usize>) else {
            continue;
        };
        let v: Vec<u64> = it.map(|x| x.parse().unwrap_or(0)).collect();
        let get = |i: usize| v.get(i).copied().unwrap_or(0);
        out.insert(
            cpu,
            CpuTimes {
                busy: get(0) + get(1) + get(2) + get(5) + get(6),
                irq: get(5) + get(6),
                idle: get(3) + get(4),
                steal: get(7),
            },
        );
    }
    out
}

/// Busy fraction and steal fraction of each CPU between two /proc/stat snapshots.
/// CPUs with no elapsed jiffies (the window was shorter than a tick) are left out.
pub fn busy_between(
    before: &BTreeMap<usize, CpuTimes>,
    after: &BTreeMap<usize, CpuTimes>,
) -> Vec<(usize, f64, f64)> {
    let mut out = Vec::new();
    for (cpu, a) in after {
        let Some(b) = before.get(cpu) else { continue };
        let total = a.total().saturating_sub(b.total());
        if total == 0 {
            continue;
        }
        let busy = a.busy.saturating_sub(b.busy) as f64 / total as f64;
        let steal = a.steal.saturating_sub(b.steal) as f64 / total as f64;
        out.push((*cpu, busy, steal));
    }
    out
}

/// Splits the kernel command line into `(key, value)` pairs; flags without `=` get an
/// empty value. Everything after a lone `--` belongs to init and is ignored.
pub fn parse_cmdline(s: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for tok in s.split_whitespace() {
        if tok == "--" {
            break;
        }
        match tok.split_once('=') {
            Some((k, v)) => out.push((k.to_string(), v.to_string())),
            None => out.push((tok.to_string(), String::new())),
        }
    }
    out
}

/// /proc/loadavg → the 1, 5 and 15 minute load averages.
pub fn parse_loadavg(s: &str) -> Option<[f64; 3]> {
    let v: Vec<f64> = s
        .split_whitespace()
        .take(3)
        .filter_map(|x| x.parse().ok())
        .collect();
    (v.len() == 3).then(|| [v[0], v[1], v[2]])
}

/// A `Name:\tvalue` line of /proc/self/status (e.g. `CapEff`, `Uid`).
pub fn status_field<'a>(status: &'a str, name: &str) -> Option<&'a str> {
    status.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == name).then_some(v.trim())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,8,10-11"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list("0\n"), vec![0]);
        assert_eq!(parse_cpu_list(""), Vec::<usize>::new());
        assert_eq!(parse_cpu_list("0-7:2"), vec![0, 2, 4, 6]);
        assert_eq!(parse_cpu_list("3,1,x,2-1"), vec![1, 3]);
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(format_cpu_list(&[]), "");
    }

    #[test]
    fn bracketed() {
        assert_eq!(
            parse_bracketed("always [madvise] never\n").as_deref(),
            Some("madvise")
        );
        assert_eq!(
            parse_bracketed("always defer defer+madvise [madvise] never").as_deref(),
            Some("madvise")
        );
        assert_eq!(
            parse_bracketed("[always] madvise never").as_deref(),
            Some("always")
        );
        assert_eq!(parse_bracketed("tsc\n").as_deref(), Some("tsc"));
        assert_eq!(parse_bracketed("a b c"), None);
    }

    #[test]
    fn sizes() {
        assert_eq!(crate::units::size::parse_size("48K").ok(), Some(48 * 1024));
        assert_eq!(
            crate::units::size::parse_size("32768K\n").ok(),
            Some(32 * 1024 * 1024)
        );
        assert_eq!(crate::units::size::parse_size("1M").ok(), Some(1 << 20));
        assert_eq!(crate::units::size::parse_size("64").ok(), Some(64));
        assert_eq!(crate::units::size::parse_size("K").ok(), None);
        assert_eq!(crate::units::size::parse_size("").ok(), None);
    }

    #[test]
    fn meminfo_units() {
        let m = parse_meminfo(
            "MemTotal:       24684084 kB\nMemAvailable:   24200968 kB\nHugePages_Total:       0\nHugepagesize:       2048 kB\n",
        );
        assert_eq!(m["MemTotal"], 24684084 * 1024);
        assert_eq!(m["HugePages_Total"], 0);
        assert_eq!(m["Hugepagesize"], 2 << 20);
    }

    #[test]
    fn proc_stat_busy() {
        let a = parse_proc_stat("cpu  5401 0 2505 27523 345 0 39 13 0 0\ncpu0 100 0 0 900 0 0 0 0 0 0\ncpu1 0 0 0 1000 0 0 0 0 0 0\nintr 1 2\n");
        let b =
            parse_proc_stat("cpu  0\ncpu0 150 0 0 950 0 0 0 0 0 0\ncpu1 0 0 0 1090 0 0 0 10 0 0\n");
        assert_eq!(a.len(), 2);
        let r = busy_between(&a, &b);
        assert_eq!(r.len(), 2);
        assert!((r[0].1 - 0.5).abs() < 1e-9);
        assert!((r[1].1).abs() < 1e-9);
        assert!((r[1].2 - 0.1).abs() < 1e-9);
        // No elapsed time: no claim about the CPU.
        assert!(busy_between(&a, &a).is_empty());
    }

    #[test]
    fn cmdline_stops_at_init_args() {
        let p = parse_cmdline("mitigations=auto,no_guest_host quiet pti=on -- --addr 0.0.0.0:2024");
        assert_eq!(
            p,
            vec![
                ("mitigations".into(), "auto,no_guest_host".into()),
                ("quiet".into(), String::new()),
                ("pti".into(), "on".into()),
            ]
        );
    }

    #[test]
    fn loadavg_and_status() {
        assert_eq!(
            parse_loadavg("1.00 0.36 0.13 1/84 4655\n"),
            Some([1.0, 0.36, 0.13])
        );
        assert_eq!(parse_loadavg("garbage"), None);
        let st = "Name:\tx\nUid:\t1000\t1000\t1000\t1000\nCapEff:\t000001fffeffffff\n";
        assert_eq!(status_field(st, "CapEff"), Some("000001fffeffffff"));
        assert_eq!(status_field(st, "Uid"), Some("1000\t1000\t1000\t1000"));
        assert_eq!(status_field(st, "Nope"), None);
    }
}
