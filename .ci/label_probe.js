// Injected by output.sh into a copy of a report before chromium dumps its DOM (the reports
// themselves carry no script). In every figure it takes the laid-out box of each text label,
// of each data point (an SVG circle) and the segments of each data curve and of each marker
// line (cache sizes, knees), and records the labels that overlap each other, cover a point,
// lie across a curve or a marker line, or run past the figure's edge.
// Boxes that touch by less than 1.5 px either way are not counted (antialiased edges).
// The result goes into <body data-labels-checked data-overlapping-labels> for
// check_report_dom.py --labels.
(function () {
  var overlaps = [];
  var checked = 0;
  var cut = function (a, b) {
    var w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
    var h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    return w > 1.5 && h > 1.5;
  };
  document.querySelectorAll("figure svg").forEach(function (svg, f) {
    var title = (svg.querySelector("text") || {}).textContent || "";
    var edge = svg.getBoundingClientRect();
    var labels = [];
    svg.querySelectorAll("text").forEach(function (t) {
      var s = t.textContent.trim();
      var b = t.getBoundingClientRect();
      if (s && b.width > 0 && b.height > 0) labels.push({ s: s, b: b });
    });
    var points = [];
    svg.querySelectorAll("circle").forEach(function (c) {
      var b = c.getBoundingClientRect();
      if (b.width > 0) points.push(b);
    });
    // Data curves: the series' lines, drawn 2 px wide in the palette's colours; marker
    // lines: the cache sizes (grey, 1 px), the knees (red, dashed, 2 px) and an RPC row's untraced
    // time (the same red, 3 px; plot::MARKER_RED). Grid lines
    // (light grey) and axes (black, 1 px) are neither. As segments in page coordinates.
    var palette = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"];
    var markers = ["#6E6E6E", "#C8281E"];
    var segments = [];
    svg.querySelectorAll("polyline").forEach(function (l) {
      var stroke = (l.getAttribute("stroke") || "").toUpperCase();
      var curve = palette.indexOf(stroke) >= 0 && parseFloat(l.getAttribute("stroke-width") || "1") >= 2;
      if (!curve && markers.indexOf(stroke) < 0) return;
      var m = l.getScreenCTM();
      var pts = (l.getAttribute("points") || "").trim().split(/\s+/).map(function (p) {
        var xy = p.split(",");
        var q = svg.createSVGPoint();
        q.x = parseFloat(xy[0]);
        q.y = parseFloat(xy[1]);
        return q.matrixTransform(m);
      });
      for (var i = 1; i < pts.length; i++) segments.push({ a: pts[i - 1], b: pts[i], curve: curve });
    });
    // Whether a segment passes through a box (shrunk by 1.5 px): sampled every pixel.
    var crosses = function (b, seg) {
      var s = [seg.a, seg.b];
      var dx = s[1].x - s[0].x, dy = s[1].y - s[0].y;
      var n = Math.max(1, Math.ceil(Math.sqrt(dx * dx + dy * dy)));
      for (var i = 0; i <= n; i++) {
        var x = s[0].x + (dx * i) / n, y = s[0].y + (dy * i) / n;
        if (x > b.left + 1.5 && x < b.right - 1.5 && y > b.top + 1.5 && y < b.bottom - 1.5) return true;
      }
      return false;
    };
    checked += labels.length;
    var name = "figure " + (f + 1) + " (" + title.trim().slice(0, 50) + ")";
    for (var i = 0; i < labels.length; i++) {
      for (var j = i + 1; j < labels.length; j++) {
        if (cut(labels[i].b, labels[j].b)) {
          overlaps.push(name + ": '" + labels[i].s.slice(0, 40) + "' over '" + labels[j].s.slice(0, 40) + "'");
        }
      }
      for (var c = 0; c < segments.length; c++) {
        if (crosses(labels[i].b, segments[c])) {
          var what = segments[c].curve ? "a curve" : "a marker line";
          overlaps.push(name + ": '" + labels[i].s.slice(0, 40) + "' over " + what);
          break;
        }
      }
      var b = labels[i].b;
      if (b.left < edge.left - 1.5 || b.right > edge.right + 1.5 || b.top < edge.top - 1.5 || b.bottom > edge.bottom + 1.5) {
        overlaps.push(name + ": '" + labels[i].s.slice(0, 40) + "' cut off at the figure's edge");
      }
      for (var k = 0; k < points.length; k++) {
        if (cut(labels[i].b, points[k])) {
          overlaps.push(name + ": '" + labels[i].s.slice(0, 40) + "' over a data point");
          break;
        }
      }
    }
  });
  document.body.setAttribute("data-labels-checked", String(checked));
  document.body.setAttribute("data-overlapping-labels", JSON.stringify(overlaps));
})();
