/* Instance settings: "Test connection" posts the chat provider form without leaving the page, so a typed key
 * stays in its field for Save, and offers the provider's models in the model field.
 * No HTML is built from data: texts are set with textContent, options with .value. */
(function () {
  "use strict";

  function csrfToken(form) {
    const input = form.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function showModels(models) {
    const list = document.getElementById("llm-models");
    if (!list || !Array.isArray(models)) return;
    list.replaceChildren(...models.map((model) => {
      const option = document.createElement("option");
      option.value = String(model);
      return option;
    }));
  }

  function setup() {
    const form = document.getElementById("llm-form");
    const button = document.getElementById("llm-test");
    const result = document.getElementById("llm-test-result");
    if (!form || !button || !result) return;
    const say = (text, state) => {
      result.textContent = text;
      result.classList.remove("ok", "error");
      if (state) result.classList.add(state);
    };
    button.addEventListener("click", (event) => {
      event.preventDefault();
      button.disabled = true;
      say("Testing…", "");
      fetch(button.formAction, {
        method: "POST",
        body: new FormData(form),
        headers: {"Accept": "application/json", "X-CSRFToken": csrfToken(form)},
        credentials: "same-origin",
      })
        .then((response) => {
          if (!response.ok) throw new Error(`HTTP ${response.status}`);
          return response.json();
        })
        .then((report) => {
          say(report.message, report.ok ? "ok" : "error");
          if (report.ok) showModels(report.models);
        })
        .catch((error) => say(`The test could not run: ${error.message}`, "error"))
        .finally(() => { button.disabled = false; });
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
})();
