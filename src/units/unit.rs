//! A figure's unit as data: what is measured (nanoseconds, a percent share, a ratio) and what
//! one figure is per (a switch, a round trip, a page). Code asks the unit what it is
//! ([`Unit::is_time`], [`Unit::per`]); the text ("ns/switch") is made only when it is
//! written: in a run file, a history row, an export, a report. Every unit reads back as the
//! same text it was written as, a unit this version does not make included ([`Unit::Other`],
//! [`Per::Other`]), so old and later files load and print as they were written.

use std::fmt;

/// A figure's unit.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Unit {
    /// Nanoseconds, per one of something ("ns/switch") or alone ("ns").
    Ns(Option<Per>),
    /// A share in percent ("%"): of a window lost to OS noise.
    Percent,
    /// A ratio to the same work run one after the other ("× sequential").
    TimesSequential,
    /// A bare number, its unit said elsewhere (a column's header); also what a file that
    /// recorded no unit reads as ("").
    #[default]
    Bare,
    /// A unit this version does not make (an older or a later file's), kept as written.
    Other(String),
}

/// What one figure is per: one event of the mechanism or one iteration of its loop.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Per {
    Switch,
    RoundTrip,
    OneWay,
    Yield,
    Lap,
    Run,
    Call,
    Iteration,
    OpenClose,
    Fault,
    Page,
    Touch,
    Load,
    Rpc,
    Op,
    Block,
    Walk,
    /// A "per" this version does not make ("ns/widget" of a later file), kept as written.
    Other(String),
}

impl Per {
    /// Every "per" this version makes, for reading a unit back.
    const KNOWN: [Per; 17] = [
        Per::Switch,
        Per::RoundTrip,
        Per::OneWay,
        Per::Yield,
        Per::Lap,
        Per::Run,
        Per::Call,
        Per::Iteration,
        Per::OpenClose,
        Per::Fault,
        Per::Page,
        Per::Touch,
        Per::Load,
        Per::Rpc,
        Per::Op,
        Per::Block,
        Per::Walk,
    ];

    /// The word a unit writes after its slash: "switch", "round trip", "open+close".
    pub fn name(&self) -> &str {
        match self {
            Per::Switch => "switch",
            Per::RoundTrip => "round trip",
            Per::OneWay => "one-way",
            Per::Yield => "yield",
            Per::Lap => "lap",
            Per::Run => "run",
            Per::Call => "call",
            Per::Iteration => "iteration",
            Per::OpenClose => "open+close",
            Per::Fault => "fault",
            Per::Page => "page",
            Per::Touch => "touch",
            Per::Load => "load",
            Per::Rpc => "RPC",
            Per::Op => "op",
            Per::Block => "block",
            Per::Walk => "walk",
            Per::Other(s) => s,
        }
    }

    fn read(word: &str) -> Per {
        Per::KNOWN
            .into_iter()
            .find(|p| p.name() == word)
            .unwrap_or_else(|| Per::Other(word.to_string()))
    }
}

impl fmt::Display for Per {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Unit {
    /// Nanoseconds per `per`: `Unit::ns(Per::Switch)` is "ns/switch".
    pub const fn ns(per: Per) -> Unit {
        Unit::Ns(Some(per))
    }

    /// Nanoseconds alone ("ns").
    pub const NS: Unit = Unit::Ns(None);

    /// A time (in nanoseconds), per something or alone: shown rescaled to µs, ms or s.
    pub fn is_time(&self) -> bool {
        matches!(self, Unit::Ns(_))
    }

    /// A time per one of something ("ns/switch", not "ns"): a cost per operation.
    pub fn is_time_per_op(&self) -> bool {
        matches!(self, Unit::Ns(Some(_)))
    }

    /// What one figure is per, for a time per something.
    pub fn per(&self) -> Option<&Per> {
        match self {
            Unit::Ns(per) => per.as_ref(),
            _ => None,
        }
    }

    /// The unit of one sample's magnitude, without what it is per: "ns" for "ns/round
    /// trip" (a remark on the samples' modes quotes them in it).
    pub fn without_per(&self) -> Unit {
        match self {
            Unit::Ns(_) => Unit::NS,
            Unit::Other(s) => Unit::from(s.split('/').next().unwrap_or(s)),
            u => u.clone(),
        }
    }

    /// The unit with its time rescaled to `suffix` ("µs" for "ns/switch": "µs/switch");
    /// any other unit as it is.
    pub fn rescaled(&self, suffix: &str) -> String {
        match self {
            Unit::Ns(None) => suffix.to_string(),
            Unit::Ns(Some(per)) => format!("{suffix}/{per}"),
            u => u.to_string(),
        }
    }

