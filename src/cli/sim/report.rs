//! Text and JSON views of simulation outcomes, and the plain-words explanation of why two
//! builds of one program differ.

use std::fmt::Write;

use rvsim::{CacheConfig, CacheStats, PipelineStats, Replacement, Stop, WritePolicy};
use serde_json::{json, Value};

use super::Outcome;

/// The columns of the per-build CSV, in order.
pub const CSV_HEADER: [&str; 17] = [
    "build",
    "text_bytes",
    "own_text_bytes",
    "ended",
    "status",
    "instructions",
    "compressed_instructions",
    "icache_accesses",
    "icache_hits",
    "icache_misses",
    "icache_hit_rate",
    "straddling_fetches",
    "dcache_accesses",
    "dcache_misses",
    "dcache_hit_rate",
    "cycles",
    "cpi",
];

/// How to let a run that a limit stopped go further, naming the option that set the limit.
pub fn raise_hint(stop: &Stop) -> Option<&'static str> {
    match stop {
        Stop::Limit { .. } => Some("raise it with --max-instructions N"),
        Stop::TimeLimit { .. } => {
            Some("stopped by --time-limit: raise it with --time-limit SECONDS (0: no bound)")
        }
        _ => None,
    }
}

/// One CSV row per outcome (empty cells for what was not modeled).
pub fn csv_row(o: &Outcome) -> Vec<String> {
    let s = &o.stats;
    let opt = |v: Option<String>| v.unwrap_or_default();
    vec![
        // A file name or -march value: the one CSV escape (no cell starts a formula).
        crate::escape::csv(&o.label).into_owned(),
        o.program.text_size.to_string(),
        opt(o.own_text.map(|t| t.to_string())),
        o.stop.kind().to_string(),
        opt(o.stop.status().map(|v| v.to_string())),
        s.instret.to_string(),
        s.compressed_retired.to_string(),
        opt(s.icache.map(|c| c.accesses.to_string())),
        opt(s.icache.map(|c| c.hits.to_string())),
        opt(s.icache.map(|c| c.misses.to_string())),
        opt(s.icache.map(|c| format!("{:.6}", c.hit_rate()))),
        s.straddling_fetches.to_string(),
        opt(s.dcache.map(|c| c.accesses.to_string())),
        opt(s.dcache.map(|c| c.misses.to_string())),
        opt(s.dcache.map(|c| format!("{:.6}", c.hit_rate()))),
        opt(s.pipeline.map(|p| p.cycles().to_string())),
        opt(s.pipeline.map(|p| format!("{:.6}", p.cpi()))),
    ]
}

/// The per-build table: one CSV row per outcome under [`CSV_HEADER`].
pub fn csv_table(outs: &[Outcome]) -> (Vec<&'static str>, Vec<Vec<String>>) {
    (CSV_HEADER.to_vec(), outs.iter().map(csv_row).collect())
}

