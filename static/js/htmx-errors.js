// What htmx does with an error response, for every form and link on the site.
// htmx leaves the page as it was when the server answers 4xx or 5xx, so old results would
// stay on screen as if they were current. Here:
// - a 400 or 422 with HTML is the server's own answer for that region (a form with its
//   errors, say): swap it in like any other response;
// - any other error, or no answer at all, replaces the region with one line saying what
//   happened, so nothing stale is left looking valid.
(function () {
  "use strict";

  function swapsNothing(element) {
    var swap = element && element.closest && element.closest("[hx-swap]");
    return swap && swap.getAttribute("hx-swap").trim().split(/\s+/)[0] === "none";
  }

  function say(target, text) {
    var line = document.createElement("p");
    line.className = "htmx-error";
    line.setAttribute("role", "alert");
    line.textContent = text;
    target.replaceChildren(line);
  }

  function explained(xhr) {
    var type = xhr.getResponseHeader("Content-Type") || "";
    var body = type.indexOf("text/plain") === 0 ? (xhr.responseText || "").trim().slice(0, 300) : "";
    var status = xhr.status + (xhr.statusText ? " " + xhr.statusText : "");
    return "The server answered " + status + (body ? ": " + body : "") + ". Nothing here was updated; reload the page to try again.";
  }

  document.addEventListener("htmx:beforeSwap", function (event) {
    var detail = event.detail;
    if (!detail.isError) return;
    var xhr = detail.xhr;
    var type = xhr.getResponseHeader("Content-Type") || "";
    if ((xhr.status === 400 || xhr.status === 422) && type.indexOf("text/html") === 0) {
      detail.shouldSwap = true;
      return;
    }
    detail.shouldSwap = false;
    if (!swapsNothing(detail.requestConfig && detail.requestConfig.elt) && detail.target) {
      say(detail.target, explained(xhr));
    }
  });

  document.addEventListener("htmx:sendError", function (event) {
    var detail = event.detail;
    var target = detail.target;
    if (target && !swapsNothing(detail.elt)) {
      say(target, "The server could not be reached. Nothing here was updated; check your connection and try again.");
    }
  });
})();
