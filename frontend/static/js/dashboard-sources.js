// Sources page: live progress of indexing and summarising rows and header counts, select-all, and the PDF drop zone (review, then upload). Data is written with textContent only.
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
    // Indexing or summarising: both are followed every second, summarising after indexing has finished.
    var rows = table.querySelectorAll('tr[data-active="1"], tr[data-summary-active="1"]');
    return Array.prototype.map.call(rows, function (row) {
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
    // A row that finishes while watched keeps its full bar until the next reload, as a visible "done"; a row
    // polled only for its summary (or by the idle check) keeps the bar it was drawn with.
    var wasActive = row.getAttribute("data-active") === "1";
    bar.hidden = s.active ? false : s.percent < 100 || (wasActive ? false : bar.hidden);
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
    updateSummary(row, s);
  }

  // The summary's state under the badge ("summarising 12/40", the note as its tooltip) and its one-line preview.
  function updateSummary(row, s) {
    var state = field(row, "summary_state");
    if (state) {
      setText(state, s.summary_text || "");
      if (s.summary_note) state.setAttribute("title", s.summary_note); else state.removeAttribute("title");
      state.classList.toggle("error", !!s.summary_failed);
      state.classList.toggle("muted", !s.summary_failed);
    }
    var line = field(row, "summary_line");
    if (line) {
      line.hidden = !s.summary_preview;
      setText(field(line, "summary_lead"), (s.summary_lead || "") + ":");
      var preview = field(line, "summary_preview");
      setText(preview, s.summary_preview || "");
      preview.setAttribute("title", (s.summary_label || "") + " · read it all on the source's page");
    }
    row.setAttribute("data-summary-active", s.summary_active ? "1" : "0");
  }

  // The header's "N in all · N indexed · N indexing · N failed", from the same response as the rows.
  function updateCounts(counts) {
    var node = document.querySelector("[data-counts]");
    if (!node || !counts) return;
    ["total", "indexed", "indexing", "failed"].forEach(function (name) {
      setText(node.querySelector('[data-count="' + name + '"]'), String(counts[name]));
    });
  }

  function apply(ids, body) {
    updateCounts(body.counts);
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
      row.setAttribute("data-summary-active", "0");
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

  function fileSize(bytes) {
    if (bytes < 1024) return bytes + " B";
    if (bytes < 1024 * 1024) return (bytes / 1024).toFixed(1) + " KB";
    return (bytes / (1024 * 1024)).toFixed(1) + " MB";
  }

  // The chosen files are held in a DataTransfer so one can be removed (a FileList is read-only) and a
  // second drop adds to the first; the input's files are set from it, and nothing is sent before Upload.
  function setFiles(input, files) {
    var chosen = new DataTransfer();
    Array.prototype.forEach.call(files, function (file) { chosen.items.add(file); });
    input.files = chosen.files;
  }

  function listFiles(list, input) {
    var items = Array.prototype.map.call(input.files, function (file, index) {
      var item = document.createElement("li");
      var name = document.createElement("span");
      name.className = "file-name";
      name.textContent = file.name;
      var size = document.createElement("span");
      size.className = "muted file-size";
      size.textContent = " " + fileSize(file.size) + " ";
      var remove = document.createElement("button");
      remove.type = "button";
      remove.className = "secondary small";
      remove.textContent = "Remove";
      remove.setAttribute("aria-label", "Remove " + file.name);
      remove.addEventListener("click", function () {
        setFiles(input, Array.prototype.filter.call(input.files, function (_, i) { return i !== index; }));
        listFiles(list, input);
      });
      item.append(name, size, remove);
      return item;
    });
    list.replaceChildren.apply(list, items);
    var status = list.parentNode.querySelector("[data-dropzone-status]");
    setText(status, input.files.length ? input.files.length + " file" + (input.files.length === 1 ? "" : "s") +
      " ready: check the list and the Private box, then click Upload." : "");
  }

  function initDropzone() {
    var zone = document.querySelector("[data-dropzone]");
    if (!zone) return;
    var input = zone.querySelector('input[type="file"]');
    var list = zone.querySelector("[data-dropzone-files]");
    input.addEventListener("change", function () { listFiles(list, input); });
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
      // A drop adds to the review list; the maintainer uploads with the Upload button.
      setFiles(input, Array.prototype.concat.call([], Array.from(input.files), Array.from(event.dataTransfer.files)));
      listFiles(list, input);
    });
  }

  initSelectAll();
  initDropzone();
  if (table) {
    schedule(activeIds().length ? 0 : IDLE_MS);
    window.addEventListener("focus", function () { schedule(0); });
  }
})();
