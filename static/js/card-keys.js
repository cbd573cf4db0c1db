// Keyboard shortcuts on a card page, as listed on the page:
//   Space or Enter shows the answer, 1 to 4 rate once it is shown, Escape hides it,
//   N follows the "Next" link that appears once the card is rated.
// They press the page's own buttons, so htmx (or a plain form post) does the rest,
// and they stay out of the way while the student types or uses a focused control.
(function () {
  "use strict";

  function isTextEntry(element) {
    if (!element || element === document.body) return false;
    if (element.isContentEditable) return true;
    var tag = element.tagName;
    return tag === "TEXTAREA" || tag === "SELECT" || (tag === "INPUT" && element.type !== "checkbox" && element.type !== "radio");
  }

  function activatesItself(element) {
    // Space and Enter already press a focused button or follow a focused link.
    return !!(element && element.closest && element.closest("button, a[href], summary, input, [role='button']"));
  }

  function answerToggle() {
    return document.getElementById("answer-toggle");
  }

  function answerShown(toggle) {
    return toggle.getAttribute("aria-expanded") === "true";
  }

  function press(button) {
    // htmx wires up swapped-in controls as the swap settles, a few milliseconds later;
    // a key pressed in between would post the plain form. Wire it now (htmx skips
    // elements it has already processed), so the press always goes through htmx.
    if (window.htmx && button.form) window.htmx.process(button.form);
    button.click();
  }

  // Space shows the answer; if focus then sat on the swapped-in Hide answer button (htmx
  // focuses it, for those who pressed the button itself), a second Space would hide it again.
  // After a shortcut, focus goes to the answer instead.
  var focusAnswerNext = false;
  document.addEventListener("htmx:afterSettle", function (event) {
    if (!focusAnswerNext || !event.detail.elt || event.detail.elt.id !== "answer") return;
    focusAnswerNext = false;
    var body = document.getElementById("answer-body");
    if (body && !body.hidden) body.focus({ preventScroll: true });
  });

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey || event.isComposing) return;
    var target = event.target;
    if (isTextEntry(target)) return;
    if (event.key === "n" || event.key === "N") {
      var next = document.querySelector("#rating-result a.next-step");
      if (!next) return;
      event.preventDefault();
      next.click();
      return;
    }
    var toggle = answerToggle();
    if (!toggle) return;

    if (event.key === " " || event.key === "Enter") {
      if (answerShown(toggle) || activatesItself(target)) return;
      event.preventDefault();
      focusAnswerNext = true;
      press(toggle);
    } else if (/^[1-4]$/.test(event.key)) {
      if (!answerShown(toggle)) return;
      var button = document.querySelector('.rating-form button[name="rating"][value="' + event.key + '"]');
      if (!button) return;
      event.preventDefault();
      press(button);
    } else if (event.key === "Escape") {
      if (!answerShown(toggle)) return;
      event.preventDefault();
      press(toggle);
    }
  });
})();
