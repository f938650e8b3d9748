// Wires rr.js to the respondent page. The true answers live only in this page's memory
// (and, memoized with their reports, in this device's localStorage); only the
// randomized reports and a random submission id are ever sent.
import { cryptoSource, randomize, uuid4 } from "./rr.js";

// The coins animate for the same time whatever they show; the request is started at the
// moment of the click, before any of that, so its timing cannot depend on the coins.
const FLIP_MS = 1600;
const AUTO_RETRIES = 4;
const MAX_WAIT_S = 60;

const root = document.querySelector("[data-respond]");
const prefix = `deniable:v1:${root.dataset.slug}:`;
const sentKey = `sent:r${root.dataset.round}`;
const pendingKey = `pending:r${root.dataset.round}`;
const designVersion = Number(root.dataset.designVersion);
const $ = (selector) => root.querySelector(selector);
const questions = Array.from(root.querySelectorAll("[data-question]"), (el) => ({
  el,
  id: Number(el.dataset.question),
  design: el.dataset.design,
  params: JSON.parse(el.dataset.params),
  steps: Array.from(el.querySelectorAll("[data-coin]")),
  truth: null,
}));
const flipButton = $("[data-flip]");
const statusLine = $("[data-status]");
const retryButton = $("[data-retry]");

function store(key, value) {
  try {
    localStorage.setItem(prefix + key, JSON.stringify(value));
  } catch {
    // Storage disabled: the report is still random, just not memoized.
  }
}

function recall(key) {
  try {
    return JSON.parse(localStorage.getItem(prefix + key));
  } catch {
    return null;
  }
}

function forget(key) {
  try {
    localStorage.removeItem(prefix + key);
  } catch {
    // Nothing was stored.
  }
}

/** The permanent randomized response for (question, design, true answer) on this device. */
function reportFor(question, next) {
  const key = `q${question.id}:d${designVersion}:${question.truth}`;
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

/** One POST; network errors become status 0 so every failure is handled alike. */
async function post(body) {
  try {
    const response = await fetch(root.dataset.submitUrl, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
      credentials: "omit",
      referrerPolicy: "no-referrer",
    });
    const data = await response.json().catch(() => ({}));
    return { ok: response.ok, status: response.status, data, retryAfter: response.headers.get("Retry-After") };
  } catch {
    return { ok: false, status: 0, data: {}, retryAfter: null };
  }
}

const retryable = (result) => result.status === 0 || result.status === 429 || result.status >= 500;

