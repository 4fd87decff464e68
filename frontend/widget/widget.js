/* OpenGuru embeddable widget: a launcher and a chat panel in a Shadow DOM that stream cited answers.
 *
 * Served right after markdown.js in /widget.js and embedded with
 *   <script async src="https://HOST/widget.js" id="guru-widget-id" data-widget-id="KEY"></script>
 * Nothing from the server, the model or sessionStorage is parsed as HTML: nodes are built with
 * createElement/textContent, answers with window.OpenGuruMarkdown.render. The conversation is kept in
 * sessionStorage as data (session id, questions, markdown text, references) and rendered again on load.
 * Finished answers get 👍/👎 buttons (POST /widget/feedback/ with the question and conversation ids).
 * API: window.OpenGuruWidget = { open(), close(), ask(question) }.
 */
(function () {
  "use strict";

  const MD = window.OpenGuruMarkdown;
  const script = document.currentScript || document.getElementById("guru-widget-id") ||
    document.querySelector("script[data-widget-id]");
  if (window.OpenGuruWidget || !MD || !script) return;

  const STAGES = {
    understanding: "Understanding the question…",
    retrieving: "Searching the sources…",
    reranking: "Ranking the best passages…",
    grading: "Checking what the sources cover…",
    generating: "Writing the answer…",
  };
  const KINDS = { WEBSITE: "Web", YOUTUBE: "YouTube", PDF: "PDF", GITHUB_REPO: "GitHub" };
  const TEXT = {
    network: "Could not reach the server. Check your connection and try again.",
    interrupted: "The answer stopped before it was complete. Please ask again.",
    refused: "This site is not allowed to use this widget.",
    badKey: "This widget is not set up correctly: its widget id is not valid.",
    notFound: "This guru is not available any more.",
    server: "Something went wrong on the server. Please try again in a moment.",
    stopped: "Stopped. The answer above is incomplete.",
    empty: "Type a question first.",
  };
  const MAX_TURNS = 30;
  const data = script.dataset;
  const widgetKey = String(data.widgetId || "").trim();
  const baseUrl = resolveBase();
  const storageKey = "openguru-widget:" + widgetKey;

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

  function inkFor(color) {
    const channel = (offset) => {
      const c = parseInt(color.slice(offset, offset + 2), 16) / 255;
      return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
    };
    const luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
    return luminance > 0.4 ? "#1b1f24" : "#ffffff";
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

  function el(tag, className, textValue) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (textValue !== undefined) node.textContent = textValue;
    return node;
  }

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

  function percent(value) {
    return Math.round(Math.max(0, Math.min(1, Number(value) || 0)) * 100);
  }

  const readJson = window.OpenGuruSSE.readJson;
  const retryAfterSeconds = window.OpenGuruSSE.retryAfterSeconds;

  /** Disallowed origins get a 403 without CORS headers, which fetch reports like a network error.
   * A no-cors request (no preflight, opaque answer) tells the two apart: if the server answers it,
   * the failure was the origin check. */
  function serverReachable() {
    return fetch(baseUrl + "/widget.js", { method: "HEAD", mode: "no-cors", cache: "no-store", credentials: "omit" })
      .then(() => true, () => false);
  }

  // Server-Sent Events over fetch come from sse.js, served just before this file in /widget.js.
  const readEventStream = window.OpenGuruSSE.read;

  // ---- styles (everything lives in the shadow root; px only: rem would follow the host page) --

  const DARK = "--bg:#16191e;--fg:#e6e9ee;--muted:#9aa4b1;--line:#2f353e;--soft:#20252c;--code:#0f1216;" +
    "--err-bg:#3b1d1d;--err-fg:#ffb4ab;--note-bg:#23282f;";
  const CSS = `
:host{all:initial !important}
.og{all:initial;--accent:#1f6feb;--ink:#fff;--bg:#fff;--fg:#1b1f24;--muted:#5b6470;--line:#d8dee4;--soft:#f3f5f7;
--code:#f6f8fa;--err-bg:#fdecea;--err-fg:#8a1c12;--note-bg:#f6f8fa;--mb:20px;--ms:20px;
font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg)}
.og.dark{${DARK}}
@media (prefers-color-scheme:dark){.og.auto{${DARK}}}
.og *,.og *::before,.og *::after{box-sizing:border-box}
[hidden]{display:none !important}
button,textarea{font:inherit;color:inherit}
button{cursor:pointer}
button:disabled{cursor:not-allowed;opacity:.6}
:focus-visible{outline:2px solid var(--accent);outline-offset:2px}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.launcher{position:fixed;z-index:2147483000;bottom:var(--mb);right:var(--ms);display:flex;align-items:center;gap:8px;
margin:0;padding:11px 18px;border:0;border-radius:999px;background:var(--accent);color:var(--ink);font-weight:600;
line-height:1.2;box-shadow:0 6px 20px rgba(0,0,0,.22)}
.launcher:hover{filter:brightness(1.08)}
.left .launcher{right:auto;left:var(--ms)}
.panel{position:fixed;z-index:2147483001;bottom:calc(var(--mb) + 58px);right:var(--ms);width:410px;
max-width:calc(100vw - 24px);height:min(660px,calc(100vh - var(--mb) - 78px));display:flex;flex-direction:column;
background:var(--bg);color:var(--fg);border:1px solid var(--line);border-radius:14px;overflow:hidden;
box-shadow:0 16px 48px rgba(0,0,0,.28)}
.left .panel{right:auto;left:var(--ms)}
@media (max-width:640px){.panel,.left .panel{inset:0;width:auto;max-width:none;height:auto;border:0;border-radius:0}}
.head{display:flex;align-items:center;gap:10px;padding:10px 10px 10px 14px;background:var(--accent);color:var(--ink)}
.head :focus-visible{outline-color:var(--ink)}
.icon{width:28px;height:28px;border-radius:50%;object-fit:cover;background:var(--bg)}
.title{flex:1;margin:0;font-size:16px;font-weight:650;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.hbtn{display:flex;align-items:center;gap:4px;margin:0;padding:6px 8px;border:0;border-radius:8px;
background:transparent;color:inherit;font-size:13px}
.hbtn:hover{background:rgba(127,127,127,.22)}
.thread{flex:1;overflow-y:auto;padding:14px;display:flex;flex-direction:column;gap:16px;overscroll-behavior:contain}
.intro{margin:0;color:var(--muted);white-space:pre-line}
.banner{margin:0;padding:9px 12px;border-radius:8px;background:var(--err-bg);color:var(--err-fg);font-weight:600}
.turn{display:flex;flex-direction:column;gap:8px}
.q{align-self:flex-end;max-width:88%;margin:0;padding:8px 12px;border-radius:14px 14px 4px 14px;
background:var(--accent);color:var(--ink);white-space:pre-wrap;overflow-wrap:anywhere}
.status{margin:0;color:var(--muted);font-size:13px}
.status:empty{display:none}
.md{overflow-wrap:anywhere}
.md>:first-child{margin-top:0}.md>:last-child{margin-bottom:0}
.md p,.md ul,.md ol,.md blockquote,.md .table-wrap,.md .code-block{margin:8px 0}
.md ul,.md ol{padding-left:22px}
.md h1,.md h2,.md h3,.md h4,.md h5,.md h6{margin:12px 0 6px;font-size:15px;line-height:1.3}
.md h1{font-size:18px}.md h2{font-size:17px}.md h3{font-size:16px}
.md a,a.ref-title{color:inherit;text-decoration:underline;text-decoration-color:var(--accent);text-underline-offset:2px}
.md code{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--soft);padding:1px 4px;
border-radius:4px}
.md blockquote{padding-left:10px;border-left:3px solid var(--line);color:var(--muted)}
.md hr{border:0;border-top:1px solid var(--line)}
.md .code-block{border:1px solid #2d333b;border-radius:8px;overflow:hidden;background:#1c2128}
.md .code-head{display:flex;justify-content:space-between;align-items:center;padding:4px 6px 4px 10px;
background:#2d333b;color:#adbac7;font-size:12px}
.md .code-copy{padding:2px 8px;border:1px solid #545d68;border-radius:5px;background:transparent;color:#cdd9e5;
font-size:12px}
.md .code-copy:hover{background:#373e47}
.md pre{margin:0;padding:10px;overflow-x:auto}
.md pre code{padding:0;background:none;color:#e6edf3;white-space:pre}
.md .table-wrap{overflow-x:auto}
.md table{border-collapse:collapse;font-size:14px}
.md th,.md td{padding:4px 8px;border:1px solid var(--line);text-align:left}
.md .cite-ref{line-height:0}
.md a.cite{display:inline-block;min-width:17px;padding:0 4px;border-radius:8px;background:var(--soft);color:var(--fg);
font-size:11px;font-weight:700;line-height:16px;text-align:center;text-decoration:none}
.md a.cite:hover{background:var(--accent);color:var(--ink)}
.trust{display:flex;flex-wrap:wrap;align-items:center;gap:8px;font-size:13px;--trust:#cf222e}
.trust[data-level=high]{--trust:#1a7f37}.trust[data-level=medium]{--trust:#9a6700}
.meter{position:relative;width:90px;height:7px;border-radius:9px;background:var(--soft);overflow:hidden}
.fill{position:absolute;inset:0 auto 0 0;border-radius:inherit;background:var(--trust)}
.trust-label{color:var(--muted);font-weight:600}
.trust-value{font-weight:700;color:var(--trust)}
.trust[data-level=none]{padding:7px 10px;border:1px dashed var(--line);border-radius:8px;background:var(--note-bg)}
.trust-badge{font-weight:700}
.trust-hint{color:var(--muted)}
.refs{font-size:13px}
.refs h3{margin:0 0 4px;font-size:12px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}
.refs ol{margin:0;padding:0;list-style:none;display:flex;flex-direction:column;gap:4px}
.refs li{display:flex;flex-wrap:wrap;align-items:baseline;gap:6px;padding:5px 8px;border:1px solid var(--line);
border-radius:8px}
.refs li.flash{border-color:var(--accent)}
.ref-n{font-weight:700;color:var(--muted)}
.ref-kind{padding:0 5px;border-radius:4px;background:var(--soft);font-size:11px;font-weight:700}
.ref-title{font-weight:600;overflow-wrap:anywhere}
.ref-locator,.ref-score{color:var(--muted);font-size:12px}
.notice{margin:0;padding:8px 10px;border-radius:8px;background:var(--note-bg);color:var(--muted)}
.notice.error{background:var(--err-bg);color:var(--err-fg)}
.vote{display:flex;flex-wrap:wrap;align-items:center;gap:6px;color:var(--muted);font-size:13px}
.vbtn{margin:0;padding:1px 9px;border:1px solid var(--line);border-radius:999px;background:transparent;
font-size:13px;white-space:nowrap}
.vbtn:hover{background:var(--soft)}
.vbtn[aria-pressed=true]{border-color:var(--accent);background:var(--soft);box-shadow:inset 0 0 0 1px var(--accent)}
.form{display:flex;align-items:flex-end;gap:8px;padding:10px;border-top:1px solid var(--line);background:var(--bg)}
.input{flex:1;min-height:42px;max-height:140px;margin:0;padding:10px 12px;resize:none;border:1px solid var(--line);
border-radius:10px;background:var(--bg);color:var(--fg);font-size:15px;line-height:1.4}
.input::placeholder{color:var(--muted)}
.input:disabled{background:var(--soft)}
.send{min-width:64px;height:42px;margin:0;padding:0 14px;border:0;border-radius:10px;background:var(--accent);
color:var(--ink);font-weight:600}
.form-error{margin:0;padding:0 12px 8px;color:var(--err-fg);font-size:13px}
.foot{margin:0;padding:0 12px 8px;color:var(--muted);font-size:11px;text-align:center}
`;

  // ---- one question and its answer (state kept as data so it can be saved and restored) ------

  class Turn {
    constructor(widget, index, saved) {
      this.widget = widget;
      this.index = index;
      this.d = saved;
      this.frame = 0;
      this.finished = Boolean(saved.done);
      this.started = false;
      this.root = attrs(el("article", "turn"), { "aria-label": "Question " + index });
      this.qEl = el("p", "q", saved.q);
      this.statusEl = attrs(el("p", "status"), { role: "status" });
      this.answerEl = attrs(el("div", "md"), { "aria-live": "polite", "aria-busy": String(!this.finished) });
      this.trustEl = el("div", "trust");
      this.refsEl = el("section", "refs");
      this.noticeEl = el("p", "notice");
      this.voteEl = attrs(el("div", "vote"), { role: "group", "aria-label": "Rate this answer" });
      this.trustEl.hidden = this.refsEl.hidden = this.noticeEl.hidden = this.voteEl.hidden = true;
      this.root.append(this.qEl, this.statusEl, this.answerEl, this.trustEl, this.refsEl, this.noticeEl, this.voteEl);
      if (this.finished) this.renderAll();
      else this.setStage("understanding");
    }

    snapshot() {
      const d = this.d;
      const out = { q: d.q, text: d.text, refs: d.refs, trust: d.trust, ooc: d.ooc, notice: d.notice, kind: d.kind,
        id: d.id, sid: d.sid, vote: d.vote, done: true };
      if (!this.finished) Object.assign(out, { notice: TEXT.interrupted, kind: "error" });
      return out;
    }

    setStage(stage) {
      this.statusEl.textContent = STAGES[stage] || "Working…";
    }

    appendText(piece) {
      this.d.text += piece;
      if (!this.frame) this.frame = window.requestAnimationFrame(() => this.render());
    }

    render() {
      if (this.frame) window.cancelAnimationFrame(this.frame);
      this.frame = 0;
      const stick = this.widget.nearBottom();
      const citations = this.d.refs.map((ref) => Number(ref.n));
      const options = { citePrefix: "og-ref-" + this.index + "-", citations: citations };
      this.answerEl.replaceChildren(MD.render(this.d.text, options));
      this.answerEl.hidden = !this.d.text;
      if (this.d.text && !this.finished) this.statusEl.textContent = STAGES.generating;
      if (stick) this.widget.scrollToEnd();
    }

    renderAll() {
      this.render();
      this.renderReferences();
      this.renderTrust();
      if (this.d.notice) this.notice(this.d.notice, this.d.kind);
      this.settle();
      this.renderVote();
    }

    /** Thumbs up/down under a complete answer; the conversation id goes along because only it may vote. */
    renderVote() {
      const d = this.d;
      if (!d.id || !d.sid || !d.text || d.kind) return;
      // Words beside the symbols, as on the guru page: not every system has an emoji font.
      this.voteBtns = [[1, "👍 Yes", "Helpful"], [-1, "👎 No", "Not helpful"]].map(([value, label, name]) => {
        const button = attrs(el("button", "vbtn", label), { type: "button", "aria-label": name, title: name });
        button.addEventListener("click", () => this.sendVote(d.vote === value ? null : value));
        return button;
      });
      this.voteMsg = attrs(el("span"), { role: "status" });
      this.voteEl.replaceChildren(el("span", "", "Was this helpful?"), ...this.voteBtns, this.voteMsg);
      this.voteEl.hidden = false;
      this.showVote("");
    }

    showVote(message) {
      this.voteBtns.forEach((b, i) => b.setAttribute("aria-pressed", String(this.d.vote === (i ? -1 : 1))));
      this.voteMsg.textContent = message;
    }

    async sendVote(value) {
      this.voteBtns.forEach((b) => { b.disabled = true; });
      let message = "Your vote could not be saved. Please try again.";
      try {
        const response = await fetch(baseUrl + "/widget/feedback/", { method: "POST", credentials: "omit",
          headers: { Authorization: widgetKey, "Content-Type": "application/json" },
          body: JSON.stringify({ question_id: this.d.id, session_id: this.d.sid, feedback: value }) });
        if (response.ok) {
          this.d.vote = value;
          message = value === null ? "Vote removed." : "Thanks for your feedback!";
          this.widget.persist();
        } else if (response.status === 429) {
          message = "Too many votes right now. Please wait a moment.";
        }
      } catch (_error) {
        message = TEXT.network;
      }
      this.voteBtns.forEach((b) => { b.disabled = false; });
      this.showVote(message);
    }

    setReferences(references, trust) {
      this.d.refs = cleanRefs(references);
      if (typeof trust === "number") this.d.trust = trust;
      this.renderReferences();
      this.renderTrust();
      if (this.d.text) this.render();
    }

    renderReferences() {
      const refs = this.d.refs;
      this.refsEl.replaceChildren();
      this.refsEl.hidden = !refs.length;
      if (!refs.length) return;
      const id = "og-sources-" + this.index;
      this.refsEl.setAttribute("aria-labelledby", id);
      const heading = el("h3", "", "Sources");
      heading.id = id;
      const list = el("ol");
      for (const ref of refs) list.appendChild(this.referenceItem(ref));
      this.refsEl.append(heading, list);
    }

    referenceItem(ref) {
      const n = Number(ref.n);
      const item = el("li");
      item.id = "og-ref-" + this.index + "-" + n;
      item.value = n;
      const title = String(ref.title || ref.link || "Untitled source");
      const href = MD.safeUrl(ref.link, baseUrl + "/");
      let titleEl = el("span", "ref-title", title);
      if (href) {
        titleEl = attrs(el("a", "ref-title", title), { href: href, target: "_blank", rel: "noopener noreferrer" });
      }
      const kind = el("span", "ref-kind", KINDS[ref.kind] || "Source");
      kind.dataset.kind = String(ref.kind || "");
      item.append(el("span", "ref-n", "[" + n + "]"), kind, titleEl);
      const locator = String(ref.locator || "");
      if (locator && !title.includes(locator)) item.appendChild(el("span", "ref-locator", locator));
      if (typeof ref.score === "number") item.appendChild(el("span", "ref-score", percent(ref.score) + "% match"));
      return item;
    }

    renderTrust() {
      const el0 = this.trustEl;
      el0.replaceChildren();
      el0.hidden = !this.d.ooc && typeof this.d.trust !== "number";
      if (el0.hidden) return;
      if (this.d.ooc) {
        el0.dataset.level = "none";
        el0.append(el("span", "trust-badge", "Not covered by the sources"),
          el("span", "trust-hint", "The sources do not answer this question, so nothing is cited."));
        return;
      }
      const value = percent(this.d.trust);
      el0.dataset.level = value >= 75 ? "high" : value >= 50 ? "medium" : "low";
      const meter = attrs(el("div", "meter"), { role: "meter", "aria-valuemin": "0", "aria-valuemax": "100",
        "aria-valuenow": String(value), "aria-label": "Trust score" });
      const fill = el("span", "fill");
      fill.style.width = value + "%";
      meter.appendChild(fill);
      el0.append(el("span", "trust-label", "Trust"), meter, el("span", "trust-value", value + "%"));
    }

    finish(payload) {
      this.finished = true;
      if (Array.isArray(payload.references)) this.d.refs = cleanRefs(payload.references);
      this.d.ooc = payload.out_of_context === true;
      if (typeof payload.trust_score === "number") this.d.trust = payload.trust_score;
      this.renderAll();
    }

    fail(message) {
      this.finished = true;
      this.notice(message, "error");
      this.settle();
    }

    stop() {
      this.finished = true;
      this.notice(TEXT.stopped, "stopped");
      this.settle();
    }

    notice(message, kind) {
      this.d.notice = message;
      this.d.kind = kind;
      this.noticeEl.textContent = message;
      this.noticeEl.className = "notice " + kind;
      this.noticeEl.setAttribute("role", kind === "error" ? "alert" : "status");
      this.noticeEl.hidden = false;
    }

    settle() {
      if (this.frame) this.render();
      this.statusEl.textContent = "";
      this.answerEl.setAttribute("aria-busy", "false");
      this.answerEl.hidden = !this.d.text;
    }
  }

  function cleanRefs(list) {
    if (!Array.isArray(list)) return [];
    const valid = list.filter((ref) => ref && typeof ref === "object" && Number.isFinite(Number(ref.n)));
    return valid.slice(0, 30).map((ref) => ({
      n: Number(ref.n), title: str(ref.title, 500), link: str(ref.link, 2000), kind: str(ref.kind, 20),
      score: typeof ref.score === "number" ? ref.score : null, locator: str(ref.locator, 200),
    }));
  }

  function cleanTurn(saved) {
    const t = saved && typeof saved === "object" ? saved : {};
    return { q: str(t.q, 4000), text: str(t.text, 100000), refs: cleanRefs(t.refs),
      trust: typeof t.trust === "number" ? t.trust : null, ooc: t.ooc === true, notice: str(t.notice, 500),
      kind: t.kind === "error" ? "error" : t.kind ? "stopped" : "", id: Number.isSafeInteger(t.id) ? t.id : 0,
      sid: str(t.sid, 100), vote: t.vote === 1 || t.vote === -1 ? t.vote : null, done: true };
  }

  // ---- the widget ----------------------------------------------------------------------------

  class Widget {
    constructor() {
      this.name = data.name || "Ask AI";
      this.sessionId = null;
      this.turns = [];
      this.controller = null;
      this.blocked = "";
      this.cooldownUntil = 0;
      this.timer = 0;
      this.build();
      this.restore();
      this.loadConfig();
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
      this.introEl = el("p", "intro", "Ask a question. Answers cite their sources.");
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
      const foot = el("p", "foot", "AI answers can be wrong: check the sources.");
      panel.append(head, this.thread, form, this.formError, foot);
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
      window.addEventListener("pagehide", () => this.persist());
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
      if (guru.intro_text) this.introEl.textContent = str(guru.intro_text, 2000);
      return "";
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

    // ---- asking ----

    submit() {
      if (this.controller) return this.controller.abort();
      return this.ask(this.input.value);
    }

    showFormError(message) {
      this.formError.textContent = message;
      this.formError.hidden = !message;
    }

    setBusy(busy) {
      this.sendBtn.textContent = busy ? "Stop" : "Send";
      this.sendBtn.disabled = Boolean(this.blocked) || (!busy && Date.now() < this.cooldownUntil);
      this.resetBtn.disabled = busy;
    }

    addTurn(saved) {
      const turn = new Turn(this, this.turns.length + 1, saved);
      this.turns.push(turn);
      this.thread.appendChild(turn.root);
      this.introEl.hidden = true;
      return turn;
    }

    async ask(raw) {
      const question = String(raw == null ? "" : raw).trim();
      this.open();
      if (this.controller || Date.now() < this.cooldownUntil) return;
      if (this.blocked) {
        this.bannerEl.scrollIntoView({ block: "nearest" });
        return;
      }
      if (!question) {
        this.showFormError(TEXT.empty);
        this.input.focus();
        return;
      }
      this.showFormError("");
      this.input.value = "";
      this.autosize();
      const turn = this.addTurn({ q: question, text: "", refs: [], trust: null, ooc: false, notice: "", kind: "" });
      this.scrollToEnd();
      this.controller = new AbortController();
      this.setBusy(true);
      try {
        await this.stream(question, turn, this.controller.signal);
      } catch (error) {
        if (error && error.name === "AbortError") {
          turn.stop();
        } else if (turn.started) {
          turn.fail(TEXT.interrupted);
        } else {
          // fetch hides why it failed: a refused origin (403 without CORS headers) looks like a network error.
          turn.fail((await this.loadConfig()) || TEXT.server);
        }
      } finally {
        this.controller = null;
        this.setBusy(false);
        this.persist();
      }
    }

    async stream(question, turn, signal) {
      const body = { question: question };
      if (this.sessionId) body.session_id = this.sessionId;
      const response = await fetch(baseUrl + "/widget/stream/", {
        method: "POST",
        credentials: "omit",
        headers: { Authorization: widgetKey, "Content-Type": "application/json", Accept: "text/event-stream" },
        body: JSON.stringify(body),
        signal: signal,
      });
      const type = response.headers.get("Content-Type") || "";
      if (!response.ok || !type.includes("text/event-stream") || !response.body) {
        await this.httpError(response, turn);
        return;
      }
      await readEventStream(response.body, (name, raw) => this.onEvent(turn, name, raw));
      if (!turn.finished) turn.fail(TEXT.interrupted);
    }

    onEvent(turn, name, raw) {
      let payload;
      try {
        payload = JSON.parse(raw);
      } catch (_error) {
        return;
      }
      if (!payload || typeof payload !== "object" || turn.finished) return;
      turn.started = true;
      if (name === "question") {
        if (payload.session_id) this.sessionId = String(payload.session_id);
        if (Number.isSafeInteger(payload.question_id)) turn.d.id = payload.question_id;
        turn.d.sid = this.sessionId;
        if (typeof payload.question === "string" && payload.question) {
          turn.d.q = payload.question.slice(0, 4000);
          turn.qEl.textContent = turn.d.q;
        }
      } else if (name === "status") {
        turn.setStage(payload.stage);
      } else if (name === "references") {
        turn.setReferences(payload.references, payload.trust_score);
      } else if (name === "delta") {
        if (typeof payload.text === "string") turn.appendText(payload.text);
      } else if (name === "done") {
        turn.finish(payload);
      } else if (name === "error") {
        const detail = str(payload.detail, 500) || TEXT.server;
        if (payload.code === "not_found" && this.sessionId) {
          this.sessionId = null; // the conversation is gone: the next question starts a new one
          turn.fail(detail + " Your next question will start a new conversation.");
        } else {
          turn.fail(detail);
        }
      }
    }

    async httpError(response, turn) {
      const payload = (await readJson(response)) || {};
      const detail = str(payload.msg, 500) || str(payload.detail, 500) || str(payload.error, 500);
      const status = response.status;
      if (status === 429) {
        const seconds = retryAfterSeconds(response.headers.get("Retry-After"));
        turn.fail("Too many questions right now. " + (seconds
          ? "Please wait " + seconds + (seconds === 1 ? " second" : " seconds") + " before asking again."
          : "Please wait a moment before asking again."));
        this.cooldown(seconds);
      } else if (status === 403) {
        turn.fail(TEXT.refused);
        this.block(TEXT.refused);
      } else if (status === 401) {
        turn.fail(TEXT.badKey);
        this.block(TEXT.badKey);
      } else if (status === 404) {
        turn.fail(TEXT.notFound);
      } else if (status === 400 && detail) {
        turn.fail(detail);
      } else {
        turn.fail(TEXT.server + (response.ok ? "" : " (HTTP " + status + ")"));
      }
    }

    cooldown(seconds) {
      if (!seconds) return;
      this.cooldownUntil = Date.now() + seconds * 1000;
      window.clearInterval(this.timer);
      const tick = () => {
        const left = Math.ceil((this.cooldownUntil - Date.now()) / 1000);
        if (left > 0 && !this.controller) {
          this.sendBtn.disabled = true;
          this.sendBtn.textContent = "Wait " + left + " s";
        } else if (left <= 0) {
          window.clearInterval(this.timer);
          this.setBusy(Boolean(this.controller));
        }
      };
      this.timer = window.setInterval(tick, 1000);
      window.setTimeout(tick, 0);
    }

    reset() {
      if (this.controller) return;
      this.sessionId = null;
      for (const turn of this.turns) turn.root.remove();
      this.turns = [];
      this.introEl.hidden = Boolean(this.blocked);
      this.persist();
      this.input.focus();
    }

    // ---- sessionStorage: data only, rendered again with the same code on the next page ----

    persist() {
      try {
        if (!this.turns.length && !this.sessionId) {
          window.sessionStorage.removeItem(storageKey);
          return;
        }
        const turns = this.turns.slice(-MAX_TURNS).map((turn) => turn.snapshot());
        window.sessionStorage.setItem(storageKey, JSON.stringify({ v: 1, sessionId: this.sessionId, turns: turns }));
      } catch (_error) {
        // storage full or disabled: the conversation just does not survive navigation
      }
    }

    restore() {
      let saved = null;
      try {
        saved = JSON.parse(window.sessionStorage.getItem(storageKey) || "null");
      } catch (_error) {
        saved = null;
      }
      if (!saved || saved.v !== 1 || !Array.isArray(saved.turns)) return;
      this.sessionId = typeof saved.sessionId === "string" && saved.sessionId ? saved.sessionId.slice(0, 100) : null;
      for (const turn of saved.turns.slice(-MAX_TURNS)) this.addTurn(cleanTurn(turn));
    }
  }

  let widget = null;
  const pending = [];
  function boot() {
    widget = new Widget();
    for (const call of pending.splice(0)) call();
  }
  function later(call) {
    if (widget) call();
    else pending.push(call);
  }

  window.OpenGuruWidget = Object.freeze({
    open: () => later(() => widget.open()),
    close: () => later(() => widget.close()),
    ask: (question) => later(() => widget.ask(question)),
  });
  if (document.body) boot();
  else document.addEventListener("DOMContentLoaded", boot);
})();
