//! Records the window the noise attribution is tested on (tests/fixtures/noise/): 200 ms of
//! busy readers on every allowed CPU with the tracer on, and a competitor (a forked process
//! named "competitor" that spins) pinned to the first CPU. Writes the readers' gaps
//! (`readers.json`), /proc/interrupts, /proc/softirqs and /proc/stat before and after, the raw
//! records (`noise.records`) and the format and id files of every recorded event (beside the
//! rpc fixtures in tests/fixtures/trace/). Run as root:
//! `cargo run --example noise_fixture -- tests/fixtures`.

use oscost::engine::partner::Child;
use oscost::evidence::trace::tracefs::Tracefs;
use oscost::evidence::trace::{write_fixture, NOISE_EVENTS};
use oscost::probes::noise::window::{take, Asked, Tracing};

fn main() {
    let root = std::path::PathBuf::from(std::env::args().nth(1).expect("usage: DIR"));
    let (trace, noise) = (root.join("trace"), root.join("noise"));
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
    let w = take(&Asked {
        cpus: cpus.clone(),
        duration_ns: 200_000_000,
        threshold_ns: None,
        trace: true,
    })
    .unwrap();
    drop(competitor);
    assert!(matches!(w.tracing, Tracing::Recorded(_)), "{:?}", w.tracing);
    let json = serde_json::json!({
        "readers": w.readers,
        "before_ns": [w.before.time_ns, w.before.softirqs_ns],
        "after_ns": [w.after.time_ns, w.after.softirqs_ns],
        "competitor_cpu": cpus[0],
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
    println!("{} records; {} readers", w.records.len(), w.readers.len());
}
