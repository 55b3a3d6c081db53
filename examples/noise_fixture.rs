//! Records the window the noise attribution is tested on (tests/fixtures/noise/): 200 ms of
//! busy readers on every allowed CPU with the tracer on, and a competitor (a forked process
//! named "competitor" that spins) pinned to the first CPU. Writes the readers' gaps
//! (`readers.json`), /proc/interrupts, /proc/softirqs and /proc/stat before and after, the raw
//! records (`noise.records`), each tracepoint's own count (`counted` in `readers.json`) and
//! the format and id files of every recorded event (beside the rpc fixtures in
//! tests/fixtures/trace/). Run as root:
//! `cargo run --example noise_fixture -- tests/fixtures`.
//!
//! `cargo run --example noise_fixture -- tests/fixtures noise-unwritten --unwritten` records
//! into `noise-unwritten/` instead, taking windows until one holds a /proc row that its
//! records fall short of by entries the kernel counted and wrote no sample of (interrupts that
//! came while a task whose tracepoints do not fire ran), at most 50 tries.

use oscost::engine::partner::Child;
use oscost::evidence::trace::tracefs::Tracefs;
use oscost::evidence::trace::{write_fixture, NOISE_EVENTS};
use oscost::model::noise::Attribution;
use oscost::probes::noise::window::{take, Asked, Tracing, Window};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let root = std::path::PathBuf::from(args.get(1).expect("usage: DIR [NAME [--unwritten]]"));
    let name = args.get(2).map_or("noise", String::as_str);
    let until_unwritten = args.iter().any(|a| a == "--unwritten");
    let (trace, noise) = (root.join("trace"), root.join(name));
    std::fs::create_dir_all(&noise).unwrap();
    {
        let fs = Tracefs::open().expect("tracefs");
        for (name, _) in NOISE_EVENTS {
            let (group, short) = name.split_once(':').unwrap();
            let base = fs.root.join("events").join(group).join(short);
            for f in ["id", "format"] {
                if let Ok(text) = std::fs::read_to_string(base.join(f)) {
                    std::fs::write(trace.join(format!("{short}.{f}")), text).unwrap();
                }
            }
        }
    }
    let cpus = oscost::machine::affinity::allowed_cpus();
    let competitor = Child::spawn(Some(cpus[0]), || {
        // SAFETY: a NUL-terminated name for this (forked, single-threaded) process.
        unsafe { libc::prctl(libc::PR_SET_NAME, c"competitor".as_ptr()) };
        loop {
            std::hint::spin_loop();
        }
    })
    .unwrap();
    let asked = Asked {
        cpus: cpus.clone(),
        duration_ns: 200_000_000,
        threshold_ns: None,
        trace: true,
    };
    let mut w = take(&asked).unwrap();
    let mut tries = 1;
    while until_unwritten && tries < 50 && !unwritten(&w) {
        w = take(&asked).unwrap();
        tries += 1;
    }
    drop(competitor);
    assert!(
        !until_unwritten || unwritten(&w),
        "no window of {tries} held one"
    );
    assert!(matches!(w.tracing, Tracing::Recorded(_)), "{:?}", w.tracing);
    let json = serde_json::json!({
        "readers": w.readers,
        "before_ns": [w.before.time_ns, w.before.softirqs_ns],
        "after_ns": [w.after.time_ns, w.after.softirqs_ns],
        "competitor_cpu": cpus[0],
        "counted": w.counted,
    });
    std::fs::write(
        noise.join("readers.json"),
        serde_json::to_string(&json).unwrap(),
    )
    .unwrap();
    for (name, s) in [("before", &w.before), ("after", &w.after)] {
        std::fs::write(noise.join(format!("interrupts.{name}")), &s.text.interrupts).unwrap();
        std::fs::write(noise.join(format!("softirqs.{name}")), &s.text.softirqs).unwrap();
        std::fs::write(noise.join(format!("stat.{name}")), &s.text.stat).unwrap();
    }
    std::fs::write(noise.join("noise.records"), write_fixture(&w.records)).unwrap();
    println!(
        "{} records; {} readers; {tries} windows taken",
        w.records.len(),
        w.readers.len()
    );
}

/// Whether a window holds a /proc row its records alone fall short of and the entries its
/// tracepoint counted without writing account for.
fn unwritten(w: &Window) -> bool {
    oscost::probes::noise::conclude(w).iter().any(|n| {
        matches!(&n.attribution, Attribution::Traced(t)
            if t.counts.iter().any(|c| !c.whole() && c.agrees()))
    })
}
