// The remote's ε slider: releasing it sets ε at once (without JavaScript, "Set ε" does).
for (const form of document.querySelectorAll("[data-epsilon-form]")) {
  const slider = form.querySelector("input[type=range]");
  slider.addEventListener("change", () => form.requestSubmit());
}

// The live section is polled every few seconds. Its buttons are replaced only when what
// they do changes (their data-live-key), never under a finger or a pointer mid-press.
document.body.addEventListener("htmx:beforeSwap", (event) => {
  const current = event.detail.target;
  if (current.id !== "remote-live" || !event.detail.xhr || event.detail.xhr.status !== 200) return;
  const template = document.createElement("template");
  template.innerHTML = event.detail.serverResponse.trim();
  const incoming = template.content.querySelector("#remote-live");
  if (!incoming) return;
  event.detail.shouldSwap = false;
  for (const fresh of incoming.querySelectorAll("[data-live-key]")) {
    const kept = current.querySelector(`[data-live-key="${CSS.escape(fresh.dataset.liveKey)}"]`);
    if (kept) fresh.replaceWith(kept);
  }
  current.replaceChildren(...incoming.childNodes);
});
