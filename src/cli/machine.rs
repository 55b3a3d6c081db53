//! `oscost machine`: what this machine is, and what will make numbers noisy.

use super::outputs::{print, Format, Outputs};
use crate::error::Result;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct MachineArgs {
    /// Write the facts as JSON to FILE ("-" for stdout) instead of the text view.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

pub fn run(a: MachineArgs) -> Result<i32> {
    // The CPU model is the hypervisor's to choose, the host name root's: shown, never acted on.
    let m = crate::input::inert(&crate::machine::collect());
    match a.json {
        Some(p) if p.as_os_str() == "-" => {
            print(&m, Format::Json)?;
            // On a terminal the document ends its line.
            println!();
        }
        Some(p) => {
            // The history (OSCOST_DB or the default one) is never an output.
            let db = super::store_opts::DbOpts::default().path().ok();
            let outputs = Outputs::new().with(Format::Json, Some(&p));
            outputs.check(&[], &[], db.as_deref())?;
            outputs.write(&m)?;
        }
        None => print(&m, Format::Text)?,
    }
    Ok(0)
}