    /// Whether a larger number is better (a throughput, a hit rate), so that "slower" means a
    /// smaller figure: only a unit this version does not make can be one ("MB/s"); every
    /// unit it makes is a cost (time per operation, a share lost).
    pub fn higher_is_better(&self) -> bool {
        let Unit::Other(s) = self else {
            return false;
        };
        let u = s.to_ascii_lowercase();
        u.ends_with("/s")
            || u.contains("per second")
            || u.contains("hit rate")
            || u.contains("ops/")
    }
}

impl From<&str> for Unit {
    fn from(s: &str) -> Unit {
        match s {
            "ns" => Unit::NS,
            "%" => Unit::Percent,
            "× sequential" => Unit::TimesSequential,
            "" => Unit::Bare,
            _ => match s.strip_prefix("ns/") {
                Some(per) => Unit::ns(Per::read(per)),
                None => Unit::Other(s.to_string()),
            },
        }
    }
}

impl From<String> for Unit {
    fn from(s: String) -> Unit {
        Unit::from(s.as_str())
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unit::Ns(None) => f.write_str("ns"),
            Unit::Ns(Some(per)) => write!(f, "ns/{per}"),
            Unit::Percent => f.write_str("%"),
            Unit::TimesSequential => f.write_str("× sequential"),
            Unit::Bare => Ok(()),
            Unit::Other(s) => f.write_str(s),
        }
    }
}

/// Units order as their text does, so that tables keyed by unit keep the order they had
/// when units were text.
impl Ord for Unit {
    fn cmp(&self, other: &Unit) -> std::cmp::Ordering {
        self.to_string().cmp(&other.to_string())
    }
}

impl PartialOrd for Unit {
    fn partial_cmp(&self, other: &Unit) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl serde::Serialize for Unit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Unit {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Unit, D::Error> {
        String::deserialize(d).map(Unit::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every unit this version makes, as it writes it.
    const MADE: [&str; 23] = [
        "ns",
        "ns/switch",
        "ns/round trip",
        "ns/one-way",
        "ns/yield",
        "ns/lap",
        "ns/run",
        "ns/call",
        "ns/iteration",
        "ns/open+close",
        "ns/fault",
        "ns/page",
        "ns/touch",
        "ns/load",
        "ns/RPC",
        "ns/op",
        "ns/block",
        "ns/walk",
        "%",
        "× sequential",
        "",
        // Not made, read back as written.
        "MB/s",
        "ns/widget",
    ];

    #[test]
    fn every_unit_reads_back_as_it_was_written() {
        for s in MADE {
            let u = Unit::from(s);
            assert_eq!(u.to_string(), s);
            let json = serde_json::to_string(&u).unwrap();
            assert_eq!(json, serde_json::to_string(s).unwrap());
            assert_eq!(serde_json::from_str::<Unit>(&json).unwrap(), u, "{s}");
        }
        for p in Per::KNOWN {
            assert_eq!(Unit::from(Unit::ns(p.clone()).to_string()), Unit::ns(p));
        }
    }

    #[test]
    fn known_units_are_typed_and_unknown_ones_kept() {
        assert_eq!(Unit::from("ns/page").per(), Some(&Per::Page));
        assert_eq!(Unit::from("ns/round trip"), Unit::ns(Per::RoundTrip));
        assert!(Unit::from("ns").is_time() && !Unit::NS.is_time_per_op());
        assert!(!Unit::Percent.is_time() && Unit::Percent.per().is_none());
        // A later file's time per something is still a time, printed as written.
        let later = Unit::from("ns/widget");
        assert!(later.is_time_per_op());
        assert_eq!(later.rescaled("µs"), "µs/widget");
        assert_eq!(Unit::from("MB/s"), Unit::Other("MB/s".into()));
        assert!(!Unit::from("MB/s").is_time());
        assert!(Unit::from("MB/s").higher_is_better());
        assert!(!Unit::ns(Per::Call).higher_is_better());
    }

    #[test]
    fn without_per_keeps_the_magnitude() {
        assert_eq!(Unit::ns(Per::RoundTrip).without_per(), Unit::NS);
        assert_eq!(Unit::Percent.without_per(), Unit::Percent);
        assert_eq!(Unit::from("MB/s").without_per().to_string(), "MB");
        assert_eq!(Unit::NS.rescaled("ms"), "ms");
        assert_eq!(Unit::Percent.rescaled("ms"), "%");
    }
}
