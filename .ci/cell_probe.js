// Injected by output.sh into a copy of a report before chromium dumps its DOM (the reports
// themselves carry no script). It records:
// - every table cell holding a figure (td.num) that is narrower than its content: a text
//   node of a figure laid out on more than one line (a number wrapped mid-digit or split
//   from its unit, an interval line split from its count), or content wider than the cell. Prose inside a figure cell (.why: an
//   invalid measurement's reason) may wrap;
// - every table wider than its container or than the page (its right edge cut, or a
//   scroll bar to read it);
// - every table row's height in text lines (its tallest cell's content over the cells'
//   line height): check_report_dom.py fails rows over its bound (prose that made rows
//   hundreds of pixels tall).
// The results go into <body data-cells-checked data-narrow-cells data-tables-checked
// data-wide-tables data-row-lines> for check_report_dom.py.
(function () {
  // How many text lines the contents of a node are laid out on.
  var linesOf = function (node) {
    var r = document.createRange();
    r.selectNodeContents(node);
    var tops = new Set();
    Array.prototype.forEach.call(r.getClientRects(), function (b) {
      if (b.width > 0) tops.add(Math.round(b.top));
    });
    return tops.size;
  };
  var narrow = [];
  var cells = document.querySelectorAll("td.num");
  cells.forEach(function (td, i) {
    var bad = td.scrollWidth > td.clientWidth + 1;
    var walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
    for (var n = walker.nextNode(); n && !bad; n = walker.nextNode()) {
      if (!n.data.trim() || (n.parentElement && n.parentElement.closest(".why"))) continue;
      if (linesOf(n) > 1) bad = true;
    }
    // A figure's interval line ("+0.02/−0.04 · n=9") reads as one: split after its "·",
    // the count stood alone under it.
    td.querySelectorAll(".ci:not(.why)").forEach(function (ci) {
      if (linesOf(ci) > 1) bad = true;
    });
    if (bad) narrow.push(i + ": " + td.textContent.trim().slice(0, 60));
  });
  document.body.setAttribute("data-cells-checked", String(cells.length));
  document.body.setAttribute("data-narrow-cells", JSON.stringify(narrow));

  var wide = [];
  var rows = [];
  var page = document.documentElement.clientWidth;
  var tables = document.querySelectorAll("table");
  tables.forEach(function (t, i) {
    var name = "table " + (i + 1) + " (" + ((t.querySelector("th,td") || {}).textContent || "").trim().slice(0, 30) + ")";
    var w = t.getBoundingClientRect();
    var box = t.parentElement.getBoundingClientRect();
    var room = Math.min(t.parentElement.clientWidth || box.width, page - box.left);
    if (w.width > room + 1 || w.right > page + 1) {
      wide.push(name + ": " + Math.round(w.width) + " px wide in " + Math.round(room) + " px");
    }
    Array.prototype.forEach.call(t.rows, function (tr, j) {
      // The row's height less its cells' padding and border, in lines of its cells' type.
      var td = tr.cells[0];
      if (!td) return;
      var cs = getComputedStyle(td);
      var lh = parseFloat(cs.lineHeight) || 1.2 * parseFloat(cs.fontSize);
      var frame = parseFloat(cs.paddingTop) + parseFloat(cs.paddingBottom) +
        parseFloat(cs.borderTopWidth) + parseFloat(cs.borderBottomWidth);
      var lines = (tr.getBoundingClientRect().height - frame) / lh;
      rows.push([name, j, td.textContent.trim().slice(0, 40), Math.round(lines * 10) / 10]);
    });
  });
  document.body.setAttribute("data-tables-checked", String(tables.length));
  document.body.setAttribute("data-wide-tables", JSON.stringify(wide));
  document.body.setAttribute("data-row-lines", JSON.stringify(rows));
})();
