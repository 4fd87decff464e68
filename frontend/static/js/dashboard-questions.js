/* Dashboard question page: render the stored answer's markdown with the shared safe renderer.
 *
 * The answer arrives as a JSON string (Django's json_script), never as HTML; markdown.js builds DOM
 * nodes with textContent only, so raw HTML in an answer shows as text. Until this runs (or without
 * JavaScript) the raw markdown is shown, escaped by the template.
 */
(function () {
  "use strict";

  function readJson(id) {
    const node = document.getElementById(id);
    if (!node) return null;
    try {
      return JSON.parse(node.textContent);
    } catch (_error) {
      return null;
    }
  }

  function renderAnswer() {
    const target = document.getElementById("dq-answer");
    const text = readJson("dq-answer-content");
    if (!target || typeof text !== "string" || !window.OpenGuruMarkdown) return;
    const citations = readJson("dq-answer-citations");
    const options = { citePrefix: "ref-", citations: Array.isArray(citations) ? citations.map(Number) : [] };
    target.replaceChildren(window.OpenGuruMarkdown.render(text, options));
    target.classList.add("rendered");
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", renderAnswer);
  else renderAnswer();
})();
