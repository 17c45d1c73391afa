/* The chat page: conversations in the sidebar, one conversation resumed from its URL, answers streamed
   over the websocket and rendered as sanitised Markdown with numbered citations, and the source panel.

   What the page knows is kept in one object, `state`. It is changed only by the actions, each named after
   what the person did (sendMessage, openConversation, cancelAnswer, pageBackToEarlierTurns, ...) or what
   the server said (receiveSources, receiveAnswerEnd, ...); the render functions read it and draw. */
(function () {
  "use strict";
  const R = window.Recollect;
  const { el, api } = R;
  const $ = (id) => document.getElementById(id);
  const log = $("log"), input = $("message"), send = $("send"), stop = $("stop");
  const URI = /\[?(viking:\/\/[\w\-\/.]*[\w\/])\]?/g;
  const TITLED_URI = /\s?\([^()\n]{0,300}?,\s*(viking:\/\/[\w\-\/.]*[\w\/])\)/g;
  const MOODS = { confident: "Confident", uncertain: "Uncertain", apologetic: "Sorry" };
  const EARLIER_PAGE = 200; // turns asked for each time the reader pages back
  const SEARCH_DELAY_MS = 250; // typing in the sidebar's search waits this long before asking
  const COMPOSER_MAX_HEIGHT = 192; // px: the composer grows with its text up to this, then scrolls
  const NOTICE_DISMISSED = "recollect:model-notice-dismissed";
  const UNTITLED = "Untitled conversation";
  const SEARCHING = "Searching your documents, memories and conversations…";

  const state = {
    sessionId: JSON.parse($("session-id").textContent) || null,
    session: null, // the conversation as the server last described it
    answer: null, // the answer being received: {node, body, progress, text, citations, frame, ...}
    lastQuestion: "", // what Regenerate asks again and Edit puts back in the composer
    editing: false, // the composer holds the last question, to replace it when sent
    lastArchived: false, // the last question is in an archive: it can be asked again, not rewritten
    conversationsPage: 1, // the sidebar's pages shown so far
    conversationsAsked: 0, // listings of the sidebar asked for: only the latest is shown
    searchTimer: null, // the sidebar's search, waiting for the typing to pause
    earlierCursor: null, // where the turns above the first one shown begin; null once the first is shown
    committing: false, // a "Remember" asked for on this page is under way
    shownArchives: new Set(), // archives this page has already told of, not to be told twice
    drawScheduled: false, // the streamed answer is redrawn once per frame, not once per token
  };

  // --- The sidebar -----------------------------------------------------------------------------------
  function conversationItem(s) {
    const link = el("a", { href: `/chat/${s.session_id}`, dataset: { id: s.session_id } },
      el("span", { className: "title", textContent: s.title || UNTITLED }),
      el("span", { className: "meta", textContent: [R.when(s.last_message_at || s.created_at), `${s.message_count || 0} messages`, s.agent_id && `agent ${s.agent_id}`].filter(Boolean).join(" · ") }));
    if (s.session_id === state.sessionId) link.setAttribute("aria-current", "page");
    return el("li", {}, link);
  }

  // The sidebar's first page again (after anything that changes the list), or the next one (more). Only
  // the latest listing asked for is shown: a refresh after an answer that comes back after the search
  // typed meanwhile would otherwise replace the search's results with every conversation.
  async function listConversations({ more = false } = {}) {
    const asked = ++state.conversationsAsked;
    state.conversationsPage = more ? state.conversationsPage + 1 : 1;
    const params = new URLSearchParams({ page: state.conversationsPage });
    const q = $("session-search").value.trim(), agent = $("agent-filter").value.trim();
    if (q) params.set("q", q);
    if (agent) params.set("agent_id", agent);
    const list = $("sessions");
    try {
      const data = await api(`/api/sessions?${params}`);
      if (asked !== state.conversationsAsked) return;
      if (!more) list.textContent = "";
      for (const s of data.results) list.append(conversationItem(s));
      if (!more && !data.results.length) list.append(el("li", { className: "muted small padded", textContent: q || agent ? "No conversation matches." : "No conversations yet." }));
      $("more-sessions").hidden = !data.next;
    } catch (exc) {
      if (asked !== state.conversationsAsked) return;
      list.textContent = "";
      list.append(el("li", { className: "error-text small padded", textContent: `Could not load conversations: ${exc.message}` }));
    }
  }

  function searchConversations() {
    clearTimeout(state.searchTimer);
    state.searchTimer = setTimeout(() => listConversations(), SEARCH_DELAY_MS);
  }
  const showMoreConversations = () => listConversations({ more: true });

  // --- Rendering turns -----------------------------------------------------------------------------
  function clearEmpty() { const empty = $("empty"); if (empty) empty.remove(); }

  function userTurn(text, id) {
    clearEmpty();
    const node = el("div", { className: "msg user", id: id ? `m-${id}` : undefined },
      el("div", { className: "who-label", textContent: "You" }),
      el("div", { className: "body", textContent: text }));
    log.append(node);
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
    return { node, body, actions, sources, progress: null, text: "", citations: [] };
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

  function renderMood(turn, mood, reason) {
    if (!mood) return;
    const chip = el("span", { className: `mood ${mood}`, textContent: MOODS[mood] || mood, title: reason || "" });
    if (reason) chip.setAttribute("aria-label", `${MOODS[mood] || mood}: ${reason}`);
    turn.actions.prepend(chip);
  }

  // What was noted from the question as it was said (a new or corrected memory), under its answer.
  function renderRemembered(turn, remembered) {
    const noted = (remembered || []).filter((m) => m.change !== "unchanged");
    if (!noted.length) return;
    const item = (m) => el("li", {}, el("span", { textContent: m.content }),
      m.change === "updated" && m.previous ? el("span", { className: "muted", textContent: ` (was: ${m.previous})` }) : null);
    turn.node.insertBefore(el("div", { className: "remembered", role: "status" },
      el("strong", { textContent: noted.length > 1 ? "Remembered these:" : "Remembered:" }),
      el("ul", {}, noted.map(item)),
      el("a", { href: "/memories/", textContent: "See all memories" })), turn.actions);
  }

  function renderError(turn, text, { alert = false, before = turn.actions } = {}) {
    turn.node.insertBefore(el("div", { className: "error-box", role: alert ? "alert" : undefined, textContent: text }), before);
  }

  function finishActions(turn) {
    turn.actions.append(
      el("button", { type: "button", className: "icon", textContent: "Copy", "aria-label": "Copy the answer", onclick: (e) => R.copyText(turn.text, e.currentTarget) }),
      el("button", { type: "button", className: "icon regenerate", textContent: "Regenerate", "aria-label": "Ask the last question again", onclick: regenerateAnswer }),
    );
    renderTurnActions();
  }

  // Regenerate belongs to the last answer, Edit to the last question; earlier ones lose them.
  // An exchange already remembered (archived) is never rewritten: ask again instead.
  function renderTurnActions() {
    const answers = log.querySelectorAll(".msg.assistant .regenerate");
    answers.forEach((b, i) => { b.hidden = i !== answers.length - 1 || state.lastArchived; b.disabled = !!state.answer; });
    log.querySelectorAll(".msg.user .edit").forEach((b) => b.remove());
    const questions = log.querySelectorAll(".msg.user");
    const last = questions[questions.length - 1];
    if (last && !state.answer && !state.lastArchived) {
      last.append(el("div", { className: "actions edit" },
        el("button", { type: "button", className: "icon", textContent: "Edit", "aria-label": "Edit and send the last question again", onclick: editLastQuestion })));
    }
  }

  // A message as the server keeps it; what it means for the page's state is for the action to say.
  function renderStored(message) {
    if (message.role === "system") return;
    if (message.role === "user") { userTurn(message.content, message.id); return; }
    const turn = assistantTurn(message.id);
    const meta = message.metadata || {};
    turn.text = message.content;
    turn.citations = (meta.citations || (meta.context_uris || []).map((uri) => ({ uri, title: "" }))).map((c) => ({ ...c }));
    renderAnswer(turn);
    if (meta.status && meta.status !== "complete") turn.actions.append(el("span", { className: "muted small", textContent: `(${meta.status === "cancelled" ? "stopped" : meta.status})` }));
    if (meta.error) renderError(turn, meta.error);
    renderRemembered(turn, meta.remembered);
    finishActions(turn);
    renderMood(turn, meta.mood);
  }

  // The newest of these messages that is a question becomes the last question (Regenerate, Edit).
  function takeLastQuestion(messages) {
    const questions = messages.filter((m) => m.role === "user");
    if (!questions.length) return;
    const last = questions[questions.length - 1];
    state.lastQuestion = last.content;
    state.lastArchived = !!last.archive_uri;
  }

  // --- The conversation ------------------------------------------------------------------------------
  function renderConversationHead() {
    const data = state.session;
    $("conv-title").textContent = data.title || UNTITLED;
    document.title = `${data.title || "Conversation"} · Recollect`;
    $("conv-id").textContent = data.session_id.slice(0, 8);
    $("copy-id").title = `Copy the session id ${data.session_id}`;
    $("conv-tools").hidden = false;
  }

  function renderArchives() {
    const archives = state.session.archives || [];
    const box = $("archives");
    box.textContent = "";
    if (!archives.length) return;
    const total = state.session.archives_count || archives.length;
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

  // The server described the conversation (opened, renamed, remembered): its head and archives follow,
  // and whether its last question is archived already (unless an answer is on its way).
  function receiveConversation(data) {
    state.session = data;
    const questions = (data.messages || []).filter((m) => m.role === "user");
    if (questions.length && !state.answer) state.lastArchived = !!questions[questions.length - 1].archive_uri;
    renderConversationHead();
    renderArchives();
    if (questions.length && !state.answer) renderTurnActions();
  }
  const describeConversationAgain = () => api(`/api/sessions/${state.sessionId}`).then(receiveConversation).catch(() => {});

  // A session answers its latest turns; earlier ones come a page at a time, above them, on demand (or
  // until a linked turn is reached), so a long conversation opens as fast as a short one.
  async function openConversation() {
    if (!state.sessionId) return;
    try {
      const data = await api(`/api/sessions/${state.sessionId}`);
      receiveConversation(data);
      for (const message of data.messages) renderStored(message);
      takeLastQuestion(data.messages);
      state.earlierCursor = data.messages_previous;
      renderTurnActions();
      renderEarlierButton();
      if (!(await followLinkToTurn())) log.scrollTop = log.scrollHeight;
    } catch (exc) {
      log.append(el("div", { className: "error-box", textContent: `This conversation could not be loaded: ${exc.message}` }));
    }
  }

  const earlierButton = () => log.querySelector(":scope > button.earlier");
  const couldNotPageBack = (exc) => R.toast(`Could not load earlier messages: ${exc.message}`, "error");

  function renderEarlierButton() {
    const old = earlierButton();
    if (old) old.remove();
    if (!state.earlierCursor) return;
    log.prepend(el("button", { type: "button", className: "link earlier", style: "align-self:center", textContent: "Show earlier messages", onclick: () => pageBackToEarlierTurns().catch(couldNotPageBack) }));
  }

  // Earlier turns go above the ones shown, keeping the reader's place; the last question stays the last.
  async function pageBackToEarlierTurns() {
    if (!state.earlierCursor) return;
    const button = earlierButton();
    if (button) button.disabled = true;
    const page = await api(`/api/sessions/${state.sessionId}/messages?${new URLSearchParams({ cursor: state.earlierCursor, limit: EARLIER_PAGE })}`);
    // Turns render at the end of the log; they are moved above the ones shown.
    const first = button ? button.nextSibling : log.firstChild;
    const height = log.scrollHeight, start = log.childNodes.length;
    for (const message of page.results) renderStored(message);
    for (const node of Array.from(log.childNodes).slice(start)) log.insertBefore(node, first);
    state.earlierCursor = page.previous;
    renderTurnActions();
    renderEarlierButton();
    log.scrollTop += log.scrollHeight - height;
  }

  // /chat/<id>#m-<message id>: the turn a citation or a link points at.
  function renderLinkedTurn() {
    const target = location.hash.startsWith("#m-") && document.getElementById(location.hash.slice(1));
    if (!target) return false;
    for (const node of log.querySelectorAll(".highlight")) node.classList.remove("highlight");
    target.classList.add("highlight");
    target.scrollIntoView({ block: "center" });
    return true;
  }

  // A link to an earlier turn (a citation of this conversation) pages back until that turn is shown.
  async function followLinkToTurn() {
    while (location.hash.startsWith("#m-") && !document.getElementById(location.hash.slice(1)) && state.earlierCursor) await pageBackToEarlierTurns();
    return renderLinkedTurn();
  }

  async function renameConversation(title) {
    try {
      const changed = await api(`/api/sessions/${state.sessionId}`, { method: "PATCH", body: { title } });
      receiveConversation({ ...state.session, ...changed });
      listConversations();
    } catch (exc) { R.toast(`Could not rename: ${exc.message}`, "error"); }
  }

  // The title becomes a field in place; Enter or leaving it renames, Escape keeps the old title.
  function startRenaming() {
    const title = $("conv-title");
    const field = el("input", { type: "text", value: state.session.title || "", "aria-label": "New title", maxLength: 255 });
    let done = false;
    const end = async (save) => {
      if (done) return;
      done = true;
      field.replaceWith(title);
      if (save && field.value.trim() !== state.session.title) await renameConversation(field.value.trim());
      $("rename").focus();
    };
    field.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); end(true); } if (e.key === "Escape") end(false); });
    field.addEventListener("blur", () => end(true), { once: true });
    title.replaceWith(field);
    field.focus(); field.select();
  }

  async function deleteConversation() {
    if (!(await R.confirmAction("Delete this conversation? Its messages, archives and the memories learned only from it are deleted too."))) return;
    try { await api(`/api/sessions/${state.sessionId}`, { method: "DELETE" }); location.href = "/chat/"; }
    catch (exc) { R.toast(`Could not delete: ${exc.message}`, "error"); }
  }

  async function rememberConversation(button) {
    button.disabled = true;
    state.committing = true;
    const progress = el("div", { className: "learned state" }, el("span", { className: "spinner" }), "Remembering this conversation…");
    log.append(progress); log.scrollTop = log.scrollHeight;
    try {
      const result = await api(`/api/sessions/${state.sessionId}/commit`, { method: "POST", body: {} });
      if (result.archive) state.shownArchives.add(result.archive.uri);
      progress.replaceWith(learned(result.message, result.memory_diff, result.committed));
      receiveConversation(await api(`/api/sessions/${state.sessionId}`));
      listConversations();
    } catch (exc) {
      progress.replaceWith(el("div", { className: "error-box", textContent: `Could not remember this conversation: ${exc.message}` }));
    } finally { button.disabled = false; state.committing = false; log.scrollTop = log.scrollHeight; }
  }

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
  // The ticked boxes are this choice's state: the form keeps it, and a reload keeps ?doc=.
  const scopeBoxes = () => [...$("scope").querySelectorAll("input[type=checkbox]")];
  const scopeIds = () => scopeBoxes().filter((box) => box.checked).map((box) => box.value);
  function renderScopeLabel() {
    const chosen = scopeBoxes().filter((box) => box.checked);
    $("scope-label").textContent = !chosen.length ? "all my documents"
      : chosen.length === 1 ? chosen[0].parentElement.textContent.trim() : `${chosen.length} documents`;
  }

  // --- Sending and receiving -------------------------------------------------------------------------
  function renderBusy() {
    send.disabled = !!state.answer;
    stop.hidden = !state.answer;
    renderTurnActions();
  }

  function renderProgress(turn, text) {
    if (!turn.progress) { turn.progress = el("div", { className: "state" }); turn.node.insertBefore(turn.progress, turn.body); }
    turn.progress.textContent = "";
    turn.progress.append(el("span", { className: "spinner", "aria-hidden": "true" }), text);
  }
  function clearProgress(turn) { if (turn.progress) { turn.progress.remove(); turn.progress = null; } }

  function renderEditing() { $("editing").hidden = !state.editing; }
  function autosize() { input.style.height = "auto"; input.style.height = `${Math.min(input.scrollHeight + 2, COMPOSER_MAX_HEIGHT)}px`; }

  // Edit: the last question goes back into the composer; sending it replaces that question and its
  // answer (on the server too, so a reload shows the conversation as it now reads).
  function editLastQuestion() {
    state.editing = !!state.lastQuestion && !!state.sessionId;
    renderEditing();
    if (state.editing) { input.value = state.lastQuestion; input.focus(); autosize(); }
  }
  function stopEditing() { state.editing = false; renderEditing(); }
  function cancelEditing() { stopEditing(); input.value = ""; autosize(); }

  // The last question and what followed it: what Regenerate and Edit replace.
  function lastExchangeNodes() {
    const questions = log.querySelectorAll(".msg.user");
    const last = questions[questions.length - 1];
    if (!last) return [];
    const nodes = [];
    for (let node = last; node; node = node.nextElementSibling) nodes.push(node);
    return nodes;
  }

  function sendMessage(text, { replace = false } = {}) {
    text = text.trim();
    if (!text || state.answer) return;
    if (R.socket.signedOut) { R.banner("You are signed out, so nothing can be sent. Reload the page to sign in again.", "error"); return; }
    const frame = { type: "chat", message: text };
    if (state.sessionId) frame.session_id = state.sessionId;
    let replaced = [];
    if (replace && state.sessionId) {
      frame.replace_last = true;
      // Hidden until the server has replaced them, and shown again if it refuses.
      replaced = lastExchangeNodes();
      replaced.forEach((node) => { node.hidden = true; });
    }
    const edited = state.editing, before = { lastQuestion: state.lastQuestion };
    stopEditing();
    const chosen = scopeIds();
    if (chosen.length === 1) frame.doc_id = chosen[0];
    else if (chosen.length > 1) frame.doc_ids = chosen;
    state.lastArchived = false;
    state.lastQuestion = text;
    const question = userTurn(text);
    state.answer = { ...assistantTurn(), frame, edited, replaced, question, before };
    renderProgress(state.answer, R.socket.open ? SEARCHING : "Waiting for the connection to the server…");
    R.socket.sendSoon(frame);
    renderBusy();
    log.scrollTop = log.scrollHeight;
  }

  function sendComposer() {
    const text = input.value;
    if (!text.trim() || state.answer) return;
    input.value = "";
    autosize();
    sendMessage(text, { replace: state.editing });
  }

  function regenerateAnswer() { if (state.lastQuestion) sendMessage(state.lastQuestion, { replace: true }); }

  function cancelAnswer() {
    // Not sent yet (no connection): take it back rather than cancel an answer that never started.
    if (state.answer && R.socket.unsend(state.answer.frame)) { endAnswer(state.answer, "(not sent: there was no connection)"); return; }
    R.socket.send({ type: "cancel" });
  }

  function scheduleDraw() {
    if (state.drawScheduled) return;
    state.drawScheduled = true;
    requestAnimationFrame(() => {
      state.drawScheduled = false;
      if (state.answer) { renderAnswer(state.answer); log.scrollTop = log.scrollHeight; }
    });
  }

  function endAnswer(turn, note) {
    clearProgress(turn);
    renderAnswer(turn);
    if (note) turn.actions.append(el("span", { className: "muted small", textContent: note }));
    finishActions(turn);
    state.answer = null;
    renderBusy();
    listConversations();
    log.scrollTop = log.scrollHeight; // the answer's mood, Copy and Regenerate in view
  }

  // The first answer of a new conversation names it: the URL and the sidebar follow.
  function receiveSources(frame) {
    const turn = state.answer;
    if (!turn) return;
    if (!state.sessionId) {
      state.sessionId = frame.session_id;
      history.replaceState(null, "", `/chat/${state.sessionId}`);
      describeConversationAgain();
      listConversations();
    }
    turn.replaced.forEach((node) => node.remove());
    turn.replaced = [];
    turn.citations = frame.context.map((c) => ({ ...c }));
    renderSources(turn);
    if (frame.retrieval_error) renderError(turn, frame.retrieval_error, { before: turn.body });
    const n = frame.context.length;
    renderProgress(turn, n ? `Thinking with ${n} source${n > 1 ? "s" : ""}…` : "Nothing relevant found; answering…");
  }

  function receiveToken(frame) {
    const turn = state.answer;
    if (!turn) return;
    if (turn.progress) clearProgress(turn);
    turn.text += frame.token;
    scheduleDraw();
  }

  function receiveMood(frame) { if (state.answer) state.answer.pendingMood = frame; }

  function receiveAnswerEnd(frame) {
    const turn = state.answer;
    if (!turn) return;
    turn.text = frame.message;
    const stopped = frame.status === "cancelled";
    const note = !frame.status ? "" : stopped && !turn.text ? "(stopped before answering)" : `(${stopped ? "stopped" : frame.status})`;
    renderRemembered(turn, frame.remembered);
    endAnswer(turn, note);
    // An answer stopped before its first word has nothing to lean on, confidently or not.
    if (turn.pendingMood && turn.text) renderMood(turn, turn.pendingMood.mood, turn.pendingMood.mood_reason);
    log.scrollTop = log.scrollHeight;
  }

  // Refused before anything was written (the exchange is already remembered, say): as it was.
  function takeBackReplacement(turn, frame) {
    turn.node.remove();
    turn.question.remove();
    turn.replaced.forEach((node) => { node.hidden = false; });
    state.answer = null;
    state.lastQuestion = turn.before.lastQuestion;
    if (frame.code === "already_committed") state.lastArchived = true;
    // An edit refused keeps its words in the box, to be sent as a new question instead.
    if (turn.edited) { input.value = turn.frame.message; autosize(); input.focus(); }
    renderBusy();
    R.toast(frame.error, "error");
  }

  function receiveError(frame) {
    const turn = state.answer;
    if (turn && turn.replaced.length) takeBackReplacement(turn, frame);
    else if (turn) {
      renderError(turn, frame.error, { alert: true });
      endAnswer(turn);
      if (turn.pendingMood) renderMood(turn, turn.pendingMood.mood, turn.pendingMood.mood_reason);
    } else if (frame.code === "unavailable") R.banner(frame.error, "error");
    else R.toast(frame.error, "error");
  }

  // A commit asked for on this page is shown by its own answer; the push is for automatic ones.
  function receiveCommit(frame) {
    if (frame.session_id !== state.sessionId || state.committing || state.shownArchives.has(frame.archive_uri)) return;
    log.append(learned(`This conversation was remembered automatically: ${frame.abstract || ""}`, frame.memory_diff, true));
    describeConversationAgain();
    listConversations();
  }

  function connectionLost() {
    const turn = state.answer;
    if (!turn || R.socket.waiting.includes(turn.frame)) return;
    renderError(turn, "The connection was lost, so this answer stopped. Your message was saved; Regenerate to ask again.", { alert: true });
    endAnswer(turn);
  }

  function connectionBack() {
    R.banner("");
    const turn = state.answer;
    if (turn && turn.progress && !turn.citations.length) renderProgress(turn, SEARCHING);
  }

  // --- The source panel ----------------------------------------------------------------------------
  function panelOpen(title) {
    $("panel").hidden = false;
    document.querySelector("main").classList.add("with-panel");
    $("panel-title").textContent = title;
    $("panel-body").textContent = "";
    return $("panel-body");
  }
  function closeSource() { $("panel").hidden = true; document.querySelector("main").classList.remove("with-panel"); }
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
  const notice = $("model-notice");
  function dismissModelNotice() {
    notice.hidden = true;
    try { localStorage.setItem(NOTICE_DISMISSED, "1"); } catch (_) { /* hidden for this page only */ }
    input.focus();
  }
  function renderModelNotice() {
    let dismissed = false;
    try { dismissed = localStorage.getItem(NOTICE_DISMISSED) === "1"; } catch (_) { /* storage blocked: shown */ }
    notice.hidden = dismissed;
  }

  // --- What a person can do, wired to the page; what the server says, to its actions ------------------
  for (const id of ["session-search", "agent-filter"]) $(id).addEventListener("input", searchConversations);
  $("more-sessions").addEventListener("click", showMoreConversations);
  $("sidebar-open").addEventListener("click", () => { $("sidebar").classList.add("open"); $("session-search").focus(); });
  $("sidebar-close").addEventListener("click", () => $("sidebar").classList.remove("open"));

  $("copy-id").addEventListener("click", (e) => R.copyText(state.sessionId, e.currentTarget));
  $("rename").addEventListener("click", startRenaming);
  $("delete").addEventListener("click", deleteConversation);
  $("commit").addEventListener("click", (e) => rememberConversation(e.currentTarget));

  $("scope").addEventListener("change", renderScopeLabel);
  document.addEventListener("click", (e) => { if (!$("scope").contains(e.target)) $("scope").open = false; });

  $("composer").addEventListener("submit", (e) => { e.preventDefault(); sendComposer(); });
  $("cancel-edit").addEventListener("click", cancelEditing);
  input.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && state.editing) { e.preventDefault(); cancelEditing(); return; }
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); $("composer").requestSubmit(); }
  });
  input.addEventListener("input", autosize);
  stop.addEventListener("click", cancelAnswer);

  $("panel-close").addEventListener("click", closeSource);
  document.addEventListener("keydown", (e) => { if (e.key === "Escape" && !$("panel").hidden) $("panel-close").click(); });
  if (notice) $("model-notice-close").addEventListener("click", dismissModelNotice);
  window.addEventListener("hashchange", () => followLinkToTurn().catch(couldNotPageBack));

  R.socket.on("context", receiveSources);
  R.socket.on("token", receiveToken);
  R.socket.on("mood", receiveMood);
  R.socket.on("done", receiveAnswerEnd);
  R.socket.on("error", receiveError);
  R.socket.on("rejected", (frame) => R.toast(frame.error, "error"));
  R.socket.on("commit", receiveCommit);
  R.socket.on("_close", connectionLost);
  R.socket.on("_open", connectionBack);
  R.socket.onStatus((open, text) => { $("socket-state").textContent = open ? "" : text + "…"; });

  // --- Start -----------------------------------------------------------------------------------------
  renderScopeLabel();
  if (notice) renderModelNotice();
  listConversations();
  openConversation();
  R.socket.connect();
  input.focus();
})();
