// What this phone sent (or was refused) belongs to one step of one round: when the
// instructor moves on, the live section changes and the old note goes with it.
document.body.addEventListener("htmx:afterSettle", () => {
  const live = document.getElementById("lesson-live");
  const notes = document.querySelector("[data-for-step]");
  if (!live || !notes) return;
  if (notes.dataset.forStep !== live.dataset.step || notes.dataset.forRound !== live.dataset.round) {
    notes.replaceChildren();
  }
});
