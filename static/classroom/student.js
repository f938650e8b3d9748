// Classroom additions to the respondent page: "answer received", whether answering is
// locked, and the class result once the instructor reveals it. This script never sees a
// true answer: it only notices that respond.js has sent something, and holds the "Flip and
// send" press until it has checked that answering is open.
const box = document.querySelector("[data-classroom-status]");
const POLL_MS = 1000 * (Number(box.dataset.pollSeconds) || 5); // the server says how often
const root = document.querySelector("[data-respond]"); // absent on the "not open" page
const body = box.querySelector("[data-status-body]");
const received = box.querySelector("[data-received]");
const newRound = box.querySelector("[data-new-round]");
const refused = box.querySelector("[data-refused]");
const round = Number(box.dataset.round);
const flip = root?.querySelector("[data-flip]");
// While answering is locked, the top of the page and the greyed button say so.
const lockedNotes = root ? [root.querySelector("h1"), flip].filter(Boolean).map(lockedNote) : [];
let shown = "";
let open = null;
let letThrough = false;

function answeredThisRound() {
  try {
    return localStorage.getItem(`deniable:v1:${root.dataset.slug}:sent:r${round}`) !== null;
  } catch {
    return false;
  }
}

function follow(state) {
  // A lecture's sequence: the instructor stepped to another question, go there.
  const current = state.dataset.current;
  if (current && current !== window.location.pathname) {
    window.location.assign(current);
    return;
  }
  open = state.dataset.open === "1";
  // A page opened while answering was locked has no question: it reloads once it opens.
  if (!root && open) window.location.reload();
  if (!root) return;
  root.classList.toggle("is-paused", !open);
  const locked = state.querySelector("[data-session-state]")?.textContent.trim() ?? "";
  for (const note of lockedNotes) {
    note.textContent = locked;
    note.hidden = open || !locked;
  }
  flip?.setAttribute("aria-disabled", String(!open));
  if (open) refused.hidden = true;
  // A new round asks again: once this device has answered, reload to get the new round's
  // question (respond.js keeps the same randomized report, whatever the true answer).
  if (Number(state.dataset.round) > round) {
    if (!received.hidden) window.location.reload();
    newRound.hidden = false;
  }
}

function lockedNote(neighbour) {
  const note = document.createElement("p");
  note.className = "notice locked-note";
  note.dataset.lockedNote = "";
  note.hidden = true;
  if (neighbour === flip) neighbour.before(note);
  else neighbour.after(note);
  return note;
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
    if (body.firstElementChild) follow(body.firstElementChild);
  } catch {
    // Offline for a moment: try again on the next tick.
  }
}

async function tick() {
  await refresh();
  setTimeout(tick, POLL_MS);
}

// "Flip and send" goes through only once a fresh status says answering is open; while it
// is locked the press is refused here, before any coin is flipped, and says why.
flip?.addEventListener(
  "click",
  async (event) => {
    if (letThrough) {
      letThrough = false;
      return;
    }
    event.preventDefault();
    event.stopImmediatePropagation();
    await refresh();
    if (open) {
      letThrough = true;
      flip.click();
    } else {
      refused.hidden = false;
      refused.scrollIntoView({ block: "nearest" });
    }
  },
  { capture: true },
);

if (root) {
  received.hidden = !answeredThisRound();
  new MutationObserver(() => {
    if (root.classList.contains("is-sent")) received.hidden = false;
  }).observe(root, { attributes: true, attributeFilter: ["class"] });
}
tick();
