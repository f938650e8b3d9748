// Wires rr.js to the respondent page. The true answers and the coins live only in this
// page's memory; this device's localStorage keeps only what was sent (each question's
// randomized report), and only those reports and a random submission id are ever sent.
// Every kind of question goes through rr.js's one `sample(kind, name, params, value)`.
import { checkParams, cryptoSource, drawBallot, sample, sampleOnBallot, shuffle, uuid4 } from "./rr.js";

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
// Every sentence this script writes comes from the page, in the survey's language.
const SENTENCES = JSON.parse(document.getElementById("respond-strings").textContent);
const t = (key, values = {}) => SENTENCES[key].replace(/\{(\w+)\}/g, (_, name) => String(values[name]));
const questions = Array.from(root.querySelectorAll("[data-question]"), (el) => ({
  el,
  id: Number(el.dataset.question),
  kind: el.dataset.kind,
  design: el.dataset.design,
  params: JSON.parse(el.dataset.params),
  declaration: JSON.parse(el.dataset.declaration),
  // Crosswise: "same or different?" is already the report; nothing is drawn.
  reportIsAnswer: "reportIsAnswer" in el.dataset,
  // The respondent also answers an innocuous question (kept here, never sent as such).
  asksInnocuous: "asksInnocuous" in el.dataset,
  innocuous: null,
  // A split ballot: the share asked directly, and this device's draw (see drawBallots).
  directShare: el.dataset.directShare ? Number(el.dataset.directShare) : null,
  ballot: null,
  truth: null,
  skipped: false,
  // "12:0,2": shown only when question 12 (asked directly) got answer 0 or 2.
  showIf: el.dataset.showIf ? { question: Number(el.dataset.showIf.split(":")[0]), in: el.dataset.showIf.split(":")[1].split(",").map(Number) } : null,
}));
const flipButton = $("[data-flip]");
const statusLine = $("[data-status]");
const retryButton = $("[data-retry]");
// Invite-only surveys: the invite is exchanged once for a one-time credential that cannot
// be traced to it (credential.js); the answers are sent with the credential instead.
let credential = null;
const deviceStorage = (() => {
  try {
    return localStorage;
  } catch {
    return null;
  }
})();

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

// Memos of earlier versions of this page were keyed by the true answer and kept the coins.
const OLD_MEMO = /^deniable:v1:([^:]+):q(\d+):d(\d+):[01]$/;

/** The memo's key: per question and design version, never per true answer. */
const memoKey = (question) => `report:q${question.id}:d${designVersion}`;

/** The report this device already made for the question (with its arm, for a design
 * with arms), or null. */
function memo(question) {
  const kept = recall(memoKey(question));
  return kept && Number.isInteger(kept.report) ? kept : null;
}

const memoized = (question) => memo(question)?.report ?? null;

/**
 * The permanent randomized response for (question, design version) on this device: the
 * report made the first time, whatever the true answer is now. Only the report is kept;
 * the coins are shown once and forgotten with the page.
 */
function reportFor(question, next) {
  if (question.skipped) return { report: null, coins: [] }; // a skip is sent as it is
  const kept = memo(question);
  if (kept !== null) return { report: kept.report, arm: kept.arm, coins: null };
  let outcome;
  if (question.ballot !== null) outcome = sampleOnBallot(question.ballot, question.kind, question.design, question.params, question.truth, next);
  else if (question.reportIsAnswer) outcome = { report: question.truth, coins: [] };
  else outcome = sample(question.kind, question.design, question.params, trueValue(question), next);
  // The arm is drawn before, and independently of, the true answer: kept with the report.
  store(memoKey(question), outcome.arm === undefined ? { report: outcome.report } : { report: outcome.report, arm: outcome.arm });
  return outcome;
}

/** The true value the design randomizes: with an innocuous question, sensitive + 2 · innocuous. */
const trueValue = (question) => (question.asksInnocuous ? question.truth + 2 * question.innocuous : question.truth);

/**
 * Rewrite memos of earlier versions (all surveys on this device): their key ended in the
 * true answer and their value held the coins. Only a report they all agree on is kept.
 */
