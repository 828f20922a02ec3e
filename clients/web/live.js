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
const list = new LiveList(document.getElementById("items"));
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
  switch (error.status) {
    case 404: return `There is no session "${id}" (or it expired). Create it, then reload this page.`;
    case 401: return `The token is missing or was refused: ${error.message}`;
    case 403: return `The token does not reach this session: ${error.message}`;
    default: return `Following stopped: ${error.message}`;
  }
}

client.live(id, {
  format: "keyed",
  onChange: (array, event) => {
    list.show(array);
    explain(null);
    // How the list got where it is, for anyone checking the page (and its test): resets and
    // deltas count events; first is the version the page started at, skipped the versions
    // later resets jumped over.
    if (event.type === "reset") {
      seen.resets = Number(seen.resets ?? 0) + 1;
      if (seen.shown === undefined) seen.first = array.version;
      else seen.skipped = Number(seen.skipped ?? 0) + Math.max(0, array.version - Number(seen.shown));
    } else {
      seen.deltas = Number(seen.deltas ?? 0) + 1;
    }
    seen.shown = array.version;
    seen.version = array.version;
    document.getElementById("version").textContent = array.version;
  },
  onState: (name, detail) => {
    if (name === "reconnecting") {
      say(name, `reconnecting in ${Math.round(detail.delay / 100) / 10} s`);
      explain(detail.error ? `Not live: ${detail.error.message}. The list shows version ${seen.version ?? "–"}.` : null);
    } else if (name !== "stopped" && name !== "ended") {
      say(name);
    }
  },
  onEnd: (why) => {
    say("ended", `ended: ${why}`);
    explain(`The session was ${why}: nothing more will come. The list shows its last version.`);
  },
  onStop: (error) => {
    say("stopped", error.status === 404 ? "no such session" : "stopped");
    seen.stopped = error.code;
    explain(reason(error));
  },
});
