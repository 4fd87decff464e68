/* Channels pages: copy buttons, the live widget preview, and keeping a new API key out of reloads.
 * No HTML is built from data: texts are set with textContent. */
(function () {
  "use strict";

  const RESET_MS = 2000;

  function fallbackCopy(text) {
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    let copied = false;
    try {
      copied = document.execCommand("copy");
    } catch (_error) {
      copied = false;
    }
    area.remove();
    return copied ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).catch(() => fallbackCopy(text));
    }
    return fallbackCopy(text);
  }

  /** Select the target's text so the user can copy it by hand when the browser refuses to. */
  function selectText(node) {
    const range = document.createRange();
    range.selectNodeContents(node);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  function setupCopy(button) {
    const target = document.querySelector(button.dataset.copy);
    if (!target) return;
    const label = button.textContent;
    let timer = null;
    button.addEventListener("click", () => {
      // A textarea (the Slack manifest) holds its text as its value; other targets as their text.
      const isField = typeof target.value === "string";
      copyText(isField ? target.value : target.textContent).then(
        () => { button.textContent = "Copied"; },
        () => { if (isField) target.select(); else selectText(target); button.textContent = "Press Ctrl+C"; },
      );
      clearTimeout(timer);
      timer = setTimeout(() => { button.textContent = label; }, RESET_MS);
    });
  }

  function loadPreview() {
    const box = document.getElementById("widget-preview");
    if (!box || !box.dataset.widgetKey) return;
    const status = document.getElementById("preview-status");
    const open = document.getElementById("preview-open");
    const say = (text) => { if (status) status.textContent = text; };
    if (window.OpenGuruWidget || document.getElementById("guru-widget-id")) return;
    const script = document.createElement("script");
    script.async = true;
    script.src = box.dataset.scriptSrc;
    script.id = "guru-widget-id";
    script.dataset.widgetId = box.dataset.widgetKey;
    script.addEventListener("load", () => {
      if (!window.OpenGuruWidget) {
        say("The widget script loaded but did not start; see the browser console.");
        return;
      }
      say("Ready.");
      if (open) open.disabled = false;
    });
    script.addEventListener("error", () => say("The widget script could not be loaded from this server."));
    if (open) open.addEventListener("click", () => window.OpenGuruWidget && window.OpenGuruWidget.open());
    document.body.appendChild(script);
  }

  /** The page showing a new key answers a POST: point this history entry at the channels page, so that
   * a reload asks for the page again (where the key is not shown) instead of creating another key. */
  function forgetNewKey() {
    const fresh = document.querySelector("[data-new-key]");
    if (fresh && fresh.dataset.returnUrl && window.history.replaceState) {
      window.history.replaceState(null, "", fresh.dataset.returnUrl);
    }
  }

  document.querySelectorAll("button[data-copy]").forEach(setupCopy);
  forgetNewKey();
  try {
    loadPreview();
  } catch (error) {
    // The preview is a convenience: whatever goes wrong with it, the rest of the page keeps working.
    const status = document.getElementById("preview-status");
    if (status) status.textContent = "The preview could not start: " + String(error && error.message);
  }
})();
