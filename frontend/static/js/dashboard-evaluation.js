// Evaluation pages: follow a running evaluation ("answering 12/60"); the run pages reload when it ends, so its figures
// show, and the Runs page also when a run started elsewhere appears. The same polling rules as the Sources tab:
// every second while a run is followed, every 15 s otherwise (where new runs are watched), never while hidden.
(function () {
  "use strict";

  var POLL_MS = 1000;
  var RETRY_MS = 5000;
  var IDLE_MS = 15000;
  var root = document.querySelector("[data-eval-progress-url]");
  var timer = null;
  if (!root) return;

  function running() {
    return Array.prototype.map.call(root.querySelectorAll('[data-run-id][data-state="running"]'), function (node) {
      return node.getAttribute("data-run-id");
    });
  }

  function watchingNew() {
    return root.hasAttribute("data-watch-new");
  }

  function schedule(ms) {
    window.clearTimeout(timer);
    timer = window.setTimeout(poll, ms);
  }

  function next() {
    if (running().length) schedule(POLL_MS);
    else if (watchingNew()) schedule(IDLE_MS);
  }

  function apply(body) {
    var finished = false;
    (body.runs || []).forEach(function (run) {
      root.querySelectorAll('[data-run-id="' + Number(run.id) + '"]').forEach(function (node) {
        if (node.getAttribute("data-state") !== "running") return;
        var label = node.hasAttribute("data-run-progress") ? node : node.querySelector("[data-run-progress]");
        if (label && label.textContent !== run.text) label.textContent = run.text;
        if (run.state !== "running") {
          // The run pages reload to show the figures; elsewhere (a set's page, where a form may be half
          // filled) the line just says how it ended.
          node.setAttribute("data-state", run.state);
          finished = true;
        }
      });
    });
    var latest = root.getAttribute("data-latest");
    var appeared = watchingNew() && body.latest !== null && String(body.latest) !== latest;
    if ((finished && root.hasAttribute("data-reload-on-end")) || appeared) {
      window.location.reload();
      return true;
    }
    return false;
  }

  function poll() {
    if (!running().length && !watchingNew()) return;
    if (document.hidden) { schedule(IDLE_MS); return; }
    var url = root.getAttribute("data-eval-progress-url") + "?ids=" + running().join(",");
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (!response.ok) throw new Error("progress request failed: " + response.status);
        return response.json();
      })
      .then(function (body) {
        if (!apply(body)) next();
      })
      .catch(function () {
        // A restart or a dropped connection: try again later rather than give up on the page.
        schedule(RETRY_MS);
      });
  }

  if (running().length) schedule(POLL_MS);
  else if (watchingNew()) schedule(IDLE_MS);
  window.addEventListener("focus", function () { if (running().length || watchingNew()) schedule(0); });
})();
