// Classroom additions to the respondent page: "answer received", whether answering is
// locked, and the class result once the instructor reveals it. This script never sees a
// true answer: it only notices that respond.js has sent something.
const POLL_MS = 5000; // 500 phones → 100 requests/s; the projector polls every 2 s
const box = document.querySelector("[data-classroom-status]");
const root = document.querySelector("[data-respond]");
const body = box.querySelector("[data-status-body]");
const received = box.querySelector("[data-received]");
const newRound = box.querySelector("[data-new-round]");
const round = Number(box.dataset.round);
let shown = "";

function answeredThisRound() {
  try {
    return localStorage.getItem(`deniable:v1:${root.dataset.slug}:sent:r${round}`) !== null;
  } catch {
    return false;
  }
}

async function refresh() {
  try {
    const response = await fetch(box.dataset.statusUrl, {
      cache: "no-cache", // revalidate with the ETag: an unchanged status costs a 304
      credentials: "omit",
      referrerPolicy: "no-referrer",
    });
    const html = response.ok ? await response.text() : shown;
    if (html !== shown) {
      body.innerHTML = html;
      shown = html;
    }
    // A new round asks again: once this device has answered, reload to get the new round's
    // question (respond.js keeps the same randomized report for the same true answer).
    if (Number(body.firstElementChild?.dataset.round || round) > round) {
      if (!received.hidden) window.location.reload();
      newRound.hidden = false;
    }
  } catch {
    // Offline for a moment: try again on the next tick.
  } finally {
    setTimeout(refresh, POLL_MS);
  }
}

received.hidden = !answeredThisRound();
new MutationObserver(() => {
  if (root.classList.contains("is-sent")) received.hidden = false;
}).observe(root, { attributes: true, attributeFilter: ["class"] });
refresh();
