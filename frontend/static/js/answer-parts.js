/* The parts of a cited answer that the guru page and the widget draw alike: the progress stages, the
 * messages both show, the sources list with kind badges and the trust meter.
 *
 * Builds nodes with createElement/textContent only; nothing from the server is parsed as HTML. Links go
 * through window.OpenGuruMarkdown.safeUrl, so load markdown.js first. Class names and wording that differ
 * between the two callers are options, so each keeps its own DOM and styles.
 *
 * window.OpenGuruAnswerParts = {
 *   STAGES, MESSAGES, el(tag, className?, text?), percent(score), inkFor("#rrggbb"),
 *   stageText(stage), rateLimitText(seconds, detail?), showNotice(node, className, message, kind),
 *   renderReferences(section, references, options), citedNumbers(references),
 *   renderTrust(box, score, outOfContext, options)
 * }
 */
(function () {
  "use strict";

  const STAGES = Object.freeze({
    understanding: "Understanding the question…",
    retrieving: "Searching the sources…",
    reranking: "Ranking the best passages…",
    grading: "Checking what the sources cover…",
    generating: "Writing the answer…",
  });
  const MESSAGES = Object.freeze({
    network: "Could not reach the server. Check your connection and try again.",
    interrupted: "The answer stopped before it was complete. Please ask again.",
    notFound: "This guru is not available any more.",
    server: "Something went wrong on the server. Please try again in a moment.",
    stopped: "Stopped. The answer above is incomplete.",
    empty: "Type a question first.",
    newConversation: " Your next question will start a new conversation.",
  });
  const KINDS = {
    WEBSITE: { badge: "Web", label: "Web page" },
    YOUTUBE: { badge: "YouTube", label: "YouTube video" },
    PDF: { badge: "PDF", label: "PDF document" },
    GITHUB_REPO: { badge: "Git", label: "Git repository" },
    MEMORY: { badge: "Note", label: "Maintainer note" },
  };
  const UNKNOWN_KIND = { badge: "Source", label: "Source" };

  function el(tag, className, textValue) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (textValue !== undefined) node.textContent = textValue;
    return node;
  }

  /** A 0..1 score as a whole percentage, clamped. */
  function percent(value) {
    return Math.round(Math.max(0, Math.min(1, Number(value) || 0)) * 100);
  }

  /** A readable text colour (near-black or white) on a "#rrggbb" background. */
  function inkFor(color) {
    const channel = (offset) => {
      const c = parseInt(color.slice(offset, offset + 2), 16) / 255;
      return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
    };
    const luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
    return luminance > 0.4 ? "#1b1f24" : "#ffffff";
  }

  /** A stage's line; a "thinking" step of the agentic path brings its own ("Searching for “…”"). */
  function stageText(stage, text) {
    if (stage === "thinking" && typeof text === "string" && text) return "Thinking: " + text.slice(0, 200);
    return STAGES[stage] || "Working…";
  }

  /** What a 429 says: the wait from Retry-After when there is one, else the server's detail or a default. */
  function rateLimitText(seconds, detail) {
    if (seconds) {
      const unit = seconds === 1 ? " second" : " seconds";
      return "Too many questions right now. Please wait " + seconds + unit + " before asking again.";
    }
    return "Too many questions right now. " + (detail || "Please wait a moment before asking again.");
  }

  /** An error (role alert) or a note such as "stopped" (role status) under an answer. */
  function showNotice(node, className, message, kind) {
    node.textContent = message;
    node.className = className + " " + kind;
    node.setAttribute("role", kind === "error" ? "alert" : "status");
    node.hidden = false;
  }

  // ---- sources -------------------------------------------------------------------------------

  /** A reference the answer's text cites (answers stored before the flag existed cite all of theirs). */
  function isCited(ref) {
    return ref.cited !== false;
  }

  /** The numbers a marker in the answer may name: those of the cited references. */
  function citedNumbers(references) {
    return references.filter(isCited).map((ref) => Number(ref.n));
  }

  /**
   * Fill `section` with a "Sources" heading and a numbered list of the cited references, then the others
   * under a collapsed "Also retrieved"; or empty and hide it when there are none.
   * options: headingId, idPrefix (an item's id is idPrefix + n, the target of citation links),
   *   base (URL that relative links resolve against), rel (for links), kindTitles (a tooltip naming the
   *   kind on each badge), classes: { heading, list, item, also } (absent ones leave the element without a class).
   */
  function renderReferences(section, references, options) {
    section.replaceChildren();
    section.hidden = references.length === 0;
    if (!references.length) return;
    const classes = options.classes || {};
    const cited = references.filter(isCited);
    const others = references.filter((ref) => !isCited(ref));
    const heading = el("h3", classes.heading, "Sources");
    heading.id = options.headingId;
    section.setAttribute("aria-labelledby", options.headingId);
    section.appendChild(heading);
    if (cited.length) {
      const list = el("ol", classes.list);
      for (const ref of cited) list.appendChild(referenceItem(ref, options, classes, true));
      section.appendChild(list);
    }
    if (others.length) section.appendChild(alsoRetrieved(others, options, classes));
  }

  /** Sources the search found but the answer does not cite: listed without numbers, folded away. */
  function alsoRetrieved(references, options, classes) {
    const box = el("details", ["also-retrieved", classes.also].filter(Boolean).join(" "));
    const count = references.length === 1 ? "1 source" : references.length + " sources";
    box.appendChild(el("summary", "", "Also retrieved (" + count + " not cited)"));
    const list = el("ul", classes.list);
    for (const ref of references) list.appendChild(referenceItem(ref, options, classes, false));
    box.appendChild(list);
    return box;
  }

  function referenceItem(ref, options, classes, cited) {
    const n = Number(ref.n);
    const item = el("li", classes.item);
    const kind = KINDS[ref.kind] || UNKNOWN_KIND;
    const badge = el("span", "ref-kind", kind.badge);
    badge.dataset.kind = String(ref.kind || "");
    if (options.kindTitles) badge.title = kind.label;
    const title = String(ref.title || ref.link || "Untitled source");
    if (cited) {
      item.id = options.idPrefix + n;
      item.value = n;
      item.appendChild(el("span", "ref-n", "[" + n + "]"));
    }
    item.append(badge, referenceTitle(title, ref.link, options));
    const locator = String(ref.locator || "");
    if (locator && !title.includes(locator)) item.appendChild(el("span", "ref-locator", locator));
    if (typeof ref.score === "number") item.appendChild(el("span", "ref-score", percent(ref.score) + "% match"));
    const also = Array.isArray(ref.also_in) ? ref.also_in.filter((m) => m && (m.title || m.link)) : [];
    if (also.length) item.appendChild(alsoIn(also, options));
    // Reached by the source graph, not the search: say which page found by the search leads to it.
    if (ref.linked_from) item.appendChild(el("span", "ref-also", "linked from " + String(ref.linked_from)));
    return item;
  }

  /** "also in …": the other sources holding the same text, folded into this reference by the server. */
  function alsoIn(mentions, options) {
    const line = el("span", "ref-also", "also in ");
    mentions.forEach((mention, i) => {
      if (i) line.appendChild(document.createTextNode(", "));
      line.appendChild(referenceTitle(String(mention.title || mention.link), mention.link, options));
    });
    return line;
  }

  function referenceTitle(title, link, options) {
    const href = window.OpenGuruMarkdown.safeUrl(link, options.base);
    if (!href) return el("span", "ref-title", title);
    const a = el("a", "ref-title", title);
    a.href = href;
    a.target = "_blank";
    a.rel = options.rel;
    return a;
  }

  // ---- trust ---------------------------------------------------------------------------------

  /**
   * The trust meter in `box` (data-level high, medium or low), the "not covered" note when the question
   * is out of context (data-level none), or `box` emptied and hidden when there is neither a score nor that.
   * options: hint (the note's second line), meterClass, fillClass, roundLevel (the level follows the
   *   shown, rounded percentage rather than the raw score).
   */
  function renderTrust(box, score, outOfContext, options) {
    box.replaceChildren();
    box.hidden = !outOfContext && typeof score !== "number";
    if (box.hidden) return;
    if (outOfContext) {
      box.dataset.level = "none";
      box.append(el("span", "trust-badge", "Not covered by the sources"), el("span", "trust-hint", options.hint));
      return;
    }
    const value = percent(score);
    const level = options.roundLevel ? value / 100 : score;
    box.dataset.level = level >= 0.75 ? "high" : level >= 0.5 ? "medium" : "low";
    const meter = el("div", options.meterClass);
    meter.setAttribute("role", "meter");
    meter.setAttribute("aria-valuemin", "0");
    meter.setAttribute("aria-valuemax", "100");
    meter.setAttribute("aria-valuenow", String(value));
    meter.setAttribute("aria-label", "Trust score");
    const fill = el("span", options.fillClass);
    fill.style.width = value + "%";
    meter.appendChild(fill);
    box.append(el("span", "trust-label", "Trust"), meter, el("span", "trust-value", value + "%"));
  }

  window.OpenGuruAnswerParts = Object.freeze({
    STAGES: STAGES, MESSAGES: MESSAGES, el: el, percent: percent, inkFor: inkFor, stageText: stageText,
    rateLimitText: rateLimitText, showNotice: showNotice, renderReferences: renderReferences,
    citedNumbers: citedNumbers, renderTrust: renderTrust,
  });
})();
