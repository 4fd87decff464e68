/* OpenGuru embeddable widget, part 3 of 3: the conversation (asking, streaming the answer, sessionStorage)
 * and the public API. Extends the Panel of widget-panel.js; each answer is a Turn of widget-turn.js.
 *
 * The conversation is kept in sessionStorage as data (session id, questions, markdown text, references)
 * and drawn again on load; nothing stored there is ever parsed as HTML.
 * API: window.OpenGuruWidget = { open(), close(), ask(question) }.
 */
(function () {
  "use strict";

  const W = window.OpenGuruWidgetParts;
  if (window.OpenGuruWidget || !W || !W.Turn) return;

  const Parts = window.OpenGuruAnswerParts;
  const { TEXT, str, baseUrl, widgetKey, Turn, cleanTurn } = W;
  const MAX_TURNS = 30;
  const storageKey = "openguru-widget:" + widgetKey;
  const readJson = window.OpenGuruSSE.readJson;
  const retryAfterSeconds = window.OpenGuruSSE.retryAfterSeconds;
  // Server-Sent Events over fetch come from sse.js, served before the widget in /widget.js.
  const readEventStream = window.OpenGuruSSE.read;

  class Widget extends W.Panel {
    constructor() {
      super();
      this.sessionId = null;
      this.turns = [];
      this.controller = null;
      this.cooldownUntil = 0;
      this.timer = 0;
      window.addEventListener("pagehide", () => this.persist());
      this.restore();
      this.loadConfig();
    }

    // ---- asking ----

    submit() {
      if (this.controller) return this.controller.abort();
      return this.ask(this.input.value);
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
      await readEventStream(response.body, (name, raw) => this.onEvent(turn, name, raw), () => turn.finished);
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
        turn.setStage(payload.stage, payload.text);
      } else if (name === "references") {
        turn.setReferences(payload.references, payload.trust_score);
      } else if (name === "delta") {
        if (typeof payload.text === "string") turn.appendText(payload.text);
      } else if (name === "done") {
        turn.finish(payload);
      } else if (name === "error") {
        this.streamError(turn, payload, str(payload.msg, 500));
      }
    }

    streamError(turn, payload, detail) {
      // The id ties what the visitor saw to the server's log: worth quoting to the site's maintainer.
      const id = str(payload.error_id, 32) ? " (error id " + str(payload.error_id, 32) + ")" : "";
      if (payload.code === "not_found" && this.sessionId) {
        this.sessionId = null; // the conversation is gone: the next question starts a new one
        turn.fail((detail || TEXT.server) + TEXT.newConversation);
      } else {
        turn.fail((detail || TEXT.server) + id);
      }
    }

    async httpError(response, turn) {
      const payload = (await readJson(response)) || {};
      const detail = str(payload.msg, 500) || str(payload.error, 500);
      const status = response.status;
      if (status === 429) {
        const seconds = retryAfterSeconds(response.headers.get("Retry-After"));
        turn.fail(Parts.rateLimitText(seconds));
        this.cooldown(seconds);
      } else if (status === 403) {
        turn.fail(TEXT.refused);
        this.block(TEXT.refused);
      } else if (status === 401) {
        turn.fail(TEXT.badKey);
        this.block(TEXT.badKey);
      } else if (status === 404 && payload.code === "not_found" && this.sessionId) {
        this.streamError(turn, payload, detail); // the conversation is gone (known before the stream started)
      } else if (status === 404) {
        turn.fail(TEXT.notFound);
      } else if ((status === 400 || status >= 500) && detail) {
        this.streamError(turn, payload, detail);
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
