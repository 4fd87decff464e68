/* Thumbs up/down under a finished answer on the guru page (window.OpenGuruFeedback).
 *
 * A turn (see guru-page.js) brings `questionId`, `sessionId`, `vote` and an empty, hidden `feedbackEl`;
 * the conversation id goes with the vote because the server only lets that conversation rate its answers.
 */
(function () {
  "use strict";

  const CHOICES = [[1, "👍", "Yes", "Helpful"], [-1, "👎", "No", "Not helpful"]];

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function setVote(turn, value, message) {
    turn.vote = value;
    for (const button of turn.feedbackEl.querySelectorAll("button.vote")) {
      button.setAttribute("aria-pressed", String(Number(button.dataset.vote) === value));
    }
    turn.feedbackStatus.textContent = message;
  }

  async function send(turn, url, csrf, value) {
    const buttons = turn.feedbackEl.querySelectorAll("button.vote");
    buttons.forEach((button) => { button.disabled = true; });
    let message = "Your vote could not be saved. Please try again.";
    try {
      const response = await fetch(url, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
        body: JSON.stringify({ question_id: turn.questionId, session_id: turn.sessionId, feedback: value }),
      });
      if (response.ok) {
        setVote(turn, value, value === null ? "Vote removed." : "Thanks for your feedback!");
        return;
      }
      if (response.status === 429) message = "Too many votes right now. Please wait a moment.";
    } catch (_error) {
      message = "Could not reach the server. Check your connection and try again.";
    } finally {
      buttons.forEach((button) => { button.disabled = false; });
    }
    setVote(turn, turn.vote, message);
  }

  /** Show the buttons under `turn`; clicking the chosen one again clears the vote. */
  function show(turn, url, csrf) {
    if (turn.questionId === null || !turn.sessionId) return;
    const buttons = CHOICES.map(([value, symbol, word, name]) => {
      const button = el("button", "vote");
      button.append(el("span", "vote-symbol", symbol), " " + word);
      button.type = "button";
      button.dataset.vote = String(value);
      button.title = name;
      button.setAttribute("aria-label", name);
      button.setAttribute("aria-pressed", "false");
      button.addEventListener("click", () => send(turn, url, csrf, turn.vote === value ? null : value));
      return button;
    });
    turn.feedbackStatus = el("span", "feedback-status");
    turn.feedbackStatus.setAttribute("role", "status");
    turn.feedbackEl.setAttribute("role", "group");
    turn.feedbackEl.setAttribute("aria-label", "Rate this answer");
    turn.feedbackEl.replaceChildren(el("span", "feedback-label", "Was this helpful?"), ...buttons, turn.feedbackStatus);
    turn.feedbackEl.hidden = false;
  }

  window.OpenGuruFeedback = { show: show };
})();
