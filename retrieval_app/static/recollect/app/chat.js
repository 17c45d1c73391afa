/* The chat page: conversations in the sidebar, one conversation resumed from its URL, answers streamed
   over the websocket and rendered as sanitised Markdown with numbered citations, and the source panel. */
(function () {
  "use strict";
  const R = window.Recollect;
  const { el, api } = R;
  const $ = (id) => document.getElementById(id);
  const log = $("log"), input = $("message"), send = $("send"), stop = $("stop");
  const URI = /\[?(viking:\/\/[\w\-\/.]*[\w\/])\]?/g;
  const TITLED_URI = /\s?\([^()\n]{0,300}?,\s*(viking:\/\/[\w\-\/.]*[\w\/])\)/g;
  const MOODS = { confident: "Confident", uncertain: "Uncertain", apologetic: "Sorry" };

  let sessionId = JSON.parse($("session-id").textContent) || null;
  let session = null;
  let current = null; // the answer being received: {node, body, state, text, citations, ...}
  let lastQuestion = "";
  let editing = false; // the composer holds the last question, to replace it when sent
  let lastArchived = false; // the last question is in an archive: it can be asked again, not rewritten
  let sessionsPage = 1;
  let committing = false;
  const shownArchives = new Set();

  // --- Sidebar ---------------------------------------------------------------------------------------
  function sessionItem(s) {
    const link = el("a", { href: `/chat/${s.session_id}`, dataset: { id: s.session_id } },
      el("span", { className: "title", textContent: s.title || "Untitled conversation" }),
      el("span", { className: "meta", textContent: [R.when(s.last_message_at || s.created_at), `${s.message_count || 0} messages`, s.agent_id && `agent ${s.agent_id}`].filter(Boolean).join(" · ") }));
    if (s.session_id === sessionId) link.setAttribute("aria-current", "page");
    return el("li", {}, link);
  }

  async function loadSessions(reset = true) {
    if (reset) sessionsPage = 1;
    const params = new URLSearchParams({ page: sessionsPage });
    const q = $("session-search").value.trim(), agent = $("agent-filter").value.trim();
    if (q) params.set("q", q);
    if (agent) params.set("agent_id", agent);
    const list = $("sessions");
    try {
      const data = await api(`/api/sessions?${params}`);
      if (reset) list.textContent = "";
      for (const s of data.results) list.append(sessionItem(s));
      if (reset && !data.results.length) list.append(el("li", { className: "muted small padded", textContent: q || agent ? "No conversation matches." : "No conversations yet." }));
      $("more-sessions").hidden = !data.next;
    } catch (exc) {
      list.textContent = "";
      list.append(el("li", { className: "error-text small padded", textContent: `Could not load conversations: ${exc.message}` }));
    }
  }
  let searchTimer = null;
  for (const id of ["session-search", "agent-filter"]) {
    $(id).addEventListener("input", () => { clearTimeout(searchTimer); searchTimer = setTimeout(() => loadSessions(true), 250); });
  }
  $("more-sessions").addEventListener("click", () => { sessionsPage += 1; loadSessions(false); });
  $("sidebar-open").addEventListener("click", () => { $("sidebar").classList.add("open"); $("session-search").focus(); });
  $("sidebar-close").addEventListener("click", () => $("sidebar").classList.remove("open"));

  // --- Rendering turns -----------------------------------------------------------------------------
  function clearEmpty() { const empty = $("empty"); if (empty) empty.remove(); }

  function userTurn(text, id) {
    clearEmpty();
    const node = el("div", { className: "msg user", id: id ? `m-${id}` : undefined },
      el("div", { className: "who-label", textContent: "You" }),
      el("div", { className: "body", textContent: text }));
    log.append(node);
    lastQuestion = text;
    refreshTurnActions();
    return node;
  }

  function assistantTurn(id) {
    clearEmpty();
    const body = el("div", { className: "body" });
    const actions = el("div", { className: "actions" });
    const sources = el("div", { className: "sources", "aria-label": "Sources" });
    const node = el("div", { className: "msg assistant", id: id ? `m-${id}` : undefined },
      el("div", { className: "who-label", textContent: "Recollect" }), body, sources, actions);
    log.append(node);
    return { node, body, actions, sources, text: "", citations: [], mood: null };
  }

  function renderAnswer(turn) {
    const index = new Map(turn.citations.map((c, i) => [c.uri, i + 1]));
    // The built-in engine ends a quote with "(its title, its URI)": the marker and the chip say as much.
    const markdown = turn.text.replace(TITLED_URI, " $1").replace(URI, (_, uri) => {
      let n = index.get(uri);
      if (!n) { turn.citations.push({ uri, title: "" }); n = turn.citations.length; index.set(uri, n); }
      return `[${n}](#cite-${n})`;
    });
    R.renderMarkdown(markdown, turn.body);
    for (const link of turn.body.querySelectorAll('a[href^="#cite-"]')) {
      const n = Number(link.getAttribute("href").slice(6));
      const source = turn.citations[n - 1];
      link.className = "cite";
      link.setAttribute("aria-label", `Source ${n}: ${source.title || source.uri}`);
      link.title = source.title || source.uri;
      link.addEventListener("click", (event) => { event.preventDefault(); openSource(source, n); });
    }
    renderSources(turn);
  }

  function renderSources(turn) {
    turn.sources.textContent = "";
    turn.citations.forEach((source, i) => {
      turn.sources.append(el("button", {
        type: "button", className: "source-chip", title: source.uri,
        textContent: `${i + 1} · ${source.title || labelOf(source)}`,
        onclick: () => openSource(source, i + 1),
      }));
    });
  }

  function labelOf(source) {
    const origin = source.origin || originOf(source.uri);
    return { memory: "a memory", conversation: "an earlier conversation", document: "a document" }[origin] || "source";
  }
  function originOf(uri) {
    if (uri.startsWith("viking://user/")) return "memory";
    if (uri.startsWith("viking://session/")) return "conversation";
    return "document";
  }

  function setMood(turn, mood, reason) {
    turn.mood = mood;
    if (!mood) return;
    const chip = el("span", { className: `mood ${mood}`, textContent: MOODS[mood] || mood, title: reason || "" });
    if (reason) chip.setAttribute("aria-label", `${MOODS[mood] || mood}: ${reason}`);
    turn.actions.prepend(chip);
  }

  // What was noted from the question as it was said (a new or corrected memory), under its answer.
  function showRemembered(turn, remembered) {
    const noted = (remembered || []).filter((m) => m.change !== "unchanged");
    if (!noted.length) return;
    const item = (m) => el("li", {}, el("span", { textContent: m.content }),
      m.change === "updated" && m.previous ? el("span", { className: "muted", textContent: ` (was: ${m.previous})` }) : null);
    turn.node.insertBefore(el("div", { className: "remembered", role: "status" },
      el("strong", { textContent: noted.length > 1 ? "Remembered these:" : "Remembered:" }),
      el("ul", {}, noted.map(item)),
      el("a", { href: "/memories/", textContent: "See all memories" })), turn.actions);
  }

  function finishActions(turn) {
    turn.actions.append(
      el("button", { type: "button", className: "icon", textContent: "Copy", "aria-label": "Copy the answer", onclick: (e) => R.copyText(turn.text, e.currentTarget) }),
      el("button", { type: "button", className: "icon regenerate", textContent: "Regenerate", "aria-label": "Ask the last question again", onclick: regenerate }),
    );
    refreshTurnActions();
  }

  // Regenerate belongs to the last answer, Edit to the last question; earlier ones lose them.
  // An exchange already remembered (archived) is never rewritten: ask again instead.
  function refreshTurnActions() {
    const answers = log.querySelectorAll(".msg.assistant .regenerate");
    answers.forEach((b, i) => { b.hidden = i !== answers.length - 1 || lastArchived; b.disabled = !!current; });
    log.querySelectorAll(".msg.user .edit").forEach((b) => b.remove());
    const questions = log.querySelectorAll(".msg.user");
    const last = questions[questions.length - 1];
    if (last && !current && !lastArchived) {
      last.append(el("div", { className: "actions edit" },
        el("button", { type: "button", className: "icon", textContent: "Edit", "aria-label": "Edit and send the last question again", onclick: () => editLast(true) })));
    }
  }

  function renderStored(message) {
    if (message.role === "system") return;
    if (message.role === "user") { lastArchived = !!message.archive_uri; userTurn(message.content, message.id); return; }
    const turn = assistantTurn(message.id);
    const meta = message.metadata || {};
    turn.text = message.content;
    turn.citations = (meta.citations || (meta.context_uris || []).map((uri) => ({ uri, title: "" }))).map((c) => ({ ...c }));
    renderAnswer(turn);
    if (meta.status && meta.status !== "complete") turn.actions.append(el("span", { className: "muted small", textContent: `(${meta.status === "cancelled" ? "stopped" : meta.status})` }));
    if (meta.error) turn.node.insertBefore(el("div", { className: "error-box", textContent: meta.error }), turn.actions);
    showRemembered(turn, meta.remembered);
    finishActions(turn);
    setMood(turn, meta.mood);
  }

  // --- The session ---------------------------------------------------------------------------------
  function showSession(data) {
    session = data;
    $("conv-title").textContent = data.title || "Untitled conversation";
    document.title = `${data.title || "Conversation"} · Recollect`;
    $("conv-id").textContent = data.session_id.slice(0, 8);
    $("copy-id").title = `Copy the session id ${data.session_id}`;
    $("conv-tools").hidden = false;
    renderArchives(data.archives || []);
    const questions = (data.messages || []).filter((m) => m.role === "user");
    if (questions.length && !current) { lastArchived = !!questions[questions.length - 1].archive_uri; refreshTurnActions(); }
  }

  function renderArchives(archives) {
    const box = $("archives");
    box.textContent = "";
    if (!archives.length) return;
    const total = session.archives_count || archives.length;
    const shown = total > archives.length ? ` (the latest ${archives.length} below)` : "";
    const details = el("details", {}, el("summary", { textContent: `Remembered so far: ${total} archive${total > 1 ? "s" : ""}${shown}` }));
    for (const a of archives) {
      // The overview is lines ("Topic: …", "Key facts:", "- …"), shown as written.
      const overview = el("div", { className: "small pre-line", textContent: a.overview || "" });
      details.append(el("div", { className: "archive-entry" },
        el("strong", { textContent: `#${a.index} · ${a.message_count} messages · ` }), el("span", { textContent: a.abstract || "" }), overview));
    }
    box.append(details);
  }

  // /chat/<id>#m-<message id>: the turn a citation or a link points at.
  function showTurn() {
    const target = location.hash.startsWith("#m-") && document.getElementById(location.hash.slice(1));
    if (!target) return false;
    for (const node of log.querySelectorAll(".highlight")) node.classList.remove("highlight");
    target.classList.add("highlight");
    target.scrollIntoView({ block: "center" });
    return true;
  }

  // A session answers its latest turns; earlier ones come a page at a time, above them, on demand (or
  // until a linked turn is reached), so a long conversation opens as fast as a short one.
  const EARLIER_PAGE = 200;
  let earlierCursor = null;
  let earlierButton = null;

  function showEarlierButton() {
    if (earlierButton) earlierButton.remove();
    earlierButton = null;
    if (!earlierCursor) return;
    earlierButton = el("button", { type: "button", className: "link earlier", style: "align-self:center", textContent: "Show earlier messages", onclick: () => loadEarlier().catch((exc) => R.toast(`Could not load earlier messages: ${exc.message}`, "error")) });
    log.prepend(earlierButton);
  }

  async function loadEarlier() {
    if (!earlierCursor) return;
    if (earlierButton) earlierButton.disabled = true;
    const page = await api(`/api/sessions/${sessionId}/messages?${new URLSearchParams({ cursor: earlierCursor, limit: EARLIER_PAGE })}`);
    // Turns render at the end of the log; they are moved above the ones shown, keeping the reader's place.
    const first = earlierButton ? earlierButton.nextSibling : log.firstChild;
    const kept = { lastArchived, lastQuestion }, height = log.scrollHeight;
    const start = log.childNodes.length;
    for (const message of page.results) renderStored(message);
    for (const node of Array.from(log.childNodes).slice(start)) log.insertBefore(node, first);
    ({ lastArchived, lastQuestion } = kept);
    refreshTurnActions();
    earlierCursor = page.previous;
    showEarlierButton();
    log.scrollTop += log.scrollHeight - height;
  }

  // A link to an earlier turn (a citation of this conversation) pages back until that turn is shown.
  async function revealTurn() {
    while (location.hash.startsWith("#m-") && !document.getElementById(location.hash.slice(1)) && earlierCursor) await loadEarlier();
    return showTurn();
  }

  async function loadSession() {
    if (!sessionId) return;
    try {
      const data = await api(`/api/sessions/${sessionId}`);
      showSession(data);
      for (const message of data.messages) renderStored(message);
      earlierCursor = data.messages_previous;
      showEarlierButton();
      if (!(await revealTurn())) log.scrollTop = log.scrollHeight;
    } catch (exc) {
      log.append(el("div", { className: "error-box", textContent: `This conversation could not be loaded: ${exc.message}` }));
    }
  }

  $("copy-id").addEventListener("click", (e) => R.copyText(sessionId, e.currentTarget));
  $("rename").addEventListener("click", () => {
    const title = $("conv-title");
    const field = el("input", { type: "text", value: session.title || "", "aria-label": "New title", maxLength: 255 });
    let done = false;
    const finish = async (save) => {
      if (done) return;
      done = true;
      field.replaceWith(title);
      if (save && field.value.trim() !== session.title) {
        try { showSession({ ...session, ...(await api(`/api/sessions/${sessionId}`, { method: "PATCH", body: { title: field.value.trim() } })) }); loadSessions(); }
        catch (exc) { R.toast(`Could not rename: ${exc.message}`, "error"); }
      }
      $("rename").focus();
    };
    field.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); finish(true); } if (e.key === "Escape") finish(false); });
    field.addEventListener("blur", () => finish(true), { once: true });
    title.replaceWith(field);
    field.focus(); field.select();
  });
  $("delete").addEventListener("click", async () => {
    if (!(await R.confirmAction("Delete this conversation? Its messages, archives and the memories learned only from it are deleted too."))) return;
    try { await api(`/api/sessions/${sessionId}`, { method: "DELETE" }); location.href = "/chat/"; }
    catch (exc) { R.toast(`Could not delete: ${exc.message}`, "error"); }
  });
  $("commit").addEventListener("click", async (e) => {
    const button = e.currentTarget;
    button.disabled = true;
    committing = true;
    const state = el("div", { className: "learned state" }, el("span", { className: "spinner" }), "Remembering this conversation…");
    log.append(state); log.scrollTop = log.scrollHeight;
    try {
      const result = await api(`/api/sessions/${sessionId}/commit`, { method: "POST", body: {} });
      if (result.archive) shownArchives.add(result.archive.uri);
      state.replaceWith(learned(result.message, result.memory_diff, result.committed));
      const data = await api(`/api/sessions/${sessionId}`);
      showSession(data);
      loadSessions();
    } catch (exc) {
      state.replaceWith(el("div", { className: "error-box", textContent: `Could not remember this conversation: ${exc.message}` }));
    } finally { button.disabled = false; committing = false; log.scrollTop = log.scrollHeight; }
  });

  // What a commit kept, by label: new, updated, and what was already remembered (noted as it was said),
  // so that remembering a conversation whose facts were noted during it still says they are kept.
  function learned(message, diff, committed) {
    diff = { created: [], updated: [], unchanged: [], ...(diff || {}) };
    const box = el("div", { className: "learned", role: "status" }, el("strong", { textContent: committed ? "Remembered. " : "" }), el("span", { textContent: message || "" }));
    const line = (m) => el("li", {}, el("span", { className: "muted", textContent: `${m.label || m.key}: ` }), el("span", { textContent: m.content }),
      m.previous ? el("span", { className: "muted", textContent: ` (was: ${m.previous})` }) : null);
    const list = (label, items) => items.length ? el("div", {}, el("div", { textContent: `${label} (${items.length})` }), el("ul", {}, items.map(line))) : null;
    const nothing = !diff.created.length && !diff.updated.length && !diff.unchanged.length;
    box.append(...[
      list("New memories", diff.created),
      list("Updated", diff.updated),
      list("Already remembered", diff.unchanged),
      committed && nothing ? el("div", { className: "muted", textContent: "Nothing new was learned about you." }) : null,
      el("a", { href: "/memories/", textContent: "See all memories" }),
    ].filter(Boolean));
    return box;
  }

  // --- The documents a turn answers from ------------------------------------------------------------
  const scopeBoxes = () => [...$("scope").querySelectorAll("input[type=checkbox]")];
  const scopeIds = () => scopeBoxes().filter((box) => box.checked).map((box) => box.value);
  function scopeLabel() {
    const chosen = scopeBoxes().filter((box) => box.checked);
    $("scope-label").textContent = !chosen.length ? "all my documents"
      : chosen.length === 1 ? chosen[0].parentElement.textContent.trim() : `${chosen.length} documents`;
  }
  $("scope").addEventListener("change", scopeLabel);
  document.addEventListener("click", (e) => { if (!$("scope").contains(e.target)) $("scope").open = false; });
  scopeLabel();

  // --- Sending and receiving -------------------------------------------------------------------------
  function busy(on) {
    send.disabled = on;
    stop.hidden = !on;
    refreshTurnActions();
  }

  function setState(turn, text) {
    if (!turn.state) { turn.state = el("div", { className: "state" }); turn.node.insertBefore(turn.state, turn.body); }
    turn.state.textContent = "";
    turn.state.append(el("span", { className: "spinner", "aria-hidden": "true" }), text);
  }
  function clearState(turn) { if (turn.state) { turn.state.remove(); turn.state = null; } }

  // Edit: the last question goes back into the composer; sending it replaces that question and its
  // answer (on the server too, so a reload shows the conversation as it now reads).
  function editLast(on) {
    editing = on && !!lastQuestion && !!sessionId;
    $("editing").hidden = !editing;
    if (editing) { input.value = lastQuestion; input.focus(); autosize(); }
  }

  // The last question and what followed it: what Regenerate and Edit replace.
  function lastExchangeNodes() {
    const questions = log.querySelectorAll(".msg.user");
    const last = questions[questions.length - 1];
    if (!last) return [];
    const nodes = [];
    for (let node = last; node; node = node.nextElementSibling) nodes.push(node);
    return nodes;
  }

  function ask(text, { replace = false } = {}) {
    text = text.trim();
    if (!text || current) return;
    if (R.socket.signedOut) { R.banner("You are signed out, so nothing can be sent. Reload the page to sign in again.", "error"); return; }
    const frame = { type: "chat", message: text };
    if (sessionId) frame.session_id = sessionId;
    let replaced = [];
    if (replace && sessionId) {
      frame.replace_last = true;
      // Hidden until the server has replaced them, and shown again if it refuses.
      replaced = lastExchangeNodes();
      replaced.forEach((node) => { node.hidden = true; });
    }
    const edited = editing;
    editLast(false);
    lastArchived = false;
    const chosen = scopeIds();
    if (chosen.length === 1) frame.doc_id = chosen[0];
    else if (chosen.length > 1) frame.doc_ids = chosen;
    userTurn(text);
    current = assistantTurn();
    current.frame = frame;
    current.edited = edited;
    current.replaced = replaced;
    current.question = log.querySelectorAll(".msg.user")[log.querySelectorAll(".msg.user").length - 1];
    setState(current, R.socket.open ? "Searching your documents, memories and conversations…" : "Waiting for the connection to the server…");
    R.socket.sendSoon(frame);
    busy(true);
    log.scrollTop = log.scrollHeight;
  }

  function regenerate() { if (lastQuestion) ask(lastQuestion, { replace: true }); }

  let pending = false;
  function scheduleRender() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; if (current) { renderAnswer(current); log.scrollTop = log.scrollHeight; } });
  }

  function finish(turn, note) {
    clearState(turn);
    renderAnswer(turn);
    if (note) turn.actions.append(el("span", { className: "muted small", textContent: note }));
    finishActions(turn);
    current = null;
    busy(false);
    loadSessions();
    log.scrollTop = log.scrollHeight;  // the answer's mood, Copy and Regenerate in view
  }

  R.socket.on("context", (frame) => {
    if (!current) return;
    if (!sessionId) {
      sessionId = frame.session_id;
      history.replaceState(null, "", `/chat/${sessionId}`);
      api(`/api/sessions/${sessionId}`).then(showSession).catch(() => {});
      loadSessions();
    }
    current.replaced.forEach((node) => node.remove());
    current.replaced = [];
    current.citations = frame.context.map((c) => ({ ...c }));
    renderSources(current);
    if (frame.retrieval_error) current.node.insertBefore(el("div", { className: "error-box", textContent: frame.retrieval_error }), current.body);
    const n = frame.context.length;
    setState(current, n ? `Thinking with ${n} source${n > 1 ? "s" : ""}…` : "Nothing relevant found; answering…");
  });
  R.socket.on("token", (frame) => {
    if (!current) return;
    if (current.state) clearState(current);
    current.text += frame.token;
    scheduleRender();
  });
  R.socket.on("mood", (frame) => { if (current) current.pendingMood = frame; });
  R.socket.on("done", (frame) => {
    if (!current) return;
    const turn = current;
    turn.text = frame.message;
    const stopped = frame.status === "cancelled";
    const note = !frame.status ? "" : stopped && !turn.text ? "(stopped before answering)" : `(${stopped ? "stopped" : frame.status})`;
    showRemembered(turn, frame.remembered);
    finish(turn, note);
    // An answer stopped before its first word has nothing to lean on, confidently or not.
    if (turn.pendingMood && turn.text) setMood(turn, turn.pendingMood.mood, turn.pendingMood.mood_reason);
    log.scrollTop = log.scrollHeight;
  });
  R.socket.on("error", (frame) => {
    if (current && current.replaced.length) {
      // Refused before anything was written (the exchange is already remembered, say): as it was.
      const turn = current;
      turn.node.remove();
      turn.question.remove();
      turn.replaced.forEach((node) => { node.hidden = false; });
      current = null;
      busy(false);
      const questions = log.querySelectorAll(".msg.user .body");
      lastQuestion = questions.length ? questions[questions.length - 1].textContent : "";
      if (frame.code === "already_committed") lastArchived = true;
      // An edit refused keeps its words in the box, to be sent as a new question instead.
      if (turn.edited) { input.value = turn.frame.message; autosize(); input.focus(); }
      refreshTurnActions();
      R.toast(frame.error, "error");
    } else if (current) {
      const turn = current;
      turn.node.insertBefore(el("div", { className: "error-box", role: "alert", textContent: frame.error }), turn.actions);
      finish(turn);
      if (turn.pendingMood) setMood(turn, turn.pendingMood.mood, turn.pendingMood.mood_reason);
    } else if (frame.code === "unavailable") R.banner(frame.error, "error");
    else R.toast(frame.error, "error");
  });
  R.socket.on("rejected", (frame) => R.toast(frame.error, "error"));
  R.socket.on("commit", (frame) => {
    // A commit asked for on this page is shown by its own answer; the push is for automatic ones.
    if (frame.session_id !== sessionId || committing || shownArchives.has(frame.archive_uri)) return;
    log.append(learned(`This conversation was remembered automatically: ${frame.abstract || ""}`, frame.memory_diff, true));
    api(`/api/sessions/${sessionId}`).then(showSession).catch(() => {});
    loadSessions();
  });
  R.socket.on("_close", (frame) => {
    if (current && !R.socket.waiting.includes(current.frame)) {
      const turn = current;
      turn.node.insertBefore(el("div", { className: "error-box", role: "alert", textContent: "The connection was lost, so this answer stopped. Your message was saved; Regenerate to ask again." }), turn.actions);
      finish(turn);
    }
  });
  R.socket.on("_open", () => { R.banner(""); if (current && current.state && !current.citations.length) setState(current, "Searching your documents, memories and conversations…"); });
  R.socket.onStatus((open, text) => { $("socket-state").textContent = open ? "" : text + "…"; });

  $("composer").addEventListener("submit", (e) => { e.preventDefault(); const text = input.value; if (text.trim() && !current) { input.value = ""; autosize(); ask(text, { replace: editing }); } });
  $("cancel-edit").addEventListener("click", () => { editLast(false); input.value = ""; autosize(); });
  input.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && editing) { e.preventDefault(); editLast(false); input.value = ""; autosize(); return; }
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); $("composer").requestSubmit(); }
  });
  function autosize() { input.style.height = "auto"; input.style.height = `${Math.min(input.scrollHeight + 2, 192)}px`; }
  input.addEventListener("input", autosize);
  stop.addEventListener("click", () => {
    // Not sent yet (no connection): take it back rather than cancel an answer that never started.
    if (current && R.socket.unsend(current.frame)) { const turn = current; finish(turn, "(not sent: there was no connection)"); return; }
    R.socket.send({ type: "cancel" });
  });

  // --- The source panel ----------------------------------------------------------------------------
  function panelOpen(title) {
    $("panel").hidden = false;
    document.querySelector("main").classList.add("with-panel");
    $("panel-title").textContent = title;
    $("panel-body").textContent = "";
    return $("panel-body");
  }
  $("panel-close").addEventListener("click", () => { $("panel").hidden = true; document.querySelector("main").classList.remove("with-panel"); });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape" && !$("panel").hidden) $("panel-close").click(); });

  function tier(label, text, markdown = false) {
    const body = el("div", {});
    if (markdown) R.renderMarkdown(text || "(empty)", body); else body.textContent = text || "(empty)";
    return el("div", { className: "tier" }, el("h3", { textContent: label }), body);
  }

  async function openSource(source, n) {
    const origin = source.origin || originOf(source.uri);
    const body = panelOpen(`[${n}] ${source.title || labelOf(source)}`);
    body.append(el("p", { className: "muted small" }, el("span", { className: "badge", textContent: origin }), " ", el("span", { className: "mono", textContent: source.uri })));
    try {
      if (origin === "document") await documentSource(source, body);
      else if (origin === "memory") await memorySource(source, body);
      else conversationSource(source, body);
    } catch (exc) {
      body.append(el("div", { className: "error-box", textContent: exc.status === 404 ? "This source no longer exists (it was deleted or re-indexed)." : `Could not load the source: ${exc.message}` }));
    }
    $("panel-close").focus();
  }

  const read = (uri, level) => api(`/api/fs/read?${new URLSearchParams({ uri, level })}`);

  async function documentSource(source, body) {
    const match = source.uri.match(/^(viking:\/\/resources\/users\/\d+\/documents\/[0-9a-f-]{36})(.*)$/i);
    const docUri = match ? match[1] : source.uri;
    const parent = source.uri.includes("/chunk_") ? source.uri.slice(0, source.uri.lastIndexOf("/")) : null;
    const [doc, section, l0, l1] = await Promise.all([
      read(docUri, "L0"),
      parent && parent !== docUri ? read(parent, "L0") : Promise.resolve(null),
      source.abstract !== undefined ? Promise.resolve({ text: source.abstract }) : read(source.uri, "L0"),
      source.overview !== undefined ? Promise.resolve({ text: source.overview }) : read(source.uri, "L1"),
    ]);
    const docId = match ? match[1].split("/").pop() : "";
    body.append(el("p", {}, el("strong", { textContent: "Document: " }), el("a", { href: `/documents/?doc=${docId}`, textContent: doc.title || "untitled" }),
      section ? el("span", {}, el("br"), el("strong", { textContent: "Section: " }), el("span", { textContent: section.title || "(untitled section)" })) : null));
    if (source.text && source.level) body.append(tier(`Passage used (${source.level})`, source.text));
    body.append(tier("L0 · abstract", l0.text), tier("L1 · overview", l1.text));
    const full = el("div", { className: "tier" });
    const button = el("button", { type: "button", textContent: "Show the full text (L2)", onclick: async () => {
      button.disabled = true;
      try { const l2 = await read(source.uri, "L2"); full.append(el("h3", { textContent: "L2 · full text" }), el("div", { className: "l2", textContent: l2.text })); button.remove(); }
      catch (exc) { button.disabled = false; full.append(el("div", { className: "error-box", textContent: `Could not read the full text: ${exc.message}` })); }
    } });
    full.append(button);
    body.append(full);
  }

  async function memorySource(source, body) {
    const id = source.uri.split("/").pop();
    const memory = await api(`/api/memories/${id}`);
    body.append(el("p", {}, el("span", { className: "badge", textContent: memory.category }), " ", el("strong", { textContent: memory.label || memory.key })));
    body.append(tier("Memory", memory.content));
    if (memory.history && memory.history.length) body.append(tier("Earlier texts", memory.history.map((h) => `• ${h.content}`).join("\n")));
    if (memory.session_id) body.append(el("p", {}, el("a", { href: `/chat/${memory.session_id}${memory.source_message_id ? `#m-${memory.source_message_id}` : ""}`, textContent: "Open the conversation it came from, at that turn" })));
    body.append(el("p", {}, el("a", { href: `/memories/?q=${encodeURIComponent(memory.label || memory.key)}`, textContent: "See it among your memories" })));
  }

  function conversationSource(source, body) {
    const parts = source.uri.replace("viking://session/", "").split("/");
    const sid = source.session_id || parts[0];
    const mid = parts[1] === "messages" ? parts[2] : "";
    if (source.created_at) body.append(el("p", { className: "muted", textContent: `Said ${new Date(source.created_at).toLocaleString()}` }));
    if (source.text) body.append(tier("Passage", source.text));
    body.append(el("p", {}, el("a", { href: `/chat/${sid}${mid ? `#m-${mid}` : ""}`, textContent: "Open that conversation at this turn" })));
  }

  // --- Said once: no language model is configured ---------------------------------------------------
  // Shown until dismissed, and remembered by this browser, rather than repeated in every answer.
  const NOTICE_DISMISSED = "recollect:model-notice-dismissed";
  const notice = $("model-notice");
  if (notice) {
    let dismissed = false;
    try { dismissed = localStorage.getItem(NOTICE_DISMISSED) === "1"; } catch (_) { /* storage blocked: shown */ }
    notice.hidden = dismissed;
    $("model-notice-close").addEventListener("click", () => {
      notice.hidden = true;
      try { localStorage.setItem(NOTICE_DISMISSED, "1"); } catch (_) { /* hidden for this page only */ }
      input.focus();
    });
  }

  // --- Start -----------------------------------------------------------------------------------------
  window.addEventListener("hashchange", () => revealTurn().catch((exc) => R.toast(`Could not load earlier messages: ${exc.message}`, "error")));
  loadSessions();
  loadSession();
  R.socket.connect();
  input.focus();
})();
