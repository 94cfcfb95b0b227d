// The annotation app's browser side: the synchronised multi-view player, reviewer and admin
// actions, the red-team workflow (work.js: one piece of work, saved as typed). Every text from
// people or models is put in the page with textContent, never as HTML.
"use strict";

const csrf = (document.querySelector('meta[name="csrf"]') || {}).content || "";

// Every answer, a network failure included (status 0), comes back as {ok, status, data}: a
// fetch that cannot reach the server is never an unhandled rejection that shows nothing.
async function post(url, body, keepalive) {
  const options = { method: "POST", headers: { "X-CSRF-Token": csrf }, keepalive: Boolean(keepalive) };
  if (body instanceof FormData) {
    options.body = body;
  } else {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body || {});
  }
  let response;
  try {
    response = await fetch(url, options);
  } catch (e) {
    return { ok: false, status: 0, data: { error: "the server cannot be reached" } };
  }
  let data = {};
  try { data = await response.json(); } catch (e) { data = { error: response.statusText || "HTTP " + response.status }; }
  return { ok: response.ok, status: response.status, data };
}

function notice(text, bad) {
  const box = document.getElementById("notice");
  if (!box) return;
  box.textContent = text;
  box.hidden = false;
  box.classList.toggle("bad", Boolean(bad));
}

// One clock: every time the server sends (UTC, ISO 8601) is shown in the reader's local time
// with its zone, e.g. "14:03:22 CET" or "5 Mar 2025, 14:03:22 CET".
function localTime(stamp, withDate) {
  const when = new Date(stamp);
  if (!stamp || Number.isNaN(when.getTime())) return String(stamp || "");
  const parts = { hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short" };
  if (withDate) Object.assign(parts, { year: "numeric", month: "short", day: "numeric" });
  return when.toLocaleString([], parts);
}

function showLocalTimes(root) {
  root.querySelectorAll("time[data-local-time]").forEach((el) => {
    el.textContent = localTime(el.getAttribute("datetime"), true);
    el.title = el.getAttribute("datetime");  // the stored UTC stamp, on hover
  });
}

function errorText(data) {
  // a conflict (409) names the other save in the reader's clock, never the server's UTC stamp
  if (data.current && data.current.updated_at) return "conflict: " + conflictText(data.current) + ": reload to see it";
  if (typeof data.error === "string") return data.error;
  return JSON.stringify(data);
}

// who saved a piece of work in between, and when (the `current` of a 409), as a person reads it
function conflictText(current) {
  const who = current.updated_by || "someone";
  const did = current.given_again ? " gave this work out again" : " saved this";
  return who + did + " at " + localTime(current.updated_at, true) + " (version " +
    current.version + ") since you loaded it";
}

// ------------------------------------------------------------------------------ the player
// One control for every shown view; the views in a closed "other views" box are left alone (and
// not loaded) until it is opened, then they join at the first view's time.
function setUpPlayer(player) {
  const all = Array.from(player.querySelectorAll("video"));
  const play = player.querySelector("[data-play]");
  const seek = player.querySelector("[data-seek]");
  const time = player.querySelector("[data-time]");
  const label = player.querySelector("[data-play-label]") || play;
  if (!all.length) { if (play) play.disabled = true; return; }
  const master = all[0];
  const shown = () => all.filter((v) => v.isConnected && !v.closest("details:not([open])"));
  all.forEach((v) => v.addEventListener("error", () => {
    const note = document.createElement("p");
    note.className = "error";
    note.textContent = "cannot play " + decodeURIComponent(v.getAttribute("src"));
    v.replaceWith(note);
  }));
  play.addEventListener("click", () => {
    if (master.paused) {
      shown().forEach((v) => { v.currentTime = master.currentTime; v.play().catch(() => {}); });
      label.textContent = "pause";
    } else {
      all.forEach((v) => v.pause());
      label.textContent = "play";
    }
  });
  seek.addEventListener("input", () => {
    const t = (master.duration || 0) * seek.value / 1000;
    shown().forEach((v) => { v.currentTime = t; });
  });
  master.addEventListener("timeupdate", () => {
    if (master.duration) seek.value = Math.round(1000 * master.currentTime / master.duration);
    time.textContent = master.currentTime.toFixed(2) + " s";
    shown().forEach((v) => {  // keep every view on the master's clock
      if (v !== master && Math.abs(v.currentTime - master.currentTime) > 0.1) {
        v.currentTime = master.currentTime;
      }
    });
  });
  master.addEventListener("ended", () => { all.forEach((v) => v.pause()); label.textContent = "play"; });
  // click a view to enlarge it over the page (the same element: it stays in sync); click again,
  // or Esc (keys.js), to put it back
  all.forEach((v) => v.addEventListener("click", () => enlarge(v.closest("figure"))));
  const more = player.querySelector("[data-more-views]");
  if (more) more.addEventListener("toggle", () => {
    if (!more.open) { more.querySelectorAll("video").forEach((v) => v.pause()); return; }
    more.querySelectorAll("video").forEach((v) => {
      v.preload = "auto";
      v.currentTime = master.currentTime;
      if (!master.paused) v.play().catch(() => {});
    });
  });
}

function enlarge(figure) {
  const open = document.querySelector("figure.enlarged");
  if (open) open.classList.remove("enlarged");
  if (figure && figure !== open) figure.classList.add("enlarged");
  document.body.classList.toggle("has-enlarged", Boolean(document.querySelector("figure.enlarged")));
}

// ------------------------------------------------------------------------- caption review
function setUpCaptionReview(row) {
  row.querySelectorAll("[data-review]").forEach((button) => button.addEventListener("click", async () => {
    const body = {
      version: Number(row.dataset.version), status: button.dataset.review,
      comment: row.querySelector("[data-row-comment]").value,
    };
    const result = await post("/api/work/" + row.dataset.captionRow, body);
    if (result.ok) {
      row.dataset.version = result.data.version;
      row.querySelector("[data-row-status]").textContent = result.data.status;
      // only written work is reviewed: a caption sent back waits for its writer
      row.querySelector("[data-review=returned]").hidden = result.data.status === "returned";
      row.querySelector("[data-review=accepted]").hidden = result.data.status !== "submitted";
      notice(body.status === "returned" ? "sent back" : "accepted");
    } else {
      notice(errorText(result.data), true);
    }
  }));
}

// ---------------------------------------------------------------------------------- admin
function adminForm(selector, send, show) {
  const form = document.querySelector(selector);
  if (!form) return;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const result = await send(new FormData(form), event.submitter);
    const text = result.ok && show ? show(result.data) : JSON.stringify(result.data, null, 1);
    document.querySelector("[data-admin-result]").textContent = text;
    notice(result.ok ? "done" : errorText(result.data), !result.ok);
  });
}

