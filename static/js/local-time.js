// Times the server prints in UTC (<time datetime="…Z" data-local-time>, and the rating
// buttons' "Comes back …" tooltips) shown in the student's own time zone instead.
// Without JavaScript the UTC text stays, marked "UTC".
(function () {
  "use strict";

  function formatter(withYear) {
    var options = { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit", timeZoneName: "short" };
    if (withYear) options.year = "numeric";
    return new Intl.DateTimeFormat(undefined, options);
  }

  function localise(root) {
    if (!root || !root.querySelectorAll) return;
    root.querySelectorAll("time[data-local-time]").forEach(function (time) {
      var moment = new Date(time.getAttribute("datetime"));
      if (isNaN(moment)) return;
      if (!time.title) time.title = time.textContent;  // the UTC text, on hover
      time.textContent = formatter(time.getAttribute("data-local-time") === "year").format(moment);
      time.removeAttribute("data-local-time");
    });
    root.querySelectorAll("button[data-due]").forEach(function (button) {
      var moment = new Date(button.getAttribute("data-due"));
      if (!isNaN(moment)) button.title = "Comes back " + formatter(true).format(moment);
    });
  }

  document.addEventListener("DOMContentLoaded", function () { localise(document); });
  // Content htmx swaps in (a rating's acknowledgement, the answer with its buttons).
  document.addEventListener("htmx:load", function (event) { localise(event.detail.elt); });
})();
