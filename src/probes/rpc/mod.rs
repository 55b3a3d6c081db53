//! `rpc.*`: one request and its response between a client (the measuring thread) and a
//! server process, in four placements — the Linux version of the M3 study's figure:
//!
//! | scenario | placement | observed (checked) |
//! |---|---|---|
//! | local | client and server on one CPU | 2 switches per RPC there, 0 migrations |
//! | remote-exclusive | server alone on another CPU, blocking | the server sleeps and is woken every RPC; traced: its CPU switches idle→server |
//! | remote-polling | server alone on another CPU, busy-polling | 0 switches per RPC |
//! | remote-shared | two servers on the other CPU, the client alternates | ≥ 1 switch per RPC on the remote CPU |
//!
//! `rpc.total` is the RPC time without tracing, through the engine's sampler. With permission,
//! `rpc.traced` repeats the RPCs with kernel tracepoints on and `rpc.part` splits them (see
//! [`breakdown`]).

use crate::engine::measure::{Participants, Workloads};
use crate::units::name::Named;
pub mod additive;
pub mod breakdown;
pub mod calibrate;
pub mod correct;
pub mod path;
pub mod traced;

use crate::model::ProbeId;

/// The family's section: every `rpc.*` probe.
pub const SECTION: &str = "rpc";
/// The RPC time without tracing.
pub const TOTAL: ProbeId = ProbeId("rpc.total");
/// The RPC time while kernel tracepoints record.
pub const TRACED: ProbeId = ProbeId("rpc.traced");
/// One part of a traced RPC.
pub const PART: ProbeId = ProbeId("rpc.part");
/// One part, less the observer's calibrated cost.
pub const CORRECTED: ProbeId = ProbeId("rpc.corrected");

use crate::engine::checks;
use crate::engine::measure::{measure, Context, Spec, Verdict};
use crate::engine::partner::{partner_error, SharedPage};
use crate::error::{Error, Result};
use crate::evidence::clock::now_ns;
use crate::evidence::placement::AffinityGuard;
use crate::evidence::Participant;
use crate::model::{Bound, Check, CheckKind, Evidence, Measurement, Reading};
use crate::probes::ipc::channel::{Channel, Mech, Server};
use crate::units::{Per, Unit};

/// Where the server runs and how it waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum Scenario {
    /// Client and server on one CPU.
    Local,
    /// The server alone on another CPU, blocking.
    RemoteExclusive,
    /// The server alone on another CPU, busy-polling shared memory.
    RemotePolling,
    /// Two servers on the other CPU; the client alternates between them.
    RemoteShared,
}

crate::units::name::named!(Scenario);

impl Scenario {
    pub const ALL: [Scenario; 4] = [
        Scenario::Local,
        Scenario::RemoteExclusive,
        Scenario::RemotePolling,
        Scenario::RemoteShared,
    ];

    pub fn remote(self) -> bool {
        self != Scenario::Local
    }

    /// The mechanism this scenario really uses: polling is the spin flag whatever was asked.
    pub fn mech(self, asked: Mech) -> Mech {
        if self == Scenario::RemotePolling {
            Mech::Spin
        } else {
            asked
        }
    }

    fn servers(self) -> usize {
        if self == Scenario::RemoteShared {
            2
        } else {
            1
        }
    }
}

/// Client and servers set up for one scenario: the client pinned, the servers forked, pinned
/// and ready. Dropping it kills and reaps the servers and restores the client's affinity.
pub struct Session {
    pub scenario: Scenario,
    pub mech: Mech,
    pub client_cpu: usize,
    pub server_cpu: usize,
    channels: Vec<std::sync::Arc<Channel>>,
    servers: Vec<Server>,
    server_start: Vec<Option<usize>>,
    _pin: AffinityGuard,
}

