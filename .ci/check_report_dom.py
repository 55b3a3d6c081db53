#!/usr/bin/env python3
"""Checks one HTML report as the browser rendered it (chromium --dump-dom) and the browser's
log: every figure has something drawn (no "no data to plot", at least one data mark), no
legend lists more than LIMIT entries, and the page logged no console error.

With --cells (the DOM dumped from a copy carrying .ci/cell_probe.js): no table cell holding a
figure is narrower than its content (no number wrapped or cut), and at least one was checked.

With --tables (the same probe): no table is wider than its container or the page (its
right edge cut), and no table row is taller than ROW_LINES text lines of its cells
(--row-lines N, default 5): prose in a row belongs in a footnote or behind a <details>.

With --labels (the DOM dumped from a copy carrying .ci/label_probe.js): no text label of a
figure overlaps another, covers a data point or lies across a data curve, and at least one
label was checked.

With --points (the DOM dumped from a copy carrying .ci/point_probe.js): every figure counts
its points (data-points-given/-drawn/-omitted, written by the plot module's tally), draws
exactly given − omitted of them (its data marks, class "pt", that the browser lays out inside
the figure; a histogram's bins hold many samples, so there at least one mark), and states
every point it left out in a visible "N points not drawn: reason" line.

usage: check_report_dom.py PAGE.dom PAGE.log [--min-figures N] [--expect-legend TITLE=N] [--cells]
       [--tables [--row-lines N]] [--labels] [--points]

--expect-legend: the figure whose title starts with TITLE lists exactly N legend entries (the
sweep: one line per ring size).
"""
import json
import re
import sys
from html.parser import HTMLParser

# What a bar chart none of whose rows has a value says on its value axis (plot/bar.rs).
NO_ROW_HAS_A_VALUE = ": no row has a value"

LIMIT = 12


def probe_verdict(dom, checked, found):
    """A probe's verdict from <body data-CHECKED=N data-FOUND=JSON>, or None when the probe
    did not run."""

    class Body(HTMLParser):
        attrs = None

        def handle_starttag(self, tag, attrs):
            if tag == "body" and self.attrs is None:
                self.attrs = dict(attrs)

    b = Body()
    b.feed(dom)
    a = b.attrs or {}
    if f"data-{found}" not in a:
        return None
    return int(a.get(f"data-{checked}", "0")), json.loads(a[f"data-{found}"])


class Figures(HTMLParser):
    """Collects each <figure>'s SVG: its legend count and the marks drawn in it."""

    def __init__(self):
        super().__init__()
        self.figures = []  # dicts: legend, marks, texts
        self.depth = 0
        self.cur = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "figure":
            self.cur = {"legend": 0, "marks": 0, "pt": 0, "texts": [], "svg": False, "points": {}}
            self.figures.append(self.cur)
        if self.cur is None:
            return
        if tag == "svg" and not self.cur["svg"]:
            self.cur["points"] = {k[len("data-"):]: v for k, v in a.items() if k.startswith("data-")}
        if tag == "svg":
            self.cur["svg"] = True
            self.cur["legend"] = int(a.get("data-legend-entries", "0"))
        # Lines, dots, bands and bars are data; plotters draws axes as polylines too, so
        # count everything and require more than a bare frame (see below).
        if tag in ("polyline", "circle", "polygon", "rect", "path", "line"):
            self.cur["marks"] += 1
        if "pt" in (a.get("class") or "").split():
            self.cur["pt"] += 1

    def handle_endtag(self, tag):
        if tag == "figure":
            self.cur = None

    def handle_data(self, data):
        if self.cur is not None and data.strip():
            self.cur["texts"].append(data.strip())


def point_errors(f):
    """What is wrong with one figure's point count (see --points), as messages."""
    a = f["points"]
    if "points-given" not in a:
        return ["does not count its points (no data-points-given)"]
    given, drawn, omitted = (int(a[f"points-{k}"]) for k in ("given", "drawn", "omitted"))
    # The marks the browser laid out inside the figure (the probe), else those in the markup.
    marks = int(a.get("pt-visible", f["pt"]))
    stated = int(a.get("stated", "-1"))
    if stated < 0:
        stated = sum(
            int(m.group(1))
            for t in f["texts"]
            for m in [re.match(r"(\d+) \S+ not drawn: \S", t)]
            if m
        )
    errors = []
    if drawn != given - omitted:
        errors.append(f"claims {drawn} points drawn of {given} given with {omitted} left out")
    if a.get("points-marks") == "shared":
        if drawn > 0 and marks == 0:
            errors.append(f"claims {drawn} samples drawn but shows no mark")
    elif marks != given - omitted:
        errors.append(
            f"shows {marks} data marks for {given} points given with {omitted} left out"
        )
    if stated != omitted:
        errors.append(f"{omitted} points not drawn, {stated} said so in visible text")
    return errors


