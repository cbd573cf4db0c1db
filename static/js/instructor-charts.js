// Draws the instructor page's charts from JSON data islands:
//   <script type="application/json" id="X">{data, layout}</script> <div data-chart-island="X"></div>
// The figures are built server-side with plotly's Python API; this only hands them to
// plotly.js, in the page's text colour. No inline script, so a strict CSP can hold.
(function () {
  "use strict";

  function textColour() {
    return getComputedStyle(document.documentElement).getPropertyValue("--text").trim() || "#1d1f23";
  }

  function drawAll() {
    if (!window.Plotly) return;
    document.querySelectorAll("[data-chart-island]").forEach(function (element) {
      var island = document.getElementById(element.getAttribute("data-chart-island"));
      if (!island) return;
      var figure = JSON.parse(island.textContent);
      var layout = Object.assign({}, figure.layout, { font: { color: textColour() } });
      window.Plotly.newPlot(element, figure.data, layout, {
        responsive: true,
        displaylogo: false,
        displayModeBar: false,
      });
      element.setAttribute("data-drawn", "true");
    });
  }

  document.addEventListener("DOMContentLoaded", drawAll);
})();