function migrateOldMemos() {
  const reports = new Map();
  try {
    for (const key of Object.keys(localStorage)) {
      const match = OLD_MEMO.exec(key);
      if (!match) continue;
      let report = null;
      try {
        report = JSON.parse(localStorage.getItem(key)).report;
      } catch {
        // Unreadable: dropped like the rest.
      }
      localStorage.removeItem(key);
      const target = `deniable:v1:${match[1]}:report:q${match[2]}:d${match[3]}`;
      const seen = reports.get(target);
      reports.set(target, seen === undefined || seen === report ? report : null);
    }
    for (const [key, report] of reports) {
      if ((report === 0 || report === 1) && localStorage.getItem(key) === null) {
        localStorage.setItem(key, JSON.stringify({ report }));
      }
    }
  } catch {
    // Storage disabled: there is nothing to migrate.
  }
}

/**
 * A split ballot is drawn as the page opens, before any answer (crypto RNG, independent
 * of everything the respondent does), and kept on this device like a report: reloading
 * the page cannot change how the question is asked. The page then says which ballot it is.
 */
function drawBallots() {
  for (const question of questions.filter((q) => q.directShare !== null)) {
    const key = `ballot:q${question.id}:d${designVersion}`;
    const kept = memo(question)?.arm ?? recall(key);
    question.ballot = kept === 0 || kept === 1 ? kept : drawBallot(question.directShare);
    store(key, question.ballot);
    showBallot(question);
  }
}

/** The ballot's notice; on the direct ballot no coins and no ε promise are shown. */
function showBallot(question) {
  const direct = question.ballot === 1;
  question.el.querySelector(`[data-ballot-note="${question.ballot}"]`).hidden = false;
  question.el.classList.toggle("is-direct", direct);
  for (const hidden of question.el.querySelectorAll(".privacy-line:not(.ballot-note), .steps")) hidden.hidden ||= direct;
  const label = question.el.querySelector("[data-direct-label]");
  if (direct && label) label.textContent = label.dataset.directLabel;
}

/** Say, before anything is sent, that a question's earlier report will be sent again. */
function announceMemo(question) {
  if (memoized(question) === null) return;
  const steps = question.el.querySelector(".steps");
  if (steps) steps.hidden = true;
  const note = document.createElement("p");
  note.className = "memo-note";
  note.textContent = t("memo");
  question.el.querySelector("[data-result]").before(note);
}

function choose(question, value) {
  setSkipped(question, false);
  question.truth = value;
  for (const button of question.el.querySelectorAll("[data-truth]")) {
    const chosen = Number(button.dataset.truth) === value;
    if (button.getAttribute("role") === "radio") {
      button.setAttribute("aria-checked", String(chosen));
      button.tabIndex = chosen || (value === null && !button.previousElementSibling.dataset.truth) ? 0 : -1;
    } else {
      button.setAttribute("aria-pressed", String(chosen));
    }
  }
  updateFlipButton();
}

/** The true answer to the innocuous question (null clears it). */
function chooseInnocuous(question, value) {
  setSkipped(question, false);
  question.innocuous = value;
  for (const button of question.el.querySelectorAll("[data-innocuous]")) {
    button.setAttribute("aria-pressed", String(Number(button.dataset.innocuous) === value));
  }
  updateFlipButton();
}

const answered = (q) => q.skipped || (q.truth !== null && (!q.asksInnocuous || q.innocuous !== null));

/** A question with a condition is shown only while its (direct) question has one of its answers. */
function shown(question) {
  if (!question.showIf) return true;
  const target = questions.find((q) => q.id === question.showIf.question);
  return Boolean(target) && shown(target) && !target.skipped && question.showIf.in.includes(target.truth);
}

const updateFlipButton = () => {
  for (const q of questions) q.el.hidden = !shown(q);
  const asked = questions.filter(shown);
  const done = asked.filter(answered).length;
  const progress = $("[data-progress]");
  progress.max = asked.length;
  progress.value = done;
  $("[data-progress-text]").textContent = t("progress", { done, total: asked.length });
  flipButton.disabled = done < asked.length;
};

function setSkipped(question, skipped) {
  question.skipped = skipped;
  const box = question.el.querySelector("[data-skip]");
  if (box) box.checked = skipped;
}

/** "Prefer not to answer" clears the answer given so far; choosing an answer undoes it. */
function skip(question, skipping) {
  if (skipping) {
    choose(question, null);
    chooseInnocuous(question, null);
    const input = question.el.querySelector("[data-number]");
    if (input) {
      input.value = "";
      readNumber(question, input);
    }
  }
  setSkipped(question, skipping);
  updateFlipButton();
}

