/* One question and its answer on the guru's public page: the streamed markdown, the sources and the trust meter.
 *
 * Needs markdown.js (window.OpenGuruMarkdown) and answer-parts.js loaded first; guru-page.js drives it. Builds
 * every node with createElement and textContent: nothing from the server or the model is parsed as HTML.
 */
(function () {
  "use strict";

  const Parts = window.OpenGuruAnswerParts;
  const { el, MESSAGES } = Parts;
  const REFERENCES = {
    classes: { heading: "references-title", list: "reference-list", item: "reference" },
    rel: "noopener noreferrer nofollow",
    kindTitles: true,
  };
  const TRUST = {
    hint: "This guru's sources do not answer this question, so no sources are cited.",
    meterClass: "trust-meter",
    fillClass: "trust-fill",
  };

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

    setStage(stage, text) {
      this.statusEl.textContent = Parts.stageText(stage, text);
      this.statusEl.dataset.stage = stage;
    }

    appendText(piece) {
      this.text += piece;
      if (!this.frame) this.frame = window.requestAnimationFrame(() => this.render());
    }

    render() {
      if (this.frame) window.cancelAnimationFrame(this.frame);
      this.frame = 0;
      const numbers = Parts.citedNumbers(this.references);
      const options = { citePrefix: "ref-" + this.index + "-", citations: numbers };
      this.answerEl.replaceChildren(window.OpenGuruMarkdown.render(this.text, options));
      if (this.text) this.statusEl.textContent = this.finished ? "" : Parts.STAGES.generating;
    }

    setReferences(references, trustScore) {
      this.references = Array.isArray(references) ? references : [];
      this.renderReferences();
      if (typeof trustScore === "number") this.renderTrust(trustScore, false);
    }

    renderReferences() {
      Parts.renderReferences(this.refsEl, this.references, Object.assign({
        headingId: "turn-" + this.index + "-sources",
        idPrefix: "ref-" + this.index + "-",
        base: window.location.href,
      }, REFERENCES));
    }

    renderTrust(score, outOfContext) {
      Parts.renderTrust(this.trustEl, score, outOfContext, TRUST);
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
      this.notice(MESSAGES.stopped, "stopped");
      this.settle();
    }

    notice(message, kind) {
      Parts.showNotice(this.noticeEl, "turn-notice", message, kind);
    }

    settle() {
      if (this.frame) this.render();
      this.statusEl.textContent = "";
      this.answerEl.classList.remove("streaming");
      this.answerEl.setAttribute("aria-busy", "false");
      if (!this.text) this.answerEl.hidden = true;
    }
  }

  window.OpenGuruTurn = Turn;
})();
