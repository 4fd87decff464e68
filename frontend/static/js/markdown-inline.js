/* OpenGuru markdown renderer, part 1 of 2: DOM helpers, URL checks and inline syntax.
 *
 * Loaded before markdown.js (which parses blocks); exposes window.OpenGuruMarkdownInline for it.
 * Safe by construction: only createElement/createTextNode, never HTML parsing.
 */
(function () {
  "use strict";

  const MAX_DEPTH = 6;
  const SAFE_PROTOCOLS = ["http:", "https:", "mailto:"];
  const LINK_ATTRS = { rel: "noopener noreferrer nofollow", target: "_blank" };

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

  window.OpenGuruMarkdownInline = Object.freeze({
    MAX_DEPTH: MAX_DEPTH, el: el, text: text, safeUrl: safeUrl, renderInline: renderInline,
  });
})();
