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
 */
(function () {
  "use strict";

  const MAX_DEPTH = 6;
  const SAFE_PROTOCOLS = ["http:", "https:", "mailto:"];
  const LINK_ATTRS = { rel: "noopener noreferrer nofollow", target: "_blank" };

  const FENCE = /^( {0,3})(`{3,}|~{3,})[ \t]*([^\s`]*)[^`]*$/;
  const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
  const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
  const QUOTE = /^ {0,3}> ?(.*)$/;
  const LIST_ITEM = /^( *)([-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$/;
  const TABLE_SEPARATOR = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;
  const CITATION = /^\[(\d{1,3}(?:[ \t]*,[ \t]*\d{1,3})*)\](?!\()/;
  const BARE_URL = /^https?:\/\/[^\s<>"'`\])]+(?:\([^\s<>"'`()]*\)[^\s<>"'`\])]*)*/;
  const ANGLE_URL = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/;
  const PUNCTUATION = /[!-/:-@[-`{-~]/;
  const WORD_CHAR = /[\p{L}\p{N}]/u;

  // ---- small DOM helpers -------------------------------------------------------------------

  function el(tag, className) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    return node;
  }

  function text(value) {
    return document.createTextNode(value);
  }

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

  // ---- URLs --------------------------------------------------------------------------------

  /** The normalized href for an absolute http(s)/mailto URL (or a relative one when `base` is given), else null. */
  function safeUrl(raw, base) {
    const value = String(raw == null ? "" : raw).trim();
    if (!value || /[\u0000-\u001f\u007f\s]/.test(value)) return null;
    let parsed;
    try {
      parsed = base ? new URL(value, base) : new URL(value);
    } catch (_error) {
      return null;
    }
    return SAFE_PROTOCOLS.includes(parsed.protocol) ? parsed.href : null;
  }

  function makeLink(href) {
    const a = el("a");
    a.href = href;
    a.rel = LINK_ATTRS.rel;
    a.target = LINK_ATTRS.target;
    return a;
  }

  // ---- inline parsing ----------------------------------------------------------------------

  /** Index of the backtick run closing the code span that opens at `start`, with its length; or null. */
  function codeSpanAt(source, start) {
    let run = 0;
    while (source[start + run] === "`") run += 1;
    let j = start + run;
    while (j < source.length) {
      if (source[j] !== "`") {
        j += 1;
        continue;
      }
      let close = 0;
      while (source[j + close] === "`") close += 1;
      if (close === run) return { open: run, close: j, end: j + close };
      j += close;
    }
    return null;
  }

  /** Position of `delim` closing an emphasis opened before `from`, skipping escapes and code spans; -1 if none. */
  function findCloser(source, from, delim) {
    const single = delim.length === 1;
    let j = from;
    while (j < source.length) {
      const ch = source[j];
      if (ch === "\\") {
        j += 2;
        continue;
      }
      if (ch === "`") {
        const span = codeSpanAt(source, j);
        j = span ? span.end : j + 1;
        continue;
      }
      if (source.startsWith(delim, j) && j > from && !/\s/.test(source[j - 1])) {
        const doubled = single && source[j + 1] === ch;
        const wordAfter = delim[0] === "_" && WORD_CHAR.test(source[j + delim.length] || "");
        if (!doubled && !wordAfter) return j;
      }
      if (single && source[j] === delim && source[j + 1] === delim) {
        j += 2;
        continue;
      }
      j += 1;
    }
    return -1;
  }

  /** Parse `[label](destination "title")` starting at `start` ('['); returns {label, url, end} or null. */
  function linkAt(source, start) {
    let depth = 0;
    let j = start;
    for (; j < source.length; j += 1) {
      const ch = source[j];
      if (ch === "\\") {
        j += 1;
      } else if (ch === "`") {
        const span = codeSpanAt(source, j);
        if (span) j = span.end - 1;
      } else if (ch === "[") {
        depth += 1;
      } else if (ch === "]") {
        depth -= 1;
        if (depth === 0) break;
      }
    }
    if (depth !== 0 || source[j + 1] !== "(") return null;
    const label = source.slice(start + 1, j);
    const dest = destinationAt(source, j + 2);
    return dest ? { label: label, url: dest.url, end: dest.end } : null;
  }

  function destinationAt(source, start) {
    let j = start;
    while (source[j] === " " || source[j] === "\t") j += 1;
    let url = "";
    if (source[j] === "<") {
      const close = source.indexOf(">", j);
      if (close === -1) return null;
      url = source.slice(j + 1, close);
      j = close + 1;
    } else {
      let parens = 0;
      const begin = j;
      while (j < source.length && !/\s/.test(source[j])) {
        if (source[j] === "(") parens += 1;
        if (source[j] === ")") {
          if (parens === 0) break;
          parens -= 1;
        }
        j += 1;
      }
      url = source.slice(begin, j);
    }
    const title = /^[ \t]+(?:"[^"]*"|'[^']*')/.exec(source.slice(j));
    if (title) j += title[0].length;
    while (source[j] === " " || source[j] === "\t") j += 1;
    if (source[j] !== ")") return null;
    return { url: url.replace(/\\([!-/:-@[-`{-~])/g, "$1"), end: j + 1 };
  }

  class InlineWriter {
    constructor(parent, options, depth, inLink) {
      this.parent = parent;
      this.options = options;
      this.depth = depth;
      this.inLink = inLink;
      this.buffer = "";
    }

    flush() {
      if (this.buffer) this.parent.appendChild(text(this.buffer));
      this.buffer = "";
    }

    append(node) {
      this.flush();
      this.parent.appendChild(node);
    }

    nested(node, source) {
      renderInline(source, node, this.options, this.depth + 1, this.inLink || node.tagName === "A");
      this.append(node);
    }
  }

  const INLINE_RULES = [escapeRule, lineBreakRule, codeRule, imageRule, citationRule, linkRule, angleUrlRule,
    bareUrlRule, emphasisRule];

  function renderInline(source, parent, options, depth, inLink) {
    const writer = new InlineWriter(parent, options, depth, inLink);
    if (depth > MAX_DEPTH) {
      writer.buffer = source;
      writer.flush();
      return;
    }
    let i = 0;
    while (i < source.length) {
      let next = -1;
      for (const rule of INLINE_RULES) {
        next = rule(source, i, writer);
        if (next > i) break;
      }
      if (next > i) {
        i = next;
      } else {
        writer.buffer += source[i];
        i += 1;
      }
    }
    writer.flush();
  }

  function escapeRule(source, i, writer) {
    if (source[i] !== "\\" || i + 1 >= source.length) return -1;
    const next = source[i + 1];
    if (next === "\n") {
      writer.append(el("br"));
      return i + 2;
    }
    if (!PUNCTUATION.test(next)) return -1;
    writer.buffer += next;
    return i + 2;
  }

  function lineBreakRule(source, i, writer) {
    if (source[i] !== "\n") return -1;
    const hard = /  +$/.test(writer.buffer);
    writer.buffer = writer.buffer.replace(/[ \t]+$/, "");
    if (hard) {
      writer.append(el("br"));
    } else {
      writer.buffer += "\n";
    }
    return i + 1;
  }

  function codeRule(source, i, writer) {
    if (source[i] !== "`") return -1;
    const span = codeSpanAt(source, i);
    if (!span) {
      let run = 0;
      while (source[i + run] === "`") run += 1;
      writer.buffer += source.slice(i, i + run);
      return i + run;
    }
    let content = source.slice(i + span.open, span.close).replace(/\n/g, " ");
    if (/^ .*[^ ].* $/.test(content)) content = content.slice(1, -1);
    const code = el("code");
    code.textContent = content;
    writer.append(code);
    return span.end;
  }

  function imageRule(source, i, writer) {
    if (source[i] !== "!" || source[i + 1] !== "[") return -1;
    const link = linkAt(source, i + 1);
    if (!link) return -1;
    // Images are never loaded (no tracking pixels): a safe URL becomes a link labelled with the alt text.
    const href = writer.inLink ? null : safeUrl(link.url);
    const label = link.label || "image";
    if (href) {
      const a = makeLink(href);
      a.className = "image-link";
      a.textContent = label;
      writer.append(a);
    } else {
      writer.buffer += label;
    }
    return link.end;
  }

  function citationRule(source, i, writer) {
    if (source[i] !== "[" || writer.inLink) return -1;
    const match = CITATION.exec(source.slice(i, i + 40));
    if (!match) return -1;
    const numbers = match[1].split(",").map(function (part) { return parseInt(part, 10); });
    const valid = writer.options.citations;
    if (valid && !numbers.every(function (n) { return valid.includes(n); })) return -1;
    for (const n of numbers) writer.append(citation(n, writer.options.citePrefix));
    return i + match[0].length;
  }

  function citation(n, prefix) {
    const sup = el("sup", "cite-ref");
    const a = el("a", "cite");
    a.href = "#" + prefix + n;
    a.textContent = String(n);
    a.setAttribute("aria-label", "Source " + n);
    sup.appendChild(a);
    return sup;
  }

  function linkRule(source, i, writer) {
    if (source[i] !== "[") return -1;
    const link = linkAt(source, i);
    if (!link) return -1;
    const href = writer.inLink ? null : safeUrl(link.url);
    if (!href) {
      // Unsafe or relative destination: keep the label as plain text, drop the URL.
      writer.flush();
      renderInline(link.label, writer.parent, writer.options, writer.depth + 1, true);
      return link.end;
    }
    const a = makeLink(href);
    if (link.label.trim()) {
      writer.nested(a, link.label);
    } else {
      a.textContent = href;
      writer.append(a);
    }
    return link.end;
  }

  function angleUrlRule(source, i, writer) {
    if (source[i] !== "<" || writer.inLink) return -1;
    const match = ANGLE_URL.exec(source.slice(i, i + 2048));
    const href = match && safeUrl(match[1]);
    if (!href) return -1;
    const a = makeLink(href);
    a.textContent = match[1];
    writer.append(a);
    return i + match[0].length;
  }

  function bareUrlRule(source, i, writer) {
    if (source[i] !== "h" || writer.inLink || (i > 0 && WORD_CHAR.test(source[i - 1]))) return -1;
    const match = BARE_URL.exec(source.slice(i, i + 2048));
    if (!match) return -1;
    const url = match[0].replace(/[.,;:!?*_~]+$/, "");
    const href = safeUrl(url);
    if (!href) return -1;
    const a = makeLink(href);
    a.textContent = url;
    writer.append(a);
    return i + url.length;
  }

  const EMPHASIS = [["**", "strong"], ["__", "strong"], ["~~", "del"], ["*", "em"], ["_", "em"]];

  function emphasisRule(source, i, writer) {
    const ch = source[i];
    if (ch !== "*" && ch !== "_" && ch !== "~") return -1;
    for (const pair of EMPHASIS) {
      const delim = pair[0];
      if (!source.startsWith(delim, i)) continue;
      const after = source[i + delim.length] || "";
      if (!after || /\s/.test(after)) continue;
      if (delim[0] === "_" && i > 0 && WORD_CHAR.test(source[i - 1])) continue;
      const close = findCloser(source, i + delim.length, delim);
      if (close === -1) continue;
      writer.nested(el(pair[1]), source.slice(i + delim.length, close));
      return close + delim.length;
    }
    // An unmatched run stays literal as a whole, so "**" never half-opens an emphasis.
    let run = 0;
    while (source[i + run] === ch) run += 1;
    writer.buffer += source.slice(i, i + run);
    return i + run;
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