/** Arrow keys move the choice within a radio group (and Home/End to its ends). */
function radioKeys(question, event) {
  const radios = Array.from(question.el.querySelectorAll('[role="radio"]'));
  const at = radios.indexOf(event.target);
  const moves = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1, Home: -at, End: radios.length - 1 - at };
  if (at < 0 || !(event.key in moves)) return;
  event.preventDefault();
  const target = radios[(at + moves[event.key] + radios.length) % radios.length];
  choose(question, Number(target.dataset.truth));
  target.focus();
}

/** A whole number within the bounds, or null with the reason shown beside the field. */
function readNumber(question, input) {
  const error = question.el.querySelector("[data-number-error]");
  const text = input.value.trim();
  if (text !== "") setSkipped(question, false);
  const value = Number(text);
  const fits = /^-?\d+$/.test(text) && value >= Number(input.min) && value <= Number(input.max);
  question.truth = fits ? value : null;
  error.hidden = fits || text === "";
  error.textContent = t("numberRange", { min: input.min, max: input.max });
  input.setAttribute("aria-invalid", String(!error.hidden));
  const range = input.getAttribute("aria-describedby").split(" ")[0];
  input.setAttribute("aria-describedby", error.hidden ? range : `${range} ${error.id}`);
  updateFlipButton();
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
    const reason = result.status ? t("serverSaid", { status: result.status }) : t("noConnection");
    statusLine.textContent = t("retrying", { reason, seconds: Math.round(seconds) });
    await pause(seconds * 1000);
    result = await post(body);
  }
  return result;
}

function refusal(result) {
  if (result.status === 403) return t("refusedInvite");
  if (result.status === 409 && result.data.design_version) return t("refusedChanged");
  if (result.status === 409) return t("refusedClosed");
  if (result.status === 404) return t("refusedGone");
  return t("refusedOther");
}

function settle(result, body) {
  if (result.ok) {
    store(sentKey, true);
    forget(pendingKey);
    const many = body.answers.length > 1;
    const sent = body.answers.map((a) => {
      const at = questions.findIndex((q) => q.id === a.question);
      const report = label(questions[at], a.value);
      return many ? t("numbered", { n: at + 1, report }) : report;
    });
    // A directly asked answer (a background question, a split ballot's direct ballot) is
    // not randomized: the sentence must not say it was.
    const asGiven = body.answers.some((a) => {
      const question = questions.find((q) => q.id === a.question);
      return a.value !== null && (question.el.classList.contains("is-direct") || question.ballot === 1);
    });
    const reports = sent.join(", ");
    statusLine.textContent = asGiven ? t("sentAsGiven", { reports }) : t("sent", { reports });
    root.classList.add("is-sent");
    // Only randomized answers are protected by the coins: the sentence says which were.
    $(`[data-after="${asGiven ? "as-given" : "randomized"}"]`).hidden = false;
    showCompletion();
  } else if (retryable(result)) {
    statusLine.textContent = t("offline");
    retryButton.hidden = false;
  } else {
    forget(pendingKey);
    statusLine.textContent = t("notSent", { reason: refusal(result) });
  }
}

/**
 * A panel's completion link, its {NAME} placeholders filled from this page's own address.
 * Here only: those parameters (a panel id) are never sent, stored or remembered.
 */
function showCompletion() {
  const box = $("[data-completion]");
  if (!box) return;
  const params = new URLSearchParams(window.location.search);
  const fill = (_, name) => encodeURIComponent(params.get(name) ?? "");
  box.querySelector("[data-completion-link]").href = box.dataset.completion.replace(/\{(\w+)\}/g, fill);
  box.hidden = false;
}

/** How a report reads: the option's text, the number, same/different or yes/no. */
function label(question, report) {
  if (report === null) return t("skipped");
  if (question.kind === "number") return String(report);
  const button = question.el.querySelector(`[data-truth="${report}"]`);
  const text = button ? (button.dataset.label ?? button.textContent.trim()) : String(report);
  return question.kind === "binary" ? text.toUpperCase() : `“${text}”`;
}

/**
 * Why this report protects, in words that depend on the design alone: never on the true
 * answer, nor on how the coins fell (SPEC §2, invariant 8).
 */
function because(question, outcome) {
  if (!outcome.coins) return t("again");
  if (question.reportIsAnswer) return t("crosswise");
  if (!outcome.coins.length) return t("direct");
  if (question.kind === "number") return t("noise");
  return question.kind === "binary" ? t("coins") : t("drawn");
}

