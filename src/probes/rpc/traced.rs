//! The traced run: the same RPCs with kernel tracepoints recording, in batches (rings drained
//! between them), each RPC also timed by the client on CLOCK_MONOTONIC, interleaved in rounds
//! with the calibration pass's batches (probes::rpc::calibrate). Gives `rpc.traced` (the
//! client's RPC time with tracing on, and the observer's cost), one `rpc.part` per part of
//! the breakdown and one `rpc.corrected` per part with the observer's cost taken out
//! (probes::rpc::correct), with the checks that make the split trustworthy: parts ≥ 0, their
//! means adding up to the client's own time of the same RPCs within 10% (each matched RPC
//! paired with the timed call that holds it: the trace's clock is the client's), most RPCs
//! matched, nothing lost, and the scenario's switches seen in the trace (idle→server for
//! remote-exclusive).

use super::breakdown::{split, Calls, Rpc, IPI_PARTS, PARTS};
use super::calibrate::{calibrate, Batch, Costs, CONFIGS, TRACED};
use super::path::{on_path, PathEvents, Who, GROUPS};
use super::{Scenario, Session};
use crate::engine::measure::{from_samples, Context, Spec};
use crate::error::{Error, Result};
use crate::evidence::clock;
use crate::evidence::perf::EventSet;
use crate::evidence::recorder::Recorder;
use crate::evidence::trace::ring::Tracer;
use crate::evidence::trace::{Event, Group, Kind};
use crate::model::{Bound, Check, CheckKind, Measurement, Observer, Reading, Remark, RemarkKind};
use crate::probes::ipc::channel::Mech;
use crate::units::name::Word;

/// RPCs per batch: a batch's records (about 30 per RPC, ~100 bytes each) fit a ring easily.
const BATCH: u64 = 200;
/// Fully traced RPCs: at least this many (5 rounds of the calibration pass), at most.
const MIN_RPCS: u64 = 1000;
const MAX_RPCS: u64 = 5000;

/// Everything the checks look at, computed from one traced run.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    pub rpcs: Vec<Rpc>,
    /// RPCs the client made while tracing.
    pub made: usize,
    pub lost: u64,
    /// Switches on the server's CPU involving a server, per RPC made.
    pub remote_switches_per_rpc: f64,
    /// Switches to the client recorded in the trace, per RPC made.
    pub client_ins_per_rpc: f64,
}

/// The matched RPCs the means are taken over: the middle 80% by traced span
/// (probes::rpc::additive).
pub fn middle(rpcs: &[Rpc]) -> Vec<usize> {
    let spans: Vec<f64> = rpcs.iter().map(|r| r.span_ns() as f64).collect();
    super::additive::middle(&spans)
}

/// The client's own time of each matched RPC: the timed call (CLOCK_MONOTONIC before and
/// after it, the trace's clock; `windows` in call order) that holds the RPC's first event.
/// None for an RPC no timed call holds.
pub fn client_times(rpcs: &[Rpc], windows: &[(u64, u64)]) -> Vec<Option<f64>> {
    rpcs.iter()
        .map(|r| {
            let i = windows.partition_point(|w| w.0 <= r.marks.enter);
            let &(t0, t1) = windows.get(i.checked_sub(1)?)?;
            (r.marks.enter <= t1).then(|| (t1 - t0) as f64)
        })
        .collect()
}

/// Means of each part over the middle RPCs: they add up to those RPCs' mean span (the parts
/// of every RPC do), which medians do not.
#[cfg(test)]
pub fn part_means(rpcs: &[Rpc]) -> [f64; 8] {
    let kept = middle(rpcs);
    let n = kept.len() as f64;
    std::array::from_fn(|i| kept.iter().map(|&k| rpcs[k].parts[i]).sum::<f64>() / n)
}

/// The parts' sum and the client's time, each a mean over the same RPCs: the middle ones by
/// span (those the part means are taken over) that a timed call holds. The client's trimmed
/// mean over every call would compare other RPCs (those not matched, and another middle when
/// span and client time order the RPCs differently, as in a bimodal pattern). NaN without such
/// RPCs.
pub fn same_rpcs(rpcs: &[Rpc], client: &[Option<f64>]) -> (f64, f64) {
    let both: Vec<(f64, f64)> = middle(rpcs)
        .into_iter()
        .filter_map(|i| Some((rpcs[i].parts.iter().sum(), client.get(i).copied()??)))
        .collect();
    let n = both.len() as f64;
    (
        both.iter().map(|b| b.0).sum::<f64>() / n,
        both.iter().map(|b| b.1).sum::<f64>() / n,
    )
}

