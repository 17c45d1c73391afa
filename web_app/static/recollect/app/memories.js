/* The memories page: by category, searchable, each shown by its label and its sentence, editable and
   deletable, linked to the conversation it came from (or marked as added by hand), with the texts it
   replaced; and a form to add one by hand. What the page knows is in `state`, changed only by the
   actions named after what the person did (chooseCategory, searchMemories, addMemory, ...). */
(function () {
  "use strict";
  const R = window.Recollect;
  const { el, api } = R;
  const $ = (id) => document.getElementById(id);
  const SEARCH_DELAY_MS = 250; // typing in the search waits this long before asking
  const state = {
    category: "", // the tab in view; "" is every category
    page: 1, // the pages shown so far
    searchTimer: null, // the search, waiting for the typing to pause
  };

  function memoryNode(memory) {
    const node = el("div", { className: "memory", id: `memory-${memory.id}` });
    fill(node, memory);
    return node;
  }

  // A label from before labels existed: the key, read as words.
  const labelOf = (memory) => memory.label || memory.key.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());

  function source(memory) {
    if (memory.session_id) {
      return el("a", { href: `/chat/${memory.session_id}${memory.source_message_id ? `#m-${memory.source_message_id}` : ""}`, textContent: "From this conversation" });
    }
    return el("span", { className: "muted", textContent: "Added by hand" });
  }

  function fill(node, memory) {
    node.textContent = "";
    const history = memory.history || [];
    const label = labelOf(memory);
    node.append(...[
      el("div", { className: "row" }, el("span", { className: "label grow", textContent: label }), el("span", { className: "badge", textContent: memory.category }), el("span", { className: "muted small", textContent: R.when(memory.updated_at) })),
      el("p", { className: "content", textContent: memory.content }),
      history.length ? el("details", {}, el("summary", { className: "small", textContent: `History: ${history.length} earlier text${history.length > 1 ? "s" : ""}` }),
        el("ul", { className: "history" }, history.map((h) => el("li", {}, el("span", { textContent: h.content }), el("span", { className: "muted", textContent: ` (until ${R.when(h.replaced_at)}${h.edited ? ", corrected by you" : ""})` }))))) : null,
      el("div", { className: "row small" },
        source(memory),
        el("span", { className: "grow" }),
        el("button", { type: "button", className: "icon", textContent: "Edit", "aria-label": `Edit ${label}`, onclick: () => editMemory(node, memory) }),
        el("button", { type: "button", className: "icon danger", textContent: "Delete", "aria-label": `Delete ${label}`, onclick: () => forgetMemory(node, memory) })),
    ].filter(Boolean));
  }

  function editMemory(node, memory) {
    const area = el("textarea", { rows: 3, value: memory.content, "aria-label": `New text of ${labelOf(memory)}` });
    area.value = memory.content;
    const error = el("div", { className: "error-text small" });
    const save = el("button", { type: "button", className: "primary", textContent: "Save", onclick: async () => {
      save.disabled = true;
      try { const updated = await api(`/api/memories/${memory.id}`, { method: "PATCH", body: { content: area.value } }); Object.assign(memory, updated); fill(node, memory); R.toast("Memory updated"); }
      catch (exc) { save.disabled = false; error.textContent = exc.message; }
    } });
    const cancel = el("button", { type: "button", textContent: "Cancel", onclick: () => fill(node, memory) });
    node.querySelector(".content").replaceWith(el("div", {}, area, error, el("div", { className: "row edit-actions" }, save, cancel)));
    area.focus();
  }

  async function forgetMemory(node, memory) {
    if (!(await R.confirmAction(`Forget “${labelOf(memory)}: ${memory.content}”?`, "Forget"))) return;
    try { await api(`/api/memories/${memory.id}`, { method: "DELETE" }); node.remove(); R.toast("Memory forgotten"); }
    catch (exc) { R.toast(`Could not delete: ${exc.message}`, "error"); }
  }

  // Adding a memory by hand: in the category of the tab in view, shown at once, the form kept on an error.
  async function addMemory(event) {
    event.preventDefault();
    const content = $("add-content").value.trim();
    const error = $("add-error");
    error.textContent = "";
    if (!content) { error.textContent = "Write what to remember first."; $("add-content").focus(); return; }
    $("add-button").disabled = true;
    try {
      const memory = await api("/api/memories", { method: "POST", body: { category: $("add-category").value, content } });
      // A memory on the same subject is updated rather than repeated: its earlier text is then in its history.
      const updated = (memory.history || []).length > 0;
      $("add-content").value = "";
      R.toast(updated ? `Updated “${labelOf(memory)}”; the earlier text is in its history` : "Memory added");
      await listMemories();
      const shown = document.getElementById(`memory-${memory.id}`);
      if (shown) { shown.classList.add("just-added"); shown.scrollIntoView({ block: "nearest" }); }
    } catch (exc) {
      const fields = (exc.details && exc.details.fields) || {};
      error.textContent = Object.values(fields).flat()[0] || exc.message;
    } finally { $("add-button").disabled = false; }
  }

  // The first page again (after anything that changes the list), or the next one (more).
  async function listMemories({ more = false } = {}) {
    state.page = more ? state.page + 1 : 1;
    const query = new URLSearchParams({ page: state.page });
    if (state.category) query.set("category", state.category);
    const q = $("memory-search").value.trim();
    if (q) query.set("q", q);
    const box = $("memories");
    try {
      const data = await api(`/api/memories?${query}`);
      if (!more) box.textContent = "";
      // The answer is ordered by category: a heading wherever the category changes.
      for (const memory of data.results) {
        const headings = box.querySelectorAll(".category-heading");
        const last = headings[headings.length - 1];
        if (!last || last.dataset.category !== memory.category) box.append(el("h2", { className: "category-heading", textContent: memory.category, dataset: { category: memory.category } }));
        box.append(memoryNode(memory));
      }
      if (!more && !data.results.length) box.append(el("p", { className: "muted", textContent: q || state.category ? "No memory matches." : "No memories yet. In a chat, “Remember this conversation” extracts them; or add one above." }));
      $("more").hidden = !data.next;
    } catch (exc) { box.textContent = ""; box.append(el("div", { className: "error-box", textContent: `Could not load memories: ${exc.message}` })); }
  }

  // A tab: its category is listed, and a memory added by hand goes into it.
  function chooseCategory(button) {
    state.category = button.dataset.category;
    if (state.category) $("add-category").value = state.category;
    for (const b of document.querySelectorAll(".tabs button")) b.setAttribute("aria-pressed", String(b === button));
    listMemories();
  }

  function searchMemories() {
    clearTimeout(state.searchTimer);
    state.searchTimer = setTimeout(() => listMemories(), SEARCH_DELAY_MS);
  }

  // --- What a person can do, wired to the page; what the server says, to its actions ------------------
  for (const button of document.querySelectorAll(".tabs button")) button.addEventListener("click", () => chooseCategory(button));
  $("memory-search").addEventListener("input", searchMemories);
  $("more").addEventListener("click", () => listMemories({ more: true }));
  $("add-memory").addEventListener("submit", addMemory);
  // A conversation remembered (here or elsewhere) may have added or changed memories.
  R.socket.on("commit", () => listMemories());

  // /memories/?q=…: a link from a chat's source panel opens on that memory.
  const wanted = new URLSearchParams(location.search).get("q");
  if (wanted) $("memory-search").value = wanted;
  listMemories();
  R.socket.connect();
})();
