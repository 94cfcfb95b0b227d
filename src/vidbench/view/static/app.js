// vidbench view: the report page. data/meta.js calls vidbenchView.meta(...) with the runs, the
// tables and the index the filters need (each sample's group and outcomes); the samples are in
// data/samples-NNN.js chunks (vidbenchView.add(k, rows)), the search text in data/search-NNN.js,
// the exact prompts in data/prompts-NNN.js and the judge's calls in data/judge-NNN.js. Browsers
// refuse fetch() from a file:// page, so each file is a script the page adds when it needs it:
// a page of samples loads the chunks it shows, the first search loads the search text, an
// opened "Prompt" or "Judge" its file. Every text taken from the data is put in the page with
// textContent / createElement only (never innerHTML): model outputs, judge replies, questions
// and ids are untrusted. Links and sources are only paths the report wrote.
"use strict";

const PAGE_SIZE = 50;
const KEEP_CHUNKS = 60;  // sample chunks kept loaded (more than a page can need), the rest let go
// filtered: the report's row numbers that match. A filtering that newer filters overtook while
// the search text loaded, or a page drawing that a newer one overtook while its chunks loaded,
// is dropped (`filtering` and `drawing` count them).
const state = { meta: null, filtered: new Int32Array(0), page: 0, filtering: 0, drawing: 0, ready: false };
const files = new Map();  // "samples-003" -> { promise, resolve, reject, value }

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

function text(value) {
  return value === null || value === undefined ? "" : String(value);
}

