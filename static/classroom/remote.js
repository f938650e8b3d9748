// The remote's ε slider: releasing it sets ε at once (without JavaScript, "Set ε" does).
for (const form of document.querySelectorAll("[data-epsilon-form]")) {
  const slider = form.querySelector("input[type=range]");
  slider.addEventListener("change", () => form.requestSubmit());
}