/** Seconds to wait before trying again: the server's Retry-After, else a growing backoff. */
function waitSeconds(result, attempt) {
  const header = result.retryAfter;
  let seconds = 2 ** attempt;
  if (header && /^\d+$/.test(header)) seconds = Number(header);
  else if (header && !Number.isNaN(Date.parse(header))) seconds = (Date.parse(header) - Date.now()) / 1000;
  return Math.min(Math.max(seconds, 1), MAX_WAIT_S);
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Send the same body (same submission_id) until it is stored, refused, or we give up. */
async function deliver(body, first) {
  let result = await first;
  for (let attempt = 0; retryable(result) && attempt < AUTO_RETRIES; attempt++) {
    const seconds = waitSeconds(result, attempt);
    statusLine.textContent = `Not sent yet (${result.status ? `the server said ${result.status}` : "no connection"}). Trying again in ${Math.round(seconds)} s with the same answers…`;
    await pause(seconds * 1000);
    result = await post(body);
  }
  return result;
}

function refusal(result) {
  if (result.status === 403) return "this invite link has already been used or is not valid. Nothing was stored.";
  if (result.status === 409 && result.data.design_version) return "the questions were changed after this page was opened. Reload the page to answer them as they are now. Nothing was stored.";
  if (result.status === 409) return "this survey is not accepting answers any more. Nothing was stored.";
  if (result.status === 404) return "this survey no longer exists. Nothing was stored.";
  return `${result.data.detail || "the survey refused these answers"}. Nothing was stored.`;
}

function settle(result, body) {
  if (result.ok) {
    store(sentKey, true);
    forget(pendingKey);
    const many = body.answers.length > 1;
    const sent = body.answers.map((a, i) => `${many ? `question ${i + 1}: ` : ""}${a.value ? "YES" : "NO"}`);
    statusLine.textContent = `Sent — ${sent.join(", ")}. Only these randomized answers left this device.`;
    root.classList.add("is-sent");
    $("[data-after]").hidden = false;
  } else if (retryable(result)) {
    statusLine.textContent = "Your answers could not be sent. They are kept on this device, already randomized: try again when you are online.";
    retryButton.hidden = false;
  } else {
    forget(pendingKey);
    statusLine.textContent = `Not sent: ${refusal(result)}`;
  }
}

function explain(question, outcome) {
  const [first, second] = question.steps;
  const shown = (step, won) => `${step.dataset.name} showed ${won ? step.dataset.win : step.dataset.lose}`;
  const meaning = (step, won) => (won ? step.dataset.ifWin : step.dataset.ifLose);
  if (!second || outcome.coins[0]) {
    return `${capitalize(shown(first, outcome.coins[0]))}, so ${meaning(first, outcome.coins[0])} was sent. It could just as well have been the coins' choice: nobody can tell which.`;
  }
  return `${capitalize(shown(first, false))}, so ${second.dataset.name} decided: it showed ${outcome.coins[1] ? second.dataset.win : second.dataset.lose}, so ${meaning(second, outcome.coins[1])} was sent, whatever your true answer.`;
}

const capitalize = (text) => text.charAt(0).toUpperCase() + text.slice(1);

function reveal(question, outcome) {
  const result = question.el.querySelector("[data-result]");
  result.querySelector("[data-sent]").textContent = outcome.report === 1 ? "YES" : "NO";
  result.querySelector("[data-why]").textContent = explain(question, outcome);
  result.hidden = false;
  question.steps.forEach((step, i) => {
    step.dataset.face = outcome.coins[i] ? "win" : "lose";
    step.textContent = outcome.coins[i] ? step.dataset.win : step.dataset.lose;
  });
}

function lock() {
  flipButton.disabled = true;
  flipButton.hidden = true;
  $("[data-hint]").hidden = true;
  for (const button of root.querySelectorAll("[data-truth]")) button.disabled = true;
}

/** Commit, flip, send: one step with no way back, the same whichever way the coins fall. */
async function flipAndSend() {
  lock();
  const next = cryptoSource();
  const outcomes = questions.map((q) => reportFor(q, next));
  const body = {
    submission_id: uuid4(next),
    answers: questions.map((q, i) => ({ question: q.id, value: outcomes[i].report })),
    design_version: designVersion,
  };
  if (root.dataset.invite) body.invite = root.dataset.invite;
  store(pendingKey, body);
  const first = post(body);
  root.classList.add("is-flipping");
  statusLine.textContent = "Flipping and sending…";
  await pause(FLIP_MS);
  root.classList.remove("is-flipping");
  questions.forEach((q, i) => reveal(q, outcomes[i]));
  statusLine.textContent = "Sending…";
  settle(await deliver(body, first), body);
}

async function resend() {
  const body = recall(pendingKey);
  retryButton.hidden = true;
  $("[data-resend]").disabled = true;
  statusLine.textContent = "Sending again with the same answers…";
  const result = await deliver(body, post(body));
  if (result.ok) {
    $("[data-pending]").hidden = true;
    $("[data-already]").hidden = false;
  }
  settle(result, body);
}

function forgetAll() {
  for (const key of Object.keys(localStorage)) {
    if (key.startsWith(prefix)) localStorage.removeItem(key);
  }
  window.location.reload();
}

$("[data-paper]").hidden = true;
$("[data-forget-box]").hidden = false;
for (const question of questions) {
  for (const button of question.el.querySelectorAll("[data-truth]")) {
    button.addEventListener("click", () => choose(question, Number(button.dataset.truth)));
  }
}
flipButton.addEventListener("click", flipAndSend);
retryButton.addEventListener("click", resend);
$("[data-resend]").addEventListener("click", resend);
$("[data-forget]").addEventListener("click", forgetAll);
if (recall(sentKey)) {
  $("[data-already]").hidden = false;
} else if (recall(pendingKey)) {
  $("[data-pending]").hidden = false;
} else {
  $("[data-digital]").hidden = false;
}