/// The line saying a requested timer interrupt never fired because the program never enabled
/// it, if that is the case.
pub fn timer_note(o: &Outcome) -> Option<String> {
    let n = o.config.timer_interval?;
    (o.stats.interrupts == 0 && !o.stats.timer_enabled).then(|| {
        format!(
            "--timer-interrupt {n} had no effect: the program never enabled timer interrupts (mstatus.MIE and mie.MTIE; the shipped start-up code does)"
        )
    })
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// `now` against `before` as a signed change to one decimal ("+6.1%", "-12.0%"); a change
/// that rounds to nothing is "0.0%", never "-0.0%" (176423 cycles against 176424).
fn change(now: u64, before: u64) -> String {
    let c = pct(now, before) - 100.0;
    if (c * 10.0).round() == 0.0 {
        "0.0%".into()
    } else {
        format!("{c:+.1}%")
    }
}

/// The I-cache's cold-streaming ceiling for the instructions this run executed.
pub fn ceiling(o: &Outcome) -> Option<f64> {
    let c = o.config.icache.as_ref()?;
    super::hotloop::streaming_ceiling(c, o.stats.instret, o.stats.compressed_retired)
}

pub fn cache_label(c: &CacheConfig) -> String {
    let repl = match c.replacement {
        Replacement::Lru => "lru",
        Replacement::Fifo => "fifo",
        Replacement::Random => "random",
    };
    let write = match c.write_policy {
        WritePolicy::WriteBack => "back",
        WritePolicy::WriteThrough => "through",
    };
    format!(
        "sets={},ways={},words={},repl={repl},write={write},alloc={} ({} bytes)",
        c.sets,
        c.ways,
        c.words_per_line,
        if c.write_allocate { "yes" } else { "no" },
        c.size_bytes()
    )
}

fn cache_text(out: &mut String, name: &str, cfg: &Option<CacheConfig>, s: &Option<CacheStats>) {
    if let (Some(c), Some(s)) = (cfg, s) {
        let _ = writeln!(out, "{name:<13}{}", cache_label(c));
        let _ = writeln!(
            out,
            "{:<13}accesses {}, hits {}, misses {} (hit rate {:.2}%)",
            "",
            s.accesses,
            s.hits,
            s.misses,
            100.0 * s.hit_rate()
        );
        let _ = writeln!(
            out,
            "{:<13}misses: {} compulsory, {} capacity, {} conflict; {} writebacks, {} memory writes",
            "", s.compulsory, s.capacity, s.conflict, s.writebacks, s.memory_writes
        );
    }
}

fn pipeline_text(out: &mut String, p: &PipelineStats, o: &Outcome) {
    let penalty = o.config.miss_penalty;
    let _ = writeln!(
        out,
        "{:<13}5-stage: {} cycles, CPI {:.3} (miss penalty {penalty})",
        "pipeline",
        p.cycles(),
        p.cpi()
    );
    let _ = writeln!(
        out,
        "{:<13}stalls: {} load-use, {} I-miss, {} D-miss{}; flushes: {} branch, {} jump, {} trap, {} interrupt",
        "",
        p.load_use_stalls,
        p.icache_miss_stalls,
        p.dcache_miss_stalls,
        if p.ecall_stalls > 0 {
            format!(", {} ecall", p.ecall_stalls)
        } else {
            String::new()
        },
        p.branch_flushes,
        p.jump_flushes,
        p.trap_flushes,
        p.interrupt_flushes
    );
    let _ = writeln!(
        out,
        "{:<13}predictor {}: {} mispredicted",
        "",
        o.config.predictor,
        p.mispredictions()
    );
}

pub fn run_text(o: &Outcome) -> String {
    let s = &o.stats;
    let mut out = String::new();
    let _ = writeln!(out, "{:<13}{}", "program", o.label);
    let own = o
        .own_text
        .map_or(String::new(), |t| format!(", functions {t} bytes"));
    let _ = writeln!(
        out,
        "{:<13}.text {} bytes{own}; entry 0x{:08x}",
        "code", o.program.text_size, o.program.entry
    );
    let _ = writeln!(
        out,
        "{:<13}0x{:08x}..0x{:08x} ({} KiB)",
        "memory",
        o.memory.0,
        o.memory.0 as u64 + o.memory.1 as u64,
        o.memory.1 / 1024
    );
    let _ = writeln!(out, "{:<13}{}", "ended", o.stop);
    if let Some(hint) = raise_hint(&o.stop) {
        let _ = writeln!(out, "{:<13}{hint}", "");
    }
    if let Some(status) = o.stop.status() {
        let _ = writeln!(out, "{:<13}{status}", "exit status");
    }
    if let Some(note) = timer_note(o) {
        let _ = writeln!(out, "{:<13}{note}", "timer");
    }
    let _ = writeln!(
        out,
        "{:<13}{} retired, {} compressed ({:.1}%); {} exceptions, {} interrupts",
        "instructions",
        s.instret,
        s.compressed_retired,
        pct(s.compressed_retired, s.instret),
        s.exceptions,
        s.interrupts
    );
    cache_text(&mut out, "I-cache", &o.config.icache, &s.icache);
    if s.icache.is_some() && o.config.count == rvsim::FetchCount::PerCycle {
        let _ = writeln!(
            out,
            "{:<13}counted per cycle, as Ripes does: one read per cycle and one at reset",
            ""
        );
    } else if s.icache.is_some() {
        let _ = writeln!(
            out,
            "{:<13}{} fetches of 32-bit instructions straddled two lines",
            "", s.straddling_fetches
        );
    }
    cache_text(&mut out, "D-cache", &o.config.dcache, &s.dcache);
    if let Some(p) = &s.pipeline {
        pipeline_text(&mut out, p, o);
    }
    out
}

fn cache_json(cfg: &Option<CacheConfig>, s: &Option<CacheStats>) -> Value {
    match (cfg, s) {
        (Some(c), Some(s)) => json!({
            "config": cache_label(c),
            "size_bytes": c.size_bytes(),
            "accesses": s.accesses, "hits": s.hits, "misses": s.misses,
            "reads": s.reads, "writes": s.writes, "hit_rate": s.hit_rate(),
            "compulsory": s.compulsory, "capacity": s.capacity, "conflict": s.conflict,
            "writebacks": s.writebacks, "memory_writes": s.memory_writes,
        }),
        _ => Value::Null,
    }
}

pub fn run_json(o: &Outcome) -> Value {
    let s = &o.stats;
    let pipeline = s.pipeline.map(|p| {
        json!({
            "cycles": p.cycles(), "cpi": p.cpi(), "retired": p.retired,
            "miss_penalty": o.config.miss_penalty,
            "stalls": {"load_use": p.load_use_stalls, "icache_miss": p.icache_miss_stalls,
                       "dcache_miss": p.dcache_miss_stalls, "ecall": p.ecall_stalls},
            "flushes": {"branch": p.branch_flushes, "jump": p.jump_flushes,
                        "trap": p.trap_flushes, "interrupt": p.interrupt_flushes},
            "predictor": o.config.predictor.to_string(),
            "mispredictions": p.mispredictions(),
        })
    });
    json!({
        "schema": 1,
        "tool_version": env!("CARGO_PKG_VERSION"),
        "program": o.label,
        "text_bytes": o.program.text_size,
        "own_text_bytes": o.own_text,
        "entry": o.program.entry,
        "ended": {
            "kind": o.stop.kind(),
            "reason": o.stop.to_string(),
            "status": o.stop.status(),
            "exit_code": o.stop.exit_code(),
        },
        "timer_note": timer_note(o),
        "machine": {
            "memory_base": o.memory.0,
            "memory_bytes": o.memory.1,
            "compressed": o.config.compressed,
            "count": o.config.count.name(),
            "timer_interval": o.config.timer_interval,
        },
        "exit_status": o.stop.status(),
        "instructions": s.instret,
        "compressed_instructions": s.compressed_retired,
        "steps": s.steps,
        "exceptions": s.exceptions,
        "interrupts": s.interrupts,
        "straddling_fetches": s.straddling_fetches,
        "icache": cache_json(&o.config.icache, &s.icache),
        "icache_streaming_ceiling": ceiling(o),
        "hot_loop": o.hot_loop.map(|l| json!({
            "start": l.start, "end": l.end, "bytes": l.bytes(), "taken": l.taken,
            "fits_icache": o.config.icache.map(|c| l.fits(&c)),
        })),
        "dcache": cache_json(&o.config.dcache, &s.dcache),
        "pipeline": pipeline,
    })
}

/// The comparison's rows as a table: names in the first column, one right-aligned column
/// per build.
fn layout(rows: &[(String, Vec<String>)]) -> String {
    let width = rows
        .iter()
        .flat_map(|(_, v)| v.iter().map(String::len))
        .max()
        .unwrap_or(8)
        .max(8);
    let mut out = String::new();
    for (name, values) in rows {
        let _ = write!(out, "{name:<18}");
        for v in values {
            let _ = write!(out, "{v:>w$}  ", w = width);
        }
        out.push('\n');
    }
    out
}

/// A table with one column per build, then why the builds differ.
pub fn compare_text(outs: &[Outcome]) -> String {
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    let mut row = |name: &str, f: &dyn Fn(&Outcome) -> String| {
        rows.push((name.to_string(), outs.iter().map(f).collect()));
    };
    row("", &|o| o.label.clone());
    row(".text bytes", &|o| o.program.text_size.to_string());
    row("  functions", &|o| {
        o.own_text.map_or("-".into(), |t| t.to_string())
    });
    row("ended", &|o| match o.stop.status() {
        Some(s) => format!("{} {s}", o.stop.kind()),
        None => o.stop.kind().to_string(),
    });
    row("instructions", &|o| o.stats.instret.to_string());
    row("  compressed", &|o| {
        format!("{:.1}%", pct(o.stats.compressed_retired, o.stats.instret))
    });
    for (name, pick) in [
        (
            "I-cache",
            (|o: &Outcome| o.stats.icache) as fn(&Outcome) -> Option<CacheStats>,
        ),
        ("D-cache", |o: &Outcome| o.stats.dcache),
    ] {
        if outs.iter().all(|o| pick(o).is_none()) {
            continue;
        }
        let get =
            |o: &Outcome, f: &dyn Fn(&CacheStats) -> String| pick(o).map_or("-".into(), |s| f(&s));
        row(&format!("{name} accesses"), &|o| {
            get(o, &|s| s.accesses.to_string())
        });
        row("  hits", &|o| get(o, &|s| s.hits.to_string()));
        row("  misses", &|o| get(o, &|s| s.misses.to_string()));
        row("  hit rate", &|o| {
            get(o, &|s| format!("{:.2}%", 100.0 * s.hit_rate()))
        });
        row("  comp/cap/conf", &|o| {
            get(o, &|s| {
                format!("{}/{}/{}", s.compulsory, s.capacity, s.conflict)
            })
        });
        if name == "I-cache" {
            row("  straddling", &|o| o.stats.straddling_fetches.to_string());
            row("  ceiling", &|o| {
                ceiling(o).map_or("-".into(), |c| format!("{:.2}%", 100.0 * c))
            });
            row("  hot loop", &|o| match (o.hot_loop, o.config.icache) {
                (Some(l), Some(c)) => format!("{}B/{}B", l.bytes(), c.size_bytes()),
                _ => "-".into(),
            });
            row("  loop fits", &|o| match (o.hot_loop, o.config.icache) {
                (Some(l), Some(c)) => if l.fits(&c) { "yes" } else { "no" }.into(),
                _ => "-".into(),
            });
        }
    }
    if outs.iter().any(|o| o.stats.pipeline.is_some()) {
        let p = |o: &Outcome, f: &dyn Fn(&PipelineStats) -> String| {
            o.stats.pipeline.map_or("-".into(), |p| f(&p))
        };
        row("cycles", &|o| p(o, &|p| p.cycles().to_string()));
        row("CPI", &|o| p(o, &|p| format!("{:.3}", p.cpi())));
        row("  load-use", &|o| p(o, &|p| p.load_use_stalls.to_string()));
        row("  I-miss stall", &|o| {
            p(o, &|p| p.icache_miss_stalls.to_string())
        });
        row("  D-miss stall", &|o| {
            p(o, &|p| p.dcache_miss_stalls.to_string())
        });
        row("  branch flush", &|o| {
            p(o, &|p| p.branch_flushes.to_string())
        });
        row("  jump flush", &|o| p(o, &|p| p.jump_flushes.to_string()));
        row("  trap/intr", &|o| {
            p(o, &|p| {
                format!("{}/{}", p.trap_flushes, p.interrupt_flushes)
            })
        });
    }
    let mut out = layout(&rows);
    for o in outs {
        let _ = writeln!(out, "{}: {}", o.label, o.stop);
        if let Some(hint) = raise_hint(&o.stop) {
            let _ = writeln!(out, "{}: {hint}", o.label);
        }
        if let Some(note) = timer_note(o) {
            let _ = writeln!(out, "{}: {note}", o.label);
        }
    }
    compare_notes(outs, &mut out);
    if outs.len() >= 2 {
        out.push_str("\nwhy they differ:\n");
        for o in &outs[1..] {
            out.push_str(&explain(&outs[0], o));
        }
    }
    for o in outs {
        if let Some(line) = loop_sentence(o) {
            out.push_str(&line);
        }
    }
    out
}

/// The notes under the comparison table: what its rows mean.
fn compare_notes(outs: &[Outcome], out: &mut String) {
    out.push_str(
        "(.text: every executable section, C runtime included; functions: the\n \
         program's own, from the symbol table - for ELF input, every function symbol)\n",
    );
    if outs.iter().any(|o| o.config.icache.is_some()) {
        out.push_str(
            "(ceiling: the hit rate of code streaming through lines it never finds again,\n \
             1 - 1/instructions per line, for the mix of instructions that ran; hot loop:\n \
             the most taken backward branch's loop in bytes against the I-cache's bytes)\n",
        );
    }
    if let Some(o) = outs.first() {
        if o.config.count == rvsim::FetchCount::PerCycle {
            out.push_str(
                "(I-cache counted per cycle, as Ripes does: one read per cycle and one at reset)\n",
            );
        }
    }
}

/// Whether the build's hot loop fits its I-cache, and what that means for the hit rate.
fn loop_sentence(o: &Outcome) -> Option<String> {
    let (l, c) = (o.hot_loop?, o.config.icache?);
    let ceiling = ceiling(o)?;
    let (verb, what) = if l.fits(&c) {
        ("fits", "once warm it misses no more, so the hit rate climbs above the streaming ceiling with the run's length".to_string())
    } else {
        ("does not fit", format!(
            "each pass evicts what the next needs, so the hit rate stays near the streaming ceiling of {:.2}%",
            100.0 * ceiling
        ))
    };
    Some(format!(
        "- {}: its hot loop (0x{:08x}..0x{:08x}, {} bytes in {} lines of {} bytes) {verb} the I-cache's {} lines ({} bytes): {what}\n",
        o.label,
        l.start,
        l.end,
        l.bytes(),
        l.lines(&c),
        c.line_bytes(),
        c.sets * c.ways,
        c.size_bytes()
    ))
}

/// Plain sentences for the differences between build `a` and build `b`.
fn explain(a: &Outcome, b: &Outcome) -> String {
    let mut out = String::new();
    let (ta, tb) = (a.program.text_size as f64, b.program.text_size as f64);
    if ta > 0.0 {
        let _ = writeln!(
            out,
            "- {} code is {:.1}% {} than {} ({} vs {} bytes of .text); {:.1}% of the instructions it executed were 16-bit",
            b.label,
            (100.0 * (tb - ta) / ta).abs(),
            if tb <= ta { "smaller" } else { "larger" },
            a.label,
            b.program.text_size,
            a.program.text_size,
            pct(b.stats.compressed_retired, b.stats.instret)
        );
    }
    if let (Some(oa), Some(ob)) = (a.own_text, b.own_text) {
        if oa > 0 {
            let _ = writeln!(
                out,
                "- the program's own functions: {} vs {} bytes ({:.1}% {})",
                ob,
                oa,
                (100.0 * (ob as f64 - oa as f64) / oa as f64).abs(),
                if ob <= oa { "smaller" } else { "larger" }
            );
        }
    }
    if a.stdout != b.stdout || a.stop.status() != b.stop.status() {
        let _ = writeln!(
            out,
            "- the two builds printed different output: check the program"
        );
    }
    let per_cycle = b.config.count == rvsim::FetchCount::PerCycle;
    if let (Some(ia), Some(ib), true) = (a.stats.icache, b.stats.icache, per_cycle) {
        let _ = writeln!(
            out,
            "- I-cache counted per cycle (as Ripes): {} reads vs {}, one per cycle and one at reset, wrong-path reads after taken branches and jumps and stall re-reads included",
            ib.accesses, ia.accesses
        );
    } else if let (Some(ia), Some(ib)) = (a.stats.icache, b.stats.icache) {
        let _ = writeln!(
            out,
            "- I-cache: an instruction fetch costs one access per line it touches, so {} makes {} accesses vs {}; {} of its fetches were 32-bit instructions straddling two lines (vs {})",
            b.label, ib.accesses, ia.accesses, b.stats.straddling_fetches, a.stats.straddling_fetches
        );
        let _ = writeln!(
            out,
            "- denser code puts more instructions in each line: {} misses ({} capacity, {} conflict) vs {} ({} capacity, {} conflict); hit rate {:.2}% vs {:.2}%",
            ib.misses, ib.capacity, ib.conflict, ia.misses, ia.capacity, ia.conflict,
            100.0 * ib.hit_rate(), 100.0 * ia.hit_rate()
        );
    }
    if let (Some(pa), Some(pb)) = (a.stats.pipeline, b.stats.pipeline) {
        let _ = writeln!(
            out,
            "- cycles {} vs {} ({}): I-miss stalls {} vs {}, load-use {} vs {}, branch+jump flushes {} vs {}{}",
            pb.cycles(),
            pa.cycles(),
            change(pb.cycles(), pa.cycles()),
            pb.icache_miss_stalls,
            pa.icache_miss_stalls,
            pb.load_use_stalls,
            pa.load_use_stalls,
            pb.branch_flushes + pb.jump_flushes,
            pa.branch_flushes + pa.jump_flushes,
            if b.config.miss_penalty == 0 {
                " (miss penalty 0: the cache changes counts, not time; try --miss-penalty 10)"
            } else {
                ""
            }
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sim compare` of the lab program: "cycles 176423 vs 176424 (-0.0%)".
    #[test]
    fn a_change_that_rounds_to_nothing_has_no_sign() {
        assert_eq!(change(176_423, 176_424), "0.0%");
        assert_eq!(change(176_424, 176_423), "0.0%");
        assert_eq!(change(106, 100), "+6.0%");
        assert_eq!(change(88, 100), "-12.0%");
    }
}
