//! The human view of [`Machine`] (`oscost machine`): sections of aligned `label  value`
//! lines, with the warnings last so they are what the reader sees at the bottom. The facts
//! other views show too come from the machine's one view model ([`Facts`]); the details only
//! this view lists (topology, each CPU's frequency, each perf event) are read from the
//! machine itself.

use std::fmt::Write;

use super::facts::{or_unknown, Facts, Host};
use super::parse::format_cpu_list;
use super::{CacheInfo, Machine};
use crate::units::size::{fmt_bytes, ByteStyle};

const LABEL: usize = 21;

/// The text so far, and the width its lines are wrapped to.
struct Out(String, usize);

impl Out {
    fn section(&mut self, title: &str) {
        if !self.0.is_empty() {
            self.0.push('\n');
        }
        let _ = writeln!(self.0, "{title}");
    }
    /// `label  value`, a long value wrapped with its continuation under the value column.
    fn line(&mut self, label: &str, value: impl AsRef<str>) {
        let first = format!("  {label:<LABEL$} ");
        self.wrapped(value.as_ref(), &first, &" ".repeat(LABEL + 3));
    }
    /// `text` word-wrapped to the width, the first line after `first`, the rest after `rest`.
    fn wrapped(&mut self, text: &str, first: &str, rest: &str) {
        if first.chars().count() + text.chars().count() <= self.1 {
            let _ = writeln!(self.0, "{first}{text}");
            return;
        }
        let opts = textwrap::Options::new(self.1.max(40))
            .initial_indent(first)
            .subsequent_indent(rest);
        let _ = writeln!(self.0, "{}", textwrap::fill(text, opts));
    }
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref()
        .map_or_else(|| "unknown".into(), |x| x.to_string())
}

fn khz(v: Option<u64>) -> String {
    v.map_or("?".into(), |k| format!("{:.0} MHz", k as f64 / 1000.0))
}

/// Renders the whole machine description, section by section, each line whole (the HTML
/// report's copy).
pub fn render_text(m: &Machine) -> String {
    render_text_within(m, usize::MAX)
}

/// Renders the whole machine description for a terminal `width` columns wide: a long value
/// continues under its value column.
pub fn render_text_within(m: &Machine, width: usize) -> String {
    let mut o = Out(String::new(), width);
    let facts = Facts::of(m);
    host(&mut o, m, &facts);
    cpu(&mut o, m, &facts);
    caches(&mut o, m);
    kernel(&mut o, m);
    frequency(&mut o, m);
    memory(&mut o, m);
    perf_events(&mut o, m);
    privileges_and_load(&mut o, m);
    notes_and_warnings(&mut o, m);
    o.0
}

/// The host: name and hypervisor.
fn host(o: &mut Out, m: &Machine, f: &Facts) {
    o.section("Host");
    o.line("hostname", or_unknown(&f.hostname));
    let hv = match &f.host {
        Host::Virtual(name) => format!(
            "virtual machine ({})",
            name.as_deref().unwrap_or("hypervisor unknown")
        ),
        Host::BareMetal => "bare metal (no hypervisor detected)".into(),
    };
    o.line("hypervisor", hv);
    if let Some(v) = &m.hypervisor.dmi_sys_vendor {
        o.line(
            "DMI",
            format!(
                "{v} {}",
                m.hypervisor.dmi_product_name.as_deref().unwrap_or("")
            )
            .trim_end(),
        );
    }
}