function assignPlan(plan) {  // the plan as the command line prints it
  const lines = [(plan.dry_run ? "plan (nothing assigned yet): " : "assigned: ") +
    plan.kind + " items to " + plan.n + " each, " + plan.planned + " assignments"];
  const subjects = (n) => n + (n === 1 ? " object or video" : " objects or videos");
  plan.people.forEach((p) => lines.push("  " + p.name + " (" + p.role + "): +" + p.added +
    " items (" + subjects(p.subjects) + "), " + p.before + " -> " + p.after));
  return lines.join("\n");
}

function setUpAdmin() {
  adminForm("[data-admin-assign]", (f, submitter) => post("/api/admin/assign", {
    kind: f.get("kind"), n: f.get("n") ? Number(f.get("n")) : null, admins: f.get("admins") === "on",
    per_item: f.get("per_item") === "on", dry_run: Boolean(submitter && submitter.name === "dry_run"),
  }), assignPlan);
  adminForm("[data-admin-export]", (f) => post("/api/admin/export",
    { kind: f.get("kind"), user: f.get("user") || null, benchmark: f.get("benchmark") }));
  adminForm("[data-admin-import]", (f) => post("/api/admin/import", f));
  adminForm("[data-admin-delete]", (f) => post("/api/admin/items/" + encodeURIComponent(f.get("item")) + "/delete"));
}

// the admin page's people: add one, change a role, remove one; each answer says what it did
function givenBack(released) {
  const kinds = Object.entries(released || {});
  const total = kinds.reduce((sum, [, n]) => sum + n, 0);
  if (!total) return "no unfinished work of theirs given back";
  return total + (total === 1 ? " unfinished piece" : " unfinished pieces") + " of work back in the pool (" +
    kinds.map(([kind, n]) => kind + " " + n).join(", ") + "): give it to others with Assign below";
}

function roleText(d) {
  if (d.before === d.role) return d.name + " is " + d.role + " already; nothing changed";
  return d.name + ": " + d.before + " -> " + d.role + " (from their next request); " + givenBack(d.released);
}