// a path the report wrote (thumbs/, videos/, figures/): relative, no scheme, no "..".
function ownPath(src) {
  return typeof src === "string"
    && /^(thumbs|videos|figures|audits)\/[\w.\-\/]+(#t=[\d.,]+)?$/.test(src)
    && !src.includes("..");
}

function fileName(kind, k) {
  return `${kind}-${String(k).padStart(3, "0")}`;
}

function entryOf(name) {
  let entry = files.get(name);
  if (!entry) {
    entry = {};
    entry.promise = new Promise((resolve, reject) => { entry.resolve = resolve; entry.reject = reject; });
    entry.promise.catch(() => {});  // a missing file is noted once; callers see the rejection
    files.set(name, entry);
  }
  return entry;
}

// the contents of data/KIND-NNN.js, loaded by a <script> once (until let go)
function load(kind, k) {
  const name = fileName(kind, k);
  const known = files.get(name);
  if (known) {
    files.delete(name);  // kept in order of use: the least recently used are let go first
    files.set(name, known);
    return known.promise;
  }
  const entry = entryOf(name);
  const src = `data/${name}.js`;
  const script = el("script", { src });
  script.addEventListener("load", () => script.remove());  // its data are kept, not the tag
  script.addEventListener("error", () => {
    script.remove();
    files.delete(name);
    note(`data file ${src} is missing`);
    entry.reject(new Error(`data file ${src} is missing`));
  });
  document.head.append(script);
  if (kind === "samples") letGo();
  return entry.promise;
}

function arrived(kind, k, value) {
  const entry = entryOf(fileName(kind, k));
  entry.value = value;
  entry.resolve(value);
}

// let go of the sample chunks used least recently, beyond KEEP_CHUNKS (those of the page being
// drawn were used last)
function letGo() {
  const chunks = [...files.keys()].filter((name) => name.startsWith("samples-"));
  for (const name of chunks.slice(0, Math.max(0, chunks.length - KEEP_CHUNKS))) files.delete(name);
}

window.vidbenchView = {
  meta(meta) {
    state.meta = meta;
    ready();
  },
  add(k, rows) { arrived("samples", k, rows); },
  search(k, texts) { arrived("search", k, texts.map((t) => t.toLowerCase())); },
  prompts(k, prompts) { arrived("prompts", k, prompts); },
  judge(k, attempts) { arrived("judge", k, attempts); },
};

function note(message) {
  document.getElementById("messages").append(el("li", {}, message));
}

function ready() {
  document.getElementById("loading").textContent =
    `${state.meta.total} samples, ${state.meta.runs.length} run(s)`;
  renderHeader();
  renderTables();
  renderFigures();
  setupFilters();
  applyFilters();  // draws the first page; the page is ready once it is drawn
}

function renderHeader() {
  const runs = document.getElementById("runs");
  state.meta.runs.forEach((run) => {
    const counts = Object.entries(run.outcomes).filter(([, n]) => n).map(([o, n]) => `${o} ${n}`);
    const outcomes = counts.length ? ` (${counts.join(", ")})` : "";  // none: no "()"
    const cut = run.truncated ? el("span", { class: "truncated" },
      ` — ${text(run.truncated)} answer(s) cut at the token limit (max_tokens)`) : null;
    runs.append(el("li", { class: "run-summary" }, el("b", {}, text(run.label)),
      ` — ${text(run.task)} — ${text(run.n)} samples${text(outcomes)}`, cut,
      ` — ${text(run.path)}`));
  });
  (state.meta.audits || []).filter((a) => ownPath(a.href)).forEach((audit) => {
    runs.append(el("li", { class: "audit-link" }, el("a", { href: audit.href }, "Audit"),
      ` of ${text(audit.runs)} run(s): ${text(audit.folder)}`));
  });
  state.meta.messages.forEach(note);
}

function renderTables() {
  const section = document.getElementById("tables");
  if (!state.meta.tables.length) return;
  section.append(el("h2", {}, "Tables"));
  for (const table of state.meta.tables) {
    section.append(el("h3", {}, text(table.title)));
    for (const part of table.parts) {
      if (part.title) section.append(el("h4", {}, text(part.title)));
      const head = el("tr", {}, ...part.header.map((h) => el("th", {}, text(h))));
      const body = part.rows.map((row) => el("tr", {}, el("td", {}, text(row.label)),
        ...row.cells.map((cell) => el("td", { class: cell.best ? "best" : "" }, text(cell.text),
          cell.ci ? el("span", { class: "ci" }, `95% ${cell.ci}`) : null,
          cell.n !== undefined ? el("span", { class: "n" }, `n=${cell.n}`) : null))));
      const table = el("table", { class: "paper" }, el("thead", {}, head), el("tbody", {}, ...body));
      section.append(el("div", { class: "table-scroll" }, table));
    }
  }
}

function renderFigures() {
  const section = document.getElementById("figures");
  const figures = state.meta.figures.filter(ownPath);
  if (!figures.length) return;
  section.append(el("h2", {}, "Figures"), ...figures.map((src) => el("img", { src, alt: src })));
}

function setupFilters() {
  const group = document.getElementById("f-group");
  state.meta.groups.forEach((g) => group.append(el("option", { value: g }, g)));
  const outcome = document.getElementById("f-outcome");
  state.meta.outcomes.forEach((o) => outcome.append(el("option", { value: o }, o)));
  const run = document.getElementById("f-run");
  state.meta.runs.forEach((r, i) => run.append(el("option", { value: String(i) }, text(r.label))));
  const several = state.meta.runs.length > 1;
  document.getElementById("f-run-label").hidden = !several;
  document.getElementById("f-disagree-label").hidden = !several;
  let timer = null;
  document.getElementById("filters").addEventListener("input", (event) => {
    clearTimeout(timer);
    timer = setTimeout(applyFilters, event.target.id === "f-search" ? 150 : 0);
  });
  document.getElementById("filters").addEventListener("submit", (e) => e.preventDefault());
  for (const [id, step] of [["prev", -1], ["next", 1], ["prev2", -1], ["next2", 1]]) {
    document.getElementById(id).addEventListener("click", () => turn(step));
  }
}

// the search text of every sample, in the report's order (loaded at the first search)
async function searchTexts() {
  if (!state.searchTexts) {
    const parts = [];
    for (let k = 0; k < state.meta.search_files; k++) parts.push(load("search", k));
    state.searchTexts = (await Promise.all(parts)).flat();
  }
  return state.searchTexts;
}

// whether the report's row number `row` passes the filters (`runs`: the outcome lists of the
// runs the outcome filter looks at)
function matches(row, group, outcome, runs, onlyDisagree) {
  if (group >= 0 && state.meta.index.group[row] !== group) return false;
  if (onlyDisagree && row >= state.meta.disagreements) return false;
  return outcome < 0 || runs.some((outcomes) => outcomes[row] === outcome);
}

async function applyFilters() {
  const asked = ++state.filtering;
  const groupName = document.getElementById("f-group").value;
  const outcomeName = document.getElementById("f-outcome").value;
  const group = groupName ? state.meta.groups.indexOf(groupName) : -1;
  const outcome = outcomeName ? state.meta.outcomes.indexOf(outcomeName) : -1;
  const run = Number(document.getElementById("f-run").value);
  const runs = run >= 0 ? [state.meta.index.outcome[run]] : state.meta.index.outcome;
  const onlyDisagree = document.getElementById("f-disagree").checked;
  const search = document.getElementById("f-search").value.trim().toLowerCase();
  let texts = null;
  if (search) {
    document.getElementById("count").textContent = "searching…";
    try {
      texts = await searchTexts();
    } catch (e) {
      texts = [];
    }
    if (asked !== state.filtering) return;  // the filters changed while the text loaded
  }
  const found = [];
  for (let row = 0; row < state.meta.total; row++) {
    if (!matches(row, group, outcome, runs, onlyDisagree)) continue;
    if (texts && !(texts[row] || "").includes(search)) continue;
    found.push(row);
  }
  state.filtered = Int32Array.from(found);
  state.page = 0;
  await renderPage();
}

function turn(step) {
  const pages = Math.max(1, Math.ceil(state.filtered.length / PAGE_SIZE));
  state.page = Math.min(pages - 1, Math.max(0, state.page + step));
  renderPage();
  document.getElementById("browser").scrollIntoView();
}

// the rows of the page (loading the chunks they are in); drawn unless a newer filter or page
// turn was asked for meanwhile
async function renderPage() {
  const asked = ++state.drawing;
  const size = state.meta.chunk_size;
  const start = state.page * PAGE_SIZE;
  const numbers = Array.from(state.filtered.subarray(start, start + PAGE_SIZE));
  const chunks = [...new Set(numbers.map((n) => Math.floor(n / size)))];
  const loaded = new Map(await Promise.all(chunks.map((k) =>
    load("samples", k).then((rows) => [k, rows], () => [k, []]))));
  if (asked !== state.drawing) return;
  const shown = numbers.map((n) => loaded.get(Math.floor(n / size))[n % size]).filter(Boolean);
  const pages = Math.max(1, Math.ceil(state.filtered.length / PAGE_SIZE));
  const total = state.meta.total;
  document.getElementById("count").textContent = state.filtered.length
    ? `${start + 1}–${start + numbers.length} of ${state.filtered.length} matching (page ${state.page + 1} of ${pages}; ${total} samples)`
    : `none of ${total} samples match`;
  releaseAllPlayers();
  document.getElementById("samples").replaceChildren(...shown.map(renderSample));
  document.body.dataset.matching = String(state.filtered.length);
  document.body.dataset.page = String(state.page + 1);
  if (!state.ready) {
    state.ready = true;
    document.body.dataset.readyMs = String(Math.round(performance.now()));
    document.body.dataset.ready = "true";
  }
}

function renderSample(row) {
  const head = el("div", { class: "sample-head" }, el("span", { class: "sample-id" }, text(row.id)),
    row.group ? el("span", { class: "tag" }, text(row.group)) : null,
    row.disagree ? el("span", { class: "tag disagree" }, "runs disagree") : null);
  const card = el("article", { class: "sample" + (row.disagree ? " disagree" : "") }, head);
  card.dataset.id = text(row.id);
  if (row.question) card.append(el("p", { class: "question" }, text(row.question)));
  if (row.options.length) {
    card.append(el("ol", { class: "options", type: "A" }, ...row.options.map((o, i) =>
      el("li", { class: String.fromCharCode(65 + i) === row.gold ? "gold" : "" }, text(o)))));
  }
  if (row.gold) card.append(el("p", { class: "gold-answer" }, "Gold: ", el("b", {}, text(row.gold))));
  for (const ref of row.references) card.append(el("p", { class: "reference" }, "Reference: ", text(ref)));
  if (row.rules) card.append(lazyDetails("Judging rule", () => [el("pre", { class: "rules" }, text(row.rules))]));
  // runs that saw the same frames (the usual case: one task, several models) show them once
  const entries = row.runs.filter(Boolean);
  const media = (e) => JSON.stringify([e.frames || null, e.videos || []]);
  const shared = entries.length > 1 && entries.every((e) => media(e) === media(entries[0]));
  if (shared) card.append(renderMedia(entries[0]));
  card.append(el("div", { class: "runs" },
    ...row.runs.map((entry, i) => renderRun(entry, state.meta.runs[i], shared))));
  return card;
}

// the poster of a view's video: the first thumbnail of that view, else the sample's first
function posterSrc(strip, view) {
  const frames = ((strip && strip.frames) || []).filter((f) => f.src && ownPath(f.src));
  const same = frames.find((f) => f.view === view) || frames[0];
  return same ? same.src : null;
}

function renderMedia(entry) {
  const box = el("div", { class: "media" });
  if (entry.frames) box.append(renderFrames(entry.frames));
  if (entry.videos && entry.videos.length) box.append(renderVideos(entry.videos, (view) => posterSrc(entry.frames, view)));
  return box;
}

function renderRun(entry, run, sharedMedia) {
  const box = el("section", { class: "run" + (entry ? " " + entry.outcome : "") },
    el("div", { class: "run-label" }, text(run.label)));
  if (!entry) {
    box.append(el("p", {}, "not in this run"));
    return box;
  }
  box.append(el("p", {}, el("span", { class: "outcome" }, text(entry.outcome)),
    entry.parsed ? ` — parsed: ${text(entry.parsed)}` : "",
    entry.truncated ? el("span", { class: "truncated", title: "the reply stopped at its token limit; scored as it is" },
      " — cut at the token limit (max_tokens)") : null));
  if (entry.error) box.append(el("p", { class: "error-text" }, `${text(entry.status)}: ${text(entry.error)}`));
  if (entry.output !== null && entry.output !== undefined) box.append(el("pre", { class: "output" }, text(entry.output)));
  if (entry.verdict_reply) box.append(el("p", {}, "Judge: "), el("pre", { class: "verdict" }, text(entry.verdict_reply)));
  const scores = Object.entries(entry.scores || {});
  if (scores.length) box.append(el("p", { class: "scores" }, scores.map(([k, v]) => `${k}: ${v}`).join(" · ")));
  if (entry.media_error) box.append(el("p", { class: "error-text media-error" }, text(entry.media_error)));
  if (entry.video_changed) box.append(el("p", { class: "error-text video-changed" }, `video edited: ${text(entry.video_changed)}`));
  if (!sharedMedia) box.append(renderMedia(entry));
  const judged = entry.judge_calls.length + entry.judge.length;
  if (judged) box.append(lazyDetails(`Judge: ${judged} attempt(s)`, () => judgeOf(entry)));
  if (entry.prompt) box.append(lazyDetails("Prompt", () => promptOf(entry.prompt)));
  return box;
}

// a run's judge calls about a sample, from the judge files ([file, position] each), then the
// failed ones
async function judgeOf(entry) {
  const calls = await Promise.all(entry.judge_calls.map(([k, position]) =>
    load("judge", k).then((attempts) => attempts[position])));
  return renderJudge([...calls.filter(Boolean), ...entry.judge]);
}

// a sample's exact prompt, from its prompt file ([file, position])
async function promptOf([k, position]) {
  const prompts = await load("prompts", k);
  return (prompts[position] || []).map((p) => el("pre", { class: "prompt" }, text(p)));
}

// a <details> whose content is made (by `build`, which may return a promise) when first opened
function lazyDetails(summary, build) {
  const details = el("details", {}, el("summary", {}, summary));
  details.addEventListener("toggle", () => {
    if (!details.open || details.dataset.built) return;
    details.dataset.built = "true";
    Promise.resolve().then(build).then((nodes) => details.append(...nodes),
      (e) => details.append(el("p", { class: "error-text" }, `not loaded: ${e.message}`)));
  });
  return details;
}

function renderJudge(attempts) {
  return attempts.map((a) => el("div", { class: "attempt" },
    a.error ? el("p", { class: "error-text" }, `${text(a.item)}: ${text(a.error)}`)
      : el("p", {}, `${text(a.item)} — attempt ${text(a.attempt)} — ${text(a.judge)} (${text(a.version)})`),
    a.prompt ? el("details", {}, el("summary", {}, "prompt"), el("pre", {}, text(a.prompt))) : null,
    a.reply !== undefined ? el("pre", { class: "judge-reply" }, text(a.reply)) : null));
}

function image(frame, cls) {
  if (!frame.src || !ownPath(frame.src)) {
    return el("span", { class: "missing" }, frame.error ? "missing" : "no frame");
  }
  const img = el("img", { src: frame.src, loading: "lazy", class: cls || "",
    alt: `view ${frame.view}, frame ${frame.index}`, title: `view ${frame.view}, frame ${frame.index}, ${frame.t} s` });
  img.addEventListener("error", () => img.replaceWith(el("span", { class: "missing" }, "missing")), { once: true });
  return img;
}

function renderFrames(strip) {
  const box = el("div", { class: "frames-box" });
  if (strip.error) box.append(el("p", { class: "error-text frames-error" }, text(strip.error)), el("span", { class: "missing" }, "missing"));
  if (!strip.frames.length) return box;
  if (strip.layout === "grid") {
    box.append(...strip.frames.map((f) => image(f, "grid")));
    return box;
  }
  const views = [...new Set(strip.frames.map((f) => f.view))];
  const rows = views.map((v) => {
    const frames = strip.frames.filter((f) => f.view === v);
    return el("tr", {}, el("th", {}, `view ${v}`), ...frames.map((f) => el("td", {}, image(f))));
  });
  box.append(el("table", { class: "frames" }, el("tbody", {}, ...rows)));
  return box;
}

// Video players are made only for the samples in view (an IntersectionObserver with a margin)
// and released when they leave it or the page changes: Chromium refuses to make more than a
// fixed number of players per page (each holds a decoder), and an element merely dropped from
// the page keeps its player until garbage collection. Until a sample comes into view its videos
// are poster frames (the first thumbnail of the view), which cost nothing.
const VIDEO_MARGIN = "200px 0px";
const videoBoxes = new Set();  // the .videos boxes of the page shown
const videoObserver = typeof IntersectionObserver === "function"
  ? new IntersectionObserver((entries) => entries.forEach((e) => (e.isIntersecting ? attachPlayers : releasePlayers)(e.target)),
    { rootMargin: VIDEO_MARGIN })
  : null;

function renderVideos(videos, posters) {
  const box = el("div", { class: "videos" });
  const slots = [];
  for (const v of videos) {
    if (!v.src || !ownPath(v.src)) {
      box.append(el("span", { class: "missing" }, text(v.error || "video missing")));
      continue;
    }
    const slot = el("div", { class: "video-slot", title: `view ${v.view}` });
    slot.dataset.src = v.src;
    slot.dataset.view = text(v.view);
    const poster = posters(v.view);
    if (poster) slot.dataset.poster = poster;
    slot.append(posterOf(slot));
    slots.push(slot);
    box.append(slot);
  }
  if (!slots.length) return box;
  const play = el("button", { type: "button", class: "play" }, slots.length > 1 ? "▶ play views together" : "▶ play");
  play.addEventListener("click", () => {
    const players = attachPlayers(box);
    const paused = players.some((p) => p.paused);
    for (const p of players) {
      if (!paused) { p.pause(); continue; }
      p.currentTime = players[0].currentTime;
      p.play().catch((e) => playerFailed(p, `not played: ${e.message}`));
    }
  });
  box.prepend(play);
  videoBoxes.add(box);
  if (videoObserver) videoObserver.observe(box);
  else attachPlayers(box);
  return box;
}

// a view's poster: its first thumbnail, or a plain box naming the view
function posterOf(slot) {
  const name = `view ${slot.dataset.view}`;
  const src = slot.dataset.poster;
  return src ? el("img", { src, class: "poster", alt: name, loading: "lazy" })
    : el("span", { class: "poster no-poster" }, name);
}

// make the box's players (once); returns them
function attachPlayers(box) {
  const players = [];
  for (const slot of box.querySelectorAll(".video-slot")) {
    let video = slot.querySelector("video");
    if (!video) {
      video = el("video", { src: slot.dataset.src, preload: "metadata", muted: "", loop: "" });
      if (slot.dataset.poster) video.setAttribute("poster", slot.dataset.poster);
      video.muted = true;
      video.addEventListener("error", () => playerFailed(video, mediaError(video)));
      slot.replaceChildren(video);
    }
    players.push(video);
  }
  return players;
}

// pause and free the box's players (a player is destroyed once its element has no source)
function releasePlayers(box) {
  for (const slot of box.querySelectorAll(".video-slot")) {
    const video = slot.querySelector("video");
    if (!video) continue;
    video.pause();
    video.removeAttribute("src");
    video.load();
    slot.replaceChildren(posterOf(slot));
  }
}

function releaseAllPlayers() {
  for (const box of videoBoxes) {
    if (videoObserver) videoObserver.unobserve(box);
    releasePlayers(box);
  }
  videoBoxes.clear();
}

// what a browser says of a file that is not there (a link whose source moved, a report
// copied without its videos): "not supported", as of a format it cannot play
const NOT_THERE = " — or its file is not there: a linked video (--videos link) whose source " +
  "moved, or a report copied elsewhere without it (build it with --videos copy to take them)";

function mediaError(video) {
  const error = video.error;
  if (!error) return "video could not be played";
  const why = `video could not be played (${error.message || `media error ${error.code}`})`;
  return error.code === MediaError.MEDIA_ERR_SRC_NOT_SUPPORTED ? why + NOT_THERE : why;
}

// a player that fails says so next to its poster, rather than stay black
function playerFailed(video, message) {
  const slot = video.closest(".video-slot");
  if (!slot || slot.querySelector(".error-text")) return;
  slot.append(el("p", { class: "error-text video-error" }, message));
}
