// Charts: the server sends each one twice, as SVG drawn in the first paint and as plotly JSON in a
// data island:
//   <script type="application/json" id="X">{figure}</script>
//   <div class="plot" data-figure="X"><div class="chart-static">…svg…</div></div>
// plotly.js costs a phone seconds of CPU, so it is fetched only when the student reaches for a chart
// (pointer over it, a tap, or the "Explore" button) and then replaces the SVG with the interactive
// chart. A .plot without a static drawing is drawn by plotly when it is about to scroll into view.
// Figures follow the page's light or dark colours. No inline script: a strict CSP holds.
(function () {
  "use strict";

  var me = document.currentScript;
  var plotlySrc = me && me.getAttribute("data-plotly-src");
  var loading = null;
  var darkQuery = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
  // Once the student has asked for one interactive chart, charts that arrive later (an htmx
  // redraw) are drawn interactive at once.
  var interactive = false;

  function loadPlotly() {
    if (window.Plotly) return Promise.resolve(window.Plotly);
    if (!loading) {
      loading = new Promise(function (resolve, reject) {
        var script = document.createElement("script");
        script.src = plotlySrc;
        script.onload = function () { resolve(window.Plotly); };
        script.onerror = function () {
          loading = null;
          reject(new Error("plotly.js failed to load"));
        };
        document.head.appendChild(script);
      });
    }
    return loading;
  }

  function cssVar(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  }

  // A phone: bar names (the cost chart's "batch + cached") would be tilted and cut at the
  // edge; they go level, on two lines, as the server-drawn chart prints them.
  function levelBarNames(data, out) {
    var bars = data.filter(function (trace) {
      return trace.type === "bar" && trace.orientation !== "h" && (trace.xaxis || "x") === "x";
    });
    var names = [];
    bars.forEach(function (trace) {
      (trace.x || []).forEach(function (name) {
        if (typeof name === "string" && names.indexOf(name) < 0) names.push(name);
      });
    });
    if (!names.length) return;
    out.xaxis = Object.assign({}, out.xaxis, {
      tickangle: 0,
      tickmode: "array",
      tickvals: names,
      ticktext: names.map(function (name) { return name.length > 8 ? name.replace(" ", "<br>") : name; }),
    });
  }

  function themed(layout, narrow, data) {
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
      levelBarNames(data || [], out);
    }
    return out;
  }

  function draw(element) {
    var island = document.getElementById(element.getAttribute("data-figure"));
    if (!island) return;
    var figure = JSON.parse(island.textContent);
    var narrow = element.clientWidth < 520;
    var still = element.querySelector(".chart-static");
    if (still) still.remove();
    window.Plotly.react(element, figure.data, themed(figure.layout, narrow, figure.data), {
      responsive: true,
      displaylogo: false,
      displayModeBar: false,
    });
    element.classList.add("is-interactive");
    element.setAttribute("data-drawn", "true");
  }

  function upgrade(elements) {
    if (!elements.length) return;
    loadPlotly().then(function () {
      elements.forEach(draw);
    }).catch(function (error) {
      elements.forEach(function (element) {
        var note = element.nextElementSibling;
        if (note && note.classList.contains("chart-explore")) {
          note.textContent = "The interactive chart could not load (" + error.message + "); the chart and table above have the numbers.";
        } else if (!element.querySelector(".chart-static")) {
          element.textContent = "The chart could not be drawn (" + error.message + "); the table has the same numbers.";
        }
      });
    });
  }

  function askedFor(element) {
    interactive = true;
    upgrade([element]);
  }

  function wire(element) {
    if (element.hasAttribute("data-wired")) return;
    element.setAttribute("data-wired", "true");
    if (!element.querySelector(".chart-static")) {
      whenNearView(element);
      return;
    }
    if (interactive) {
      upgrade([element]);
      return;
    }
    var button = document.querySelector('[data-explore="' + element.getAttribute("data-figure") + '"]');
    if (button) {
      button.parentElement.hidden = false;
      button.addEventListener("click", function () { askedFor(element); button.focus(); });
      // Pressing the button already says so: the press can blur a field whose change sends an htmx
      // run, and when its results land before the release the button is replaced and no click comes;
      // the charts that arrive are then drawn interactive.
      button.addEventListener("pointerdown", function () { interactive = true; });
    }
    // A pointer resting on the chart is a request for its values (a tap counts too). One that
    // came to rest before this script ran sends no pointerenter: it has asked already.
    if (element.matches(":hover")) {
      askedFor(element);
      return;
    }
    element.addEventListener("pointerenter", function () { askedFor(element); }, { once: true });
  }

  var observer = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      if (entry.isIntersecting) {
        observer.unobserve(entry.target);
        upgrade([entry.target]);
      }
    });
  }, { rootMargin: "300px 0px" }) : null;

  function whenNearView(element) {
    if (observer) observer.observe(element);
    else upgrade([element]);
  }

  function wireAll(root) {
    (root || document).querySelectorAll(".plot[data-figure]").forEach(wire);
  }

  document.addEventListener("DOMContentLoaded", function () { wireAll(document); });
  // htmx swapped in new results: wire (or draw) what arrived.
  document.addEventListener("htmx:afterSettle", function () { wireAll(document); });
  if (darkQuery && darkQuery.addEventListener) {
    darkQuery.addEventListener("change", function () {
      document.querySelectorAll(".plot[data-drawn]").forEach(draw);
    });
  }
})();
