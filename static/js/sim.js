// /sim/: after a change redraws the results, bring them into view when they are off
// screen (on a phone they sit below the settings), so the student sees what changed.
(function () {
  "use strict";
  document.addEventListener("htmx:afterSwap", function (event) {
    var results = document.getElementById("sim-results");
    if (!results || event.detail.target.id !== "sim-results") return;
    var top = results.getBoundingClientRect().top;
    if (top > window.innerHeight * 0.6 || top < 0) {
      results.scrollIntoView({ block: "start" });
    }
  });
})();
