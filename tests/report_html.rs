//! The HTML report rendered from a recorded run: its structure, that it is self-contained, and
//! that invalid measurements are shown as invalid and never plotted as numbers.

use oscost::input::parse_run;
use oscost::model::{Run, Status};
use oscost::report::html::render;

fn fixture() -> Run {
    parse_run(include_str!("fixtures/run-quick.json"), "run-quick.json").unwrap()
}

fn sections(html: &str) -> Vec<String> {
    html.split("<section class=\"family\" id=\"family-")
        .skip(1)
        .map(|s| s[..s.find('"').unwrap()].to_string())
        .collect()
}

#[test]
fn report_has_machine_first_then_one_section_per_family() {
    let run = fixture();
    let html = render(std::slice::from_ref(&run));
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    let machine = html
        .find("<section id=\"machine\">")
        .expect("machine section");
    let first_family = html
        .find("<section class=\"family\"")
        .expect("family sections");
    assert!(machine < first_family, "machine facts must come first");
    let mut expected: Vec<String> = Vec::new();
    for m in &run.measurements {
        let f = m.probe.split('.').next().unwrap().to_string();
        if !expected.contains(&f) {
            expected.push(f);
        }
    }
    assert_eq!(sections(&html), expected);
    for w in run.machine.warnings() {
        let escaped = oscost::report::html::esc(&w);
        assert!(html.contains(&escaped), "machine warning missing: {w}");
    }
    // One figure per unit at least, each an inline SVG with a title.
    assert!(html.matches("<svg").count() >= expected.len());
    assert_eq!(html.matches("<svg").count(), html.matches("</svg>").count());
    // One table row per measurement (plus headers and facts).
    assert!(html.matches("<tr class=").count() >= run.measurements.len());
}

#[test]
fn report_is_self_contained() {
    let html = render(&[fixture(), fixture()]);
    for bad in [
        "http:", "https:", "src=", "@import", "<script", "url(", "<link", "<img", "<iframe",
    ] {
        assert!(!html.contains(bad), "external reference or script: {bad}");
    }
}

#[test]
fn invalid_measurements_are_shown_invalid_and_not_plotted() {
    let run = fixture();
    let invalid: Vec<_> = run.measurements.iter().filter(|m| !m.valid).collect();
    assert!(
        !invalid.is_empty(),
        "fixture should contain an invalid measurement"
    );
    let html = render(std::slice::from_ref(&run));
    assert_eq!(
        html.matches("<tr class=\"invalid\">").count(),
        invalid.len(),
        "each invalid row marked"
    );
    for m in &invalid {
        let c = m.failed_checks().next().expect("failed check");
        assert!(html.contains(&format!(
            "not plotted: invalid ({})",
            oscost::report::checks::name(c)
        )));
        if let Some(v) = &m.value {
            // The number must not appear as a bar label.
            let label = format!(
                ">\n{}\n</text>",
                oscost::report::plot::short_number(v.median)
            );
            assert!(!html.contains(&label));
        }
    }
}

#[test]
fn below_resolution_is_said_not_plotted() {
    let mut run = fixture();
    let m = run.measurements.iter_mut().find(|m| m.valid).unwrap();
    m.status = Status::BelowResolution;
    m.value = None;
    let html = render(&[run]);
    assert!(html.contains("<tr class=\"below\">"));
    assert!(html.contains("below resolution"));
    assert!(html.contains("not plotted: below resolution"));
}

#[test]
fn several_runs_are_side_by_side() {
    let html = render(&[fixture(), fixture()]);
    assert!(
        html.contains("<th class=\"num\">run 1 (") && html.contains("<th class=\"num\">run 2 (")
    );
    // Side-by-side figures are grouped bars with one legend entry per run.
    assert!(html.contains("run 1 (") && html.contains("run 2 ("));
    assert_eq!(sections(&html).len(), sections(&render(&[fixture()])).len());
}

/// A report of three quick runs showed an empty figure for the call family, whose
/// one row was invalid in every run: each run's row now says why it is not plotted.
#[test]
fn several_runs_without_a_value_between_them_say_why_per_run() {
    let runs: Vec<Run> = (0..3)
        .map(|_| {
            let mut r = fixture();
            for m in r
                .measurements
                .iter_mut()
                .filter(|m| m.probe == "call.function")
            {
                m.valid = false;
                m.status = Status::Invalid;
            }
            r
        })
        .collect();
    let html = render(&runs);
    let call = &html[html.find("id=\"family-call\"").unwrap()..];
    let call = &call[..call.find("</section>").unwrap()];
    assert!(!call.contains("no data to plot"), "{call}");
    for i in 1..=3 {
        assert!(
            call.contains(&format!("function · run {i}")),
            "run {i} missing"
        );
    }
    assert_eq!(call.matches("not plotted: invalid").count(), 3);
}
