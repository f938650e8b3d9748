// Copy buttons: a button with data-copy="<id>" copies that element's text. The buttons
// stay hidden without JavaScript (the link itself can still be selected and copied).
for (const button of document.querySelectorAll("[data-copy]")) {
  const source = document.getElementById(button.dataset.copy);
  const status = document.querySelector(`[data-copied-for="${button.dataset.copy}"]`);
  if (!source || !navigator.clipboard) continue;
  button.hidden = false;
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(source.textContent.trim());
      status.textContent = "Copied.";
    } catch {
      status.textContent = "Could not copy: select the link and copy it.";
    }
  });
}