impl Session {
    pub fn new(
        scenario: Scenario,
        mech: Mech,
        client_cpu: usize,
        server_cpu: usize,
    ) -> Result<Session> {
        let mech = scenario.mech(mech);
        let server_cpu = if scenario.remote() {
            server_cpu
        } else {
            client_cpu
        };
        let pin = AffinityGuard::pin_current(&[client_cpu])?;
        let ready = SharedPage::new()?;
        let mut channels = Vec::new();
        let mut servers = Vec::new();
        let mut server_start = Vec::new();
        for i in 0..scenario.servers() {
            let thread = scenario == Scenario::RemotePolling;
            let ch = Channel::new(mech)?;
            let (ch, server, cpu) = Server::start(ch, thread, (&ready, 16 * i), server_cpu)?;
            server_start.push(cpu);
            channels.push(ch);
            servers.push(server);
        }
        Ok(Session {
            scenario,
            mech,
            client_cpu,
            server_cpu,
            channels,
            servers,
            server_start,
            _pin: pin,
        })
    }

    /// A probe's spec in this session: ns per RPC, with the scenario, mechanism and CPUs.
    pub fn spec(&self, probe: &str) -> Spec {
        Spec::new(probe, Unit::ns(Per::Rpc), Unit::ns(Per::Rpc), 1.0)
            .param("scenario", self.scenario.name())
            .param("mech", self.mech.name())
            .param("cpus", vec![self.client_cpu, self.server_cpu])
    }

    pub fn server_pids(&self) -> Vec<i32> {
        self.servers.iter().map(Server::id).collect()
    }

    pub fn participants(&self) -> (Vec<Participant>, Vec<Option<usize>>) {
        let mut p = vec![Participant::this_thread("client", vec![self.client_cpu])];
        let mut start = vec![Some(self.client_cpu)];
        for (i, s) in self.servers.iter().enumerate() {
            let mut x = s.participant("server", self.server_cpu);
            x.role = format!("server {}", i + 1);
            p.push(x);
            start.push(self.server_start[i]);
        }
        (p, start)
    }

    /// RPC number `k` (the client alternates between servers in remote-shared).
    #[inline(always)]
    pub fn call(&self, k: u64) -> Result<()> {
        let i = (k % self.channels.len() as u64) as usize;
        let gone = || self.servers[i].gone();
        self.channels[i]
            .round_trip(&gone)
            .map_err(|e| partner_error(&format!("rpc {}", self.mech.name()), e))
    }
}

/// Switches per RPC of the participants whose role starts with `prefix` (rusage: voluntary,
/// involuntary).
pub(crate) fn switches_of(ev: &Evidence, prefix: &str) -> (f64, f64) {
    let it = ev.rusage.iterations.max(1) as f64;
    ev.rusage
        .participants
        .iter()
        .filter(|p| p.role.starts_with(prefix))
        .fold((0.0, 0.0), |(v, i), p| {
            (
                v + p.rusage.nvcsw as f64 / it,
                i + p.rusage.nivcsw as f64 / it,
            )
        })
}

/// The checks of the table in the module doc, on the untraced evidence.
pub fn verdict(ev: &Evidence, scenario: Scenario) -> Verdict {
    let mut list = vec![checks::no_migrations(ev), checks::placement(&ev.cpus)];
    let mut warnings = Vec::new();
    let (sv, si) = switches_of(ev, "server");
    match scenario {
        Scenario::Local => {
            list.push(checks::switches_near(
                "context switches per RPC",
                2.0,
                0.05,
                ev,
            ));
            list.push(checks::same_cpu(&ev.cpus));
            checks::add_occupancy(ev, &mut list, &mut warnings);
        }
        Scenario::RemoteExclusive => {
            list.push(
                Check::new(
                    CheckKind::Named,
                    Bound::Between { lo: 0.9, hi: 1.1 },
                    Reading::value(sv),
                    (0.9..=1.1).contains(&sv),
                )
                .named("server sleeps and is woken every RPC (its voluntary switches per RPC)"),
            );
            list.push(checks::at_most(
                "server's CPU otherwise idle (server's involuntary switches per RPC)",
                0.1,
                si,
            ));
            list.push(crate::probes::ipc::distinct_cpus(&ev.cpus));
            list.extend(crate::probes::ipc::run_queue_wait(ev));
        }
        Scenario::RemotePolling => {
            let (sw, _) = checks::switches_per_op(ev);
            list.push(Check {
                reading: checks::switches_reading(ev, 4),
                ..checks::at_most("context switches per RPC", 0.01, sw)
            });
            list.push(crate::probes::ipc::distinct_cpus(&ev.cpus));
            checks::add_occupancy(ev, &mut list, &mut warnings);
        }
        Scenario::RemoteShared => {
            list.push(checks::at_least(
                "switches per RPC on the remote CPU (both servers')",
                0.9,
                sv + si,
            ));
            list.push(crate::probes::ipc::distinct_cpus(&ev.cpus));
            list.extend(crate::probes::ipc::run_queue_wait(ev));
        }
    }
    (list, warnings)
}