/// The breakdown's checks, given the client's time of each matched RPC ([`client_times`]).
pub fn checks(a: &Analysis, client: &[Option<f64>], scenario: Scenario) -> Vec<Check> {
    let matched = a.rpcs.len() as f64 / a.made.max(1) as f64;
    let min_part = a
        .rpcs
        .iter()
        .flat_map(|r| r.parts)
        .fold(f64::INFINITY, f64::min);
    let (sum, traced_mean) = same_rpcs(&a.rpcs, client);
    let idle = a.rpcs.iter().filter(|r| r.from_idle).count() as f64 / a.rpcs.len().max(1) as f64;
    let smallest = if min_part.is_finite() {
        Reading::value(min_part)
    } else {
        Reading::Values(Vec::new())
    };
    let mut list = vec![
        Check::new(
            CheckKind::TraceMatched,
            Bound::AtLeast(0.5),
            Reading::values(&[matched, a.rpcs.len() as f64, a.made as f64]),
            matched >= 0.5,
        ),
        Check::at_most(CheckKind::TraceLost, 0.0, a.lost as f64),
        Check::new(
            CheckKind::PartsNonNegative,
            Bound::AtLeast(0.0),
            smallest,
            min_part.is_finite() && min_part >= 0.0,
        ),
        Check::new(
            CheckKind::PartsAddUp,
            Bound::Near {
                value: 1.0,
                tol: SUM_TOLERANCE,
            },
            Reading::values(&[sum, traced_mean, sum / traced_mean - 1.0]),
            sum.is_finite()
                && traced_mean.is_finite()
                && (sum - traced_mean).abs() <= SUM_TOLERANCE * traced_mean,
        ),
    ];
    let switches =
        |name: &str, per_rpc: f64| Check::at_least(CheckKind::Named, 0.9, per_rpc).named(name);
    match scenario {
        Scenario::RemoteExclusive => list.push(switches(
            "server's CPU idle→server switch per RPC (traced)",
            idle,
        )),
        Scenario::RemoteShared => list.push(switches(
            "switches to a server on the remote CPU per RPC (traced)",
            a.remote_switches_per_rpc,
        )),
        _ => {}
    }
    list
}

/// How far the parts' means may add up from the client's time of the same RPCs (a fraction).
const SUM_TOLERANCE: f64 = 0.1;

/// How far the switches to the client in the trace may be from those counted (a fraction,
/// plus [`TRACE_SLACK`] per RPC).
const TRACE_TOLERANCE: f64 = 0.1;
const TRACE_SLACK: f64 = 0.02;

/// The trace holds every switch to the client: as many per RPC as the kernel counted context
/// switches of the client (rusage, over the same windows), within 10% (+0.02 per RPC). Missing
/// switch records would silently move a wake-up into the part after it ("reply wake-up" read
/// 0 with its time in "return"); this makes that an invalid result instead.
pub fn trace_complete(traced_per_rpc: f64, counted_per_rpc: f64) -> Check {
    Check::new(
        CheckKind::TraceComplete,
        Bound::Near {
            value: 1.0,
            tol: TRACE_TOLERANCE,
        },
        Reading::values(&[traced_per_rpc, counted_per_rpc]),
        (traced_per_rpc - counted_per_rpc).abs() <= TRACE_TOLERANCE * counted_per_rpc + TRACE_SLACK,
    )
}

/// Wake-ups of an idle CPU that needed no IPI because it was polling for work, on `cpus`.
pub fn quiet_wakes(events: &[Event], cpus: &[usize]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e.kind, Kind::WakeIdleNoIpi { cpu } if cpus.contains(&(cpu as usize))))
        .count()
}

/// The IPI parts to leave out, each with the line that says why (an IPI that could not be
/// seen is said, not reported as 0): the kernel cannot show IPIs (no `ipi_send_cpu`, or
/// neither interrupt entry they arrive by); one CPU (no IPI exists); IPIs were sent but
/// none was seen arriving (the target CPU records nothing in its idle task); or no wake-up
/// sent one (`polling` wake-ups found the idle target polling and needed none).
pub fn ipi_left_out(
    missing: &[&str],
    rpcs: &[Rpc],
    polling: usize,
    remote: bool,
) -> Vec<(usize, String)> {
    let lacks = |n: &str| missing.contains(&n);
    let both = |why: String| IPI_PARTS.iter().map(|&i| (i, why.clone())).collect();
    if lacks("ipi:ipi_send_cpu")
        || (lacks("irq_vectors:reschedule_entry")
            && lacks("irq_vectors:call_function_single_entry"))
    {
        return both(format!(
            "IPIs are not visible on this kernel (it lacks {}): their time stays inside \
             wake-up and reply wake-up",
            missing.join(", ")
        ));
    }
    if !remote {
        return both(ONE_CPU_NO_IPI.into());
    }
    let mut out = Vec::new();
    for (k, &i) in IPI_PARTS.iter().enumerate() {
        let (name, rest) = (PARTS[i], PARTS[i + 1]);
        if rpcs.iter().any(|r| r.parts[i] > 0.0) {
            continue;
        }
        let sent = rpcs
            .iter()
            .filter(|r| r.marks.ipi_send[k].is_some())
            .count();
        out.push((
            i,
            if sent > 0 {
                format!(
                    "{name}: {sent} IPIs were sent but none was seen arriving (that CPU \
                     records no events in its idle task here): left out, its time stays \
                     in {rest}"
                )
            } else {
                format!(
                    "{name}: no wake-up sent an IPI ({polling} found the idle CPU polling for \
                     work and needed none): left out"
                )
            },
        ));
    }
    out
}

