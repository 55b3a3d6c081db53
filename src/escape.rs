//! Text from a run file is data, never code. Host names, CPU models, kernel releases, command
//! lines, params, labels, warnings, probe names and file names come from files anyone can
//! hand over, so every output escapes them for what it is written into: one function per
//! kind of output, used by every layer that writes one.
//!
//! - [`terminal`]: control characters (which move the cursor, retitle the window, clear the
//!   screen or ring the bell) and the bidirectional controls (which make text read in another
//!   order than it is stored, e.g. U+202E) are shown as escapes, `\u{1b}`, never sent.
//! - [`csv`]: the same, then OWASP's rule against formula injection: a cell starting with
//!   `=`, `+`, `-`, `@`, tab or carriage return is prefixed with `'` (the CSV writer quotes
//!   the cell as needed).
//! - [`markdown`]: the same, then HTML's special characters as entities and Markdown's table
//!   and link characters backslash-escaped, so a cell stays one cell of text.
//! - [`xml`]: the same, then XML's special characters as entities (XML 1.0 cannot hold most
//!   control characters even as references, so they stay shown as escapes).
//! - [`prometheus`]: [`terminal`], then the text exposition format's escapes of a label
//!   value (backslash and double quote; a line feed is shown by `terminal` already), so a
//!   value stays one label of one line.

use std::borrow::Cow;

/// Characters that change how a terminal or a text renderer shows what follows: C0 and C1
/// control characters, DEL, and the bidirectional marks, embeddings, overrides and isolates.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Text for a terminal: every character of [`is_unsafe`] shown as `\u{…}` (tab, newline and
/// carriage return as `\t`, `\n`, `\r`).
pub fn terminal(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut o = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\t' => o.push_str("\\t"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            c if is_unsafe(c) => push_shown(&mut o, c),
            c => o.push(c),
        }
    }
    Cow::Owned(o)
}

/// A character shown as its escape, `\u{1b}`.
fn push_shown(o: &mut String, c: char) {
    o.push_str(&format!("\\u{{{:x}}}", c as u32));
}

/// A CSV text cell: [`terminal`], then a leading `=`, `+`, `-`, `@`, tab or carriage return
/// prefixed with `'` so no spreadsheet takes the cell for a formula. For text cells only: a
/// number written as a number (`-1.5`) is a number.
pub fn csv(s: &str) -> Cow<'_, str> {
    let t = terminal(s);
    // Tab and carriage return are shown as `\t` and `\r` by now: of OWASP's list only these
    // can still lead the cell.
    if t.starts_with(['=', '+', '-', '@']) {
        Cow::Owned(format!("'{t}"))
    } else {
        t
    }
}

