/* Shared by every page: the JSON API with the session cookie and CSRF token, Markdown rendered and
   sanitised, the user's websocket, confirmations, toasts and banners. */
(function () {
  "use strict";
  const csrf = () => document.querySelector('meta[name="csrf-token"]').content;

  class ApiError extends Error {
    constructor(status, body) {
      const error = (body && body.error) || {};
      super(error.message || `The server answered ${status}.`);
      this.status = status;
      this.code = error.code || "";
      this.details = error.details || {};
    }
  }

  /** Calls the JSON API; resolves to the parsed answer (null for 204), rejects with ApiError. */
  async function api(path, { method = "GET", body, form, signal } = {}) {
    const headers = { Accept: "application/json" };
    let payload;
    if (form) payload = form;
    else if (body !== undefined) { headers["Content-Type"] = "application/json"; payload = JSON.stringify(body); }
    if (method !== "GET") headers["X-CSRFToken"] = csrf();
    let response;
    try {
      response = await fetch(path, { method, headers, body: payload, credentials: "same-origin", signal });
    } catch (exc) {
      if (exc.name === "AbortError") throw exc;
      throw new ApiError(0, { error: { message: "The server cannot be reached. Check that Recollect is running." } });
    }
    if (response.status === 204) return null;
    let data = null;
    try { data = await response.json(); } catch (_) { data = null; }
    if (!response.ok) {
      if (response.status === 401 || response.status === 403) {
        if (!data || !data.error) data = { error: { message: "You are signed out. Reload the page to sign in again." } };
      }
      throw new ApiError(response.status, data);
    }
    return data;
  }

  // Markdown: marked renders, DOMPurify removes anything that could run (script, handlers, javascript: links).
  marked.setOptions({ gfm: true, breaks: false });
  const PURIFY = { USE_PROFILES: { html: true }, FORBID_TAGS: ["style", "form", "input", "button", "iframe"], FORBID_ATTR: ["style"] };
  DOMPurify.addHook("afterSanitizeAttributes", (node) => {
    // An image from another site would be fetched (telling that site who reads what): it is not
    // loaded, but offered as a link. Decided here, in DOMPurify's inert copy, before anything loads.
    if (node.tagName === "IMG") {
      let url = null;
      try { url = new URL(node.getAttribute("src") || "", location.href); } catch (_) { url = null; }
      if (!url || (url.origin !== location.origin && url.protocol !== "data:")) {
        if (url) node.setAttribute("data-blocked-src", url.href);
        node.removeAttribute("src");
        node.removeAttribute("srcset");
      }
    }
    if (node.tagName === "A" && node.getAttribute("href") && !node.getAttribute("href").startsWith("#")) {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer");
    }
  });

  function renderMarkdown(text, element) {
    element.innerHTML = DOMPurify.sanitize(marked.parse(text || ""), PURIFY);
    element.classList.add("md");
    for (const img of element.querySelectorAll("img[data-blocked-src], img:not([src])")) {
      const href = img.getAttribute("data-blocked-src");
      const label = `[image${img.alt ? `: ${img.alt}` : ""}, not loaded from another site]`;
      img.replaceWith(href ? el("a", { href, target: "_blank", rel: "noopener noreferrer", textContent: label }) : el("span", { className: "muted", textContent: label }));
    }
    for (const pre of element.querySelectorAll("pre")) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "copy-code";
      button.textContent = "Copy";
      button.setAttribute("aria-label", "Copy code");
      button.addEventListener("click", () => copyText(pre.querySelector("code") ? pre.querySelector("code").innerText : pre.innerText, button));
      pre.appendChild(button);
    }
    return element;
  }

  async function copyText(text, button) {
    try {
      if (navigator.clipboard && window.isSecureContext) await navigator.clipboard.writeText(text);
      else {
        const area = document.createElement("textarea");
        area.value = text; document.body.appendChild(area); area.select(); document.execCommand("copy"); area.remove();
      }
      // Said beside the button, never by rewriting its content, which may hold more than text (the id).
      if (button) { button.dataset.copied = "true"; setTimeout(() => { delete button.dataset.copied; }, 1200); toast("Copied"); }
      else toast("Copied");
    } catch (_) { toast("Could not copy; select the text instead.", "error"); }
  }

  function toast(message, kind = "") {
    const div = el("div", { className: `toast ${kind}`, textContent: message, role: kind === "error" ? "alert" : "status" });
    document.getElementById("toasts").appendChild(div);
    setTimeout(() => div.remove(), kind === "error" ? 8000 : 3000);
  }

  function banner(message, kind = "") {
    const node = document.getElementById("banner");
    if (!message) { node.hidden = true; node.textContent = ""; return; }
    node.className = `banner ${kind}`;
    node.textContent = message;
    node.hidden = false;
  }

  function confirmAction(message, okLabel = "Delete") {
    const dialog = document.getElementById("confirm-dialog");
    document.getElementById("confirm-text").textContent = message;
    document.getElementById("confirm-ok").textContent = okLabel;
    return new Promise((resolve) => {
      dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
      dialog.returnValue = "";
      dialog.showModal();
    });
  }

  /** document.createElement with properties and children; text is always set as text, never HTML. */
  function el(tag, props = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props)) {
      if (value === undefined || value === null) continue;
      if (key === "dataset") Object.assign(node.dataset, value);
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else if (key in node && !key.includes("-")) node[key] = value;
      else node.setAttribute(key, value);
    }
    for (const child of children.flat()) if (child !== null && child !== undefined && child !== false) node.append(child);
    return node;
  }

  function when(iso) {
    if (!iso) return "";
    const date = new Date(iso);
    const today = new Date();
    return date.toDateString() === today.toDateString()
      ? date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
      : date.toLocaleDateString([], { year: "numeric", month: "short", day: "numeric" });
  }

  function bytes(n) {
    if (n < 1024) return `${n} B`;
    if (n < 1024 * 1024) return `${(n / 1024).toFixed(0)} KB`;
    return `${(n / 1024 / 1024).toFixed(1)} MB`;
  }

  /** The user's websocket: reconnects by itself, dispatches frames by type to listeners. */
  const socket = {
    ws: null, listeners: {}, statusListeners: [], retry: 1000, open: false, waiting: [], signedOut: false,
    on(type, fn) { (this.listeners[type] = this.listeners[type] || []).push(fn); },
    onStatus(fn) { this.statusListeners.push(fn); },
    setStatus(open, text) { this.open = open; for (const fn of this.statusListeners) fn(open, text); },
    connect() {
      const scheme = location.protocol === "https:" ? "wss" : "ws";
      const ws = new WebSocket(`${scheme}://${location.host}/ws/chat/`);
      this.ws = ws;
      ws.onopen = () => {
        this.retry = 1000;
        this.setStatus(true, "connected");
        this.emit({ type: "_open" });
        for (const frame of this.waiting.splice(0)) ws.send(JSON.stringify(frame));
      };
      ws.onclose = (event) => {
        if (this.ws !== ws) return;
        const signedOut = event.code === 4401;
        this.signedOut = signedOut;
        this.setStatus(false, signedOut ? "signed out" : "reconnecting");
        if (signedOut) banner("You are signed out. Reload the page to sign in again.", "error");
        this.emit({ type: "_close", signedOut });
        if (!signedOut) { setTimeout(() => this.connect(), this.retry); this.retry = Math.min(this.retry * 2, 15000); }
      };
      ws.onmessage = (message) => { let frame; try { frame = JSON.parse(message.data); } catch (_) { return; } this.emit(frame); };
    },
    emit(frame) { for (const fn of [...(this.listeners[frame.type] || []), ...(this.listeners["*"] || [])]) fn(frame); },
    send(frame) {
      if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
      this.ws.send(JSON.stringify(frame));
      return true;
    },
    /** Sends now, or as soon as the socket (re)connects; false if it never will (signed out). */
    sendSoon(frame) {
      if (this.send(frame)) return true;
      if (this.signedOut) return false;
      this.waiting.push(frame);
      return true;
    },
    /** Takes back a frame still waiting for the connection; true if it had not been sent. */
    unsend(frame) {
      const at = this.waiting.indexOf(frame);
      if (at >= 0) this.waiting.splice(at, 1);
      return at >= 0;
    },
  };

  // Pages declare their behaviour in attributes, never in inline handlers (the Content-Security-Policy
  // runs no inline script): a button with data-copy="<id>" copies that element's text; a form with
  // data-confirm="<question>" asks first, in the page's dialog (its button says data-confirm-ok).
  document.addEventListener("click", (event) => {
    const button = event.target.closest("[data-copy]");
    if (!button) return;
    const source = document.getElementById(button.dataset.copy);
    if (source) copyText(source.value !== undefined ? source.value : source.textContent, button);
  });
  document.addEventListener("submit", async (event) => {
    const form = event.target;
    if (!form.dataset || !form.dataset.confirm) return;
    event.preventDefault();
    if (await confirmAction(form.dataset.confirm, form.dataset.confirmOk || "OK")) HTMLFormElement.prototype.submit.call(form);
  });

  window.Recollect = { api, ApiError, renderMarkdown, copyText, toast, banner, confirmAction, el, when, bytes, socket };
})();