/// Decode and split the records of a traced run.
pub fn analyse(events: &[Event], lost: u64, made: usize, who: &Who<'_>, mech: Mech) -> Analysis {
    let rpcs = split(events, who, Calls::of(mech));
    let &Who {
        client,
        servers,
        server_cpu,
        ..
    } = who;
    let server_cpu = server_cpu as usize;
    // Switches to `who` on `cpu`, from sched_switch or from perf's switch-in records,
    // whichever saw more (the records say the same thing; on some guests the tracepoint
    // does not fire in the idle task).
    let ins = |who: &dyn Fn(i32) -> bool, cpu: Option<usize>| {
        let on = |e: &&Event| cpu.is_none_or(|c| e.cpu as usize == c);
        let traced = events
            .iter()
            .filter(on)
            .filter(|e| matches!(e.kind, Kind::Switch { next, .. } if who(next)))
            .count();
        let perf = events
            .iter()
            .filter(on)
            .filter(|e| matches!(e.kind, Kind::SwitchIn { .. }) && who(e.tid))
            .count();
        traced.max(perf)
    };
    let switches = ins(&|t| servers.contains(&t), Some(server_cpu));
    let client_ins = ins(&|t| t == client, None);
    Analysis {
        rpcs,
        made,
        lost,
        remote_switches_per_rpc: switches as f64 / made.max(1) as f64,
        client_ins_per_rpc: client_ins as f64 / made.max(1) as f64,
    }
}

/// What the traced rounds produced: the fully traced RPCs' times and events, and every
/// batch of the calibration pass.
struct Rounds {
    times: Vec<f64>,
    /// Each fully traced call's CLOCK_MONOTONIC before and after, in call order.
    windows: Vec<(u64, u64)>,
    events: Vec<Event>,
    lost: u64,
    batches: Vec<Batch>,
}

/// Rounds of one batch per configuration of [`CONFIGS`] (their order rotating from round to
/// round), until enough fully traced RPCs were made and the budget is spent. Evidence
/// windows cover the fully traced batches only.
fn run_rounds(
    ctx: &Context,
    s: &Session,
    tracer: &mut Tracer,
    recorder: &mut Recorder,
) -> Result<Rounds> {
    let mut out = Rounds {
        times: Vec::new(),
        windows: Vec::new(),
        events: Vec::new(),
        lost: 0,
        batches: Vec::new(),
    };
    let deadline = clock::now_ns() + ctx.sampling.budget_ns;
    let mut k = 0u64;
    let mut round = 0u32;
    let mut chunk = Vec::new();
    let mut batch = Vec::with_capacity(BATCH as usize);
    loop {
        let traced = out.times.len() as u64;
        if traced >= MAX_RPCS || (traced >= MIN_RPCS && clock::now_ns() >= deadline) {
            break;
        }
        for j in 0..CONFIGS.len() {
            crate::engine::interrupt::check()?;
            let config = (j + round as usize) % CONFIGS.len();
            let full = config == TRACED;
            if full {
                recorder.begin_quiet();
            }
            tracer.enable_only(CONFIGS[config])?;
            batch.clear();
            for _ in 0..BATCH {
                let t0 = clock::read(libc::CLOCK_MONOTONIC);
                s.call(k)?;
                let t1 = clock::read(libc::CLOCK_MONOTONIC);
                batch.push((t1 - t0) as f64);
                if full {
                    out.windows.push((t0, t1));
                }
                k += 1;
            }
            if full {
                out.times.extend(&batch);
            }
            tracer.disable();
            if full {
                recorder.end_quiet(BATCH);
            }
            chunk.clear();
            tracer.drain(&mut chunk);
            let (events, lost) = tracer.decoder.decode_all(&chunk);
            let mut recorded = [0.0; GROUPS];
            for e in &events {
                recorded[Group::of(&e.kind).index()] += 1.0 / BATCH as f64;
            }
            if full {
                out.events.extend(events);
                out.lost += lost;
            }
            out.batches.push(Batch {
                round,
                config,
                mean_ns: super::additive::trimmed_mean(&batch).map_or(f64::NAN, |m| m.value),
                recorded,
            });
        }
        round += 1;
    }
    Ok(out)
}

/// Events per group as the JSON names them, leaving out groups with none.
fn by_group(n: &[f64; GROUPS]) -> std::collections::BTreeMap<String, f64> {
    Group::ALL
        .iter()
        .zip(n)
        .filter(|(_, v)| **v > 0.0)
        .map(|(g, v)| (g.word().to_string(), *v))
        .collect()
}

