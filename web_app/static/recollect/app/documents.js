/* The documents page: uploads (button or drag and drop, checked against the limits first), the list
   with each document's status and title pushed over the websocket, rename, reindex, delete, and the
   tree browser. What the page knows is in `state`, changed only by the actions named after what the
   person did (uploadFiles, renameDocument, deleteDocument, ...) or what the server said (receiveDocument). */
(function () {
  "use strict";
  const R = window.Recollect;
  const { el, api } = R;
  const $ = (id) => document.getElementById(id);
  const MAX = JSON.parse($("max-bytes").textContent);
  const EXTENSIONS = JSON.parse($("extensions").textContent).split(",");
  const STATUS = { pending: "waiting to be indexed", indexing: "indexing…", ready: "ready", failed: "failed" };
  const MAX_TITLE = 512;
  const STUCK_AFTER_MS = 8000; // a document waiting this long with no news: is any worker indexing?
  const UPLOAD_LINE_MS = 6000; // an upload's line stays this long once its row is in the list
  const LINE_REFRESH_MS = 1500; // once a document is done, the places of those waiting are read again after this
  const state = {
    rows: new Map(), // doc_id -> {li, doc}: each document listed, as last told, and its row
    page: 1, // the pages shown so far
    stuckTimer: null, // the check for a worker, waiting for news of a pending document
    connectedOnce: false, // the socket opened before: opening again means pushes may have been missed
    lineTimer: null, // reading the waiting documents' places again, once one ahead of them is done
  };

  // --- The list --------------------------------------------------------------------------------------
  function statusBadge(doc) {
    const badge = el("span", { className: `badge ${doc.status}`, textContent: STATUS[doc.status] || doc.status });
    if (doc.status === "indexing" || doc.status === "pending") badge.prepend(el("span", { className: "spinner", "aria-hidden": "true" }), " ");
    return badge;
  }

  // "3rd in line · about 40 s": a waiting document's place in the person's line and its estimated wait.
  function placeInLine(queue) {
    if (!queue) return "";
    const n = queue.place;
    const suffix = n % 100 >= 11 && n % 100 <= 13 ? "th" : { 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th";
    const wait = queue.estimated_wait_s;
    const about = wait < 60 ? `${Math.max(1, Math.round(wait))} s` : wait < 3600 ? `${Math.round(wait / 60)} min` : `${(wait / 3600).toFixed(1)} h`;
    return n === 1 ? `next in line · about ${about}` : `${n}${suffix} in line · about ${about}`;
  }

  function plainError(error) {
    if (!error) return "";
    if (/text layer/i.test(error)) return `${error} (a scanned PDF needs text recognition first).`;
    if (/Waiting to retry/i.test(error)) return `${error.replace("Waiting to retry:", "The embedding model did not answer; it will be tried again:")}`;
    return error;
  }

  function docRow(doc) {
    const li = el("li", { dataset: { id: doc.doc_id }, id: `doc-${doc.doc_id}` });
    fillRow(li, doc);
    return li;
  }

  function fillRow(li, doc) {
    if (li.dataset.editing) return; // a rename in progress: the row is filled again once it is done
    li.textContent = "";
    const name = doc.title || doc.filename || "untitled";
    li.append(...[
      el("div", { className: "row" }, el("span", { className: "name grow", textContent: name }), statusBadge(doc)),
      el("div", { className: "muted small", textContent: [doc.filename !== name ? doc.filename : "", doc.size_bytes ? R.bytes(doc.size_bytes) : "", doc.node_count ? `${doc.node_count} nodes` : "", R.when(doc.created_at)].filter(Boolean).join(" · ") }),
      doc.status === "failed" ? el("div", { className: "error-box", role: "alert", textContent: `Could not index: ${plainError(doc.error)}` }) : null,
      doc.status === "pending" && doc.error ? el("div", { className: "muted small", textContent: plainError(doc.error) }) : null,
      doc.status === "pending" && doc.queue ? el("div", { className: "muted small queue-place", textContent: placeInLine(doc.queue) }) : null,
      el("div", { className: "row doc-actions" },
        el("button", { type: "button", className: "icon", textContent: "Browse", disabled: doc.status !== "ready", "aria-label": `Browse ${name}`, onclick: () => browseDocument(doc) }),
        el("a", { className: "button icon", href: `/chat/?doc=${doc.doc_id}`, textContent: "Chat about it", "aria-disabled": doc.status !== "ready" ? "true" : null, hidden: doc.status !== "ready" }),
        el("button", { type: "button", className: "icon", textContent: "Rename", "aria-label": `Rename ${name}`, onclick: () => renameDocument(li, doc.doc_id) }),
        el("button", { type: "button", className: "icon", textContent: "Reindex", "aria-label": `Reindex ${name}`, onclick: () => reindexDocument(doc) }),
        el("button", { type: "button", className: "icon danger", textContent: "Delete", "aria-label": `Delete ${name}`, onclick: () => deleteDocument(doc) })),
    ].filter(Boolean));
  }

  function upsert(doc, { prepend = false } = {}) {
    const known = state.rows.get(doc.doc_id);
    if (known) { known.doc = { ...known.doc, ...doc }; fillRow(known.li, known.doc); return; }
    const li = docRow(doc);
    state.rows.set(doc.doc_id, { li, doc });
    const list = $("documents");
    const placeholder = list.querySelector(".placeholder");
    if (placeholder) placeholder.remove();
    if (prepend) list.prepend(li); else list.append(li);
    count();
  }

  function count() { $("doc-count").textContent = state.rows.size ? `${state.rows.size} shown` : ""; }

  // The first page again, or the next one (more).
  async function listDocuments({ more = false } = {}) {
    state.page = more ? state.page + 1 : 1;
    try {
      const data = await api(`/api/documents?page=${state.page}`);
      if (!more) { $("documents").textContent = ""; state.rows.clear(); }
      for (const doc of data.results) upsert(doc);
      if (!state.rows.size) $("documents").append(el("li", { className: "muted placeholder", textContent: "No documents yet. Upload one above." }));
      $("more-docs").hidden = !data.next;
      checkStuck();
      const wanted = new URLSearchParams(location.search).get("doc");
      if (!more && wanted && state.rows.get(wanted)) { state.rows.get(wanted).li.scrollIntoView({ block: "center" }); if (state.rows.get(wanted).doc.status === "ready") browseDocument(state.rows.get(wanted).doc); }
    } catch (exc) {
      $("documents").textContent = "";
      $("documents").append(el("li", { className: "error-text", textContent: `Could not load your documents: ${exc.message}` }));
    }
  }

  // A document waiting with no news for a while: is any worker indexing at all?
  function checkStuck() {
    clearTimeout(state.stuckTimer);
    const waiting = [...state.rows.values()].some((r) => r.doc.status === "pending");
    if (!waiting) { R.banner(""); return; }
    state.stuckTimer = setTimeout(async () => {
      try {
        const health = await fetch("/api/health?deep=1", { credentials: "same-origin" }).then((r) => r.json());
        if (health.workers && !health.workers.ok) R.banner("Documents are not being indexed right now: no indexing worker is running. Uploads are kept and will be indexed once it is back.", "error");
      } catch (_) { R.banner("The server cannot be reached, so documents are not being indexed right now.", "error"); }
    }, STUCK_AFTER_MS);
  }

  function receiveDocument(event) {
    if (event.status === "deleted") { const row = state.rows.get(event.doc_id); if (row) { row.li.remove(); state.rows.delete(event.doc_id); count(); } return; }
    if (state.rows.has(event.doc_id)) { const known = state.rows.get(event.doc_id).doc; if (event.title && event.title !== known.title) renamed({ ...known, ...event }); else upsert(event); }
    else api(`/api/documents/${event.doc_id}`).then((doc) => upsert(doc, { prepend: true })).catch(() => {});
    if (event.status !== "pending") R.banner("");
    if (event.status === "ready" || event.status === "failed") lineMoved();
    checkStuck();
  }
  // A document is done: those waiting behind it moved up. Their places are read again once, shortly.
  function lineMoved() {
    if (state.lineTimer || ![...state.rows.values()].some((r) => r.doc.status === "pending")) return;
    state.lineTimer = setTimeout(async () => {
      state.lineTimer = null;
      try {
        const data = await api("/api/documents?page=1");
        for (const doc of data.results) if (state.rows.has(doc.doc_id)) upsert(doc);
      } catch (_) { /* the next document done tries again */ }
    }, LINE_REFRESH_MS);
  }
  // Missed pushes while disconnected: read the list again once the socket is back.
  function connectionBack() {
    if (state.connectedOnce) listDocuments();
    state.connectedOnce = true;
  }

  // Renaming: the name becomes a field in place; Enter or leaving it saves, Escape keeps the old name.
  function renameDocument(li, docId) {
    const row = state.rows.get(docId);
    const span = li.querySelector(".name");
    if (!row || !span) return;
    const before = row.doc.title || row.doc.filename || "";
    const field = el("input", { type: "text", className: "grow", value: before, maxLength: MAX_TITLE, "aria-label": "New title", autocomplete: "off" });
    li.dataset.editing = "1";
    let done = false;
    const finish = async (save) => {
      if (done) return;
      done = true;
      const title = field.value.replace(/\s+/g, " ").trim();
      delete li.dataset.editing;
      if (save && title && title !== before) {
        fillRow(li, { ...row.doc, title });
        try { renamed(await api(`/api/documents/${docId}`, { method: "PATCH", body: { title } })); R.toast(`Renamed to ${title}`); }
        catch (exc) { fillRow(li, state.rows.get(docId).doc); R.toast(`Could not rename: ${exc.message}`, "error"); }
      } else {
        if (save && !title) R.toast("A document needs a title; the old one is kept.", "error");
        fillRow(li, state.rows.get(docId).doc);
      }
      li.querySelector("button[aria-label^='Rename']")?.focus();
    };
    field.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); finish(true); } if (e.key === "Escape") { e.preventDefault(); finish(false); } });
    field.addEventListener("blur", () => finish(true), { once: true });
    span.replaceWith(field);
    field.focus(); field.select();
  }

  // A new title, from this page or pushed from another: the list and an open tree follow it.
  function renamed(doc) {
    upsert(doc);
    const tree = $("tree");
    if (tree.dataset.doc !== doc.doc_id) return;
    const root = tree.querySelector(":scope > li");
    const label = root && root.querySelector(":scope > button.node");
    if (label) { root.entry.title = doc.title; label.textContent = `▤ ${doc.title}`; }
    if (root && label && label.getAttribute("aria-selected") === "true") select(root);
  }

  async function reindexDocument(doc) {
    try { upsert(await api(`/api/documents/${doc.doc_id}/reindex`, { method: "POST" })); checkStuck(); }
    catch (exc) { R.toast(`Could not reindex: ${exc.message}`, "error"); }
  }

  async function deleteDocument(doc) {
    const name = doc.title || doc.filename;
    if (!(await R.confirmAction(`Delete “${name}”? Its sections, chunks and vectors go too; answers will no longer cite it.`))) return;
    try {
      await api(`/api/documents/${doc.doc_id}`, { method: "DELETE" });
      const row = state.rows.get(doc.doc_id);
      if (row) { row.li.remove(); state.rows.delete(doc.doc_id); count(); }
      if ($("tree").dataset.doc === doc.doc_id) { $("tree").textContent = ""; $("node").textContent = ""; $("tree-hint").hidden = false; }
      R.toast(`Deleted ${name}`);
    } catch (exc) { R.toast(`Could not delete: ${exc.message}`, "error"); }
  }

  // --- Uploads ---------------------------------------------------------------------------------------
  function refusal(file) {
    const dot = file.name.lastIndexOf(".");
    const ext = dot >= 0 ? file.name.slice(dot).toLowerCase() : "";
    if (!file.size) return "it is empty";
    if (file.size > MAX) return `it is ${R.bytes(file.size)}; the limit is ${R.bytes(MAX)}`;
    if (ext && !EXTENSIONS.includes(ext)) return `${ext} files cannot be read (readable: ${EXTENSIONS.join(" ")})`;
    return "";
  }

  async function upload(file) {
    const line = el("li", {}, el("span", { className: "name", textContent: file.name }), " ");
    $("uploads").prepend(line);
    const why = refusal(file);
    if (why) { line.append(el("span", { className: "error-text", textContent: `not uploaded: ${why}.` })); return; }
    const state = el("span", { className: "muted" }, el("span", { className: "spinner" }), " uploading…");
    line.append(state);
    const form = new FormData();
    form.append("file", file);
    try {
      const doc = await api("/api/documents/upload", { method: "POST", form });
      state.replaceWith(el("span", { className: "muted", textContent: doc.status === "ready" ? "already uploaded; ready." : "uploaded; indexing follows below." }));
      upsert(doc, { prepend: true });
      // Its status may have moved on while the answer travelled (pushes can arrive before it): read it once.
      if (doc.status !== "ready") api(`/api/documents/${doc.doc_id}`).then((fresh) => { upsert(fresh); checkStuck(); }).catch(() => {});
      checkStuck();
      setTimeout(() => line.remove(), UPLOAD_LINE_MS);
    } catch (exc) {
      state.replaceWith(el("span", { className: "error-text", role: "alert", textContent: `not uploaded: ${exc.message}` }));
    }
  }

  function uploadFiles(files) { for (const file of files) upload(file); }

  // --- The tree browser ----------------------------------------------------------------------------
  async function browseDocument(doc) {
    const tree = $("tree");
    tree.textContent = "";
    tree.dataset.doc = doc.doc_id;
    $("tree-hint").hidden = true;
    const root = nodeItem({ uri: doc.uri, kind: "document", title: doc.title || doc.filename, is_directory: true });
    tree.append(root);
    await expand(root);
    // A document under one heading (its title) opens down to where it branches.
    let node = root;
    for (let depth = 0; depth < 4; depth++) {
      const children = node.querySelectorAll(":scope > ul > li");
      if (children.length !== 1 || !children[0].entry.is_directory) break;
      node = children[0];
      await expand(node);
    }
    select(root);
    // On a phone the browser sits below the list: bring it into view.
    if (window.matchMedia("(max-width: 800px)").matches) $("browser").scrollIntoView({ behavior: "smooth" });
  }

  function nodeItem(entry) {
    const li = el("li", { role: "treeitem", dataset: { uri: entry.uri }, "aria-expanded": entry.is_directory ? "false" : null });
    const label = `${entry.kind === "chunk" ? "¶" : entry.kind === "section" ? "§" : "▤"} ${entry.title || entry.abstract || entry.uri.split("/").pop()}`;
    const button = el("button", { type: "button", className: "node", textContent: label, title: entry.abstract || "", onclick: () => { select(li); if (entry.is_directory) toggle(li); } });
    li.append(button);
    li.entry = entry;
    return li;
  }

  async function toggle(li) { if (li.getAttribute("aria-expanded") === "true") { li.querySelector("ul")?.remove(); li.setAttribute("aria-expanded", "false"); } else await expand(li); }

  async function expand(li) {
    try {
      const data = await api(`/api/fs/ls?${new URLSearchParams({ uri: li.dataset.uri })}`);
      const ul = el("ul", { className: "tree", role: "group" }, data.children.map(nodeItem));
      li.append(ul);
      li.setAttribute("aria-expanded", "true");
    } catch (exc) { li.append(el("div", { className: "error-text small", textContent: exc.message })); }
  }

  async function select(li) {
    for (const b of $("tree").querySelectorAll("button.node")) b.setAttribute("aria-selected", "false");
    li.querySelector("button.node").setAttribute("aria-selected", "true");
    const box = $("node");
    box.textContent = "";
    const uri = li.dataset.uri;
    const read = (level) => api(`/api/fs/read?${new URLSearchParams({ uri, level })}`);
    try {
      const [l0, l1] = await Promise.all([read("L0"), read("L1")]);
      box.append(el("h3", { textContent: `${l0.kind}: ${l0.title || "(untitled)"}` }), el("p", { className: "mono muted small", textContent: uri }),
        el("div", { className: "tier" }, el("strong", { textContent: "L0 · abstract" }), el("p", { textContent: l0.text || "(empty)" })),
        el("div", { className: "tier" }, el("strong", { textContent: "L1 · overview" }), el("p", { textContent: l1.text || "(empty)" })));
      const button = el("button", { type: "button", textContent: "Show the full text (L2)", onclick: async () => {
        button.disabled = true;
        try { const l2 = await read("L2"); button.replaceWith(el("div", { className: "tier" }, el("strong", { textContent: "L2 · full text" }), el("pre", { className: "full-text", textContent: l2.text }))); }
        catch (exc) { button.disabled = false; R.toast(exc.message, "error"); }
      } });
      box.append(button);
    } catch (exc) { box.append(el("div", { className: "error-box", textContent: exc.message })); }
  }

  // --- What a person can do, wired to the page; what the server says, to its actions ------------------
  $("more-docs").addEventListener("click", () => listDocuments({ more: true }));
  $("pick").addEventListener("click", () => $("files").click());
  $("files").addEventListener("change", (e) => { uploadFiles([...e.target.files]); e.target.value = ""; });
  const zone = $("dropzone");
  for (const type of ["dragenter", "dragover"]) zone.addEventListener(type, (e) => { e.preventDefault(); zone.classList.add("over"); });
  for (const type of ["dragleave", "drop"]) zone.addEventListener(type, (e) => { e.preventDefault(); zone.classList.remove("over"); });
  zone.addEventListener("drop", (e) => uploadFiles([...e.dataTransfer.files]));
  // A file dropped beside the zone must not make the browser leave the page to open it.
  window.addEventListener("dragover", (e) => e.preventDefault());
  window.addEventListener("drop", (e) => e.preventDefault());
  R.socket.on("document", receiveDocument);
  R.socket.on("_open", connectionBack);

  listDocuments();
  R.socket.connect();
})();
