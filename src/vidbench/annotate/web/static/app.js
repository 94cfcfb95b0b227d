// The annotation app's browser side: autosave with optimistic concurrency, the synchronised
// multi-view player, reviewer and admin actions, the red-team workflow. Every text from people
// or models is put in the page with textContent, never as HTML.
"use strict";

const csrf = (document.querySelector('meta[name="csrf"]') || {}).content || "";

async function post(url, body) {
  const options = { method: "POST", headers: { "X-CSRF-Token": csrf } };
  if (body instanceof FormData) {
    options.body = body;
  } else {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body || {});
  }
  const response = await fetch(url, options);
  let data = {};
  try { data = await response.json(); } catch (e) { data = { error: response.statusText }; }
  return { ok: response.ok, status: response.status, data };
}

function notice(text, bad) {
  const box = document.getElementById("notice");
  if (!box) return;
  box.textContent = text;
  box.hidden = false;
  box.classList.toggle("bad", Boolean(bad));
}

function errorText(data) {
  if (typeof data.error === "string") return data.error;
  if (Array.isArray(data.detail)) return data.detail.map((d) => d.msg).join("; ");
  return JSON.stringify(data);
}

// ------------------------------------------------------------------------------ the player
function setUpPlayer(player) {
  const videos = Array.from(player.querySelectorAll("video"));
  const play = player.querySelector("[data-play]");
  const seek = player.querySelector("[data-seek]");
  const time = player.querySelector("[data-time]");
  if (!videos.length) { if (play) play.disabled = true; return; }
  const master = videos[0];
  videos.forEach((v) => v.addEventListener("error", () => {
    const note = document.createElement("p");
    note.className = "error";
    note.textContent = "cannot play " + decodeURIComponent(v.getAttribute("src"));
    v.replaceWith(note);
  }));
  play.addEventListener("click", () => {
    if (master.paused) {
      videos.forEach((v) => { v.currentTime = master.currentTime; v.play().catch(() => {}); });
      play.textContent = "pause";
    } else {
      videos.forEach((v) => v.pause());
      play.textContent = "play";
    }
  });
  seek.addEventListener("input", () => {
    const t = (master.duration || 0) * seek.value / 1000;
    videos.forEach((v) => { v.currentTime = t; });
  });
  master.addEventListener("timeupdate", () => {
    if (master.duration) seek.value = Math.round(1000 * master.currentTime / master.duration);
    time.textContent = master.currentTime.toFixed(2) + " s";
    videos.forEach((v) => {  // keep every view on the master's clock
      if (v !== master && Math.abs(v.currentTime - master.currentTime) > 0.1) {
        v.currentTime = master.currentTime;
      }
    });
  });
  master.addEventListener("ended", () => { videos.forEach((v) => v.pause()); play.textContent = "play"; });
}

