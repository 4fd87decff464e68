/* The guru's public page: ask a question, stream the cited answer (SSE over fetch), keep a thread.
 *
 * Needs markdown.js (window.OpenGuruMarkdown), sse.js, answer-parts.js (the sources list, trust meter and
 * messages it shares with the widget) and guru-turn.js (one question and its answer) loaded first. Builds every node with createElement and textContent;
 * nothing from the server or the model is ever parsed as HTML.
 */
(function () {
  "use strict";

  const Parts = window.OpenGuruAnswerParts;
  const { MESSAGES } = Parts;
  const Turn = window.OpenGuruTurn; // guru-turn.js: one question and its answer
  // Looked up by the error code the server sends.
  const ERROR_MESSAGES = {
    network: MESSAGES.network,
    interrupted: MESSAGES.interrupted,
    forbidden: "This page's security token has expired. Reload the page and ask again.",
    not_found: MESSAGES.notFound,
    server: MESSAGES.server,
  };
  // Server-Sent Events over fetch come from sse.js (shared with the widget).
  const readEventStream = window.OpenGuruSSE.read;

  // ---- small helpers -------------------------------------------------------------------------

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
      const shared = document.getElementById("shared-answer");
      if (shared) this.replay(JSON.parse(shared.textContent));
      for (const chip of this.root.querySelectorAll(".example-chip")) {
        chip.addEventListener("click", () => this.useExample(chip.dataset.question || chip.textContent));
      }
    }

    /** A stored answer opened from its link: rendered like a live one, without feedback buttons. */
    replay(events) {
      this.turns += 1;
      const turn = new Turn(this.turns, "");
      this.thread.appendChild(turn.root);
      for (const [name, data] of events) {
        if (name === "done") turn.finish(data);
        else this.onEvent(turn, name, JSON.stringify(data));
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
        this.showFormError(MESSAGES.empty);
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
      await readEventStream(response.body, (name, data) => this.onEvent(turn, name, data),
        () => turn.finished || turn.failed);
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
        turn.setStage(data.stage, data.text);
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
        turn.fail(errorText(data) + MESSAGES.newConversation);
        return;
      }
      turn.fail(errorText(data));
    }

    async httpError(response, turn) {
      const payload = await readJson(response);
      if (response.status === 429) {
        const seconds = retryAfterSeconds(response.headers.get("Retry-After"));
        turn.fail(Parts.rateLimitText(seconds, payload && payload.msg ? String(payload.msg) : ""));
        turn.root.classList.add("rate-limited");
        this.startCooldown(seconds);
        return;
      }
      if (response.status === 404 && payload && payload.code === "not_found" && this.sessionId) {
        this.onStreamError(turn, payload); // the conversation is gone (known before the stream started)
        return;
      }
      if (payload && payload.msg) turn.fail(errorText(payload));
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

  function errorText(data) {
    const detail = data && data.msg ? String(data.msg) : "";
    const code = data && data.code ? String(data.code) : "";
    // The id ties what the visitor saw to the server's log: worth quoting to the maintainer.
    const id = data && data.error_id ? " (error id " + String(data.error_id).slice(0, 32) + ")" : "";
    return (detail || ERROR_MESSAGES[code] || ERROR_MESSAGES.server) + id;
  }

  /** Re-validate the accent colour client-side and derive a readable text colour for it. */
  function applyAccent(root) {
    const color = String(root.dataset.accent || "");
    if (!/^#[0-9a-fA-F]{6}$/.test(color)) return;
    root.style.setProperty("--accent", color);
    root.style.setProperty("--accent-ink", Parts.inkFor(color));
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
