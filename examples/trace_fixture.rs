//! Records the trace fixtures the record parser is tested on (tests/fixtures/trace/): the
//! format and id files of every event, and the raw records of 40 pipe round trips between this
//! process on the last CPU and a forked partner on the first (`pipe-remote.records`) or on the
//! same CPU (`pipe-local.records`, with `local`). Run as root:
//! `cargo run --example trace_fixture -- tests/fixtures/trace [local]`.

use oscost::engine::partner::Child;
use oscost::evidence::trace::ring::Tracer;
use oscost::evidence::trace::tracefs::Tracefs;
use oscost::evidence::trace::{write_fixture, EVENTS};
use oscost::probes::ipc::channel::{Channel, Mech};

fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).expect("usage: DIR"));
    {
        let fs = Tracefs::open().expect("tracefs");
        for (name, _) in EVENTS {
            let short = name.split(':').nth(1).unwrap();
            let (group, _) = name.split_once(':').unwrap();
            let base = fs.root.join("events").join(group).join(short);
            for f in ["id", "format"] {
                if let Ok(text) = std::fs::read_to_string(base.join(f)) {
                    std::fs::write(dir.join(format!("{short}.{f}")), text).unwrap();
                }
            }
        }
    }
    let cpus = oscost::machine::affinity::allowed_cpus();
    let local = std::env::args().nth(2).as_deref() == Some("local");
    let a = *cpus.last().unwrap();
    let b = if local { a } else { cpus[0] };
    let _pin = oscost::evidence::placement::AffinityGuard::pin_current(&[a]).unwrap();
    let mut ch = Channel::new(Mech::Pipe).unwrap();
    let c = &ch;
    let child = Child::spawn(Some(b), move || {
        c.partner_close();
        c.serve()
    })
    .unwrap();
    ch.parent_close();
    for _ in 0..10 {
        ch.round_trip(&|| false).unwrap();
    }
    let me = oscost::evidence::placement::gettid();
    let mut t = Tracer::open(&cpus, &[me, child.pid()]).unwrap();
    t.enable().unwrap();
    for _ in 0..40 {
        ch.round_trip(&|| false).unwrap();
    }
    t.disable();
    let mut recs = Vec::new();
    t.drain(&mut recs);
    let name = if local { "pipe-local" } else { "pipe-remote" };
    std::fs::write(dir.join(format!("{name}.records")), write_fixture(&recs)).unwrap();
    println!(
        "{} records; client {me}, server {}",
        recs.len(),
        child.pid()
    );
}
