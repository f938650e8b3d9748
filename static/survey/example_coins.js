// Example coins on the "how it works" and explain pages: the reader picks a made-up answer
// and flips the classic two fair coins with rr.js's own forced-response design. Nothing is
// sent or kept: these are never a respondent's coins, and this page has no survey.
import { cryptoSource, designs } from "./rr.js";

const CLASSIC = { p_truth: 0.5, p_yes: 0.5 };
const next = cryptoSource();

for (const box of document.querySelectorAll("[data-example-coins]")) {
  const sentences = JSON.parse(box.querySelector("#example-strings").textContent);
  const t = (key, values = {}) => sentences[key].replace(/\{(\w+)\}/g, (_, name) => String(values[name]));
  const [coin1, coin2] = box.querySelectorAll("[data-example-coin]");
  const result = box.querySelector("[data-example-result]");
  const tally = box.querySelector("[data-example-tally]");
  let counts = { flips: 0, yes: 0 };

  const answer = () => Number(box.querySelector("input[name=example-answer]:checked").value);
  const word = (value) => t(value ? "yes" : "no");
  for (const radio of box.querySelectorAll("input[name=example-answer]")) {
    radio.addEventListener("change", () => {
      counts = { flips: 0, yes: 0 };
      result.textContent = tally.textContent = "";
      coin1.textContent = coin2.textContent = "?";
    });
  }
  box.querySelector("[data-example-flip]").addEventListener("click", () => {
    const madeUp = answer();
    const { report, coins } = designs.forced_response(madeUp, CLASSIC, next);
    const [truthful, forcedYes] = coins;
    coin1.textContent = t(truthful ? "heads" : "tails");
    coin2.textContent = truthful ? t("unused") : t(forcedYes ? "heads" : "tails");
    result.textContent = truthful ? t("truth", { answer: word(madeUp) }) : t("forced", { report: word(report) });
    counts = { flips: counts.flips + 1, yes: counts.yes + report };
    tally.textContent = t("tally", { answer: word(madeUp), flips: counts.flips, yes: counts.yes, no: counts.flips - counts.yes });
  });
  box.querySelector("[data-example-play]").hidden = false;
}