/// A Markdown table cell: [`terminal`], then `& < > "` as HTML entities (GitHub and most
/// viewers render inline HTML) and `\ | [ ] `` ` backslash-escaped (a pipe would end the
/// cell, brackets make a link, a backtick opens code).
pub fn markdown(s: &str) -> String {
    let t = terminal(s);
    let mut o = String::with_capacity(t.len() + 8);
    for c in t.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\\' | '|' | '[' | ']' | '`' => {
                o.push('\\');
                o.push(c);
            }
            c => o.push(c),
        }
    }
    o
}

/// A Markdown table cell shown as code (`` `call.function` ``) when that is plain: text
/// holding a character a viewer might treat as markup (`` ` < > & " [ ] ``) is a
/// [`markdown`] cell instead, so nothing raw is left for a lenient renderer. In the span only
/// the pipe (which GitHub's tables split on even there) is escaped.
pub fn markdown_code(s: &str) -> String {
    if s.contains(['`', '<', '>', '&', '"', '[', ']']) {
        markdown(s)
    } else {
        format!("`{}`", terminal(s).replace('|', "\\|"))
    }
}

/// XML (and HTML) text and attribute values: `& < > " '` as entities, and the characters of
/// [`is_unsafe`] shown as escapes, except tab, newline and carriage return, which XML holds
/// as text (a `<pre>` block keeps its lines).
pub fn xml(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\t' | '\n' | '\r' => o.push(c),
            c if is_unsafe(c) => push_shown(&mut o, c),
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// A label value (or HELP text) of the Prometheus text exposition format: [`terminal`], then
/// `\` and `"` backslash-escaped. No line feed is left (terminal shows it as `\n`, whose
/// backslash is escaped in turn), so no value can end its line and start a sample.
pub fn prometheus(s: &str) -> String {
    terminal(s).replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_label_values_stay_one_value_on_one_line() {
        assert_eq!(prometheus("plain-host.1"), "plain-host.1");
        assert_eq!(prometheus(r#"a"b\c"#), r#"a\"b\\c"#);
        let hostile = "h\"} 1\nevil_metric 666\n# \u{1b}[2J";
        let v = prometheus(hostile);
        assert!(!v.contains('\n') && !v.contains('\u{1b}'), "{v}");
        // Every double quote is escaped: the value cannot close its label.
        assert!(
            !v.replace("\\\\", "").replace("\\\"", "").contains('"'),
            "{v}"
        );
    }

    /// What the hostile-input campaign fed through host names, labels and probe names.
    const OSC: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2J";

    #[test]
    fn terminal_shows_controls_and_bidi_as_escapes() {
        assert_eq!(terminal(OSC), "\\u{1b}]0;pwned\\u{7}\\u{1b}[2J");
        assert_eq!(terminal("a\tb\nc\rd"), "a\\tb\\nc\\rd");
        assert_eq!(terminal("evil\u{202E}gpj.exe"), "evil\\u{202e}gpj.exe");
        assert_eq!(
            terminal("\u{2066}x\u{2069}\u{9b}\u{7f}"),
            "\\u{2066}x\\u{2069}\\u{9b}\\u{7f}"
        );
        // Ordinary text, accents and CJK included, is untouched and not copied.
        assert!(matches!(terminal("µs/op · ±2% 日本"), Cow::Borrowed(_)));
        for out in [
            terminal(OSC).into_owned(),
            csv(OSC).into_owned(),
            markdown(OSC),
            xml(OSC),
        ] {
            assert!(!out.chars().any(is_unsafe), "{out:?}");
        }
    }

    #[test]
    fn csv_cells_never_start_a_formula() {
        for (cell, want) in [
            (
                "=HYPERLINK(\"http://evil\",\"click\")",
                "'=HYPERLINK(\"http://evil\",\"click\")",
            ),
            ("=2+2", "'=2+2"),
            ("+1", "'+1"),
            ("-1+1", "'-1+1"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tx", "\\tx"),
            ("call.function", "call.function"),
            ("a=b", "a=b"),
        ] {
            assert_eq!(csv(cell), want, "{cell:?}");
        }
        assert_eq!(csv("\r=1"), "\\r=1");
        assert!(csv("\u{1b}=1").starts_with("\\u{1b}"));
    }

    #[test]
    fn markdown_cells_stay_one_cell_of_text() {
        assert_eq!(
            markdown("<script>alert(1)</script>"),
            "&lt;script&gt;alert(1)&lt;/script&gt;"
        );
        assert_eq!(
            markdown("\"><img src=x onerror=alert(1)>"),
            "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"
        );
        assert_eq!(markdown("a|b"), "a\\|b");
        assert_eq!(markdown("[click](http://evil)"), "\\[click\\](http://evil)");
        assert_eq!(markdown("`x` \\"), "\\`x\\` \\\\");
        assert_eq!(markdown("A&B"), "A&amp;B");
        assert_eq!(markdown_code("call.function"), "`call.function`");
        assert_eq!(markdown_code("a|x"), "`a\\|x`");
        assert_eq!(markdown_code("<b>|x"), "&lt;b&gt;\\|x");
        assert_eq!(markdown_code("a`<b>"), "a\\`&lt;b&gt;");
    }

    #[test]
    fn xml_text_is_well_formed() {
        let x = xml("<a href='x'>&\u{1}</a>");
        assert_eq!(x, "&lt;a href=&#39;x&#39;&gt;&amp;\\u{1}&lt;/a&gt;");
        // What XML 1.0 allows in text: no control character but tab, newline and return,
        // which stay (a <pre> block keeps its lines).
        assert!(!x.chars().any(|c| c.is_control()));
        assert_eq!(xml("a\nb\tc\u{202e}"), "a\nb\tc\\u{202e}");
    }
}
