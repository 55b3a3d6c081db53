//! `sim run --timeline FILE`: the I-cache's hit rate so far against cycles, as Ripes' cache
//! tab plots it, from samples taken while the machine is stepped. The cold start (every
//! first read of a line a miss) is the curve's rise at the left.

use rvsim::{Machine, Stop};

use crate::report::plot::{LinePlot, Point, Series};

/// Samples kept at most: when full, every other one is dropped and the interval doubles, so
/// the samples stay evenly spaced over the whole run.
const MAX_SAMPLES: usize = 512;

/// One sample: cycles so far (instructions without the pipeline), I-cache reads and hits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    pub cycles: u64,
    pub accesses: u64,
    pub hits: u64,
}

/// Steps `m` to its end, sampling the I-cache every so many instructions.
pub fn run(m: &mut Machine) -> (Stop, Vec<Sample>) {
    let mut samples = Vec::new();
    let mut every = 1u64;
    let mut n = 0u64;
    let stop = loop {
        if let Some(stop) = m.step() {
            break stop;
        }
        n += 1;
        if n.is_multiple_of(every) {
            samples.push(sample(m));
            if samples.len() == MAX_SAMPLES {
                samples = samples.into_iter().skip(1).step_by(2).collect();
                every *= 2;
            }
        }
    };
    samples.push(sample(m));
    (stop, samples)
}

fn sample(m: &Machine) -> Sample {
    let s = m.stats();
    let ic = s.icache.unwrap_or_default();
    Sample {
        cycles: s.pipeline.map_or(s.instret, |p| p.cycles()),
        accesses: ic.accesses,
        hits: ic.hits,
    }
}

/// The figure: hit rate so far (%) against cycles.
pub fn figure(samples: &[Sample], label: &str, cache: &str) -> String {
    let points = samples
        .iter()
        .filter(|s| s.accesses > 0)
        .map(|s| {
            let y = 100.0 * s.hits as f64 / s.accesses as f64;
            Point::new(s.cycles as f64, y, y, y)
        })
        .collect();
    LinePlot {
        title: "I-cache hit rate over the run".into(),
        subtitle: format!("rvsim, {label}, I-cache {cache}"),
        x_label: "cycles".into(),
        y_label: "hit rate so far (%)".into(),
        series: vec![Series {
            name: label.to_string(),
            points,
            gaps: Vec::new(),
        }],
        ..Default::default()
    }
    .to_svg()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rvsim::{CacheConfig, Config, Program};

    #[test]
    fn the_samples_cover_the_run_evenly_and_end_at_its_end() {
        // A loop of 3 instructions run 2000 times: more steps than samples kept.
        let code: Vec<u8> = [
            0x7d000293u32, // li t0, 2000
            0xfff28293,    // addi t0, t0, -1
            0xfe029ee3,    // bnez t0, -4
            0x05d00893,    // li a7, 93
            0x00000073,    // ecall
        ]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
        let program = Program::from_code(0x8000_0000, &code);
        let cfg = Config {
            icache: Some(CacheConfig::parse("sets=2,ways=1,words=2").unwrap()),
            pipeline: true,
            ..Config::default()
        };
        let mut m = Machine::new(&cfg, &program).unwrap();
        let (stop, samples) = run(&mut m);
        assert_eq!(stop, Stop::Exit(0));
        assert!(samples.len() <= MAX_SAMPLES && samples.len() > MAX_SAMPLES / 4);
        let last = samples.last().unwrap();
        assert_eq!(last.accesses, m.stats().icache.unwrap().accesses);
        assert!(samples.windows(2).all(|w| w[0].cycles <= w[1].cycles));
        // The cold start: the first sample's hit rate is below the last one's.
        let rate = |s: &Sample| s.hits as f64 / s.accesses as f64;
        assert!(rate(&samples[0]) < rate(last));
        let svg = figure(&samples, "loop", "2x1x2");
        assert!(svg.contains("I-cache hit rate over the run"));
    }
}
