//! `oscost machine`: what this machine is, and what will make numbers noisy.

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
            println!(
                "{}",
                serde_json::to_string_pretty(&m).expect("Machine serializes")
            )
        }
        Some(p) => {
            // The history (OSCOST_DB or the default one) is never an output.
            let db = super::store_opts::DbOpts::default().path().ok();
            crate::cli::outputs::check(&[&p], &[], db.as_deref())?;
            let text = serde_json::to_string_pretty(&m).expect("Machine serializes");
            crate::report::export::write_atomic(&p, text.as_bytes())?;
        }
        None => print!(
            "{}",
            crate::machine::render_text_within(&m, crate::report::term::Term::stdout().width)
        ),
    }
    Ok(0)
}
