// Injected by output.sh into a copy of a report before chromium dumps its DOM (the reports
// themselves carry no script). For every table cell holding a figure (td.num), it records
// the cells that are narrower than their content: a text node of a figure laid out on more
// than one line (a number wrapped mid-digit or split from its unit), or content wider than
// the cell. Prose inside a figure cell (.why: an invalid measurement's reason) may wrap.
// The result goes into <body data-cells-checked data-narrow-cells> for check_report_dom.py.
(function () {
  var narrow = [];
  var cells = document.querySelectorAll("td.num");
  cells.forEach(function (td, i) {
    var bad = td.scrollWidth > td.clientWidth + 1;
    var walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
    for (var n = walker.nextNode(); n && !bad; n = walker.nextNode()) {
      if (!n.data.trim() || (n.parentElement && n.parentElement.closest(".why"))) continue;
      var r = document.createRange();
      r.selectNodeContents(n);
      var tops = new Set();
      Array.prototype.forEach.call(r.getClientRects(), function (b) {
        if (b.width > 0) tops.add(Math.round(b.top));
      });
      if (tops.size > 1) bad = true;
    }
    if (bad) narrow.push(i + ": " + td.textContent.trim().slice(0, 60));
  });
  document.body.setAttribute("data-cells-checked", String(cells.length));
  document.body.setAttribute("data-narrow-cells", JSON.stringify(narrow));
})();
