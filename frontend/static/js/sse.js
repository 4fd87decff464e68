/* The streaming client shared by the guru page and the widget: Server-Sent Events over fetch
   (EventSource cannot POST) and the helpers both use to read error replies.
   window.OpenGuruSSE = { createParser(onEvent), read(body, onEvent, isOver), readJson(response), retryAfterSeconds(h) } */
(function () {
  "use strict";

  /** An incremental SSE parser: push() text chunks split anywhere; onEvent(name, data) per event. */
  function createParser(onEvent) {
    let buffer = "";
    let eventName = "";
    let dataLines = [];

    function dispatch() {
      if (dataLines.length) onEvent(eventName || "message", dataLines.join("\n"));
      eventName = "";
      dataLines = [];
    }

    function handleLine(line) {
      if (line === "") return dispatch();
      if (line[0] === ":") return undefined;
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? "" : line.slice(colon + 1);
      if (value[0] === " ") value = value.slice(1);
      if (field === "event") eventName = value;
      if (field === "data") dataLines.push(value);
      return undefined;
    }

    function push(chunk) {
      buffer += chunk;
      let start = 0;
      for (let i = 0; i < buffer.length; i += 1) {
        const ch = buffer[i];
        if (ch !== "\n" && ch !== "\r") continue;
        if (ch === "\r" && i + 1 === buffer.length) break; // a "\r\n" may be split across chunks
        handleLine(buffer.slice(start, i));
        if (ch === "\r" && buffer[i + 1] === "\n") i += 1;
        start = i + 1;
      }
      buffer = buffer.slice(start);
    }

    function end() {
      if (buffer) handleLine(buffer.replace(/\r$/, ""));
      buffer = "";
      dispatch();
    }

    return { push: push, end: end };
  }

  /** Read a fetch body to its end, calling onEvent(name, data) for every event. When isOver() turns true
   *  (the answer's last event has come) reading stops at once: the server may take a moment to close the
   *  stream, and until it does the page would still be busy and refuse the next question. */
  async function read(body, onEvent, isOver) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    const parser = createParser(onEvent);
    const over = isOver || (() => false);
    for (;;) {
      const result = await reader.read();
      if (result.done) break;
      parser.push(decoder.decode(result.value, { stream: true }));
      if (over()) {
        reader.cancel().catch(() => undefined);
        return;
      }
    }
    parser.push(decoder.decode());
    parser.end();
  }

  /** The JSON body of a reply, or null when it is not JSON (e.g. an HTML error page). */
  async function readJson(response) {
    try {
      const type = response.headers.get("Content-Type") || "";
      return type.includes("application/json") ? await response.json() : null;
    } catch (_error) {
      return null;
    }
  }

  /** Seconds to wait from a Retry-After header (seconds or an HTTP date); 0 when absent. */
  function retryAfterSeconds(header) {
    if (!header) return 0;
    const seconds = Number(header);
    if (Number.isFinite(seconds)) return Math.max(0, Math.ceil(seconds));
    const date = Date.parse(header);
    return Number.isNaN(date) ? 0 : Math.max(0, Math.ceil((date - Date.now()) / 1000));
  }

  window.OpenGuruSSE = { createParser: createParser, read: read, readJson: readJson,
    retryAfterSeconds: retryAfterSeconds };
})();