/// The CPU: model, logical CPUs and how they are laid out.
fn cpu(o: &mut Out, m: &Machine, f: &Facts) {
    o.section("CPU");
    o.line("model", or_unknown(&f.cpu_model));
    o.line(
        "vendor / f / m / s",
        format!(
            "{} / {} / {} / {}",
            opt(&m.cpu.vendor),
            opt(&m.cpu.family),
            opt(&m.cpu.model),
            opt(&m.cpu.stepping)
        ),
    );
    o.line("microcode", or_unknown(&f.microcode));
    o.line(
        "logical CPUs",
        format!(
            "{} online ({}), {} allowed ({})",
            m.cpus_online.len(),
            format_cpu_list(&m.cpus_online),
            m.cpus_allowed.len(),
            format_cpu_list(&m.cpus_allowed)
        ),
    );
    o.line(
        "layout",
        format!(
            "{} socket(s), {} core(s), {} NUMA node(s), {} thread(s)/core",
            m.sockets,
            m.cores,
            m.numa_nodes,
            m.topology
                .iter()
                .map(|t| t.smt_siblings.len())
                .max()
                .unwrap_or(1)
        ),
    );
    for t in &m.topology {
        let sib = m.smt_siblings_of(t.cpu);
        o.line(
            &format!("cpu{}", t.cpu),
            format!(
                "socket {}  core {}  node {}  SMT siblings {}",
                opt(&t.package_id),
                opt(&t.core_id),
                opt(&t.numa_node),
                if sib.is_empty() {
                    "none".into()
                } else {
                    format_cpu_list(&sib)
                }
            ),
        );
    }
}

/// The caches, private caches of one geometry on one line.
fn caches(o: &mut Out, m: &Machine) {
    o.section("Caches");
    if m.caches.is_empty() {
        o.line("caches", "unknown (no sysfs cache information)");
    }
    // Private caches of the same geometry are one line: "x2  CPUs 0 | 1".
    let mut groups: Vec<(String, Vec<&CacheInfo>)> = Vec::new();
    for c in &m.caches {
        let key = format!(
            "{}{:?}{:?}{:?}{:?}",
            c.label(),
            c.size_bytes,
            c.line_size,
            c.ways,
            c.sets
        );
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.1.push(c),
            None => groups.push((key, vec![c])),
        }
    }
    for (_, g) in groups {
        let c = g[0];
        let cpus: Vec<&str> = g.iter().map(|c| c.shared_cpu_list.as_str()).collect();
        o.line(
            &c.label(),
            format!(
                "{:>8}  line {:>3}  {:>2}-way  {:>6} sets  x{:<3} CPUs {}",
                c.size_bytes
                    .map_or("?".into(), |b| fmt_bytes(b as f64, ByteStyle::Tenths)),
                opt(&c.line_size),
                opt(&c.ways),
                opt(&c.sets),
                g.len(),
                cpus.join(" | ")
            ),
        );
    }
}

/// The kernel: release, boot parameters, THP, clocksource, vulnerabilities.
fn kernel(o: &mut Out, m: &Machine) {
    o.section("Kernel");
    o.line(
        "release",
        format!(
            "{} {}",
            opt(&m.kernel.release),
            m.kernel.version.as_deref().unwrap_or("")
        )
        .trim_end(),
    );
    if m.kernel.boot_params.is_empty() {
        o.line("boot params", "none of interest");
    }
    for (k, v) in &m.kernel.boot_params {
        o.line(&format!("boot {k}"), if v.is_empty() { "(set)" } else { v });
    }
    o.line(
        "THP",
        format!(
            "enabled={} defrag={}",
            opt(&m.kernel.thp.enabled),
            opt(&m.kernel.thp.defrag)
        ),
    );
    o.line(
        "clocksource",
        format!(
            "{} (available: {})",
            opt(&m.kernel.clocksource.current),
            m.kernel.clocksource.available.join(" ")
        ),
    );
    o.line("perf_event_paranoid", opt(&m.kernel.perf_event_paranoid));
    for (k, v) in &m.kernel.vulnerabilities {
        if v != "Not affected" {
            o.line(k, v);
        }
    }
    let unaffected = m
        .kernel
        .vulnerabilities
        .values()
        .filter(|v| *v == "Not affected")
        .count();
    if unaffected > 0 {
        o.line(
            "not affected",
            format!("{unaffected} other vulnerabilities"),
        );
    }
}

