// Wires rr.js to the respondent page. The true answers live only in this page's memory
// (and, memoized with their reports, in this device's localStorage); only the
// randomized reports and a random submission id are ever sent.
import { cryptoSource, randomize, uuid4 } from "./rr.js";

const FLIP_MS = 1600;
const root = document.querySelector("[data-respond]");
const slug = root.dataset.slug;
const prefix = `deniable:v1:${slug}:`;
const questions = Array.from(root.querySelectorAll("[data-question]"), (el) => ({
  el,
  id: Number(el.dataset.question),
  design: el.dataset.design,
  params: JSON.parse(el.dataset.params),
  truth: null,
}));
const flipButton = root.querySelector("[data-flip]");
const status = root.querySelector("[data-status]");
const retryButton = root.querySelector("[data-retry]");

function store(key, value) {
  try {
    localStorage.setItem(prefix + key, JSON.stringify(value));
  } catch {
    // Private browsing without storage: the report is still random, just not memoized.
  }
}

function recall(key) {
  try {
    return JSON.parse(localStorage.getItem(prefix + key));
  } catch {
    return null;
  }
}

/** The permanent randomized response for (question, true answer) on this device. */
function reportFor(question, next) {
  const key = `q${question.id}:${question.truth}`;
  const remembered = recall(key);
  if (remembered && (remembered.report === 0 || remembered.report === 1)) return remembered;
  const outcome = randomize(question.design, question.params, question.truth, next);
  store(key, outcome);
  return outcome;
}

function choose(question, value) {
  question.truth = value;
  for (const button of question.el.querySelectorAll("[data-truth]")) {
    button.setAttribute("aria-pressed", String(Number(button.dataset.truth) === value));
  }
  flipButton.disabled = questions.some((q) => q.truth === null);
}

async function send(body) {
  const response = await fetch(root.dataset.submitUrl, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
    credentials: "omit",
    referrerPolicy: "no-referrer",
  });
  const data = await response.json().catch(() => ({}));
  return { ok: response.ok, status: response.status, data };
}

function describe(question, outcome) {
  const sent = outcome.report === 1 ? "YES" : "NO";
  const [first, second] = outcome.coins;
  let why;
  if (question.design === "mirrored") {
    why = first ? "The spinner said: answer the question as asked." : "The spinner said: answer the opposite.";
  } else if (first) {
    why = "Coin 1 said: tell the truth.";
  } else {
    why = `Coin 1 said: let coin 2 decide. Coin 2 said ${second ? "YES" : "NO"}.`;
  }
  return { sent, why };
}

function showOutcome(question, outcome) {
  const { sent, why } = describe(question, outcome);
  const result = question.el.querySelector("[data-result]");
  result.querySelector("[data-sent]").textContent = sent;
  result.querySelector("[data-why]").textContent = why;
  result.hidden = false;
  for (const [i, coin] of question.el.querySelectorAll("[data-coin]").entries()) {
    const value = outcome.coins[i];
    coin.dataset.face = value ? "heads" : "tails";
    coin.textContent = value ? "H" : "T";
  }
}

function finish(result, outcomes) {
  root.classList.remove("is-flipping");
  questions.forEach((q, i) => showOutcome(q, outcomes[i]));
  if (result.ok) {
    store("sent", true);
    localStorage.removeItem(prefix + "pending");
    status.textContent = "Sent. Only the answers shown above left this device.";
    root.classList.add("is-sent");
  } else if (result.status === 0 || result.status >= 500 || result.status === 429) {
    status.textContent = "Your answer could not be sent. Nothing was lost: try again.";
    retryButton.hidden = false;
  } else {
    const detail = result.data.detail || result.data.invite || "The survey refused this answer.";
    status.textContent = `Not sent: ${detail}`;
  }
}

async function flipAndSend() {
  flipButton.disabled = true;
  for (const button of root.querySelectorAll("[data-truth]")) button.disabled = true;
  const next = cryptoSource();
  const outcomes = questions.map((q) => reportFor(q, next));
  const body = {
    submission_id: recall("pending")?.submission_id || uuid4(next),
    answers: questions.map((q, i) => ({ question: q.id, value: outcomes[i].report })),
  };
  if (root.dataset.invite) body.invite = root.dataset.invite;
  store("pending", body);
  root.classList.add("is-flipping");
  status.textContent = "Flipping the coins and sending…";
  const sending = send(body).catch(() => ({ ok: false, status: 0, data: {} }));
  const [result] = await Promise.all([sending, new Promise((r) => setTimeout(r, FLIP_MS))]);
  finish(result, outcomes);
}

async function retry() {
  retryButton.hidden = true;
  const body = recall("pending");
  status.textContent = "Sending again…";
  const result = await send(body).catch(() => ({ ok: false, status: 0, data: {} }));
  finish(result, questions.map((q) => reportFor(q)));
}

function forget() {
  for (const key of Object.keys(localStorage)) {
    if (key.startsWith(prefix)) localStorage.removeItem(key);
  }
  window.location.reload();
}

root.querySelector("[data-paper]").hidden = true;
root.querySelector("[data-digital]").hidden = false;
for (const question of questions) {
  for (const button of question.el.querySelectorAll("[data-truth]")) {
    button.addEventListener("click", () => choose(question, Number(button.dataset.truth)));
  }
}
flipButton.addEventListener("click", flipAndSend);
retryButton.addEventListener("click", retry);
root.querySelector("[data-forget]").addEventListener("click", forget);
if (recall("sent")) {
  root.querySelector("[data-digital]").hidden = true;
  root.querySelector("[data-already]").hidden = false;
}