/// `rpc.total`: the RPC time without tracing.
pub fn measure_total(
    ctx: &Context,
    scenario: Scenario,
    mech: Mech,
    client_cpu: usize,
    server_cpu: usize,
) -> Result<Measurement> {
    if scenario.remote() && client_cpu == server_cpu {
        return Err(Error::env(format!(
            "{} needs the server on another CPU than the client",
            scenario.name()
        )));
    }
    let s = Session::new(scenario, mech, client_cpu, server_cpu)?;
    let (participants, start) = s.participants();
    let spec = s.spec(TOTAL.0).note(
        "one request and its response (one small message each way), client and server(s) \
             pinned per the scenario; no tracing",
    );
    let mut k = 0u64;
    let session = &s;
    let mut raw = |iters: u64| -> Result<u64> {
        let t0 = now_ns();
        for _ in 0..iters {
            session.call(k)?;
            k += 1;
        }
        Ok(now_ns() - t0)
    };
    measure(
        ctx,
        spec,
        Participants::new(participants, start),
        Workloads::alone(&mut raw),
        |ev| verdict(ev, scenario),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ParticipantRusage, Placement, Rusage};

    fn ev(server_vol: u64, server_invol: u64, cpus: [usize; 2]) -> Evidence {
        let mut ev = Evidence {
            occupancy: checks::held_occupancy(),
            ..Default::default()
        };
        ev.rusage.iterations = 1000;
        ev.rusage.participants = vec![
            ParticipantRusage {
                role: "client".into(),
                pid: 1,
                tid: 1,
                rusage: Rusage {
                    nvcsw: 1000,
                    ..Default::default()
                },
            },
            ParticipantRusage {
                role: "server 1".into(),
                pid: 2,
                tid: 2,
                rusage: Rusage {
                    nvcsw: server_vol,
                    nivcsw: server_invol,
                    ..Default::default()
                },
            },
        ];
        ev.cpus = cpus
            .iter()
            .map(|&c| Placement {
                role: "x".into(),
                pid: 1,
                tid: 1,
                requested: vec![c],
                start: Some(c),
                end: Some(c),
                affinity_held: true,
            })
            .collect();
        ev
    }

    fn ok(v: &Verdict) -> bool {
        v.0.iter().all(|c| c.ok)
    }

    #[test]
    fn remote_exclusive_needs_a_sleeping_server_alone_on_its_cpu() {
        assert!(ok(&verdict(
            &ev(1000, 0, [1, 0]),
            Scenario::RemoteExclusive
        )));
        // Never slept: it was not woken every RPC.
        assert!(!ok(&verdict(
            &ev(100, 0, [1, 0]),
            Scenario::RemoteExclusive
        )));
        // Something else kept taking its CPU.
        assert!(!ok(&verdict(
            &ev(1000, 500, [1, 0]),
            Scenario::RemoteExclusive
        )));
        // Ran on the client's CPU.
        assert!(!ok(&verdict(
            &ev(1000, 0, [1, 1]),
            Scenario::RemoteExclusive
        )));
    }

    #[test]
    fn remote_shared_needs_a_switch_on_the_remote_cpu_every_rpc() {
        assert!(ok(&verdict(&ev(1000, 0, [1, 0]), Scenario::RemoteShared)));
        assert!(!ok(&verdict(&ev(200, 0, [1, 0]), Scenario::RemoteShared)));
    }

    #[test]
    fn local_needs_two_switches_on_one_cpu() {
        let mut e = ev(1000, 0, [1, 1]);
        e.rusage.total.nvcsw = 2000;
        assert!(ok(&verdict(&e, Scenario::Local)));
        e.rusage.total.nvcsw = 3000;
        assert!(!ok(&verdict(&e, Scenario::Local)), "3 switches per RPC");
        assert_eq!(Scenario::RemotePolling.mech(Mech::Pipe), Mech::Spin);
        assert_eq!(
            Scenario::from_name("remote-shared"),
            Some(Scenario::RemoteShared)
        );
    }
}
