/* The guru form: a new guru's slug follows its name until the slug is edited by hand, and the icon group
 * previews the image the guru will get (an uploaded file wins over a URL, as on the server). */
(function () {
  "use strict";

  /** What the server's guru_slug_from_name makes of a name, without the "-2" it adds when the slug is taken. */
  function slugFromName(name) {
    return String(name).normalize("NFKD").replace(/[^\x00-\x7f]/g, "").toLowerCase()
      .replace(/[^a-z0-9\s_-]/g, "").replace(/[\s_-]+/g, "-").replace(/^-+|-+$/g, "")
      .slice(0, 50).replace(/-+$/, "");
  }

  function followName(slug) {
    const name = document.getElementById(slug.dataset.fromName);
    if (!name) return;
    // Someone already typing in the slug (the script runs after the page shows) keeps what they type.
    let edited = document.activeElement === slug || (slug.value !== "" && slug.value !== slugFromName(name.value));
    if (!edited) slug.value = slugFromName(name.value); // a form sent back with errors
    slug.addEventListener("input", () => {
      edited = slug.value !== ""; // clearing the slug hands it back to the name
    });
    name.addEventListener("input", () => {
      if (!edited) slug.value = slugFromName(name.value);
    });
    // A slug the page made is sent blank: the server makes the same one, or adds "-2" when it is taken.
    if (slug.form) slug.form.addEventListener("submit", () => {
      if (!edited) slug.value = "";
    });
  }

  function previewIcon(group) {
    const preview = group.querySelector("[data-icon-preview]");
    const file = group.querySelector("input[type=file]");
    const url = group.querySelector("input[type=url]");
    const remove = group.querySelector("input[type=checkbox]");
    if (!preview || !file || !url) return;
    const current = preview.getAttribute("src") || "";
    const uploaded = current.startsWith("/"); // the server's own copy of an uploaded icon
    let objectUrl = "";
    const show = () => {
      if (objectUrl) URL.revokeObjectURL(objectUrl);
      objectUrl = "";
      let src = "";
      if (file.files && file.files.length) {
        src = objectUrl = URL.createObjectURL(file.files[0]);
      } else if (uploaded && !(remove && remove.checked)) {
        src = current;
      } else if (/^https:\/\/\S+$/i.test(url.value.trim())) {
        src = url.value.trim();
      }
      preview.hidden = !src;
      if (src) preview.src = src;
      else preview.removeAttribute("src");
    };
    preview.addEventListener("error", () => { preview.hidden = true; });
    for (const input of [file, url, remove]) {
      if (input) input.addEventListener(input === url ? "input" : "change", show);
    }
  }

  for (const slug of document.querySelectorAll("input[data-from-name]")) followName(slug);
  for (const group of document.querySelectorAll("[data-icon-group]")) previewIcon(group);
})();
