/* OpenGuru markdown renderer: safe by construction.
 *
 * Builds DOM nodes with createElement/createTextNode only; it never parses HTML, so raw HTML in the
 * text (<script>, <img onerror>) is shown as text. Links are kept only for absolute http(s)/mailto
 * URLs. Partial markdown (while an answer streams) renders as well as it can: an unclosed code fence
 * is a code block so far, an unclosed ** stays literal until its closer arrives.
 *
 * window.OpenGuruMarkdown.render(text, options?) -> DocumentFragment
 *   options.citePrefix  id prefix for citation targets (default "ref-": [2] links to #ref-2)
 *   options.citations   array of valid citation numbers; others stay plain text (default: all)
 * window.OpenGuruMarkdown.safeUrl(url, base?) -> string | null   (http, https, mailto only)
 *
 * Part 2 of 2 (block syntax and the entry point): load markdown-inline.js first.
 */
(function () {
  "use strict";

  // Inline syntax, DOM helpers and URL checks live in markdown-inline.js, loaded just before.
  const { MAX_DEPTH, el, text, safeUrl, renderInline } = window.OpenGuruMarkdownInline;

  const FENCE = /^( {0,3})(`{3,}|~{3,})[ \t]*([^\s`]*)[^`]*$/;
  const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
  const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
  const QUOTE = /^ {0,3}> ?(.*)$/;
  const LIST_ITEM = /^( *)([-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$/;
  const TABLE_SEPARATOR = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;

  function isBlank(line) {
    return line.trim() === "";
  }

  function indentOf(line) {
    return line.length - line.replace(/^ +/, "").length;
  }

  function stripIndent(line, count) {
    const strip = Math.min(count, indentOf(line));
    return line.slice(strip);
  }

  // ---- block parsing -----------------------------------------------------------------------

  function isTableStart(lines, i) {
    const header = lines[i];
    const separator = lines[i + 1];
    return separator !== undefined && header.includes("|") && separator.includes("|") &&
      TABLE_SEPARATOR.test(separator) && !isBlank(header);
  }

  function startsBlock(lines, i) {
    const line = lines[i];
    return FENCE.test(line) || HEADING.test(line) || HR.test(line) || QUOTE.test(line) ||
      LIST_ITEM.test(line) || isTableStart(lines, i);
  }

  function parseFence(lines, i, parent) {
    const open = FENCE.exec(lines[i]);
    if (!open) return -1;
    const indent = open[1].length;
    const marker = open[2];
    const closer = new RegExp("^ {0,3}" + (marker[0] === "`" ? "`" : "~") + "{" + marker.length + ",}[ \\t]*$");
    const body = [];
    let j = i + 1;
    while (j < lines.length && !closer.test(lines[j])) {
      body.push(stripIndent(lines[j], indent));
      j += 1;
    }
    if (j >= lines.length) {
      while (body.length && isBlank(body[body.length - 1])) body.pop(); // unclosed while streaming
    }
    parent.appendChild(codeBlock(body.join("\n"), open[3]));
    return Math.min(j + 1, lines.length);
  }

  function codeBlock(code, rawLanguage) {
    const language = String(rawLanguage || "").toLowerCase().replace(/[^a-z0-9_+#.-]/g, "").slice(0, 32);
    const wrap = el("div", "code-block");
    const head = el("div", "code-head");
    const label = el("span", "code-lang");
    label.textContent = language || "text";
    const button = el("button", "code-copy");
    button.type = "button";
    button.textContent = "Copy";
    button.setAttribute("aria-label", "Copy code");
    button.addEventListener("click", function () { copyCode(code, button); });
    head.append(label, button);
    const pre = el("pre");
    const codeEl = el("code", language ? "language-" + language : "");
    codeEl.textContent = code;
    pre.appendChild(codeEl);
    wrap.append(head, pre);
    return wrap;
  }

  function copyCode(code, button) {
    const settle = function (ok) {
      button.textContent = ok ? "Copied" : "Copy failed";
      window.setTimeout(function () { button.textContent = "Copy"; }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(code).then(
        function () { settle(true); },
        function () { settle(copyWithSelection(code)); }
      );
    } else {
      settle(copyWithSelection(code));
    }
  }

  function copyWithSelection(code) {
    const area = el("textarea", "copy-buffer");
    area.value = code;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand("copy");
    } catch (_error) {
      ok = false;
    }
    area.remove();
    return ok;
  }

  function parseHeading(lines, i, parent, depth, options) {
    const match = HEADING.exec(lines[i]);
    if (!match) return -1;
    const heading = el("h" + match[1].length);
    renderInline(match[2] || "", heading, options, 0, false);
    parent.appendChild(heading);
    return i + 1;
  }

  function parseRule(lines, i, parent) {
    if (!HR.test(lines[i])) return -1;
    parent.appendChild(el("hr"));
    return i + 1;
  }

  function splitRow(line) {
    let row = line.trim();
    if (row.startsWith("|")) row = row.slice(1);
    if (row.endsWith("|") && !row.endsWith("\\|")) row = row.slice(0, -1);
    const cells = [];
    let current = "";
    let inCode = false;
    for (let j = 0; j < row.length; j += 1) {
      const ch = row[j];
      if (ch === "\\" && row[j + 1] === "|") {
        current += "|";
        j += 1;
        continue;
      }
      if (ch === "`") inCode = !inCode;
      if (ch === "|" && !inCode) {
        cells.push(current.trim());
        current = "";
        continue;
      }
      current += ch;
    }
    cells.push(current.trim());
    return cells;
  }

  function alignments(separator) {
    return splitRow(separator).map(function (cell) {
      const left = cell.startsWith(":");
      const right = cell.endsWith(":");
      if (left && right) return "center";
      if (right) return "right";
      return left ? "left" : "";
    });
  }

  function tableRow(cells, tag, aligns, options) {
    const tr = el("tr");
    for (let c = 0; c < aligns.length; c += 1) {
      const cell = el(tag);
      if (aligns[c]) cell.style.textAlign = aligns[c];
      if (tag === "th") cell.scope = "col";
      renderInline(cells[c] || "", cell, options, 0, false);
      tr.appendChild(cell);
    }
    return tr;
  }

  function parseTable(lines, i, parent, depth, options) {
    if (!isTableStart(lines, i)) return -1;
    const header = splitRow(lines[i]);
    const aligns = alignments(lines[i + 1]);
    while (aligns.length < header.length) aligns.push("");
    aligns.length = header.length;
    const table = el("table");
    const thead = el("thead");
    thead.appendChild(tableRow(header, "th", aligns, options));
    const tbody = el("tbody");
    let j = i + 2;
    while (j < lines.length && !isBlank(lines[j]) && lines[j].includes("|")) {
      tbody.appendChild(tableRow(splitRow(lines[j]), "td", aligns, options));
      j += 1;
    }
    table.append(thead, tbody);
    const wrap = el("div", "table-wrap");
    wrap.appendChild(table);
    parent.appendChild(wrap);
    return j;
  }

  function parseQuote(lines, i, parent, depth, options) {
    if (!QUOTE.test(lines[i]) || depth >= MAX_DEPTH) return -1;
    const inner = [];
    let j = i;
    while (j < lines.length) {
      const match = QUOTE.exec(lines[j]);
      if (match) {
        inner.push(match[1]);
      } else if (!isBlank(lines[j]) && !startsBlock(lines, j) && inner.length && !isBlank(inner[inner.length - 1])) {
        inner.push(lines[j]); // lazy continuation of the quoted paragraph
      } else {
        break;
      }
      j += 1;
    }
    const quote = el("blockquote");
    parseBlocks(inner, quote, depth + 1, options);
    parent.appendChild(quote);
    return j;
  }

  function listKind(marker) {
    return /\d/.test(marker) ? "ol" : "ul";
  }

  /** Collect one list item's lines (de-indented) from `i`; returns {lines, end, blankInside, loose}. */
  function collectItem(lines, i, base, kind) {
    const first = LIST_ITEM.exec(lines[i]);
    const contentIndent = first[1].length + first[2].length + 1;
    const item = { lines: [first[3] || ""], end: i + 1, blankInside: false, loose: false };
    let j = i + 1;
    while (j < lines.length) {
      const line = lines[j];
      if (isBlank(line)) {
        let k = j;
        while (k < lines.length && isBlank(lines[k])) k += 1;
        if (k < lines.length && indentOf(lines[k]) >= base + 2) {
          for (; j < k; j += 1) item.lines.push("");
          item.blankInside = true;
          continue;
        }
        const sibling = k < lines.length && LIST_ITEM.exec(lines[k]);
        item.loose = Boolean(sibling && sibling[1].length <= base + 1 && listKind(sibling[2]) === kind);
        item.end = item.loose ? k : j;
        return item;
      }
      if (indentOf(line) >= base + 2) {
        item.lines.push(stripIndent(line, contentIndent));
      } else if (LIST_ITEM.test(line) || startsBlock(lines, j)) {
        break;
      } else {
        item.lines.push(line.trim()); // lazy continuation
      }
      j += 1;
    }
    item.end = j;
    return item;
  }

  function parseList(lines, i, parent, depth, options) {
    const first = LIST_ITEM.exec(lines[i]);
    if (!first || depth >= MAX_DEPTH || first[1].length > 3) return -1;
    const base = first[1].length;
    const kind = listKind(first[2]);
    const list = el(kind);
    const start = parseInt(first[2], 10);
    if (kind === "ol" && start !== 1) list.start = start;
    const items = [];
    let loose = false;
    let j = i;
    while (j < lines.length) {
      const match = LIST_ITEM.exec(lines[j]);
      if (!match || match[1].length > base + 1 || listKind(match[2]) !== kind) break;
      const item = collectItem(lines, j, base, kind);
      items.push(item);
      loose = loose || item.loose || item.blankInside;
      j = item.end;
      if (j < lines.length && isBlank(lines[j])) break;
    }
    for (const item of items) list.appendChild(listItem(item, loose, depth, options));
    parent.appendChild(list);
    return j;
  }

  function listItem(item, loose, depth, options) {
    const li = el("li");
    parseBlocks(item.lines, li, depth + 1, options);
    if (!loose) {
      for (const child of Array.from(li.children)) {
        if (child.tagName === "P") child.replaceWith(...Array.from(child.childNodes));
      }
    }
    return li;
  }

  function parseParagraph(lines, i, parent, depth, options) {
    const body = [lines[i].trim()];
    let j = i + 1;
    while (j < lines.length && !isBlank(lines[j]) && !startsBlock(lines, j)) {
      body.push(lines[j].replace(/^\s+/, ""));
      j += 1;
    }
    const p = el("p");
    renderInline(body.join("\n"), p, options, 0, false);
    parent.appendChild(p);
    return j;
  }

  const BLOCK_RULES = [parseFence, parseHeading, parseRule, parseTable, parseQuote, parseList, parseParagraph];

  function parseBlocks(lines, parent, depth, options) {
    let i = 0;
    while (i < lines.length) {
      if (isBlank(lines[i])) {
        i += 1;
        continue;
      }
      for (const rule of BLOCK_RULES) {
        const next = rule(lines, i, parent, depth, options);
        if (next > i) {
          i = next;
          break;
        }
      }
    }
  }

  // ---- entry point -------------------------------------------------------------------------

  function normalizeOptions(options) {
    const given = options || {};
    const prefix = String(given.citePrefix || "ref-").replace(/[^A-Za-z0-9_-]/g, "");
    const citations = Array.isArray(given.citations) ? given.citations.map(Number) : null;
    return { citePrefix: prefix, citations: citations };
  }

  function render(markdownText, options) {
    const fragment = document.createDocumentFragment();
    const source = String(markdownText == null ? "" : markdownText)
      .replace(/\r\n?/g, "\n")
      .replace(/\t/g, "    ")
      .replace(/\u0000/g, "\ufffd");
    parseBlocks(source.split("\n"), fragment, 0, normalizeOptions(options));
    return fragment;
  }

  window.OpenGuruMarkdown = Object.freeze({ render: render, safeUrl: safeUrl });
})();
