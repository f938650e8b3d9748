// Keyboard shortcuts on the projector (a presentation clicker sends PageDown/PageUp): each
// key posts its hidden form, then the live section reloads at once instead of at the next poll.
const forms = [...document.querySelectorAll("[data-shortcuts] form[data-keys]")];

document.addEventListener("keydown", async (event) => {
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  if (event.target.closest("input, textarea, select, [contenteditable]")) return;
  const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
  const form = forms.find((f) => f.dataset.keys.split(" ").includes(key));
  if (!form) return;
  event.preventDefault();
  await fetch(form.action, { method: "POST", body: new FormData(form), redirect: "manual" });
  const live = document.getElementById("live");
  if (live && window.htmx) {
    window.htmx.ajax("GET", live.getAttribute("hx-get"), { target: live, swap: "outerHTML" });
  }
});
