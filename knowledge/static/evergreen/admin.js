/* Evergreen's admin: never lose typed work, and see what the text costs and resembles while typing.
   Served from this origin (the admin's CSP allows no inline script). */
(function () {
  "use strict";
  const form = ["entryversion_form", "entry_form", "textversion_form", "synonymversion_form"]
    .map(function (id) { return document.getElementById(id); })
    .find(function (node) { return node !== null; });
  if (!form || !form.querySelector("textarea, input[type=text]")) return;

  let dirty = false;
  form.addEventListener("input", function () { dirty = true; });
  form.addEventListener("submit", function () { dirty = false; });
  // Leaving with unsaved edits (a link, another form's button) asks first.
  window.addEventListener("beforeunload", function (event) {
    if (dirty) { event.preventDefault(); event.returnValue = ""; }
  });

  const live = document.getElementById("eg-live");
  if (!live) return;
  const byId = function (id) { return document.getElementById(id); };
  let sent = 0;
  let timer = null;

  function item(tag, text, className) {
    const node = document.createElement(tag);
    node.textContent = text;
    if (className) node.className = className;
    return node;
  }

  function show(result) {
    byId("eg-live-tokens").textContent = String(result.tokens);
    const warnings = byId("eg-live-warnings");
    warnings.replaceChildren();
    if (result.warnings.length) {
      const list = item("ul", "", "evergreen-warnings");
      result.warnings.forEach(function (text) { list.appendChild(item("li", text)); });
      warnings.appendChild(list);
    }
    const similar = byId("eg-live-similar");
    similar.replaceChildren();
    if (result.similar.length) {
      const duplicate = result.similar.some(function (s) { return s.nearDuplicate; });
      similar.appendChild(item("p", duplicate
        ? "Near duplicate: an entry with almost this title exists. Edit it instead?"
        : "Existing entries like this one:", duplicate ? "eg-duplicate" : ""));
      const list = item("ul", "", "eg-similar");
      result.similar.forEach(function (s) {
        const li = document.createElement("li");
        const link = item("a", s.id);
        link.href = live.dataset.entries + "?q=" + encodeURIComponent(s.id);
        li.appendChild(link);
        li.appendChild(document.createTextNode(" " + s.title + (s.nearDuplicate ? " (near duplicate)" : "")));
        list.appendChild(li);
      });
      similar.appendChild(list);
    }
    // Sanitised on the server (nh3), the same renderer as the public pages.
    byId("eg-live-preview").innerHTML = result.html;
    live.dataset.shown = String(Number(live.dataset.shown || 0) + 1);
  }

  function send() {
    let url = live.dataset.url;
    if (live.dataset.byCategory) {
      const category = form.querySelector("[name=category]");
      if (!category || !category.value) return;
      url = url.replace("/0/", "/" + encodeURIComponent(category.value) + "/");
    }
    const data = new FormData(form);
    const mine = ++sent;
    fetch(url, { method: "POST", body: data, credentials: "same-origin",
                 headers: { "X-CSRFToken": String(data.get("csrfmiddlewaretoken") || "") } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (result) { if (result && mine === sent) show(result); })
      .catch(function () { /* the preview is a help; saving works without it */ });
  }

  function soon() { clearTimeout(timer); timer = setTimeout(send, 250); }
  form.addEventListener("input", soon);
  form.addEventListener("change", soon);
  send();
})();
