// Injected by output.sh into a copy of a report before chromium dumps its DOM (the reports
// themselves carry no script). For every figure that counts its points (data-points-given,
// from the plot module's tally), it counts the data marks (class "pt") the browser really
// lays out inside the figure's box, and the number stated by a visible "N points not drawn:"
// line, into data-pt-visible and data-stated on the figure's <svg>, for
// check_report_dom.py --points.
(function () {
  var inside = function (b, box) {
    return (b.width > 0 || b.height > 0) &&
      b.right >= box.left - 0.5 && b.left <= box.right + 0.5 &&
      b.bottom >= box.top - 0.5 && b.top <= box.bottom + 0.5;
  };
  document.querySelectorAll("figure svg").forEach(function (svg) {
    var box = svg.getBoundingClientRect();
    var marks = 0;
    svg.querySelectorAll(".pt").forEach(function (m) {
      if (inside(m.getBoundingClientRect(), box)) marks++;
    });
    var stated = 0;
    svg.querySelectorAll("text").forEach(function (t) {
      var m = /^(\d+) \S+ not drawn: \S/.exec(t.textContent.trim());
      if (m && inside(t.getBoundingClientRect(), box)) stated += parseInt(m[1], 10);
    });
    svg.setAttribute("data-pt-visible", String(marks));
    svg.setAttribute("data-stated", String(stated));
  });
  document.body.setAttribute("data-points-probe", "ran");
})();