/// Every corrected part is ≥ 0: its mean's interval reaches 0 or above. A correction that
/// takes out more than a part held means the costs were overestimated.
pub fn corrected_nonnegative(means: &[(usize, crate::model::Estimate)]) -> Check {
    let worst = means
        .iter()
        .min_by(|a, b| a.1.ci95[1].total_cmp(&b.1.ci95[1]));
    Check::new(
        crate::model::CheckKind::CorrectedNonNegative,
        crate::model::Bound::AtLeast(0.0),
        match worst {
            Some((k, e)) => crate::model::Reading::Lowest {
                part: PARTS[*k].to_string(),
                mean: crate::model::Num::one(e.value),
                upper: crate::model::Num::one(e.ci95[1]),
            },
            None => crate::model::Reading::Values(Vec::new()),
        },
        worst.is_some_and(|(_, e)| e.ci95[1] >= 0.0),
    )
}

/// The calibration's fit and the corrected parts' samples and means (None without a fit).
struct Correction {
    costs: Costs,
    samples: Vec<[f64; 8]>,
    means: Vec<(usize, crate::model::Estimate)>,
}

fn correct(rpcs: &[Rpc], paths: &[PathEvents], batches: &[Batch]) -> Option<Correction> {
    if rpcs.is_empty() {
        return None;
    }
    let n = paths.len() as f64;
    let timed: [f64; GROUPS] =
        std::array::from_fn(|g| paths.iter().map(|p| p.timed()[g]).sum::<f64>() / n);
    let mut costs = calibrate(batches, timed)?;
    let samples = super::correct::corrected(rpcs, paths, &costs);
    let means = (0..PARTS.len())
        .filter_map(|k| {
            let v: Vec<f64> = samples.iter().map(|r| r[k]).collect();
            let ev = super::correct::mean_events(paths, Some(k));
            super::correct::corrected_mean(&v, &ev, &costs).map(|e| (k, e))
        })
        .collect();
    let totals: Vec<f64> = samples.iter().map(|r| r.iter().sum()).collect();
    costs.fitted_json.corrected_sum =
        super::correct::corrected_mean(&totals, &super::correct::mean_events(paths, None), &costs);
    Some(Correction {
        costs,
        samples,
        means,
    })
}

/// Why a scenario on one CPU has no IPI parts: a note (JSON, HTML), not a warning; nothing is
/// wrong with the measurement, and the parts table already shows "—" for them. As a warning
/// it took two lines of every `rpc` run's output.
pub const ONE_CPU_NO_IPI: &str = "one CPU: a wake-up there needs no IPI, so there are no IPI parts";

/// The traced measurement's warnings, each once: parts left out (and why), a participant
/// filter the kernel refused, and a calibration that could not be made.
fn traced_warnings(
    left_out: &[(usize, String)],
    unfiltered: &[String],
    corrected: bool,
    a: &Analysis,
) -> Vec<Remark> {
    let mut warnings = Vec::new();
    for (_, why) in left_out.iter().filter(|(_, why)| why != ONE_CPU_NO_IPI) {
        let r = Remark::part_left_out(why.clone());
        if !warnings.contains(&r) {
            warnings.push(r);
        }
    }
    if !unfiltered.is_empty() {
        warnings.push(Remark::filter_refused(unfiltered));
    }
    if !corrected {
        warnings.push(Remark::plain(if a.rpcs.is_empty() {
            RemarkKind::NoCalibrationNoRpc
        } else {
            RemarkKind::NoCalibrationTooFewRounds
        }));
    }
    warnings
}

/// What every measurement of a traced run shares: its checks, its evidence, the spec of a
/// probe of it (its id; every figure is in ns/RPC) with the scenario's parameters, and the
/// events on each middle RPC's path.
#[derive(Clone, Copy)]
struct Shared<'a> {
    checks: &'a [Check],
    evidence: &'a crate::model::Evidence,
    base: &'a dyn Fn(&str) -> Spec,
    paths: &'a [PathEvents],
}

/// `rpc.traced`: the client's RPC times while the tracepoints record, with their additive
/// mean and what the calibration found about the observer.
fn traced_measurement(
    r: &Rounds,
    traced_mean: Option<crate::model::Estimate>,
    correction: Option<&Correction>,
    shared: Shared<'_>,
    warnings: Vec<crate::model::Remark>,
) -> Result<Measurement> {
    let Shared { evidence, base, .. } = shared;
    let verdict = (shared.checks.to_vec(), warnings);
    let mut traced = from_samples(base(super::TRACED.0).note(format!(
            "the client's RPC time (CLOCK_MONOTONIC around each RPC) while kernel tracepoints \
             record; compare with rpc.total for the observer effect. Parts: {}. The parts add \
             up to the client's send sys_enter → its last event before user space (the \
             receive's sys_exit, or its switch-in record when it took the reply without one), \
             by their means over the RPCs (medians do not add up); not seen: user-space time outside those system \
             calls, time the hypervisor took the vCPU, and polling hand-offs. The observer's \
             cost per event is measured by a calibration pass (see rpc.corrected)",
            PARTS
                .iter()
                .map(|p| super::breakdown::definition(p))
                .collect::<Vec<_>>()
                .join("; ")
        )), crate::engine::measure::OwnSamples { samples: r.times.clone(), iterations: 1 }, crate::model::StopReason::FixedCount, evidence.clone(), verdict)?;
    traced.additive = traced_mean.map(|mean| crate::model::Additive {
        mean,
        modes: super::additive::modes(&r.times),
        events: Default::default(),
    });
    traced.observer = Some(Observer {
        tracing_adds: None,
        calibration: correction.as_ref().map(|c| c.costs.fitted_json.clone()),
        configs: super::calibrate::configs(&r.batches),
    });
    Ok(traced)
}