def main():
    dom_path, log_path = sys.argv[1], sys.argv[2]
    min_figures = 1
    if "--min-figures" in sys.argv:
        min_figures = int(sys.argv[sys.argv.index("--min-figures") + 1])
    dom = open(dom_path, encoding="utf-8").read()
    log = open(log_path, encoding="utf-8", errors="replace").read()
    errors = []
    # Console messages (chromium --enable-logging=stderr logs them all at INFO, whatever
    # their level): the reports carry no script, so any console message is an error.
    for line in log.splitlines():
        if ":CONSOLE" in line or "Uncaught" in line:
            errors.append(f"console: {line.strip()}")
        elif "Failed to load resource" in line:
            errors.append(f"resource: {line.strip()}")
    p = Figures()
    p.feed(dom)
    if len(p.figures) < min_figures:
        errors.append(f"{len(p.figures)} figure(s), expected at least {min_figures}")
    for i, f in enumerate(p.figures, 1):
        title = f["texts"][0] if f["texts"] else "(untitled)"
        if not f["svg"]:
            errors.append(f"figure {i} ({title}): no SVG")
        empty = [t for t in f["texts"] if "no data to plot" in t or NO_ROW_HAS_A_VALUE in t]
        if empty and ("every point is invalid" in empty[0] or NO_ROW_HAS_A_VALUE in empty[0]):
            # The figure works and says why it is empty: the machine was too busy for valid
            # results (the table gives each reason; a bar chart names each row's reason and
            # draws no value axis). Worth a look, not a broken figure.
            print(f"{dom_path}: warning: figure {i} ({title}): {empty[0]}", file=sys.stderr)
        elif empty:
            errors.append(f"figure {i} ({title}): empty ({empty[0]})")
        elif f["marks"] < 4:
            errors.append(f"figure {i} ({title}): only {f['marks']} drawn element(s)")
        if f["legend"] > LIMIT:
            errors.append(f"figure {i} ({title}): legend has {f['legend']} entries (limit {LIMIT})")
    if "--expect-legend" in sys.argv:
        spec = sys.argv[sys.argv.index("--expect-legend") + 1]
        want_title, want_n = spec.rsplit("=", 1)
        found = [f for f in p.figures if f["texts"] and f["texts"][0].startswith(want_title)]
        if not found:
            errors.append(f"no figure titled {want_title!r}")
        elif found[0]["legend"] != int(want_n):
            errors.append(
                f"{want_title!r}: {found[0]['legend']} legend entries, expected {want_n}"
            )
    if "--cells" in sys.argv:
        verdict = probe_verdict(dom, "cells-checked", "narrow-cells")
        if verdict is None:
            errors.append("the table-cell probe did not run (no data-narrow-cells)")
        elif verdict[0] == 0:
            errors.append("no table cell holding a figure to check")
        else:
            for cell in verdict[1]:
                errors.append(f"figure cell narrower than its content: {cell}")
    if "--tables" in sys.argv:
        bound = 5.0
        if "--row-lines" in sys.argv:
            bound = float(sys.argv[sys.argv.index("--row-lines") + 1])
        verdict = probe_verdict(dom, "tables-checked", "wide-tables")
        if verdict is None:
            errors.append("the table probe did not run (no data-wide-tables)")
        elif verdict[0] == 0:
            errors.append("no table to check")
        else:
            for table in verdict[1]:
                errors.append(f"table wider than its page: {table}")
            rows = probe_verdict(dom, "tables-checked", "row-lines")[1]
            # A quarter line of slack: a figure's interval line is smaller type.
            for table, i, label, lines in rows:
                if lines > bound + 0.25:
                    errors.append(
                        f"{table}: row {i} ({label}) is {lines} lines tall (bound {bound:g})"
                    )
    if "--labels" in sys.argv:
        verdict = probe_verdict(dom, "labels-checked", "overlapping-labels")
        if verdict is None:
            errors.append("the label probe did not run (no data-overlapping-labels)")
        elif verdict[0] == 0:
            errors.append("no figure label to check")
        else:
            for overlap in verdict[1]:
                errors.append(f"overlapping label: {overlap}")
    if "--points" in sys.argv:
        if "data-points-probe" not in dom:
            errors.append("the point probe did not run (no data-points-probe)")
        for i, f in enumerate(p.figures, 1):
            title = f["texts"][0] if f["texts"] else "(untitled)"
            errors.extend(f"figure {i} ({title[:60]}): {e}" for e in point_errors(f))
    name = re.sub(r"\.dom$", "", dom_path)
    if errors:
        for e in errors:
            print(f"{name}: {e}", file=sys.stderr)
        sys.exit(1)
    print(f"{name}: {len(p.figures)} figure(s) drawn, legends within {LIMIT}, no console errors")


if __name__ == "__main__":
    main()
