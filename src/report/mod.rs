//! Everything that turns a Run into something a person or a script reads: terminal tables,
//! JSON/CSV export, plots, the HTML report, and the renderings of what `analysis` (curves)
//! and `compare` (run against run, host against host) found. Reports never measure and
//! never judge: they render.

pub mod c2c;
pub mod compare;
pub mod export;
pub mod fault;
pub mod figures;
pub mod fleet;
pub mod html;
pub mod ipc;
pub mod lab;
pub mod markdown;
pub mod memlat;
pub mod pipeview;
pub mod plot;
pub mod rpc;
pub mod sweep;
pub mod table;
pub mod term;
pub mod timev;
pub mod untrusted;
