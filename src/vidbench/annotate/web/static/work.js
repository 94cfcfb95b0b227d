// One piece of work in the browser: saved as it is typed (debounced), one save after another,
// each naming the version it started from. Nothing typed is lost:
// - every change is kept in this browser (localStorage) until the server acknowledged it, and
//   offered back when the page is opened again;
// - a save that does not reach the server, or that the server cannot take now (503: a database
//   it cannot use now; 502, 504: a proxy in front of it with no answer; 429), is retried with
//   backoff (1, 2, 4, 8, 15 s, and at once when the browser is back online), with the state
//   shown; a server error that asking again cannot mend (500: the app's bug) is shown as one and
//   not retried (the text stays kept in this browser);
// - a save refused because the work was saved in between (409) shows the other version, and the
//   server keeps the refused text (offered back on the page until restored or discarded), also
//   when the tab was closed before it could show the conflict;
// - leaving the page while a save is failing or refused asks first; otherwise a tab closed
//   before the debounce fired still sends what was typed.
// A submit that the server acknowledges is announced to the page as a `vidbench:submitted`
// event on the work's box (keys.js then opens the next item not finished).
// Every text from people or models is put in the page with textContent, never as HTML.
"use strict";

const RETRY_DELAYS_MS = [1000, 2000, 4000, 8000, 15000];
// the answers a later try may not get: no answer (0), too many requests, the server or a proxy
// in front of it not able to answer now
const RETRIED = [0, 429, 502, 503, 504];

function clockTime(stamp) {  // app.js: the reader's local time, with its zone
  return localTime(stamp, false);
}