/**
 * Once sent, the question shows the report and why it protects, and nothing more: the
 * chance devices give way to the report (they would show how the coins fell) and the true
 * answer is no longer selected, so a glance at the screen learns only what was sent.
 */
function reveal(question, outcome) {
  for (const steps of question.el.querySelectorAll(".steps")) steps.hidden = true;
  const result = question.el.querySelector("[data-result]");
  result.querySelector("[data-sent]").textContent = label(question, outcome.report);
  const skipped = outcome.report === null;
  result.querySelector("[data-why]").textContent = skipped ? t("skipWhy") : because(question, outcome);
  result.hidden = false;
}

/** Nothing can be changed once the coins are flipped; the true answer is wiped off. */
function lock() {
  flipButton.disabled = true;
  flipButton.hidden = true;
  $("[data-hint]").hidden = true;
  for (const control of root.querySelectorAll("[data-truth], [data-innocuous], [data-number], [data-skip]")) control.disabled = true;
}

function forgetTruths() {
  for (const question of questions) {
    question.truth = null;
    question.innocuous = null;
    for (const button of question.el.querySelectorAll("[data-innocuous]")) button.setAttribute("aria-pressed", "false");
    for (const button of question.el.querySelectorAll("[data-truth]")) {
      const radio = button.getAttribute("role") === "radio";
      button.setAttribute(radio ? "aria-checked" : "aria-pressed", "false");
      if (radio) button.tabIndex = button.previousElementSibling?.matches("[data-truth]") ? -1 : 0;
    }
    const input = question.el.querySelector("[data-number]");
    if (input) {
      input.value = "";
      input.removeAttribute("aria-invalid");
    }
  }
}

function exchangeInvite() {
  return import("./credential.js").then((module) =>
    module.obtainCredential({
      slug: root.dataset.slug,
      invite: root.dataset.invite,
      url: root.dataset.credentialUrl,
      key: module.publicKey(root.dataset.keyN, root.dataset.keyE),
      storage: deviceStorage,
    }),
  );
}

/**
 * The invite is used up only when the respondent presses Start, never as the page opens:
 * a link scanner or a preview that fetches the page (even running its scripts) leaves the
 * invite for its respondent. A spent invite is said at the top, before any question.
 */
async function startWithInvite() {
  const button = $("[data-start-button]");
  const status = $("[data-start-status]");
  button.disabled = true;
  status.textContent = t("starting");
  credential = exchangeInvite();
  try {
    await credential;
  } catch (error) {
    if (error.status === 403) {
      $("[data-start]").hidden = true;
      $("[data-spent]").textContent = t("inviteSpent");
      $("[data-spent]").hidden = false;
    } else {
      credential = null;
      button.disabled = false;
      status.textContent = t("startFailed");
    }
    return;
  }
  $("[data-start]").hidden = true;
  $("[data-digital]").hidden = false;
  root.querySelector("[data-question] button, [data-question] input")?.focus();
}

/** Invite-only: show the questions at once if this device already holds a pass, else Start. */
async function offerStart() {
  const { keptCredential } = await import("./credential.js");
  if (keptCredential(deviceStorage, root.dataset.slug)) {
    credential = exchangeInvite(); // resolves with the kept pass; nothing is sent
    $("[data-digital]").hidden = false;
    return;
  }
  $("[data-start-button]").addEventListener("click", startWithInvite);
  $("[data-start]").hidden = false;
}

/** A spent (or refused) credential is of no more use on this device. */
async function dropCredential(body, result) {
  if (body.credential && (result.ok || !retryable(result))) {
    (await import("./credential.js")).forgetCredential(deviceStorage, root.dataset.slug);
  }
}

/** What is sent for a question: its report, and the arm of a design with arms. */
function answerOf(question, outcome) {
  const answer = { question: question.id, value: outcome.report };
  if (Number.isInteger(outcome.arm) && outcome.report !== null) answer.arm = outcome.arm;
  return answer;
}

