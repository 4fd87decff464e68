// Sources page: live progress of indexing rows, select-all, and the PDF drop zone. Data is written with textContent only.
(function () {
  "use strict";

  var POLL_MS = 1000;
  var RETRY_MS = 5000;
  // With nothing indexing, look again now and then (and when the tab regains focus): a re-index started
  // from another tab, the API or the scheduler then shows up without a reload.
  var IDLE_MS = 15000;
  var table = document.querySelector("table.sources[data-progress-url]");
  var timer = null;

  function field(row, name) {
    return row.querySelector('[data-field="' + name + '"]');
  }

  function activeIds() {
    if (!table) return [];
    return Array.prototype.map.call(table.querySelectorAll('tr[data-active="1"]'), function (row) {
      return row.getAttribute("data-source-id");
    });
  }

  function pageIds() {
    return Array.prototype.map.call(table.querySelectorAll("tr[data-source-id]"), function (row) {
      return row.getAttribute("data-source-id");
    });
  }

  function schedule(ms) {
    window.clearTimeout(timer);
    timer = window.setTimeout(poll, ms);
  }

  function setText(node, text) {
    if (node && node.textContent !== text) node.textContent = text;
  }

  function updateRow(row, s) {
    var badge = field(row, "status");
    setText(badge, s.status_label);
    badge.className = "badge " + (s.badge || "");
    var bar = field(row, "bar");
    // A row that finishes while watched keeps its full bar until the next reload, as a visible "done".
    bar.hidden = !s.active && s.percent < 100;
    bar.setAttribute("aria-valuenow", String(s.percent));
    bar.firstElementChild.style.width = s.percent + "%";
    var counts = field(row, "counts");
    counts.hidden = bar.hidden;
    setText(counts, s.done + "/" + s.total);
    setText(field(row, "eta"), s.active ? s.eta_text : "");
    setText(field(row, "chunks"), String(s.chunk_count));
    var notes = field(row, "error");
    setText(notes, s.error || "");
    notes.classList.toggle("error", s.status === "FAILED");
    notes.classList.toggle("muted", s.status !== "FAILED");
    setText(field(row, "title"), s.title);
    var last = field(row, "last_indexed");
    if (s.last_indexed) {
      var time = document.createElement("time");
      time.setAttribute("datetime", s.last_indexed);
      time.textContent = s.last_indexed_text;
      last.replaceChildren(time);
    }
    row.setAttribute("data-active", s.active ? "1" : "0");
  }

  function apply(ids, body) {
    var seen = {};
    (body.sources || []).forEach(function (s) {
      seen[String(s.id)] = true;
      var row = table.querySelector('tr[data-source-id="' + Number(s.id) + '"]');
      if (row) updateRow(row, s);
    });
    ids.forEach(function (id) {
      if (seen[id]) return;
      // Deleted meanwhile (another tab or maintainer): stop asking about it.
      var row = table.querySelector('tr[data-source-id="' + Number(id) + '"]');
      row.setAttribute("data-active", "0");
      setText(field(row, "status"), "Deleted");
      field(row, "status").className = "badge";
    });
  }

  function poll() {
    var active = activeIds();
    var ids = active.length ? active : pageIds();
    if (!ids.length) return; // an empty page: nothing to follow
    if (document.hidden) { schedule(IDLE_MS); return; }
    var url = table.getAttribute("data-progress-url") + "?ids=" + ids.join(",");
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (!response.ok) throw new Error("progress request failed: " + response.status);
        return response.json();
      })
      .then(function (body) {
        apply(ids, body);
        schedule(activeIds().length ? POLL_MS : IDLE_MS);
      })
      .catch(function () {
        // A restart or a dropped connection: try again later rather than give up on the page.
        schedule(RETRY_MS);
      });
  }

  function initSelectAll() {
    var all = document.querySelector("[data-select-all]");
    if (!all) return;
    all.addEventListener("change", function () {
      document.querySelectorAll('#sources-form input[name="ids"]').forEach(function (box) {
        box.checked = all.checked;
      });
    });
  }

  function listFiles(list, files) {
    var items = Array.prototype.map.call(files, function (file) {
      var item = document.createElement("li");
      item.textContent = file.name;
      return item;
    });
    list.replaceChildren.apply(list, items);
  }

  function initDropzone() {
    var zone = document.querySelector("[data-dropzone]");
    if (!zone) return;
    var form = zone.closest("form");
    var input = zone.querySelector('input[type="file"]');
    var list = zone.querySelector("[data-dropzone-files]");
    input.addEventListener("change", function () { listFiles(list, input.files); });
    ["dragenter", "dragover"].forEach(function (name) {
      zone.addEventListener(name, function (event) {
        event.preventDefault();
        zone.classList.add("dragover");
      });
    });
    zone.addEventListener("dragleave", function () { zone.classList.remove("dragover"); });
    zone.addEventListener("drop", function (event) {
      event.preventDefault();
      zone.classList.remove("dragover");
      if (!event.dataTransfer || !event.dataTransfer.files.length) return;
      input.files = event.dataTransfer.files;
      listFiles(list, input.files);
      // Dropping is the choice: upload straight away (the private box is read as it is now).
      form.requestSubmit();
    });
  }

  initSelectAll();
  initDropzone();
  if (table) {
    schedule(activeIds().length ? 0 : IDLE_MS);
    window.addEventListener("focus", function () { schedule(0); });
  }
})();
