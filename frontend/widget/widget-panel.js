/* OpenGuru embeddable widget, part 1 of 3: its configuration and the panel (launcher, chat panel, theme,
 * open/close and focus) in a Shadow DOM.
 *
 * /widget.js serves, in order: markdown-inline.js, markdown.js, sse.js, answer-parts.js, the styles of
 * widget.css (as window.OpenGuruWidgetCss), then this file, widget-turn.js and widget.js. Embedded with
 *   <script async src="https://HOST/widget.js" id="guru-widget-id" data-widget-id="KEY"></script>
 * Nothing from the server, the model or sessionStorage is parsed as HTML: nodes are built with
 * createElement/textContent. The parts the widget files share go in window.OpenGuruWidgetParts.
 */
(function () {
  "use strict";

  const MD = window.OpenGuruMarkdown;
  const Parts = window.OpenGuruAnswerParts;
  const script = document.currentScript || document.getElementById("guru-widget-id") ||
    document.querySelector("script[data-widget-id]");
  if (window.OpenGuruWidget || !MD || !Parts || !script) return;

  const { el, inkFor } = Parts;
  const TEXT = Object.assign({}, Parts.MESSAGES, {
    refused: "This site is not allowed to use this widget.",
    badKey: "This widget is not set up correctly: its widget id is not valid.",
  });
  // The footer under the panel says what is true of this install's answers (GET /widget/guru/ `answerer`).
  const FOOT = Object.freeze({
    llm: "AI-generated answers can be wrong: check the sources.",
    offline: "Answers are passages quoted from the sources.",
  });
  const CSS = String(window.OpenGuruWidgetCss || "");
  const data = script.dataset;
  const widgetKey = String(data.widgetId || "").trim();
  const baseUrl = resolveBase();
  const readJson = window.OpenGuruSSE.readJson;

  // ---- configuration -------------------------------------------------------------------------

  function resolveBase() {
    try {
      const given = data.baseUrl || data.baseurl; // Gurubase snippets write data-baseUrl, which HTML lowercases
      if (given) {
        const url = new URL(given, window.location.href);
        if (/^https?:$/.test(url.protocol)) return url.href.replace(/\/+$/, "");
      }
      return new URL(script.src, window.location.href).origin;
    } catch (_error) {
      return window.location.origin;
    }
  }

  function hexColor(value) {
    let color = String(value || "").trim();
    if (/^#[0-9a-f]{3}$/i.test(color)) color = "#" + color.slice(1).replace(/./g, "$&$&");
    return /^#[0-9a-f]{6}$/i.test(color) ? color.toLowerCase() : "";
  }

  function imageUrl(value, base) {
    const url = value ? MD.safeUrl(value, base) : null;
    return url && /^https?:/i.test(url) ? url : "";
  }

  function margins() {
    let parsed = {};
    try {
      parsed = JSON.parse(data.margins || "{}") || {};
    } catch (_error) {
      parsed = {};
    }
    const px = (value, fallback) => {
      const match = /^(\d{1,4}(?:\.\d+)?)(px)?$/.exec(String(value == null ? "" : value).trim());
      return match ? match[1] + "px" : fallback;
    };
    const left = data.position === "bottom-left";
    const side = left && parsed.left != null ? parsed.left : parsed.right;
    return { bottom: px(parsed.bottom, "20px"), side: px(side, "20px") };
  }

  // ---- small helpers -------------------------------------------------------------------------

  function attrs(node, values) {
    for (const name of Object.keys(values)) node.setAttribute(name, values[name]);
    return node;
  }

  function svg(path) {
    const ns = "http://www.w3.org/2000/svg";
    const icon = attrs(document.createElementNS(ns, "svg"), { viewBox: "0 0 24 24", width: "20", height: "20",
      "aria-hidden": "true", focusable: "false" });
    icon.appendChild(attrs(document.createElementNS(ns, "path"), { d: path, fill: "currentColor" }));
    return icon;
  }

  function str(value, limit) {
    return typeof value === "string" ? value.slice(0, limit || 20000) : "";
  }

  /** Disallowed origins get a 403 without CORS headers, which fetch reports like a network error.
   * A no-cors request (no preflight, opaque answer) tells the two apart: if the server answers it,
   * the failure was the origin check. */
  function serverReachable() {
    return fetch(baseUrl + "/widget.js", { method: "HEAD", mode: "no-cors", cache: "no-store", credentials: "omit" })
      .then(() => true, () => false);
  }

  // ---- the panel -----------------------------------------------------------------------------

  /** The launcher and the chat panel. The Widget (widget.js) extends it with submit(), reset() and the rest
   * of the conversation. */
  class Panel {
    constructor() {
      this.name = data.name || "Ask AI";
      this.blocked = "";
      this.build();
    }

    build() {
      this.host = el("div");
      this.host.id = "openguru-widget";
      const shadow = this.shadow = this.host.attachShadow({ mode: "open" });
      const mode = ["light", "dark"].includes(data.lightMode) ? data.lightMode : "auto";
      const root = this.root = el("div", "og " + mode + (data.position === "bottom-left" ? " left" : ""));
      const place = margins();
      root.style.setProperty("--mb", place.bottom);
      root.style.setProperty("--ms", place.side);
      this.setAccent(hexColor(data.bgColor));

      this.launcher = attrs(el("button", "launcher"), { type: "button", "aria-haspopup": "dialog",
        "aria-expanded": "false", "aria-controls": "og-panel" });
      this.launcher.append(svg("M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H9l-5 4v-4a2 2 0 0 1-2-2V6a2 2 0 0 1 2-2z"),
        el("span", "", (data.text || "Ask AI").slice(0, 60)));
      this.launcher.addEventListener("click", () => (this.isOpen() ? this.close() : this.open()));

      const panel = this.panel = attrs(el("div", "panel"), { role: "dialog", "aria-modal": "true",
        "aria-labelledby": "og-title" });
      panel.id = "og-panel";
      panel.hidden = true;
      const head = el("div", "head");
      this.iconEl = attrs(el("img", "icon"), { alt: "", width: "28", height: "28" });
      this.iconEl.hidden = true;
      this.iconEl.addEventListener("error", () => { this.iconEl.hidden = true; });
      this.titleEl = el("h2", "title", this.name);
      this.titleEl.id = "og-title";
      this.resetBtn = attrs(el("button", "hbtn", "New"), { type: "button", "aria-label": "Start a new conversation" });
      this.resetBtn.addEventListener("click", () => this.reset());
      const closeBtn = attrs(el("button", "hbtn"), { type: "button", "aria-label": "Close" });
      const cross = "M6.4 5 12 10.6 17.6 5 19 6.4 13.4 12l5.6 5.6-1.4 1.4-5.6-5.6L6.4 19 5 17.6l5.6-5.6L5 6.4z";
      closeBtn.appendChild(svg(cross));
      closeBtn.addEventListener("click", () => this.close());
      head.append(this.iconEl, this.titleEl, this.resetBtn, closeBtn);

      this.thread = attrs(el("div", "thread"), { role: "log", "aria-label": "Conversation" });
      // The intro and the maintainer's example questions, shown while the conversation is empty.
      this.introEl = el("div", "start");
      this.introText = el("p", "intro", "Ask a question. Answers cite their sources.");
      this.examplesEl = attrs(el("div", "examples"), { role: "group", "aria-label": "Example questions" });
      this.examplesEl.hidden = true;
      this.introEl.append(this.introText, this.examplesEl);
      this.bannerEl = attrs(el("p", "banner"), { role: "alert" });
      this.bannerEl.hidden = true;
      this.thread.append(this.introEl, this.bannerEl);
      this.thread.addEventListener("click", (event) => this.onThreadClick(event));

      const form = el("form", "form");
      form.noValidate = true;
      const label = el("label", "sr", "Your question");
      label.htmlFor = "og-input";
      this.input = attrs(el("textarea", "input"), { rows: "1", maxlength: "2000", placeholder: "Ask a question…" });
      this.input.id = "og-input";
      this.input.addEventListener("keydown", (event) => {
        if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
          event.preventDefault();
          this.submit();
        }
      });
      this.input.addEventListener("input", () => this.autosize());
      this.sendBtn = attrs(el("button", "send", "Send"), { type: "submit" });
      form.append(label, this.input, this.sendBtn);
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        this.submit();
      });
      this.formError = attrs(el("p", "form-error"), { role: "alert" });
      this.formError.hidden = true;
      this.footEl = el("p", "foot"); // what is true of the answers, once the server has said which answerer runs
      this.footEl.hidden = true;
      panel.append(head, this.thread, form, this.formError, this.footEl);
      root.addEventListener("keydown", (event) => this.onKeydown(event));

      root.append(this.launcher, panel);
      if (shadow.adoptedStyleSheets && window.CSSStyleSheet && CSSStyleSheet.prototype.replaceSync) {
        const sheet = new CSSStyleSheet(); // constructed sheets need no 'unsafe-inline' in the host page's CSP
        sheet.replaceSync(CSS);
        shadow.adoptedStyleSheets = [sheet];
      } else {
        shadow.appendChild(el("style", "", CSS));
      }
      shadow.appendChild(root);
      document.body.appendChild(this.host);
    }

    setAccent(color) {
      if (!color) return;
      this.root.style.setProperty("--accent", color);
      this.root.style.setProperty("--ink", inkFor(color));
    }

    /** Theme from GET /widget/guru/ (data-* attributes win); returns what is wrong, or "" when all is well. */
    async loadConfig() {
      if (!widgetKey) return this.block(TEXT.badKey);
      let response;
      try {
        const init = { headers: { Authorization: widgetKey }, credentials: "omit" };
        response = await fetch(baseUrl + "/widget/guru/", init);
      } catch (_error) {
        return (await serverReachable()) ? this.block(TEXT.refused) : TEXT.network;
      }
      if (!response.ok) {
        const message = { 401: TEXT.badKey, 403: TEXT.refused, 404: TEXT.notFound }[response.status];
        return message ? this.block(message) : TEXT.server;
      }
      const guru = await readJson(response);
      if (!guru || typeof guru !== "object") return TEXT.server;
      if (!data.name && guru.name) this.setName(str(guru.name, 100));
      if (!data.bgColor) this.setAccent(hexColor(guru.colors && guru.colors.base_color));
      const icon = data.iconUrl ? imageUrl(data.iconUrl, window.location.href) : imageUrl(guru.icon_url, baseUrl + "/");
      if (icon) {
        this.iconEl.src = icon;
        this.iconEl.hidden = false;
      }
      if (guru.intro_text) this.introText.textContent = str(guru.intro_text, 2000);
      this.setExamples(guru.example_questions);
      const foot = FOOT[guru.answerer] || "";
      this.footEl.textContent = foot;
      this.footEl.hidden = !foot;
      return "";
    }

    /** The approved example questions the server sent (none: no chips); a click puts one in the box. */
    setExamples(list) {
      const texts = Array.isArray(list) ? list.map((text) => str(text, 200).trim()).filter(Boolean).slice(0, 10) : [];
      this.examplesEl.replaceChildren(...texts.map((text) => {
        const chip = attrs(el("button", "chip", text), { type: "button" });
        chip.addEventListener("click", () => {
          this.input.value = text;
          this.autosize();
          this.input.focus();
        });
        return chip;
      }));
      this.examplesEl.hidden = !texts.length;
    }

    setName(name) {
      this.name = name;
      this.titleEl.textContent = name;
      this.input.placeholder = "Ask " + name + " a question…";
    }

    block(message) {
      this.blocked = message;
      this.bannerEl.textContent = message;
      this.bannerEl.hidden = false;
      this.introEl.hidden = true;
      this.input.disabled = this.sendBtn.disabled = true;
      return message;
    }

    // ---- open / close / focus ----

    isOpen() {
      return !this.panel.hidden;
    }

    open() {
      if (this.isOpen()) return;
      this.panel.hidden = false;
      this.launcher.setAttribute("aria-expanded", "true");
      this.scrollToEnd();
      (this.input.disabled ? this.panel.querySelector("button") : this.input).focus();
    }

    close() {
      if (!this.isOpen()) return;
      this.panel.hidden = true;
      this.launcher.setAttribute("aria-expanded", "false");
      this.launcher.focus();
    }

    onKeydown(event) {
      if (!this.isOpen()) return;
      if (event.key === "Escape") {
        event.stopPropagation();
        this.close();
      } else if (event.key === "Tab") {
        const items = Array.from(this.panel.querySelectorAll("button,textarea,a[href],[tabindex]"))
          .filter((node) => !node.disabled && node.tabIndex >= 0 && node.getClientRects().length);
        if (!items.length) return;
        const first = items[0];
        const last = items[items.length - 1];
        const active = this.shadow.activeElement;
        if (event.shiftKey && (active === first || !this.panel.contains(active))) {
          event.preventDefault();
          last.focus();
        } else if (!event.shiftKey && (active === last || !this.panel.contains(active))) {
          event.preventDefault();
          first.focus();
        }
      }
    }

    onThreadClick(event) {
      const target = event.target;
      const cite = target.closest && target.closest("a.cite");
      if (cite) {
        // Citation targets live in the shadow root: scroll there instead of changing the host page's hash.
        event.preventDefault();
        const item = this.shadow.getElementById((cite.getAttribute("href") || "").slice(1));
        if (item) {
          item.scrollIntoView({ block: "nearest" });
          item.classList.add("flash");
          window.setTimeout(() => item.classList.remove("flash"), 1500);
        }
      }
      const copy = target.closest && target.closest(".code-copy");
      if (copy && this.shadow.activeElement !== copy) copy.focus(); // the copy fallback borrows the focus
    }

    nearBottom() {
      const t = this.thread;
      return t.scrollHeight - t.scrollTop - t.clientHeight < 60;
    }

    scrollToEnd() {
      this.thread.scrollTop = this.thread.scrollHeight;
    }

    autosize() {
      this.input.style.height = "auto";
      this.input.style.height = Math.min(this.input.scrollHeight + 2, 140) + "px";
    }

    showFormError(message) {
      this.formError.textContent = message;
      this.formError.hidden = !message;
    }
  }

  window.OpenGuruWidgetParts = Object.freeze({
    data: data, widgetKey: widgetKey, baseUrl: baseUrl, TEXT: Object.freeze(TEXT), attrs: attrs, str: str,
    Panel: Panel,
  });
})();