/// One part's measurement (traced or corrected): part `i`'s samples over the matched RPCs
/// under `spec`, with the traced run's evidence and checks, and the additive mean of `kept`
/// with the events on the part's path.
fn one_part(
    spec: Spec,
    i: usize,
    samples: Vec<f64>,
    kept: &[f64],
    shared: Shared<'_>,
) -> Result<Measurement> {
    let mut m = from_samples(
        spec.param("part", PARTS[i]).param("order", i as u64),
        crate::engine::measure::OwnSamples {
            samples,
            iterations: 1,
        },
        crate::model::StopReason::FixedCount,
        shared.evidence.clone(),
        (shared.checks.to_vec(), Vec::new()),
    )?;
    let ev = by_group(&super::correct::mean_events(shared.paths, Some(i)));
    m.additive = super::additive::of(kept, ev);
    Ok(m)
}

/// One `rpc.part` per shown part: its time in every matched RPC, with the mean over the
/// middle RPCs (`middle`, the same RPCs for every part, so the means add up).
fn part_measurements(
    all: &[Rpc],
    middle: &[Rpc],
    shown: &[usize],
    shared: Shared<'_>,
) -> Result<Vec<Measurement>> {
    let mut out = Vec::new();
    for &i in shown {
        let samples: Vec<f64> = all.iter().map(|r| r.parts[i]).collect();
        let kept: Vec<f64> = middle.iter().map(|r| r.parts[i]).collect();
        let spec = (shared.base)(super::PART.0).note(super::breakdown::definition(PARTS[i]));
        out.push(one_part(spec, i, samples, &kept, shared)?);
    }
    Ok(out)
}

/// One `rpc.corrected` per shown part: its samples less the calibrated cost of the events on
/// its path, the mean carried from the correction, and the non-negativity check added to the
/// traced checks.
fn corrected_parts(
    c: &Correction,
    shown: &[usize],
    shared: Shared<'_>,
) -> Result<Vec<Measurement>> {
    let mut corrected_checks = shared.checks.to_vec();
    let means: Vec<_> = c
        .means
        .iter()
        .filter(|(k, _)| shown.contains(k))
        .copied()
        .collect();
    corrected_checks.push(corrected_nonnegative(&means));
    let corrected = Shared {
        checks: &corrected_checks,
        ..shared
    };
    let spec = (shared.base)(super::correct::PROBE.0).note(super::correct::NOTE);
    let mut out = Vec::new();
    for &(i, mean) in &means {
        let samples: Vec<f64> = c.samples.iter().map(|r| r[i]).collect();
        let mut m = one_part(spec.clone(), i, samples.clone(), &samples, corrected)?;
        if let Some(x) = &mut m.additive {
            x.mean = mean;
        }
        out.push(m);
    }
    Ok(out)
}

