//! rvsim: a RISC-V machine model (RV32I + M + A + C + Zicsr, machine mode) built to show costs that
//! real hardware hides: instruction-cache behaviour of compressed vs uncompressed code, and the
//! cycles a pipeline loses to hazards, branches, traps and interrupts.
//!
//! ```no_run
//! use rvsim::{Config, Machine, Program, CacheConfig};
//! let program = Program::from_elf(&std::fs::read("prog.elf").unwrap()).unwrap();
//! let cfg = Config {
//!     icache: Some(CacheConfig::parse("sets=8,ways=1,words=2").unwrap()),
//!     pipeline: true,
//!     ..Config::default()
//! };
//! let mut m = Machine::new(&cfg, &program).unwrap();
//! let stop = m.run(); // why it ended: exit, tohost, return to 0, trap, limit ...
//! println!("{stop}, {:?}", m.stats());
//! ```
//!
//! See the crate README for what is modeled and how cycles are counted.

pub mod cache;
pub mod clint;
pub mod conformance;
pub mod coremark;
pub mod csr;
pub mod decode;
pub mod disasm;
pub mod elf;
pub mod error;
pub mod machine;
pub mod percycle;
pub mod pipeline;
pub mod pipetrace;
pub mod predictor;
pub mod runtime;
pub mod stop;
pub mod trap;

pub use cache::{Cache, CacheConfig, CacheStats, Replacement, WritePolicy};
pub use elf::Program;
pub use error::SimError;
pub use machine::{Config, Engine, EngineCounts, Layout, Machine, Progress, Stats};
pub use percycle::FetchCount;
pub use pipeline::PipelineStats;
pub use predictor::{PredictorConfig, PredictorKind};
pub use stop::Stop;