/// Frequency scaling per CPU and turbo.
fn frequency(o: &mut Out, m: &Machine) {
    o.section("Frequency");
    if let Some(r) = &m.frequency.unavailable_reason {
        o.line("cpufreq", r);
    }
    for f in &m.frequency.per_cpu {
        o.line(
            &format!("cpu{}", f.cpu),
            format!(
                "{} / {}  min {}  max {}  now {}",
                opt(&f.driver),
                opt(&f.governor),
                khz(f.min_khz),
                khz(f.max_khz),
                khz(f.cur_khz)
            ),
        );
    }
    o.line(
        "turbo/boost",
        match m.frequency.turbo {
            Some(t) => format!(
                "{} ({})",
                if t { "on" } else { "off" },
                m.frequency.turbo_source.as_deref().unwrap_or("")
            ),
            None => "unknown".into(),
        },
    );
    // Runs recorded before the estimate was taken have none: nothing to say.
    let c = &m.core_clock;
    if c.ghz.is_some() || c.reason.is_some() {
        o.line("core clock", c.describe());
    }
}

/// Memory, swap and page sizes.
fn memory(o: &mut Out, m: &Machine) {
    o.section("Memory");
    let b = |v: Option<u64>| v.map_or("unknown".into(), |b| fmt_bytes(b as f64, ByteStyle::Tenths));
    let mem = &m.memory;
    for (label, x, y) in [
        ("total / available", mem.total_bytes, mem.available_bytes),
        (
            "swap total / free",
            mem.swap_total_bytes,
            mem.swap_free_bytes,
        ),
        ("page / huge page", mem.page_size, mem.huge_page_size),
    ] {
        o.line(label, format!("{} / {}", b(x), b(y)));
    }
}

/// Which perf events open here.
fn perf_events(o: &mut Out, m: &Machine) {
    o.section("Perf events");
    if !m.pmu.probed {
        o.line("events", "not probed");
    }
    for e in &m.pmu.events {
        let verdict = if e.supported { "yes" } else { "no" };
        let why = e
            .reason
            .as_deref()
            .map(|r| format!("  {r}"))
            .unwrap_or_default();
        o.line(&e.name, format!("{verdict}{why}"));
    }
}

/// Privileges and the load at collection time.
fn privileges_and_load(o: &mut Out, m: &Machine) {
    o.section("Privileges and load");
    let flag = |v: Option<bool>| v.map_or("?", |b| if b { "yes" } else { "no" });
    o.line(
        "user",
        format!(
            "euid {}{}  CAP_PERFMON {}  CAP_SYS_ADMIN {}",
            opt(&m.privileges.euid),
            if m.privileges.root { " (root)" } else { "" },
            flag(m.privileges.cap_perfmon),
            flag(m.privileges.cap_sys_admin)
        ),
    );
    if let Some(l) = m.load.loadavg {
        o.line(
            "load average",
            format!("{:.2} {:.2} {:.2}", l[0], l[1], l[2]),
        );
    }
    if let Some(w) = m.load.window_ms {
        let busy: Vec<String> = m
            .load
            .per_cpu
            .iter()
            .map(|c| format!("cpu{} {:.0}%", c.cpu, c.busy * 100.0))
            .collect();
        o.line(&format!("busy ({w} ms)"), busy.join("  "));
    }
}

/// The collector's notes and the warnings.
fn notes_and_warnings(o: &mut Out, m: &Machine) {
    if !m.notes.is_empty() {
        o.section("Notes");
        for n in &m.notes {
            o.wrapped(n, "  - ", "    ");
        }
    }
    let w = m.warnings();
    o.section(&format!("Warnings ({})", w.len()));
    if w.is_empty() {
        let _ = writeln!(
            o.0,
            "  none: this machine should give representative numbers"
        );
    }
    for x in w {
        o.wrapped(&x, "  ! ", "    ");
    }
}
