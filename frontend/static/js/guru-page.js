/* The guru's public page: ask a question, stream the cited answer (SSE over fetch), keep a thread.
 *
 * Needs markdown.js (window.OpenGuruMarkdown) loaded first. Builds every node with createElement and
 * textContent; nothing from the server or the model is ever parsed as HTML.
 */
(function () {
  "use strict";

  const STAGES = {
    understanding: "Understanding the question…",
    retrieving: "Searching the sources…",
    reranking: "Ranking the best passages…",
    grading: "Checking what the sources cover…",
    generating: "Writing the answer…",
  };
  const KINDS = {
    WEBSITE: { badge: "Web", label: "Web page" },
    YOUTUBE: { badge: "YouTube", label: "YouTube video" },
    PDF: { badge: "PDF", label: "PDF document" },
    GITHUB_REPO: { badge: "GitHub", label: "GitHub repository" },
  };
  const ERROR_MESSAGES = {
    network: "Could not reach the server. Check your connection and try again.",
    interrupted: "The answer stopped before it was complete. Please ask again.",
    forbidden: "This page's security token has expired. Reload the page and ask again.",
    not_found: "This guru is not available any more.",
    server: "Something went wrong on the server. Please try again in a moment.",
  };

  // Server-Sent Events over fetch come from sse.js (shared with the widget).
  const readEventStream = window.OpenGuruSSE.read;

  // ---- small helpers -------------------------------------------------------------------------

  function el(tag, className, textValue) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (textValue !== undefined) node.textContent = textValue;
    return node;
  }

  function readCookie(name) {
    for (const part of document.cookie.split(";")) {
      const pair = part.trim();
      if (pair.startsWith(name + "=")) return decodeURIComponent(pair.slice(name.length + 1));
    }
    return "";
  }

  function csrfToken(form) {
    const field = form.querySelector("input[name=csrfmiddlewaretoken]");
    return readCookie("csrftoken") || (field ? field.value : "");
  }

  function percent(value) {
    return Math.round(Math.max(0, Math.min(1, Number(value) || 0)) * 100);
  }

  function trustLevel(score) {
    if (score >= 0.75) return "high";
    return score >= 0.5 ? "medium" : "low";
  }

  function referenceHref(link) {
    return window.OpenGuruMarkdown.safeUrl(link, window.location.href);
  }

  // ---- one question and its answer -----------------------------------------------------------

  class Turn {
    constructor(index, question) {
      this.index = index;
      this.questionId = null;
      this.sessionId = null;
      this.vote = null;
      this.text = "";
      this.references = [];
      this.frame = 0;
      this.finished = false;
      this.failed = false;
      this.root = el("article", "turn");
      this.root.setAttribute("aria-labelledby", "turn-" + index + "-q");
      this.questionEl = el("h2", "turn-question", question);
      this.questionEl.id = "turn-" + index + "-q";
      this.statusEl = el("p", "turn-status");
      this.statusEl.setAttribute("role", "status");
      this.answerEl = el("div", "answer markdown streaming");
      this.answerEl.setAttribute("aria-live", "polite");
      this.answerEl.setAttribute("aria-busy", "true");
      this.answerEl.setAttribute("aria-label", "Answer");
      this.trustEl = el("div", "trust");
      this.trustEl.hidden = true;
      this.refsEl = el("section", "references");
      this.refsEl.hidden = true;
      this.noticeEl = el("p", "turn-notice");
      this.noticeEl.hidden = true;
      this.feedbackEl = el("div", "feedback");
      this.feedbackEl.hidden = true;
      this.root.append(this.questionEl, this.statusEl, this.answerEl, this.trustEl, this.refsEl, this.noticeEl,
        this.feedbackEl);
      this.setStage("understanding");
    }

    setQuestion(question) {
      if (question) this.questionEl.textContent = question;
    }

    setStage(stage) {
      this.statusEl.textContent = STAGES[stage] || "Working…";
      this.statusEl.dataset.stage = stage;
    }

    appendText(piece) {
      this.text += piece;
      if (!this.frame) this.frame = window.requestAnimationFrame(() => this.render());
    }

    render() {
      if (this.frame) window.cancelAnimationFrame(this.frame);
      this.frame = 0;
      const numbers = this.references.map((ref) => Number(ref.n));
      const options = { citePrefix: "ref-" + this.index + "-", citations: numbers };
      this.answerEl.replaceChildren(window.OpenGuruMarkdown.render(this.text, options));
      if (this.text) this.statusEl.textContent = this.finished ? "" : STAGES.generating;
    }

    setReferences(references, trustScore) {
      this.references = Array.isArray(references) ? references : [];
      this.renderReferences();
      if (typeof trustScore === "number") this.renderTrust(trustScore, false);
    }

    renderReferences() {
      this.refsEl.replaceChildren();
      this.refsEl.hidden = this.references.length === 0;
      if (!this.references.length) return;
      const headingId = "turn-" + this.index + "-sources";
      const heading = el("h3", "references-title", "Sources");
      heading.id = headingId;
      this.refsEl.setAttribute("aria-labelledby", headingId);
      const list = el("ol", "reference-list");
      for (const ref of this.references) list.appendChild(this.referenceItem(ref));
      this.refsEl.append(heading, list);
    }

    referenceItem(ref) {
      const n = Number(ref.n);
      const item = el("li", "reference");
      item.id = "ref-" + this.index + "-" + n;
      item.value = n;
      const kind = KINDS[ref.kind] || { badge: "Source", label: "Source" };
      const badge = el("span", "ref-kind", kind.badge);
      badge.dataset.kind = String(ref.kind || "");
      badge.title = kind.label;
      const title = this.referenceTitle(ref);
      item.append(el("span", "ref-n", "[" + n + "]"), badge, title);
      const locator = String(ref.locator || "");
      if (locator && !title.textContent.includes(locator)) item.appendChild(el("span", "ref-locator", locator));
      if (typeof ref.score === "number") {
        item.appendChild(el("span", "ref-score", percent(ref.score) + "% match"));
      }
      return item;
    }

    referenceTitle(ref) {
      const title = String(ref.title || ref.link || "Untitled source");
      const href = referenceHref(ref.link);
      if (!href) return el("span", "ref-title", title);
      const a = el("a", "ref-title", title);
      a.href = href;
      a.target = "_blank";
      a.rel = "noopener noreferrer nofollow";
      return a;
    }

    renderTrust(score, outOfContext) {
      this.trustEl.replaceChildren();
      this.trustEl.hidden = false;
      if (outOfContext) {
        this.trustEl.dataset.level = "none";
        this.trustEl.append(
          el("span", "trust-badge", "Not covered by the sources"),
          el("span", "trust-hint", "This guru's sources do not answer this question, so no sources are cited.")
        );
        return;
      }
      const value = percent(score);
      this.trustEl.dataset.level = trustLevel(score);
      const label = el("span", "trust-label", "Trust");
      const meter = el("div", "trust-meter");
      meter.setAttribute("role", "meter");
      meter.setAttribute("aria-valuemin", "0");
      meter.setAttribute("aria-valuemax", "100");
      meter.setAttribute("aria-valuenow", String(value));
      meter.setAttribute("aria-label", "Trust score");
      const fill = el("span", "trust-fill");
      fill.style.width = value + "%";
      meter.appendChild(fill);
      this.trustEl.append(label, meter, el("span", "trust-value", value + "%"));
    }

    finish(data) {
      this.finished = true;
      if (Array.isArray(data.references)) this.references = data.references;
      this.render();
      this.renderReferences();
      if (data.out_of_context) {
        this.root.classList.add("out-of-context");
        this.renderTrust(0, true);
      } else if (typeof data.trust_score === "number") {
        this.renderTrust(data.trust_score, false);
      }
      this.settle();
    }

    fail(message) {
      this.failed = true;
      this.notice(message, "error");
      this.settle();
    }

    stop() {
      this.notice("Stopped. The answer above is incomplete.", "stopped");
      this.settle();
    }

    notice(message, kind) {
      this.noticeEl.textContent = message;
      this.noticeEl.className = "turn-notice " + kind;
      this.noticeEl.setAttribute("role", kind === "error" ? "alert" : "status");
      this.noticeEl.hidden = false;
    }

    settle() {
      if (this.frame) this.render();
      this.statusEl.textContent = "";
      this.answerEl.classList.remove("streaming");
      this.answerEl.setAttribute("aria-busy", "false");
      if (!this.text) this.answerEl.hidden = true;
    }
  }

  // ---- the page ------------------------------------------------------------------------------

  class GuruPage {
    constructor(root) {
      this.root = root;
      this.askUrl = root.dataset.askUrl;
      this.feedbackUrl = root.dataset.feedbackUrl || "";
      this.form = root.querySelector("#ask-form");
      this.input = root.querySelector("#question");
      this.askButton = root.querySelector("#ask-button");
      this.stopButton = root.querySelector("#stop-button");
      this.resetButton = root.querySelector("#new-conversation");
      this.thread = root.querySelector("#thread");
      this.formError = root.querySelector("#form-error");
      this.sessionId = null;
      this.controller = null;
      this.turns = 0;
      this.cooldownUntil = 0;
      this.cooldownTimer = 0;
    }

    start() {
      applyAccent(this.root);
      this.form.addEventListener("submit", (event) => {
        event.preventDefault();
        this.ask();
      });
      this.input.addEventListener("keydown", (event) => this.onKeydown(event));
      this.stopButton.addEventListener("click", () => this.stop());
      if (this.resetButton) this.resetButton.addEventListener("click", () => this.reset());
      for (const chip of this.root.querySelectorAll(".example-chip")) {
        chip.addEventListener("click", () => this.useExample(chip.dataset.question || chip.textContent));
      }
    }

    onKeydown(event) {
      if (event.key !== "Enter" || event.shiftKey || event.isComposing) return;
      event.preventDefault();
      this.form.requestSubmit();
    }

    useExample(question) {
      this.input.value = question.trim();
      this.input.focus();
    }

    busy() {
      return this.controller !== null;
    }

    setBusy(isBusy) {
      this.askButton.disabled = isBusy || Date.now() < this.cooldownUntil;
      this.stopButton.hidden = !isBusy;
      this.root.classList.toggle("is-streaming", isBusy);
      if (this.resetButton) this.resetButton.disabled = isBusy;
    }

    showFormError(message) {
      this.formError.textContent = message;
      this.formError.hidden = !message;
    }

    async ask() {
      const question = this.input.value.trim();
      if (this.busy() || Date.now() < this.cooldownUntil) return;
      if (!question) {
        this.showFormError("Type a question first.");
        this.input.focus();
        return;
      }
      this.showFormError("");
      this.input.value = "";
      this.turns += 1;
      const turn = new Turn(this.turns, question);
      this.thread.appendChild(turn.root);
      if (this.resetButton) this.resetButton.hidden = false;
      turn.root.scrollIntoView({ block: "nearest" });
      this.controller = new AbortController();
      this.setBusy(true);
      try {
        await this.stream(question, turn, this.controller.signal);
      } catch (error) {
        if (error && error.name === "AbortError") turn.stop();
        else turn.fail(ERROR_MESSAGES.network);
      } finally {
        this.controller = null;
        this.setBusy(false);
      }
    }

    async stream(question, turn, signal) {
      const response = await fetch(this.askUrl, {
        method: "POST",
        credentials: "same-origin",
        headers: {
          "Content-Type": "application/json",
          Accept: "text/event-stream",
          "X-CSRFToken": csrfToken(this.form),
        },
        body: JSON.stringify({ question: question, session_id: this.sessionId }),
        signal: signal,
      });
      const type = response.headers.get("Content-Type") || "";
      if (!response.ok || !type.includes("text/event-stream") || !response.body) {
        await this.httpError(response, turn);
        return;
      }
      await readEventStream(response.body, (name, data) => this.onEvent(turn, name, data));
      if (!turn.finished && !turn.failed) turn.fail(ERROR_MESSAGES.interrupted);
    }

    onEvent(turn, name, raw) {
      let data;
      try {
        data = JSON.parse(raw);
      } catch (_error) {
        return;
      }
      if (!data || typeof data !== "object" || turn.finished || turn.failed) return;
      if (name === "question") {
        turn.questionId = data.question_id;
        turn.sessionId = data.session_id ? String(data.session_id) : null;
        turn.setQuestion(data.question);
        if (data.session_id) this.sessionId = String(data.session_id);
      } else if (name === "status") {
        turn.setStage(data.stage);
      } else if (name === "references") {
        turn.setReferences(data.references, data.trust_score);
      } else if (name === "delta") {
        if (typeof data.text === "string") turn.appendText(data.text);
      } else if (name === "done") {
        turn.finish(data);
        if (this.feedbackUrl && window.OpenGuruFeedback) {
          window.OpenGuruFeedback.show(turn, this.feedbackUrl, csrfToken(this.form));
        }
      } else if (name === "error") {
        this.onStreamError(turn, data);
      }
    }

    onStreamError(turn, data) {
      if (turn.questionId === null && data.code === "not_found" && this.sessionId) {
        // The conversation this follow-up continues is gone: the next question starts a new one.
        this.sessionId = null;
        turn.fail(errorText(data) + " Your next question will start a new conversation.");
        return;
      }
      turn.fail(errorText(data));
    }

    async httpError(response, turn) {
      const payload = await readJson(response);
      if (response.status === 429) {
        const seconds = retryAfterSeconds(response.headers.get("Retry-After"));
        turn.fail(rateLimitText(seconds, payload));
        turn.root.classList.add("rate-limited");
        this.startCooldown(seconds);
        return;
      }
      if (payload && payload.detail) turn.fail(errorText(payload));
      else if (response.status === 403) turn.fail(ERROR_MESSAGES.forbidden);
      else if (response.status === 404) turn.fail(ERROR_MESSAGES.not_found);
      else if (response.ok) turn.fail(ERROR_MESSAGES.server + " (unexpected response)");
      else turn.fail(ERROR_MESSAGES.server + " (HTTP " + response.status + ")");
    }

    startCooldown(seconds) {
      if (!seconds) return;
      this.cooldownUntil = Date.now() + seconds * 1000;
      window.clearInterval(this.cooldownTimer);
      const tick = () => {
        const left = Math.ceil((this.cooldownUntil - Date.now()) / 1000);
        if (left > 0) {
          this.askButton.disabled = true;
          this.askButton.textContent = "Wait " + left + " s";
          return;
        }
        window.clearInterval(this.cooldownTimer);
        this.askButton.textContent = "Ask";
        this.askButton.disabled = this.busy();
      };
      tick();
      this.cooldownTimer = window.setInterval(tick, 1000);
    }

    stop() {
      if (this.controller) this.controller.abort();
    }

    reset() {
      if (this.busy()) return;
      this.sessionId = null;
      this.thread.replaceChildren();
      this.resetButton.hidden = true;
      this.input.focus();
    }
  }

  const readJson = window.OpenGuruSSE.readJson;
  const retryAfterSeconds = window.OpenGuruSSE.retryAfterSeconds;

  function rateLimitText(seconds, payload) {
    if (seconds) {
      const unit = seconds === 1 ? " second" : " seconds";
      return "Too many questions right now. Please wait " + seconds + unit + " before asking again.";
    }
    const detail = payload && payload.detail ? String(payload.detail) : "Please wait a moment before asking again.";
    return "Too many questions right now. " + detail;
  }

  function errorText(data) {
    const detail = data && data.detail ? String(data.detail) : "";
    const code = data && data.code ? String(data.code) : "";
    if (detail) return detail;
    return ERROR_MESSAGES[code] || ERROR_MESSAGES.server;
  }

  /** Re-validate the accent colour client-side and derive a readable text colour for it. */
  function applyAccent(root) {
    const color = String(root.dataset.accent || "");
    if (!/^#[0-9a-fA-F]{6}$/.test(color)) return;
    const channel = (offset) => {
      const c = parseInt(color.slice(offset, offset + 2), 16) / 255;
      return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
    };
    const luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
    root.style.setProperty("--accent", color);
    root.style.setProperty("--accent-ink", luminance > 0.4 ? "#1b1f24" : "#ffffff");
  }

  function boot() {
    const root = document.getElementById("guru-page");
    if (!root || !window.OpenGuruMarkdown) return;
    const page = new GuruPage(root);
    page.start();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
  else boot();
})();
