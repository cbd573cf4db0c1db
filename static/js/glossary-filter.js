// The glossary's filter box, as one types: hides the terms that do not mention the words, the
// letters left empty, and their index links. Without JavaScript the box submits ?q= instead,
// which the server filters the same way (name, definition or example, whatever the case).
(function () {
  "use strict";
  const box = document.querySelector("[data-glossary-filter]");
  if (!box) return;
  const entries = Array.from(document.querySelectorAll(".glossary-entry")).map((entry) => ({
    entry,
    text: entry.querySelector("dt").textContent + " " +
      Array.from(entry.querySelectorAll("dd > :not(.term-cards)")).map((part) => part.textContent).join(" "),
  }));
  entries.forEach((item) => { item.text = item.text.toLowerCase(); });
  const sections = Array.from(document.querySelectorAll(".glossary-letter"));
  const count = document.querySelector("[data-glossary-count]");
  const none = document.querySelector("[data-glossary-none]");

  function filter() {
    const words = box.value.trim().toLowerCase();
    let shown = 0;
    for (const item of entries) {
      const match = !words || item.text.includes(words);
      item.entry.hidden = !match;
      if (match) shown += 1;
    }
    for (const section of sections) {
      const empty = !section.querySelector(".glossary-entry:not([hidden])");
      section.hidden = empty;
      const link = document.querySelector(`.az-index a[href="#${section.id}"]`);
      if (link) link.classList.toggle("az-filtered", empty);
    }
    if (count) count.textContent = `${shown} term${shown === 1 ? "" : "s"}`;
    if (none) none.hidden = shown > 0;
  }

  box.addEventListener("input", filter);
  if (box.value) filter();
})();
