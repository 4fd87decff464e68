/* OpenGuru embeddable widget, part 2 of 3: one question and its answer.
 *
 * A turn keeps its state as plain data (question, markdown text, references, trust, notice, ids, vote) so
 * widget.js can save it in sessionStorage and draw it again on the next page with the same code. Answers
 * are drawn with window.OpenGuruMarkdown.render, sources and trust with window.OpenGuruAnswerParts.
 * Finished answers get 👍/👎 buttons (POST /widget/feedback/ with the question and conversation ids).
 */
(function () {
  "use strict";

  const W = window.OpenGuruWidgetParts;
  if (window.OpenGuruWidget || !W) return;

  const MD = window.OpenGuruMarkdown;
  const Parts = window.OpenGuruAnswerParts;
  const { el } = Parts;
  const { TEXT, attrs, str, baseUrl, widgetKey } = W;
  const TRUST = {
    hint: "The sources do not answer this question, so nothing is cited.",
    meterClass: "meter",
    fillClass: "fill",
    roundLevel: true,
  };

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

    setStage(stage, text) {
      this.statusEl.textContent = Parts.stageText(stage, text);
    }

    appendText(piece) {
      this.d.text += piece;
      if (!this.frame) this.frame = window.requestAnimationFrame(() => this.render());
    }

    render() {
      if (this.frame) window.cancelAnimationFrame(this.frame);
      this.frame = 0;
      const stick = this.widget.nearBottom();
      const citations = Parts.citedNumbers(this.d.refs);
      const options = { citePrefix: "og-ref-" + this.index + "-", citations: citations };
      this.answerEl.replaceChildren(MD.render(this.d.text, options));
      this.answerEl.hidden = !this.d.text;
      if (this.d.text && !this.finished) this.statusEl.textContent = Parts.STAGES.generating;
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
      Parts.renderReferences(this.refsEl, this.d.refs, { headingId: "og-sources-" + this.index,
        idPrefix: "og-ref-" + this.index + "-", base: baseUrl + "/", rel: "noopener noreferrer" });
    }

    renderTrust() {
      Parts.renderTrust(this.trustEl, this.d.trust, this.d.ooc, TRUST);
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
      Parts.showNotice(this.noticeEl, "notice", message, kind);
    }

    settle() {
      if (this.frame) this.render();
      this.statusEl.textContent = "";
      this.answerEl.setAttribute("aria-busy", "false");
      this.answerEl.hidden = !this.d.text;
    }
  }

  /** References as the server or sessionStorage gave them, reduced to known fields of the right types. */
  function cleanRefs(list) {
    if (!Array.isArray(list)) return [];
    const valid = list.filter((ref) => ref && typeof ref === "object" && Number.isFinite(Number(ref.n)));
    return valid.slice(0, 30).map((ref) => ({
      n: Number(ref.n), title: str(ref.title, 500), link: str(ref.link, 2000), kind: str(ref.kind, 20),
      score: typeof ref.score === "number" ? ref.score : null, locator: str(ref.locator, 200),
      cited: ref.cited !== false, also_in: cleanMentions(ref.also_in),
    }));
  }

  /** The other sources a reference's text is also in ("also in …"), title and link only. */
  function cleanMentions(list) {
    if (!Array.isArray(list)) return [];
    return list.filter((m) => m && typeof m === "object").slice(0, 10)
      .map((m) => ({ title: str(m.title, 500), link: str(m.link, 2000) }));
  }

  /** A saved turn from sessionStorage, checked field by field before it is drawn again. */
  function cleanTurn(saved) {
    const t = saved && typeof saved === "object" ? saved : {};
    return { q: str(t.q, 4000), text: str(t.text, 100000), refs: cleanRefs(t.refs),
      trust: typeof t.trust === "number" ? t.trust : null, ooc: t.ooc === true, notice: str(t.notice, 500),
      kind: t.kind === "error" ? "error" : t.kind ? "stopped" : "", id: Number.isSafeInteger(t.id) ? t.id : 0,
      sid: str(t.sid, 100), vote: t.vote === 1 || t.vote === -1 ? t.vote : null, done: true };
  }

  window.OpenGuruWidgetParts = Object.freeze(Object.assign({}, W, { Turn: Turn, cleanTurn: cleanTurn }));
})();
