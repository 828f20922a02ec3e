// The live page: follows the session its address names (/live/{id}) with the LiveDelta client
// and shows it with the DOM list, whatever its items are (scalars, objects by the session's
// idKey, sections). It says why it is not live, and stops on what retrying cannot fix.
// A token may come in the address's fragment (/live/{id}#token=...), which is never sent to a
// server, or in the cookie the server names (--auth-cookie).
import { LiveDeltaClient } from "/clients/livedelta.js";
import { LiveList } from "/clients/dom.js";

const id = decodeURIComponent(location.pathname.split("/").pop());
const fragment = new URLSearchParams(location.hash.slice(1));
const token = fragment.get("token") ?? undefined;
const client = new LiveDeltaClient("", { token, credentials: "same-origin" });
const items = document.getElementById("items");
const viewport = document.getElementById("viewport");
const spacer = document.getElementById("spacer");
// A sectioned session's rows are made as their sections come into view (see live.css).
const list = new LiveList(items, { lazy: true, rowHeight: 41 });
const state = document.getElementById("state");
const problem = document.getElementById("problem");
const seen = document.body.dataset;
document.getElementById("session").textContent = id;

function say(name, text) {
  state.dataset.state = name;
  state.textContent = text ?? name;
  seen.state = name;
}

function explain(text) {
  problem.hidden = !text;
  problem.textContent = text ?? "";
}

/** Why following stopped, as a reader of the page needs it. */
function reason(error) {
  if (error.code === "unusable_event") return `This page could not show the ${error.event} at version ${error.version ?? "–"}: ${error.cause?.message ?? error.message}. Reload to read the session afresh.`;
  switch (error.status) {
    case 404: return `There is no session "${id}" (or it expired). Create it, then reload this page.`;
    case 401: return `The token is missing or was refused: ${error.message}`;
    case 403: return `The token does not reach this session: ${error.message}`;
    default: return `Following stopped: ${error.message}`;
  }
}

// A flat session is shown as a virtual list: the page follows a window of the rows in view
// (and as many again around them), placed where those rows are in a spacer as tall as the
// whole list, and moves the window as the reader scrolls (one small delta, never the list).
// A million rows cost the page what a hundred do. A sectioned session (sections vary in
// height) and a session refused a window (400) are followed whole.
const ROW = 32; // px a row takes: live.css makes rows 28 px high, 4 px apart
const HELD = 120; // rows the window holds
const TALLEST = 30_000_000; // px: Chromium draws no element taller than 2^25 px
let windowed = true;
let follower = null;
let moving = null;

/** Where the viewport is in the list, in px as if every row were drawn. */
function scrolled(total) {
  const full = total * ROW;
  const height = Math.min(full, TALLEST);
  if (spacer.style.height !== `${height}px`) spacer.style.height = `${height}px`;
  if (full <= TALLEST) return viewport.scrollTop;
  // Past the tallest element, the scroll bar stands for all the rows in proportion.
  const room = Math.max(1, height - viewport.clientHeight);
  return (Math.min(viewport.scrollTop, room) / room) * (full - viewport.clientHeight);
}

/** Puts the window's rows where they are in the list, and moves the window to the rows in view. */
function place() {
  const array = follower?.array;
  if (!windowed || !array?.window) return;
  const { offset, count, total } = array.window;
  const at = scrolled(total);
  items.style.top = `${viewport.scrollTop + offset * ROW - at}px`;
  Object.assign(seen, { offset, rows: count, total });
  const first = Math.floor(at / ROW);
  const visible = Math.ceil(viewport.clientHeight / ROW);
  seen.top = first;
  const asked = follower.options.window;
  const last = Math.min(total, first + visible);
  if (asked && asked.offset <= first && last <= asked.offset + asked.limit) return;
  clearTimeout(moving);
  // Asked once the scrolling pauses a moment, not for every frame of it.
  moving = setTimeout(() => {
    const start = Math.max(0, Math.min(first - Math.floor((HELD - visible) / 2), total - HELD));
    if (start !== follower.options.window?.offset) follower.moveWindow({ offset: start, limit: HELD });
  }, 60);
}

viewport.addEventListener("scroll", () => requestAnimationFrame(place), { passive: true });

function follow() {
  document.body.classList.toggle("windowed", windowed);
  const mine = client.live(id, {
    format: "keyed",
    ...(windowed ? { window: { offset: 0, limit: HELD } } : {}),
    onChange,
    onState,
    onEnd,
    onStop: (error) => {
      if (windowed && error.status === 400) {
        windowed = false;
        items.style.top = "";
        spacer.style.height = "";
        follow();
        return;
      }
      stopped(error);
    },
  });
  follower = mine;
  // Said once this follower has let go for good (stopped, ended or closed): it asks nothing more.
  seen.asking = "yes";
  const letGo = () => {
    if (follower === mine) seen.asking = "no";
  };
  mine.done.then(letGo, letGo);
}

function onChange(array, event) {
  if (windowed && array.sectioned) {
    follower.close();
    windowed = false;
    follow();
    return;
  }
  // How long drawing took, for anyone checking the page's speed (the browser test prints it).
  const drawing = performance.now();
  list.show(array);
  seen.drawn = Math.round(performance.now() - drawing);
  place();
  explain(null);
  // How the list got where it is, for anyone checking the page (and its test): resets and
  // deltas count events and advanced the versions they moved it by; first is the version the
  // page started at, skipped the versions later resets jumped over.
  if (event.type === "reset") {
    seen.resets = Number(seen.resets ?? 0) + 1;
    if (event.reason) seen.resetBecause = event.reason;
    // The page says why it shows the list afresh where the reader would not expect it.
    if (event.reason === "replaced") explain("The session was replaced (put again): the list shows the new one.");
    if (seen.shown === undefined) seen.first = array.version;
    else seen.skipped = Number(seen.skipped ?? 0) + Math.max(0, array.version - Number(seen.shown));
  } else {
    seen.deltas = Number(seen.deltas ?? 0) + 1;
    // A window that reconnects is caught up by one delta over every version it missed.
    seen.advanced = Number(seen.advanced ?? 0) + Math.max(0, array.version - Number(seen.shown));
  }
  seen.shown = array.version;
  seen.version = array.version;
  document.getElementById("version").textContent = array.version;
}

function onState(name, detail) {
  if (name === "reconnecting") {
    say(name, `reconnecting in ${Math.round(detail.delay / 100) / 10} s`);
    explain(detail.error ? `Not live: ${detail.error.message}. The list shows version ${seen.version ?? "–"}.` : null);
  } else if (name !== "stopped" && name !== "ended") {
    say(name);
  }
}

function onEnd(why) {
  say("ended", `ended: ${why}`);
  explain(`The session was ${why}: nothing more will come. The list shows its last version.`);
}

function stopped(error) {
  say("stopped", error.status === 404 ? "no such session" : "stopped");
  seen.stopped = error.code;
  explain(reason(error));
}

follow();