function setUpWork(box) {
  const state = JSON.parse(box.dataset.state);
  const url = "/api/work/" + state.id;
  const storeKey = "vidbench:unsaved:" + state.id;
  const offeredKey = storeKey + ":offered";
  const show = (sel, text) => { const el = box.querySelector(sel); if (el) el.textContent = text; };
  let version = state.version;
  let saved = null;        // the content the server holds, as far as this tab knows
  let wantStatus = null;   // a submit not acknowledged yet
  let resolves = [];       // texts kept on the server that the next save settles
  let conflicted = false, failing = false, refused = false;
  let timer = null, retryTimer = null, attempt = 0, queue = Promise.resolve(), inFlight = false;
  let countdown = null;    // the retry banner's one-second tick

  // ---------------------------------------------------------------- the content, by job
  function content() {
    if (state.job === "write") return box.querySelector("[data-field=content]").value;
    if (state.job === "answer") {
      const chosen = box.querySelector("[data-answer]:checked");
      return chosen ? chosen.value : "";
    }
    const decision = box.querySelector("input[name=decision]:checked");
    const item = JSON.parse(box.querySelector("[data-item]").textContent);
    const f = (name) => box.querySelector("[name=" + name + "]").value;
    const review = { decision: decision ? decision.value : null, reason: f("reason") };
    if (review.decision === "fix") {  // the audit queue: the option chosen as the gold
      const gold = box.querySelector("input[name=gold]:checked");
      review.gold = gold ? gold.value : null;
    }
    if (review.decision === "edit") {
      review.edited = {
        id: item.id, uid: item.uid, Category: item.Category, Question: f("Question"),
        Options: [0, 1, 2, 3].map((i) => f("Option" + i)),
        "Answer index": Number(f("AnswerIndex")), provenance: item.provenance,
      };
    }
    return JSON.stringify(review);
  }

  function setContent(text) {
    if (state.job === "write") { box.querySelector("[data-field=content]").value = text; return; }
    if (state.job === "answer") {
      box.querySelectorAll("[data-answer]").forEach((r) => { r.checked = r.value === text; });
      return;
    }
    if (!text) return;
    const review = JSON.parse(text);
    if (state.job === "audit") {  // the decision, and the gold it chose (else the item's)
      const item = JSON.parse(box.querySelector("[data-item]").textContent);
      const gold = review.decision === "fix" ? review.gold : item.gold;
      box.querySelectorAll("input[name=decision]").forEach((r) => { r.checked = r.value === review.decision; });
      box.querySelectorAll("input[name=gold]").forEach((r) => { r.checked = r.value === gold; });
      box.querySelector("[name=reason]").value = review.reason || "";
      return;
    }
    box.querySelectorAll("input[name=decision]").forEach((r) => {
      r.checked = r.value === review.decision;
      r.dispatchEvent(new Event("change"));
    });
    box.querySelector("[name=reason]").value = review.reason || "";
    if (review.edited) {
      box.querySelector("[name=Question]").value = review.edited.Question;
      review.edited.Options.forEach((o, i) => { box.querySelector("[name=Option" + i + "]").value = o; });
      box.querySelector("[name=AnswerIndex]").value = String(review.edited["Answer index"]);
    }
  }

  function describe(text) {  // a kept content as a person reads it
    if ((state.job !== "review" && state.job !== "audit") || !text) return text || "(empty)";
    try {
      const review = JSON.parse(text);
      let out = "decision: " + (review.decision || "none");
      if (review.gold) out += " (gold " + review.gold + ")";
      if (review.reason) out += "; reason: " + review.reason;
      if (review.edited) out += "; edited question: " + review.edited.Question;
      return out;
    } catch (e) { return text; }
  }

  // ------------------------------------------------------------- what the page tells
  function showState(kind, text) {
    const el = box.querySelector("[data-saved]");
    el.dataset.saveState = kind;  // saved | saving | retrying | refused | failed | conflict
    el.textContent = text;
    el.classList.toggle("unsaved", kind !== "saved" && kind !== "saving");
  }

  const unsaved = () => content() !== saved || wantStatus !== null;

  // ---------------------------------------------------- kept in this browser until saved
  function keepLocally() {
    try {
      if (!unsaved()) { localStorage.removeItem(storeKey); return; }
      const entry = { content: content(), version: version, status: wantStatus, at: new Date().toISOString() };
      localStorage.setItem(storeKey, JSON.stringify(entry));
    } catch (e) { /* storage full or off: the retries and the server's copy remain */ }
  }

  function readStored(key) {
    try {
      const entry = JSON.parse(localStorage.getItem(key) || "null");
      return entry && typeof entry.content === "string" ? entry : null;
    } catch (e) { return null; }
  }

  function offerLocal(serverKept) {
    // an offer not answered last time stays offered; a newer unsaved text takes its place
    const entry = readStored(storeKey) || readStored(offeredKey);
    try { localStorage.removeItem(storeKey); } catch (e) { /* nothing kept */ }
    if (!entry || entry.content === saved || serverKept.includes(entry.content)) {
      try { localStorage.removeItem(offeredKey); } catch (e) { /* nothing kept */ }
      return;
    }
    try { localStorage.setItem(offeredKey, JSON.stringify(entry)); } catch (e) { /* shown anyway */ }
    const offer = box.querySelector("[data-local]");
    offer.hidden = false;
    offer.querySelector("[data-local-text]").textContent = describe(entry.content);
    offer.querySelector("[data-local-at]").textContent = localTime(entry.at, true);
    const done = () => { offer.hidden = true; try { localStorage.removeItem(offeredKey); } catch (e) { /* gone */ } };
    offer.querySelector("[data-local-restore]").addEventListener("click", () => {
      done(); setContent(entry.content); keepLocally(); save();
    });
    offer.querySelector("[data-local-discard]").addEventListener("click", done);
  }

  function setUpServerKept() {
    const texts = [];
    box.querySelectorAll("[data-kept]").forEach((kept) => {
      const id = Number(kept.dataset.kept);
      const text = kept.querySelector("[data-kept-text]").dataset.content;
      texts.push(text);
      kept.querySelector("[data-kept-text]").textContent = describe(text);
      kept.querySelector("[data-kept-restore]").addEventListener("click", () => {
        kept.hidden = true; setContent(text); resolves.push(id); keepLocally(); save();
      });
      kept.querySelector("[data-kept-discard]").addEventListener("click", async () => {
        const result = await post(url + "/kept/" + id + "/discard");
        if (result.ok) kept.hidden = true; else notice(errorText(result.data), true);
      });
    });
    return texts;
  }

  // ------------------------------------------------------------------------- saving
  function showConflict(data) {
    conflicted = true;
    const conflict = box.querySelector("[data-conflict]");
    conflict.hidden = false;
    const message = conflictText(data.current || {});  // app.js
    show("[data-conflict-message]", "conflict: " + message + (data.kept ? " (your text is kept on the server)" : ""));
    show("[data-theirs]", describe(data.current.content));
    conflict.dataset.theirVersion = data.current.version;
    conflict.dataset.kept = data.kept || "";
    showState("conflict", "not saved: saved elsewhere first (see below)");
  }

  function scheduleRetry(why) {
    failing = true;
    const delay = RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length - 1)];
    attempt += 1;
    const what = wantStatus ? "not submitted" : "not saved";
    const due = Date.now() + delay;
    const tell = () => {  // counts down to the retry, a second at a time
      const left = Math.max(0, Math.ceil((due - Date.now()) / 1000));
      showState("retrying", what + ", retrying in " + left + " s: " + why + " (kept in this browser)");
      notice(what + ": " + why + "; retrying in " + left + " s, your text is kept in this browser", true);
    };
    tell();
    clearInterval(countdown);
    countdown = setInterval(tell, 1000);
    clearTimeout(retryTimer);
    retryTimer = setTimeout(() => save(), delay);
  }

  function save(status, keepalive) {
    if (status) wantStatus = status;
    const done = queue.then(() => saveNow(keepalive));
    queue = done.catch(() => {});
    return done;
  }

  async function saveNow(keepalive) {
    clearTimeout(retryTimer);
    clearInterval(countdown);
    if (conflicted) return null;  // nothing is written over someone else's save silently
    const now = content();
    if (!unsaved()) { keepLocally(); return null; }
    const body = { version: version, content: now };
    const submitting = wantStatus;
    if (submitting) body.status = submitting;
    if (resolves.length) body.resolves = resolves.slice();
    if (!failing) showState("saving", submitting ? "submitting…" : "saving…");
    inFlight = true;
    const result = await post(url, body, keepalive);
    inFlight = false;
    if (result.ok) {
      const wasFailing = failing;
      failing = refused = false;
      attempt = 0;
      version = result.data.version;
      saved = now;
      resolves = [];
      if (wantStatus === submitting) wantStatus = null;
      show("[data-version]", version);
      show("[data-status]", result.data.status);
      showState("saved", "saved " + clockTime(result.data.updated_at));
      keepLocally();
      if (result.data.warning) notice(result.data.warning, true);
      else if (submitting) notice(submitting === "submitted" ? "submitted" : "saved");
      else if (wasFailing) notice("saved: the server is back");
      if (submitting === "submitted") {
        const detail = { retried: wasFailing, warning: result.data.warning || null };
        box.dispatchEvent(new CustomEvent("vidbench:submitted", { detail: detail }));
      }
    } else if (result.status === 409) {
      keepLocally();
      showConflict(result.data);
    } else if (RETRIED.includes(result.status)) {
      keepLocally();
      scheduleRetry(errorText(result.data));
    } else if (result.status >= 500) {
      // the app failed on this save (a bug, in the server's log): the same save would fail again
      refused = true;
      wantStatus = null;
      keepLocally();
      const why = "the server failed (HTTP " + result.status + ": " + errorText(result.data) +
        "); your text is kept in this browser: tell the project's admin, then reload this page";
      showState("failed", "not saved: " + why);
      notice("not saved: " + why, true);
    } else {
      // refused for what it holds (422) or for who sent it (401, 403): asking again cannot help
      refused = true;
      wantStatus = null;
      keepLocally();
      let why = errorText(result.data);
      if (result.status === 401 || result.status === 403) {
        why += ": sign in again in another tab, then reload this page (this browser keeps your text)";
      }
      showState("refused", "not saved: " + why);
      notice("not saved: " + why, true);
    }
    return result;
  }

  function changed(event) {
    if (event && event.target.closest("[data-player]")) return;  // the player is not the work
    keepLocally();
    clearTimeout(timer);
    if (failing) return;  // the retry sends the latest text
    timer = setTimeout(() => save(), 600);  // debounced: saved as typed
  }

  // ----------------------------------------------------------------------- wiring
  box.querySelectorAll("[data-draft]").forEach((draft) => {
    draft.querySelector("[data-use-draft]").addEventListener("click", () => {
      const field = box.querySelector("[data-field=content]");
      if (field.value.trim() && !confirm("Replace your text with the machine draft?")) return;
      field.value = draft.querySelector("[data-draft-text]").textContent;
      field.focus();
      changed();
    });
  });
  if (state.job === "review") {
    setContent(JSON.parse(box.querySelector("[data-review-saved]").textContent || '""'));
    const editing = () => {  // the edited record's fields are shown for "edit" only
      const chosen = box.querySelector("input[name=decision]:checked");
      box.querySelector("[data-edit-fields]").hidden = !chosen || chosen.value !== "edit";
    };
    box.querySelectorAll("input[name=decision]").forEach((r) => r.addEventListener("change", editing));
    editing();
  }
  if (state.job === "audit") {
    setContent(JSON.parse(box.querySelector("[data-review-saved]").textContent || '""'));
    const item = JSON.parse(box.querySelector("[data-item]").textContent);
    const option = (letter) => box.querySelector("input[name=gold][value='" + letter + "']");
    const fix = box.querySelector("input[name=decision][value=fix]");
    // choosing another option than the gold is a fix; choosing the gold again is none
    box.querySelectorAll("input[name=gold]").forEach((r) => r.addEventListener("change", () => {
      if (r.value !== item.gold) fix.checked = true;
      else if (fix.checked) fix.checked = false;
    }));
    // fix starts from the audit's suggestion (else the first other option); keep and drop put
    // the gold back
    box.querySelectorAll("input[name=decision]").forEach((r) => r.addEventListener("change", () => {
      const chosen = box.querySelector("input[name=gold]:checked");
      if (r.value === "fix" && (!chosen || chosen.value === item.gold)) {
        const others = [...box.querySelectorAll("input[name=gold]")].filter((g) => g.value !== item.gold);
        const preset = (item.suggested && option(item.suggested)) || others[0];
        if (preset) preset.checked = true;
      } else if (r.value !== "fix" && option(item.gold)) {
        option(item.gold).checked = true;
      }
    }));
  }
  saved = content();  // what the page opened with is saved already
  const line = box.querySelector("[data-saved]");  // server times, shown in the reader's clock
  if (line.dataset.updatedAt) {
    line.textContent = line.dataset.said + " at " + clockTime(line.dataset.updatedAt);
  }
  offerLocal(setUpServerKept());
  box.addEventListener("input", changed);
  box.addEventListener("change", changed);
  box.querySelector("[data-submit]").addEventListener("click", () => { clearTimeout(timer); save("submitted"); });
  box.querySelector("[data-keep-mine]").addEventListener("click", () => {
    const conflict = box.querySelector("[data-conflict]");
    version = Number(conflict.dataset.theirVersion);
    if (conflict.dataset.kept) resolves.push(Number(conflict.dataset.kept));
    conflicted = false;
    conflict.hidden = true;
    save();
  });
  box.querySelector("[data-take-theirs]").addEventListener("click", async () => {
    const kept = box.querySelector("[data-conflict]").dataset.kept;
    if (kept) await post(url + "/kept/" + kept + "/discard");
    try { localStorage.removeItem(storeKey); } catch (e) { /* nothing kept */ }
    location.reload();
  });
  window.addEventListener("online", () => { if (failing) { attempt = 0; save(); } });
  window.addEventListener("beforeunload", (event) => {
    if (unsaved() && (failing || conflicted || refused)) {
      event.preventDefault();
      event.returnValue = "";  // the browser asks whether to leave
    }
  });
  // a tab closed or hidden before the debounce fired still sends what was typed, through the
  // queue (its answer is handled if the page lives on); behind a save in flight it goes out at
  // once on its own (a refused one is kept by the server; one that cannot arrive by this browser)
  const flush = () => {
    if (!unsaved()) return;
    keepLocally();
    clearTimeout(timer);
    if (failing) return;
    if (!inFlight) { save(null, true); return; }
    const body = { version: version, content: content() };
    if (wantStatus) body.status = wantStatus;
    if (resolves.length) body.resolves = resolves;
    post(url, body, true);
  };
  window.addEventListener("pagehide", flush);
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") flush(); });
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("[data-work]").forEach(setUpWork);
});
