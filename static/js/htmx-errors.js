// What htmx does with an error response, for every form and link on the site.
// htmx leaves the page as it was when the server answers 4xx or 5xx, so old results would
// stay on screen as if they were current. Here:
// - a 400 or 422 with HTML is the server's own answer for that region (a form with its
//   errors, say): swap it in like any other response;
// - any other error, or no answer at all, replaces the region with one line saying what
//   happened, so nothing stale is left looking valid;
// - a form htmx will not send because a field breaks its own limits (min, max, step) says
//   so under that field, and marks the region it would have redrawn as not matching the
//   settings, until a request goes through and redraws it.
(function () {
  "use strict";

  var FIELD_ERROR = "js-field-error";

  function fieldLabel(field) {
    var label = field.id && document.querySelector('label[for="' + field.id + '"]');
    return label ? label.textContent.trim() : field.name;
  }

  function describedBy(field, id, on) {
    var ids = (field.getAttribute("aria-describedby") || "").split(/\s+/).filter(function (each) {
      return each && each !== id;
    });
    if (on) ids.push(id);
    field.setAttribute("aria-describedby", ids.join(" "));
  }

  function showFieldError(field, message) {
    var id = (field.id || field.name) + "-js-error";
    var error = document.getElementById(id);
    if (!error) {
      error = document.createElement("small");
      error.id = id;
      error.className = "field-error " + FIELD_ERROR;
      error.setAttribute("role", "alert");
      (field.closest(".field") || field.parentNode).appendChild(error);
    }
    error.textContent = message;
    field.setAttribute("aria-invalid", "true");
    describedBy(field, id, true);
  }

  function clearFieldError(field) {
    var id = (field.id || field.name) + "-js-error";
    var error = document.getElementById(id);
    if (!error) return;
    error.remove();
    field.removeAttribute("aria-invalid");
    describedBy(field, id, false);
  }

  function markStale(target, labels) {
    if (!target) return;
    target.classList.add("results-stale");
    var note = target.querySelector(".stale-note");
    if (!note) {
      note = document.createElement("p");
      note.className = "stale-note";
      var heading = target.querySelector("h2");
      if (heading) heading.after(note); else target.prepend(note);
    }
    note.textContent = "Not updated: these results are for earlier settings, not the ones above. Fix " +
      labels.join(", ") + " to see results that match.";
  }

  document.addEventListener("htmx:validation:halted", function (event) {
    var detail = event.detail;
    var labels = [];
    (detail.errors || []).forEach(function (error) {
      showFieldError(error.elt, error.message);
      labels.push(fieldLabel(error.elt));
    });
    markStale(detail.target, labels);
  });

  // A field fixed, or a request on its way: its message goes (the redraw clears the mark).
  function recheck(event) {
    var field = event.target;
    if (field && field.checkValidity && field.checkValidity()) clearFieldError(field);
  }
  document.addEventListener("input", recheck);
  document.addEventListener("change", recheck);

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

  // A settings page's answer redraws each field's messages out of band (the .field-errors
  // beside the field); its aria-invalid follows them, as a full load would have written it.
  document.addEventListener("htmx:afterSettle", function () {
    document.querySelectorAll(".field-errors[id$='-errors']").forEach(function (slot) {
      var field = document.getElementById(slot.id.slice(0, -"-errors".length));
      if (!field) return;
      if (slot.querySelector(".field-error")) {
        field.setAttribute("aria-invalid", "true");
      } else if (!document.getElementById((field.id || field.name) + "-js-error")) {
        field.removeAttribute("aria-invalid");
      }
    });
  });

  document.addEventListener("htmx:sendError", function (event) {
    var detail = event.detail;
    var target = detail.target;
    if (target && !swapsNothing(detail.elt)) {
      say(target, "The server could not be reached. Nothing here was updated; check your connection and try again.");
    }
  });
})();