/// Run the traced RPCs and return `rpc.traced`, one `rpc.part` per part and one
/// `rpc.corrected` per part.
pub fn measure_traced(
    ctx: &Context,
    scenario: Scenario,
    mech: Mech,
    client_cpu: usize,
    server_cpu: usize,
) -> Result<Vec<Measurement>> {
    if scenario == Scenario::RemotePolling {
        return Err(Error::env(
            "remote-polling makes no system calls and no wake-ups: the kernel has nothing to \
             split",
        ));
    }
    let s = Session::new(scenario, mech, client_cpu, server_cpu)?;
    let client = crate::evidence::placement::gettid();
    let servers = s.server_pids();
    let mut cpus = vec![s.client_cpu, s.server_cpu];
    cpus.dedup();
    let mut pids = vec![client];
    pids.extend(&servers);
    let mut tracer = Tracer::open(&cpus, &pids)?;
    let (participants, start) = s.participants();
    let mut recorder = Recorder::new(participants, EventSet::Software);
    for k in 0..50 {
        s.call(k)?;
    }
    let r = run_rounds(ctx, &s, &mut tracer, &mut recorder)?;
    let events = &r.events;
    let who = Who {
        client,
        servers: &servers,
        client_cpu: s.client_cpu as u32,
        server_cpu: s.server_cpu as u32,
    };
    let a = analyse(events, r.lost, r.times.len(), &who, s.mech);
    // Means over the middle RPCs by span; the same RPCs for every part, so they add up.
    let kept = middle(&a.rpcs);
    let rpcs: Vec<Rpc> = kept.iter().map(|&i| a.rpcs[i].clone()).collect();
    let paths = on_path(events, &rpcs, &who);
    let correction = correct(&rpcs, &paths, &r.batches);
    let evidence = recorder.finish(&start);
    let traced_mean = super::additive::trimmed_mean(&r.times);
    let mut checks = checks(&a, &client_times(&a.rpcs, &r.windows), scenario);
    let (vol, invol) = super::switches_of(&evidence, "client");
    checks.push(trace_complete(a.client_ins_per_rpc, vol + invol));
    let left_out = ipi_left_out(
        &tracer.decoder.missing(),
        &a.rpcs,
        quiet_wakes(events, &cpus),
        scenario.remote(),
    );
    let warnings = traced_warnings(&left_out, &tracer.unfiltered, correction.is_some(), &a);
    let base = |probe: &str| s.spec(probe).events_set(EventSet::Software);
    let shared = Shared {
        checks: &checks,
        evidence: &evidence,
        base: &base,
        paths: &paths,
    };
    let mut traced = traced_measurement(&r, traced_mean, correction.as_ref(), shared, warnings)?;
    if left_out.iter().any(|(_, why)| why == ONE_CPU_NO_IPI) {
        traced.notes.push(ONE_CPU_NO_IPI.into());
    }
    let mut out = vec![traced];
    let shown: Vec<usize> = (0..PARTS.len())
        .filter(|i| !a.rpcs.is_empty() && !left_out.iter().any(|(k, _)| k == i))
        .collect();
    out.extend(part_measurements(&a.rpcs, &rpcs, &shown, shared)?);
    if let Some(c) = &correction {
        out.extend(corrected_parts(c, &shown, shared)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stats::median;
    use crate::evidence::trace::tests::{fixture_decoder, fixture_records};

    fn fixture_analysis() -> Analysis {
        let (events, lost) = fixture_decoder().decode_all(&fixture_records());
        analyse(
            &events,
            lost,
            40,
            &Who {
                client: 14054,
                servers: &[16600],
                client_cpu: 1,
                server_cpu: 0,
            },
            Mech::Pipe,
        )
    }

    /// Client times `k` × each RPC's span.
    fn scaled(a: &Analysis, k: f64) -> Vec<Option<f64>> {
        a.rpcs
            .iter()
            .map(|r| Some(r.span_ns() as f64 * k))
            .collect()
    }

    /// The recorded local futex RPCs with each call's client time: every matched RPC finds
    /// its call, and the parts' sum and the client's time compare the same RPCs; the check
    /// passes on them. The client's trimmed mean over every call, matched or not, compares
    /// other RPCs: with a fifth of the calls left unmatched and slow it is far off, while the
    /// same-RPC check still judges the RPCs it has.
    #[test]
    fn the_sum_check_compares_the_same_rpcs() {
        let text = include_str!("../../../tests/fixtures/trace/futex-local-switch-records.records");
        let recs = crate::evidence::trace::parse_fixture(text).unwrap();
        let windows = crate::evidence::trace::tests::fixture_windows(text);
        let (events, lost) = fixture_decoder().decode_all(&recs);
        let a = analyse(
            &events,
            lost,
            40,
            &Who {
                client: 10551,
                servers: &[10557],
                client_cpu: 1,
                server_cpu: 1,
            },
            Mech::Futex,
        );
        let client = client_times(&a.rpcs, &windows);
        assert!(client.iter().all(Option::is_some), "{client:?}");
        for (r, t) in a.rpcs.iter().zip(&client) {
            // The timed call holds the whole RPC.
            assert!(t.unwrap() >= r.span_ns() as f64, "{r:?} in {t:?}");
        }
        let sum_check = |c: &[Check]| {
            c.iter()
                .find(|x| crate::report::checks::name(x).starts_with("sum"))
                .unwrap()
                .clone()
        };
        let c = sum_check(&checks(&a, &client, Scenario::Local));
        assert!(c.ok, "{c:?}");
        let (sum, same) = same_rpcs(&a.rpcs, &client);
        let mut every: Vec<f64> = windows.iter().map(|w| (w.1 - w.0) as f64).collect();
        every.extend(std::iter::repeat_n(3.0 * same, every.len() / 4));
        let all = crate::probes::rpc::additive::trimmed_mean(&every)
            .unwrap()
            .value;
        assert!((sum / all - 1.0).abs() > 0.1, "{sum} vs {all}");
        // An RPC no call holds is left out of both sides, not compared with another's time.
        let none = client_times(&a.rpcs, &[]);
        assert!(none.iter().all(Option::is_none));
        assert!(!sum_check(&checks(&a, &none, Scenario::Local)).ok);
        let mut one_out = client.clone();
        one_out[middle(&a.rpcs)[0]] = None;
        let (s1, t1) = same_rpcs(&a.rpcs, &one_out);
        assert!(s1 != sum && t1 != same && (s1 / t1 - 1.0).abs() <= 0.1);
    }

    #[test]
    fn fixture_breakdown_adds_up_to_its_own_span() {
        let a = fixture_analysis();
        let spans: Vec<f64> = a.rpcs.iter().map(|r| r.span_ns() as f64).collect();
        assert!(!spans.is_empty());
        let c = checks(&a, &scaled(&a, 1.0), Scenario::Local);
        let named = |n: &str| {
            c.iter()
                .find(|x| crate::report::checks::name(x).starts_with(n))
                .unwrap()
                .ok
        };
        assert!(named("RPCs matched"));
        assert!(named("every part"));
        assert!(named("trace records lost"));
        // A client time far from the parts' sum fails the sum check.
        let c = checks(&a, &scaled(&a, 2.0), Scenario::Local);
        assert!(
            !c.iter()
                .find(|x| crate::report::checks::name(x).starts_with("sum"))
                .unwrap()
                .ok
        );
    }

    /// Recorded local RPCs whose parts are bimodal (the woken server preempts the client in
    /// some RPCs, not in others): the sum of the part medians is far from the median RPC,
    /// the part means add up to the mean span of the same RPCs exactly, so the sum check
    /// passes on them and fails on a traced time they do not add up to.
    #[test]
    fn bimodal_recorded_parts_add_up_by_their_means() {
        let recs = crate::evidence::trace::parse_fixture(include_str!(
            "../../../tests/fixtures/trace/futex-local.records"
        ))
        .unwrap();
        let (events, lost) = fixture_decoder().decode_all(&recs);
        let a = analyse(
            &events,
            lost,
            40,
            &Who {
                client: 14740,
                servers: &[14741],
                client_cpu: 1,
                server_cpu: 1,
            },
            Mech::Futex,
        );
        let spans: Vec<f64> = a.rpcs.iter().map(|r| r.span_ns() as f64).collect();
        let medians: f64 = (0..8)
            .map(|k| median(&a.rpcs.iter().map(|r| r.parts[k]).collect::<Vec<_>>()))
            .sum();
        let off = medians / median(&spans) - 1.0;
        assert!(
            off.abs() > 0.1,
            "sum of medians {off:+.3} from the median RPC"
        );
        let kept = middle(&a.rpcs);
        let kept_spans: Vec<f64> = kept.iter().map(|&i| spans[i]).collect();
        let mean_span = crate::probes::rpc::additive::mean(&kept_spans)
            .unwrap()
            .value;
        let sum: f64 = part_means(&a.rpcs).iter().sum();
        assert!((sum - mean_span).abs() < 1e-6, "{sum} vs {mean_span}");
        let modes = (0..8)
            .filter(|&k| {
                let v: Vec<f64> = a.rpcs.iter().map(|r| r.parts[k]).collect();
                crate::probes::rpc::additive::modes(&v).is_some()
            })
            .count();
        assert!(modes >= 2, "{modes} bimodal parts");
        let named = |c: &[Check]| {
            c.iter()
                .find(|x| crate::report::checks::name(x).starts_with("sum"))
                .unwrap()
                .ok
        };
        assert!(named(&checks(&a, &scaled(&a, 1.0), Scenario::Local)));
        assert!(!named(&checks(&a, &scaled(&a, 1.2), Scenario::Local)));
    }

    #[test]
    fn a_correction_that_takes_out_more_than_a_part_held_fails() {
        let e = |value: f64, hi: f64| crate::model::Estimate {
            value,
            ci95: [2.0 * value - hi, hi],
        };
        assert!(corrected_nonnegative(&[(0, e(500.0, 600.0)), (3, e(-20.0, 40.0))]).ok);
        let c = corrected_nonnegative(&[(0, e(500.0, 600.0)), (3, e(-900.0, -700.0))]);
        assert!(!c.ok);
        assert!(
            crate::report::checks::observed(&c).contains("switch-in"),
            "{}",
            crate::report::checks::observed(&c)
        );
        assert!(!corrected_nonnegative(&[]).ok);
    }

    #[test]
    fn a_trace_missing_the_client_s_switches_fails() {
        assert!(trace_complete(1.0, 1.02).ok);
        assert!(trace_complete(0.0, 0.0).ok);
        // Half the switches back to a sleeping client were not recorded.
        assert!(!trace_complete(0.5, 1.0).ok);
        // More than the kernel counted: records from elsewhere.
        assert!(!trace_complete(1.5, 1.0).ok);
        let a = fixture_analysis();
        assert!(a.client_ins_per_rpc > 0.5, "{}", a.client_ins_per_rpc);
    }

    #[test]
    fn ipi_parts_are_left_out_with_the_reason_when_none_can_be_seen() {
        let a = fixture_analysis();
        let parts = |v: &[(usize, String)]| v.iter().map(|(i, _)| *i).collect::<Vec<_>>();
        // The fixture's RPCs show IPIs both ways: the parts stay.
        assert!(ipi_left_out(&[], &a.rpcs, 0, true).is_empty());
        // A kernel without the tracepoints: say so, for both.
        let lacks = ipi_left_out(&["ipi:ipi_send_cpu"], &a.rpcs, 0, true);
        assert_eq!(parts(&lacks), [1, 5]);
        assert!(lacks[0].1.contains("lacks ipi:ipi_send_cpu"), "{lacks:?}");
        let both = [
            "irq_vectors:reschedule_entry",
            "irq_vectors:call_function_single_entry",
        ];
        assert_eq!(ipi_left_out(&both, &a.rpcs, 0, true).len(), 2);
        assert!(ipi_left_out(&both[..1], &a.rpcs, 0, true).is_empty());
        // One CPU: both IPI parts left out, and that is a note, not a warning.
        let one_cpu = ipi_left_out(&[], &a.rpcs, 0, false);
        assert_eq!(parts(&one_cpu), [1, 5]);
        assert!(one_cpu[0].1.starts_with("one CPU"));
        assert!(traced_warnings(&one_cpu, &[], true, &a).is_empty());
        assert_eq!(traced_warnings(&lacks, &[], true, &a).len(), 1);
        // Replies' IPIs sent but never seen arriving: only the reply IPI goes, and says so.
        let mut unseen = a.rpcs.clone();
        for r in &mut unseen {
            r.parts[5] = 0.0;
        }
        let v = ipi_left_out(&[], &unseen, 0, true);
        assert_eq!(parts(&v), [5]);
        assert!(v[0].1.contains("none was seen arriving"), "{v:?}");
        // Never sent: every idle target polling.
        for r in &mut unseen {
            r.parts[1] = 0.0;
            r.marks.ipi_send = [None; 2];
        }
        let v = ipi_left_out(&[], &unseen, 37, true);
        assert_eq!(parts(&v), [1, 5]);
        assert!(v[1].1.contains("37 found the idle CPU polling"), "{v:?}");
    }

    /// The breakdown's checks are numbers against bounds, and read as the sentences they
    /// were written as before, written to a run and read back included.
    #[test]
    fn typed_checks_read_as_the_sentences_they_replaced() {
        use crate::report::checks::line;
        let mut a = fixture_analysis();
        a.lost = 3;
        let client = scaled(&a, 1.0);
        let c = checks(&a, &client, Scenario::RemoteExclusive);
        let lines: Vec<String> = c.iter().map(line).collect();
        let matched = a.rpcs.len() as f64 / a.made.max(1) as f64;
        assert_eq!(
            lines[0],
            format!(
                "RPCs matched in the trace: expected ≥ 50% of those made, observed {:.0}% ({} of {})",
                matched * 100.0,
                a.rpcs.len(),
                a.made
            )
        );
        assert_eq!(lines[1], "trace records lost: expected 0, observed 3");
        let min_part = a
            .rpcs
            .iter()
            .flat_map(|r| r.parts)
            .fold(f64::INFINITY, f64::min);
        assert_eq!(
            lines[2],
            format!("every part ≥ 0: expected ≥ 0 ns, observed smallest {min_part:.0} ns")
        );
        let (sum, mean) = same_rpcs(&a.rpcs, &client);
        assert_eq!(
            lines[3],
            format!(
                "sum of part means vs the client's time of the same RPCs: expected within ±10%, \
                 observed {sum:.0} ns vs {mean:.0} ns ({:+.1}%)",
                100.0 * (sum / mean - 1.0)
            )
        );
        let idle = a.rpcs.iter().filter(|r| r.from_idle).count() as f64 / a.rpcs.len() as f64;
        assert_eq!(
            lines[4],
            format!(
                "server's CPU idle→server switch per RPC (traced): expected ≥ 0.9, observed {idle:.3}"
            )
        );
        assert_eq!(
            line(&trace_complete(1.0, 1.25)),
            "switches to the client in the trace vs counted (rusage): expected within 10% per \
             RPC, observed 1.000 traced vs 1.250 counted"
        );
        // Nothing matched: no parts, sums that are not numbers; a run file keeps them.
        let none = Analysis {
            rpcs: Vec::new(),
            ..a
        };
        for c in checks(&none, &[], Scenario::Local) {
            let back: Check = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
            assert_eq!(line(&back), line(&c));
            assert!(
                c.kind != CheckKind::PartsNonNegative || line(&c).ends_with("observed no parts")
            );
        }
    }

    #[test]
    fn negative_parts_lost_records_and_no_idle_fail() {
        let mut a = fixture_analysis();
        a.lost = 3;
        a.rpcs[0].parts[0] = -5.0;
        let c = checks(&a, &scaled(&a, 1e9), Scenario::RemoteExclusive);
        for name in ["trace records lost", "every part", "server's CPU idle"] {
            assert!(
                !c.iter()
                    .find(|x| crate::report::checks::name(x).starts_with(name))
                    .unwrap()
                    .ok,
                "{name}"
            );
        }
        a.made = 1000;
        a.remote_switches_per_rpc = 0.04;
        // Nothing matched at all: every check that needs RPCs fails, nothing panics.
        let none = Analysis {
            rpcs: Vec::new(),
            ..a.clone()
        };
        let c = checks(&none, &[], Scenario::Local);
        assert!(c.iter().filter(|x| !x.ok).count() >= 3, "{c:?}");
        let c = checks(&a, &scaled(&a, 1e9), Scenario::RemoteShared);
        assert!(
            !c.iter()
                .find(|x| crate::report::checks::name(x).starts_with("RPCs matched"))
                .unwrap()
                .ok
        );
        assert!(
            !c.iter()
                .find(|x| crate::report::checks::name(x).starts_with("switches to a server"))
                .unwrap()
                .ok
        );
    }
}
