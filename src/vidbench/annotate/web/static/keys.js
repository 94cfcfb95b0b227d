// Keyboard first: every page's keys (`?` lists them), submit-and-next, and the next item's videos
// fetched ahead. Keys act when no text field has the cursor; Ctrl+Enter (or Cmd+Enter) submits
// from anywhere, Enter in a one-line field of the work (the reason) submits too, Esc leaves a
// field. A QA review the reviewer accepts takes two keys: `a`, then Enter.
//   work pages  Enter submit, then the next item not finished · ← → previous / next item ·
//               Space play or pause · answer: A–Z or 1–9 choose an option · review: a accept,
//               e edit, x reject · audit queue: k keep, f fix (to the suggested gold), 1–9
//               that option is the gold, d drop · caption: c to the caption box
//   my work     / to the search box · Enter start or go on with the first task not finished
"use strict";

const TEXT_INPUTS = ["text", "search", "number", "email", "password", "url", "range"];

function typingIn(el) {
  if (!el || !el.tagName) return false;
  if (el.isContentEditable || el.tagName === "TEXTAREA" || el.tagName === "SELECT") return true;
  return el.tagName === "INPUT" && TEXT_INPUTS.includes(el.type || "text");
}

function follow(selector) {
  const link = document.querySelector(selector);
  if (link && link.getAttribute("href")) { location.href = link.getAttribute("href"); return true; }
  return false;
}

function choose(input) {  // as a click would: checked, and the work saves it (work.js)
  if (!input) return false;
  input.checked = true;
  input.dispatchEvent(new Event("change", { bubbles: true }));
  return true;
}

function workKeys(box, key) {
  const job = JSON.parse(box.dataset.state).job;
  if (job === "answer") {
    const options = box.querySelectorAll("[data-answer]");
    let index = -1;
    if (/^[1-9]$/.test(key)) index = Number(key) - 1;
    else if (/^[a-z]$/i.test(key)) index = key.toUpperCase().charCodeAt(0) - 65;
    return index >= 0 && index < options.length && choose(options[index]);
  }
  if (job === "review") {
    const decision = { a: "accept", e: "edit", x: "reject" }[key];
    if (!decision) return false;
    choose(box.querySelector("input[name=decision][value=" + decision + "]"));
    const field = { edit: "[name=Question]", reject: "[name=reason]" }[decision];
    if (field) { const el = box.querySelector(field); el.focus(); el.select(); }
    return true;
  }
  if (job === "audit") {
    const golds = box.querySelectorAll("input[name=gold]");
    if (/^[1-9]$/.test(key)) {  // that option is the gold: a fix (work.js)
      const k = Number(key) - 1;
      return k < golds.length && choose(golds[k]);
    }
    const decision = { k: "keep", f: "fix", d: "drop" }[key];
    const input = decision && box.querySelector("input[name=decision][value=" + decision + "]");
    if (!input || input.disabled) return false;
    choose(input);
    if (decision === "fix") box.querySelector("input[name=gold]:checked").focus();  // arrows move it
    if (decision === "drop") { const el = box.querySelector("[name=reason]"); el.focus(); el.select(); }
    return true;
  }
  if (job === "write" && key === "c") {
    box.querySelector("[data-field=content]").focus();
    return true;
  }
  return false;
}

function submitWork(box) {
  const button = box && box.querySelector("[data-submit]");
  if (!button) return false;
  button.click();
  return true;
}

function onKey(event) {
  if (event.defaultPrevented || event.isComposing) return;
  const keys = document.querySelector("[data-keys]");
  if (keys && keys.open) return;  // the dialog has Esc and its button
  const box = document.querySelector("[data-work]");
  const target = event.target || {};
  const typing = typingIn(target);
  // what the focused control does with the key itself: a button or link's Enter and Space, a
  // radio button's arrows (they move the choice)
  const activates = ["BUTTON", "A", "SUMMARY"].includes(target.tagName) && [" ", "Enter"].includes(event.key);
  const moves = target.type === "radio" && event.key.startsWith("Arrow");
  if ((activates || moves) && !(event.ctrlKey || event.metaKey)) return;
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
    if (submitWork(box)) event.preventDefault();
    return;
  }
  if (typing) {
    if (event.key === "Escape") event.target.blur();
    const oneLine = event.target.tagName === "INPUT" && event.target.type !== "range";
    if (event.key === "Enter" && box && oneLine && box.contains(event.target)) {
      event.preventDefault();
      submitWork(box);
    }
    return;
  }
  if (event.ctrlKey || event.metaKey || event.altKey) return;  // the browser's own shortcuts
  let done = true;
  if (event.key === "?") keys.showModal();
  else if (event.key === "Escape") enlarge(null);
  else if (event.key === "ArrowRight") done = follow("[data-next]");
  else if (event.key === "ArrowLeft") done = follow("[data-prev]");
  else if (event.key === " " && document.querySelector("[data-play]")) document.querySelector("[data-play]").click();
  else if (event.key === "Enter" && box) done = submitWork(box);
  else if (event.key === "Enter") done = follow("[data-start]");
  else if (event.key === "/" && document.querySelector("[data-search]")) document.querySelector("[data-search]").focus();
  else if (box && event.key.length === 1) done = workKeys(box, event.key);
  else done = false;
  if (done) event.preventDefault();
}

// after a submit the server took: the next item not finished, else back to my work; a submit
// that needed retries, or came with a warning, stays on the page to be read
function afterSubmit(event) {
  if (event.detail.retried || event.detail.warning) return;
  if (!follow("[data-next-open]")) location.href = "/";
}

// the next unfinished item's first videos, into the browser's cache while this one is worked on
function preload() {
  const listed = document.querySelector("[data-preload]");
  const paths = listed ? JSON.parse(listed.textContent) : [];
  if (!paths.length) return;
  const url = (path) => "/media/" + path.split("/").map(encodeURIComponent).join("/");
  Promise.all(paths.map((path) => fetch(url(path), { credentials: "same-origin" })
    .then((r) => (r.ok ? r.arrayBuffer() : null)).catch(() => null)))
    .then((got) => { document.body.dataset.preloaded = String(got.filter(Boolean).length); });
}

document.addEventListener("DOMContentLoaded", () => {
  document.addEventListener("keydown", onKey);
  const keys = document.querySelector("[data-keys]");
  const show = document.querySelector("[data-show-keys]");
  if (show && keys) show.addEventListener("click", () => keys.showModal());
  const box = document.querySelector("[data-work]");
  if (box) box.addEventListener("vidbench:submitted", afterSubmit);
  document.body.dataset.keysReady = "yes";  // for scripts that drive the page (tests, bench)
});
// once this page's own videos had their turn
window.addEventListener("load", () => setTimeout(preload, 300));
