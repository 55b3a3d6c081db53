//! Everything oscost does with a run file it did not write itself, in one call: load it,
//! then render the table, CSV, Markdown, the comparison with itself and the HTML report with
//! its plots. The fuzz target (fuzz/fuzz_targets/run_json.rs) and the corpus replay test
//! (tests/fuzz_replay.rs) both go through here, so a file that once hung or crashed the
//! report is replayed on every `cargo test`.

use crate::error::Result;

/// Loads `bytes` as a run file and renders every report of it. Ok(false) when the file is
/// refused with a message (the expected outcome for garbage); Ok(true) when rendered. A
/// panic or a hang here is a bug.
pub fn load_and_render(bytes: &[u8]) -> Result<bool> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Ok(false);
    };
    let run = match crate::input::parse_run(text, "fuzz") {
        Ok(r) => r,
        Err(_) => return Ok(false),
    };
    let _ = super::table::render(&run);
    let _ = super::export::to_csv(&run)?;
    let _ = super::markdown::run_to_markdown(&run);
    let c = crate::compare::compare(&run, "a", &run, "b");
    let _ = super::compare::text(&c);
    let _ = super::html::render(std::slice::from_ref(&run));
    Ok(true)
}
