//! Prints `oscost machine`'s text view of this host, until the CLI subcommand is wired.
fn main() {
    let m = oscost::machine::collect();
    print!("{}", oscost::machine::render_text(&m));
    if std::env::args().any(|a| a == "--json") {
        println!("{}", serde_json::to_string_pretty(&m).unwrap_or_default());
    }
}
