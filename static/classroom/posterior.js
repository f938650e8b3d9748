// The adversary's posterior calculator: P(true answer is yes | report) by Bayes' rule for
// the prior on the slider. The table beside it shows the same numbers without JavaScript.
const percent = (x) => (Number.isFinite(x) ? `${Math.round(x * 100)} %` : "—");

function posterior(prior, likeYes, likeNo) {
  const evidence = prior * likeYes + (1 - prior) * likeNo;
  return evidence > 0 ? (prior * likeYes) / evidence : prior;
}

for (const calc of document.querySelectorAll("[data-posterior]")) {
  const yes1 = Number(calc.dataset.yes1);
  const yes0 = Number(calc.dataset.yes0);
  const slider = calc.querySelector("input[type=range]");
  const out = (name) => calc.querySelector(`[data-out="${name}"]`);
  const update = () => {
    const prior = Number(slider.value) / 100;
    out("prior").textContent = percent(prior);
    out("yes").textContent = percent(posterior(prior, yes1, yes0));
    out("no").textContent = percent(posterior(prior, 1 - yes1, 1 - yes0));
  };
  slider.addEventListener("input", update);
  update();
  calc.hidden = false;
}