// ------------------------------------------------------------------------------- autosave
function setUpWork(form) {
  const state = JSON.parse(form.dataset.state);
  const show = (sel, text) => { const el = form.querySelector(sel); if (el) el.textContent = text; };
  // Saves run one after another (`queue`), each with the version the previous one returned, so
  // two saves from one tab never cross; `sent` is the content of the last save sent, so a save
  // with nothing new (a blur after a save) is not written as another version.
  let version = state.version, timer = null, queue = Promise.resolve(), conflicted = false;
  let sent = null;

  function content() {
    if (state.job === "write") return form.querySelector("[data-field=content]").value;
    if (state.job === "answer") {
      const chosen = form.querySelector("[data-answer]:checked");
      return chosen ? chosen.value : "";
    }
    const decision = form.querySelector("input[name=decision]:checked");
    const item = JSON.parse(form.querySelector("[data-item]").textContent);
    const f = (name) => form.querySelector("[name=" + name + "]").value;
    const review = { decision: decision ? decision.value : null, reason: f("reason") };
    if (review.decision === "edit") {
      review.edited = {
        id: item.id, uid: item.uid, Category: item.Category, Question: f("Question"),
        Options: [0, 1, 2, 3].map((i) => f("Option" + i)),
        "Answer index": Number(f("AnswerIndex")), provenance: item.provenance,
      };
    }
    return JSON.stringify(review);
  }

  function restoreReview() {
    const saved = JSON.parse(form.querySelector("[data-review-saved]").textContent || '""');
    if (!saved) return;
    const review = JSON.parse(saved);
    const radio = form.querySelector("input[name=decision][value=" + review.decision + "]");
    if (radio) radio.checked = true;
    form.querySelector("[name=reason]").value = review.reason || "";
    if (review.edited) {
      form.querySelector("[name=Question]").value = review.edited.Question;
      review.edited.Options.forEach((o, i) => { form.querySelector("[name=Option" + i + "]").value = o; });
      form.querySelector("[name=AnswerIndex]").value = String(review.edited["Answer index"]);
    }
  }

  function showConflict(data) {
    conflicted = true;
    const box = form.querySelector("[data-conflict]");
    box.hidden = false;
    show("[data-conflict-message]", data.error);
    show("[data-theirs]", data.current.content);
    box.dataset.theirVersion = data.current.version;
  }

  function save(status) {
    const done = queue.then(() => saveNow(status));
    queue = done.catch(() => {});
    return done;
  }

  async function saveNow(status) {
    if (conflicted && !status) return null;  // nothing is written over someone else's save silently
    const now = content();
    if (!status && now === sent) return null;
    sent = now;
    const body = { version: version, content: now };
    if (status) body.status = status;
    const result = await post("/api/work/" + state.id, body);
    if (result.ok) {
      version = result.data.version;
      show("[data-version]", version);
      show("[data-status]", result.data.status);
      show("[data-saved]", "saved " + result.data.updated_at);
      if (result.data.warning) notice(result.data.warning, true);
      else if (status) notice(status === "submitted" ? "submitted" : "saved");
    } else if (result.status === 409) {
      sent = null;  // refused: "keep mine" sends it again over their version
      showConflict(result.data);
    } else {
      sent = null;  // not saved: the next change or the tab's close tries again
      notice("not saved: " + errorText(result.data), true);
    }
    return result;
  }

  function changed() {
    clearTimeout(timer);
    timer = setTimeout(() => save(), 600);  // debounced: saved as typed
  }

  form.querySelectorAll("[data-draft]").forEach((draft) => {
    draft.querySelector("[data-use-draft]").addEventListener("click", () => {
      const box = form.querySelector("[data-field=content]");
      if (box.value.trim() && !confirm("Replace your text with the machine draft?")) return;
      box.value = draft.querySelector("[data-draft-text]").textContent;
      box.focus();
      changed();
    });
  });
  if (state.job === "review") restoreReview();
  sent = content();  // what the page opened with is saved already
  form.addEventListener("input", changed);
  form.addEventListener("change", changed);
  form.querySelector("[data-submit]").addEventListener("click", () => { clearTimeout(timer); save("submitted"); });
  const keep = form.querySelector("[data-keep-mine]");
  keep.addEventListener("click", () => {
    version = Number(form.querySelector("[data-conflict]").dataset.theirVersion);
    conflicted = false;
    form.querySelector("[data-conflict]").hidden = true;
    save();
  });
  form.querySelector("[data-take-theirs]").addEventListener("click", () => location.reload());
  // a tab closed before the debounce fired still sends what was typed
  const flush = () => {
    const now = content();
    if (now === sent || conflicted) return;
    sent = now;
    fetch("/api/work/" + state.id, {
      method: "POST", keepalive: true,
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify({ version: version, content: now }),
    });
  };
  window.addEventListener("pagehide", flush);
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") flush(); });
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
      notice(body.status === "returned" ? "sent back" : "accepted");
    } else {
      notice(errorText(result.data), true);
    }
  }));
}

// ---------------------------------------------------------------------------------- admin
function adminForm(selector, send) {
  const form = document.querySelector(selector);
  if (!form) return;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const result = await send(new FormData(form));
    document.querySelector("[data-admin-result]").textContent = JSON.stringify(result.data, null, 1);
    notice(result.ok ? "done" : errorText(result.data), !result.ok);
  });
}

function setUpAdmin() {
  adminForm("[data-admin-assign]", (f) => post("/api/admin/assign",
    { kind: f.get("kind"), n: f.get("n") ? Number(f.get("n")) : null }));
  adminForm("[data-admin-export]", (f) => post("/api/admin/export",
    { kind: f.get("kind"), user: f.get("user") || null, benchmark: f.get("benchmark") }));
  adminForm("[data-admin-import]", (f) => post("/api/admin/import", f));
  adminForm("[data-admin-delete]", (f) => post("/api/admin/items/" + encodeURIComponent(f.get("item")) + "/delete"));
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
  document.querySelectorAll("[data-player]").forEach(setUpPlayer);
  document.querySelectorAll("[data-work]").forEach(setUpWork);
  document.querySelectorAll("[data-caption-row]").forEach(setUpCaptionReview);
  document.querySelectorAll("[data-redteam]").forEach(setUpRedTeam);
  setUpAdmin();
  const logout = document.querySelector("[data-action=logout]");
  if (logout) logout.addEventListener("click", async () => { await post("/logout"); location.href = "/login"; });
});
