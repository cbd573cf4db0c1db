// A form's request carries the button that sent it (a preset's name, a step's formaction), even
// when a swap took that button off the page while the request waited behind another. htmx looks
// the button up on the page when the request leaves and drops one that is gone, or one a swap put
// there too recently to be wired up; the browser's submit event keeps it.
(function () {
  "use strict";
  document.addEventListener("htmx:configRequest", function (event) {
    var sent = event.detail.triggeringEvent;
    var button = sent && sent.submitter;
    if (!button) return;
    if (button.name && !event.detail.formData.has(button.name)) {
      event.detail.formData.append(button.name, button.value);
    }
    if (button.hasAttribute("formaction")) event.detail.path = button.getAttribute("formaction");
  });
})();
