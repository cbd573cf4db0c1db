// N opens "another one like this" on a practice problem, unless the student is typing.
document.addEventListener("keydown", (event) => {
  if (event.key !== "n" && event.key !== "N") return;
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  if (target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))) return;
  const another = document.getElementById("another");
  if (another instanceof HTMLAnchorElement) {
    event.preventDefault();
    window.location.assign(another.href);
  }
});