function removedText(d) {
  return "removed " + d.name + ": " + d.sessions + (d.sessions === 1 ? " session" : " sessions") +
    " ended, cannot sign in; their submitted work stays under their name; " + givenBack(d.released);
}

function addedText(d) {
  const added = "added " + d.name + " (" + d.role + ")";
  if (!d.password) return added;
  return added + "\npassword: " + d.password + "\ngive it to them now: it is not shown again";
}

function setUpAccounts() {
  const table = document.querySelector("[data-accounts]");
  if (!table) return;
  const tell = (result, say) => {  // the newest first; a password made earlier stays on the page
    const box = document.querySelector("[data-accounts-result]");
    const text = result.ok ? say(result.data) : errorText(result.data);
    box.textContent = text + (box.textContent ? "\n\n" + box.textContent : "");
    notice(result.ok ? "done" : errorText(result.data), !result.ok);
  };
  const removed = (row, data) => {
    row.querySelectorAll("td:nth-child(n+3)").forEach((td) => td.remove());
    const cell = Object.assign(document.createElement("td"), { colSpan: 2, textContent: "removed " + localTime(data.removed, true) });
    row.append(cell);
  };
  table.addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.target, row = form.closest("[data-account]");
    const url = "/api/admin/users/" + encodeURIComponent(row.dataset.account);
    if (form.matches("[data-account-role]")) {
      const result = await post(url + "/role", { role: new FormData(form).get("role") });
      if (result.ok && result.data.you && result.data.role !== "admin") { location.href = "/"; return; }
      if (result.ok) row.querySelector("[data-account-role-now]").textContent = result.data.role;
      tell(result, roleText);
    } else if (form.matches("[data-account-remove]")) {
      const result = await post(url + "/remove");
      if (result.ok && result.data.you) { location.href = "/login"; return; }
      if (result.ok) removed(row, result.data);
      tell(result, removedText);
    }
  });
  const add = document.querySelector("[data-account-add]");
  add.addEventListener("submit", async (event) => {
    event.preventDefault();
    const f = new FormData(add);
    const result = await post("/api/admin/users", { name: f.get("name"), role: f.get("role"), password: f.get("password") || null });
    if (result.ok) {
      add.reset();
      const row = document.querySelector("[data-account-new]").content.firstElementChild.cloneNode(true);
      row.dataset.account = result.data.name;
      row.querySelectorAll("[data-account-name]").forEach((el) => { el.textContent = result.data.name; });
      row.querySelector("[data-account-role-now]").textContent = result.data.role;
      const role = row.querySelector("select[name=role]");
      role.value = result.data.role;
      role.setAttribute("aria-label", "new role for " + result.data.name);
      table.tBodies[0].append(row);
    }
    tell(result, addedText);
  });
}

// ------------------------------------------------------------------------------- red team
function setUpRedTeam(box) {
  const base = "/api/redteam/" + box.dataset.id;
  const act = async (url, body) => {
    const result = await post(url, body);
    if (result.ok) location.reload(); else notice(errorText(result.data), true);
  };
  box.querySelector("[data-rt-attack]").addEventListener("submit", (event) => {
    event.preventDefault();
    const f = new FormData(event.target);
    act(base + "/attack", { answer: f.get("answer"), expected: Number(f.get("expected")) });
  });
  box.querySelector("[data-rt-check]").addEventListener("click", () => { notice("asking the judge..."); act(base + "/check"); });
  box.querySelector("[data-rt-revise]").addEventListener("submit", (event) => {
    event.preventDefault();
    const f = new FormData(event.target);
    act(base + "/revise", { rule: f.get("rule"), note: f.get("note") });
  });
}

document.addEventListener("DOMContentLoaded", () => {
  showLocalTimes(document);
  document.querySelectorAll("img.thumb").forEach((img) => img.addEventListener("error", () => {
    img.replaceWith(Object.assign(document.createElement("span"), { className: "thumb none" }));
  }));
  document.querySelectorAll("[data-player]").forEach(setUpPlayer);
  document.querySelectorAll("[data-caption-row]").forEach(setUpCaptionReview);
  document.querySelectorAll("[data-redteam]").forEach(setUpRedTeam);
  setUpAdmin();
  setUpAccounts();
  const logout = document.querySelector("[data-action=logout]");
  if (logout) logout.addEventListener("click", async () => { await post("/logout"); location.href = "/login"; });
});
