// Draws the plotly figures that the server sends as JSON data islands:
//   <script type="application/json" id="X">{figure}</script> <div class="plot" data-figure="X"></div>
// plotly.js is fetched only when a page has something to plot, and the figures follow the
// page's light or dark colours. No inline script, so a strict Content-Security-Policy holds.
(function () {
  "use strict";

  var me = document.currentScript;
  var plotlySrc = me && me.getAttribute("data-plotly-src");
  var loading = null;
  var darkQuery = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;

  function loadPlotly() {
    if (window.Plotly) return Promise.resolve(window.Plotly);
    if (!loading) {
      loading = new Promise(function (resolve, reject) {
        var script = document.createElement("script");
        script.src = plotlySrc;
        script.onload = function () { resolve(window.Plotly); };
        script.onerror = function () { reject(new Error("plotly.js failed to load")); };
        document.head.appendChild(script);
      });
    }
    return loading;
  }

  function cssVar(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  }

  function themed(layout, narrow) {
    var text = cssVar("--text") || "#1d1f23";
    var grid = cssVar("--border") || "#dcd8cf";
    var out = Object.assign({}, layout, {
      font: Object.assign({}, layout.font, { color: text }),
      paper_bgcolor: "rgba(0,0,0,0)",
      plot_bgcolor: "rgba(0,0,0,0)",
    });
    Object.keys(out).forEach(function (key) {
      if (/^[xy]axis\d*$/.test(key)) {
        out[key] = Object.assign({}, out[key], { gridcolor: grid, zerolinecolor: grid, linecolor: grid });
      }
    });
    if (narrow) {
      // A phone: taller panels (for the two-panel sweep charts), and the legend well below
      // the axis title.
      if (out.yaxis3) {
        out.height = Math.max(out.height || 0, 600);
        out.margin = Object.assign({}, out.margin, { l: 44, r: 44 });
        out.legend = Object.assign({}, out.legend, { y: -0.16 });
      }
      out.legend = Object.assign({}, out.legend, { font: { size: 10 } });
    }
    return out;
  }

  function draw(element) {
    var island = document.getElementById(element.getAttribute("data-figure"));
    if (!island) return;
    var figure = JSON.parse(island.textContent);
    var narrow = element.clientWidth < 520;
    window.Plotly.react(element, figure.data, themed(figure.layout, narrow), {
      responsive: true,
      displaylogo: false,
      displayModeBar: false,
    });
    element.setAttribute("data-drawn", "true");
  }

  function drawAll(root) {
    var plots = (root || document).querySelectorAll(".plot[data-figure]");
    if (!plots.length) return;
    loadPlotly().then(function () {
      plots.forEach(draw);
    }).catch(function (error) {
      plots.forEach(function (element) {
        element.textContent = "The chart could not be drawn (" + error.message + "); the table has the same numbers.";
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () { drawAll(document); });
  // htmx swapped in new results: draw what arrived.
  document.addEventListener("htmx:afterSettle", function () { drawAll(document); });
  if (darkQuery && darkQuery.addEventListener) {
    darkQuery.addEventListener("change", function () {
      document.querySelectorAll(".plot[data-drawn]").forEach(draw);
    });
  }
})();