/** Commit, flip, send: one step with no way back, the same whichever way the coins fall. */
async function flipAndSend() {
  const pass = await credential; // settled before the questions were shown
  const broken = questions.flatMap((q) => checkParams(q.declaration, q.params));
  if (broken.length) {
    statusLine.textContent = t("badSettings", { problems: broken.join("; ") });
    return;
  }
  lock();
  const next = cryptoSource();
  const asked = questions.filter(shown); // hidden questions send nothing at all
  const outcomes = asked.map((q) => reportFor(q, next));
  forgetTruths();
  const body = {
    submission_id: uuid4(next),
    answers: asked.map((q, i) => answerOf(q, outcomes[i])),
    design_version: designVersion,
  };
  if (pass) body.credential = pass;
  store(pendingKey, body);
  const first = post(body);
  if (outcomes.some((outcome) => outcome.coins?.length)) {
    root.classList.add("is-flipping");
    statusLine.textContent = t("flipping");
    await pause(FLIP_MS);
    root.classList.remove("is-flipping");
  }
  asked.forEach((q, i) => reveal(q, outcomes[i]));
  statusLine.textContent = t("sending");
  const result = await deliver(body, first);
  settle(result, body);
  dropCredential(body, result);
}

async function resend() {
  const body = recall(pendingKey);
  retryButton.hidden = true;
  $("[data-resend]").disabled = true;
  statusLine.textContent = t("sendingAgain");
  const result = await deliver(body, post(body));
  if (result.ok) {
    $("[data-pending]").hidden = true;
    $("[data-already]").hidden = false;
  }
  settle(result, body);
  dropCredential(body, result);
}

/** Show the questions: at once, or on an invite-only survey through its Start button. */
function showQuestions() {
  if (root.dataset.invite) offerStart();
  else $("[data-digital]").hidden = false;
}

/** With a consent text: the questions come, and anything is sent, only after "I agree". */
function waitForConsent() {
  const agree = $("[data-agree]");
  agree.hidden = false;
  agree.addEventListener("click", () => {
    agree.hidden = true;
    $("[data-agreed]").hidden = false;
    showQuestions();
    const first = $("[data-question] h2");
    first.tabIndex = -1;
    first.focus();
  });
}

// Shuffled here only: answers name question and option, so what is sent never shows the
// order. A conditional question stays right after the one it depends on.
function shuffleShown(next = cryptoSource()) {
  for (const box of root.querySelectorAll("[data-shuffle]")) {
    shuffle(box.querySelectorAll("[data-truth]"), next).forEach((button, i) => {
      box.append(button);
      button.tabIndex = i ? -1 : 0;
      button.firstElementChild.textContent = i + 1;
    });
  }
  if (!("shuffleQuestions" in root.dataset)) return;
  const groups = new Map();
  for (const q of questions) {
    const group = (q.showIf && groups.get(q.showIf.question)) || [];
    group.push(q.el);
    groups.set(q.id, group);
  }
  for (const group of shuffle(new Set(groups.values()), next)) $(".send").before(...group);
}

function forgetAll() {
  for (const key of Object.keys(localStorage)) {
    if (key.startsWith(prefix)) localStorage.removeItem(key);
  }
  window.location.reload();
}

// The language links keep the link's parameters (a panel's id), which only this page reads.
for (const link of root.querySelectorAll(".languages a")) {
  const query = new URLSearchParams(location.search);
  query.set("lang", link.hreflang);
  link.search = query;
}
migrateOldMemos();
drawBallots();
shuffleShown();
questions.forEach(announceMemo);
updateFlipButton();
if (questions.every((q) => memoized(q) !== null)) flipButton.textContent = t("sendAgain");
$("[data-paper]").hidden = true;
$("[data-forget-box]").hidden = false;
for (const question of questions) {
  for (const button of question.el.querySelectorAll("[data-truth]")) {
    button.addEventListener("click", () => choose(question, Number(button.dataset.truth)));
  }
  for (const button of question.el.querySelectorAll("[data-innocuous]")) {
    button.addEventListener("click", () => chooseInnocuous(question, Number(button.dataset.innocuous)));
  }
  question.el.querySelector("[data-options]")?.addEventListener("keydown", (event) => radioKeys(question, event));
  const input = question.el.querySelector("[data-number]");
  input?.addEventListener("input", () => readNumber(question, input));
  const box = question.el.querySelector("[data-skip]");
  box?.addEventListener("change", () => skip(question, box.checked));
}
flipButton.addEventListener("click", flipAndSend);
retryButton.addEventListener("click", resend);
$("[data-resend]").addEventListener("click", resend);
$("[data-forget]").addEventListener("click", forgetAll);
if (recall(sentKey)) {
  $("[data-already]").hidden = false;
  showCompletion();
} else if (recall(pendingKey)) {
  $("[data-pending]").hidden = false;
} else if ($("[data-consent]")) {
  waitForConsent();
} else {
  showQuestions();
}
