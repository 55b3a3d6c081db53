#!/usr/bin/env python3
"""The mmap lab's figures draw no INVALID or unstable row as a value.

Reads a report page (HTML). Each lab row the page's table marks invalid or below (unstable,
below resolution) is named by its variant and pattern; in every figure of the page the
row's label must be followed, on its own row of the figure, by "not plotted: ..." and by no
number. Exit 1 naming each row drawn as a value; 0 otherwise.

usage: check_not_drawn.py PAGE.html
"""
import html
import re
import sys


def flagged_rows(page):
    """(variant, pattern) of each lab table row marked invalid or below."""
    out = []
    for m in re.finditer(r'<tr class="(invalid|below)">(.*?)</tr>', page, re.S):
        row = html.unescape(re.sub(r"<wbr>", "", m.group(2)))
        v = re.search(r"variant=([\w-]+)", row)
        p = re.search(r"pattern=(\w+)", row)
        if "<code>mmap.lab</code>" in row and v and p:
            out.append((m.group(1), v.group(1), p.group(1)))
    return out


def texts(svg):
    """(y, text) of each <text> of one figure."""
    return [
        (float(y), html.unescape(t.strip()))
        for y, t in re.findall(r'<text[^>]*\by="([-\d.]+)"[^>]*>(.*?)</text>', svg, re.S)
    ]


def main():
    page = open(sys.argv[1], encoding="utf-8").read()
    rows = flagged_rows(page)
    bad = []
    for i, svg in enumerate(re.findall(r"<svg.*?</svg>", page, re.S)):
        ts = texts(svg)
        for status, variant, pattern in rows:
            label = f"{variant} {pattern}"
            for y, t in ts:
                if t != label:
                    continue
                # The row's other texts: its value or its "not plotted" note, within half a
                # row (a row is 34 px) of its label.
                beside = [u for (z, u) in ts if abs(z - y) < 17 and u != label]
                drawn = [u for u in beside if re.fullmatch(r"[-+]?[\d.,]+\s*[a-zA-Zµ%]*", u)]
                if drawn or not any(u.startswith("not plotted") for u in beside):
                    bad.append(f"figure {i + 1}: {label} ({status}) drawn as {drawn or beside}")
    for b in bad:
        print(f"{sys.argv[1]}: {b}", file=sys.stderr)
    if not rows:
        print(f"{sys.argv[1]}: no invalid or unstable lab row to check")
    elif not bad:
        print(f"{sys.argv[1]}: {len(rows)} invalid or unstable row(s), drawn as none")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
