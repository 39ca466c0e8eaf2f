(function () {
  "use strict";
  var form = document.getElementById("pg-form");
  var topic = document.getElementById("pg-topic");
  var budget = document.getElementById("pg-budget");
  var category = document.getElementById("pg-category");
  var status = document.getElementById("pg-status");
  var hint = document.getElementById("pg-hint");
  var table = document.getElementById("pg-entries");
  var json = document.getElementById("pg-json");
  var bar = document.getElementById("pg-budget-bar");
  var meter = document.getElementById("pg-meter");
  var meterText = document.getElementById("pg-meter-text");
  var labels = Array.prototype.map.call(table.querySelectorAll("thead th"), function (th) { return th.textContent; });

  function cell(row, text, cls, label) {
    var td = document.createElement("td");
    td.textContent = text;
    if (cls) { td.className = cls; }
    if (label) { td.setAttribute("data-label", label); }
    row.appendChild(td);
    return td;
  }

  function idCell(row, id) {
    var td = cell(row, "", "id");
    var link = document.createElement("a");
    link.href = "entries/" + encodeURIComponent(id);
    link.textContent = id;
    td.appendChild(link);
  }

  function show(response, body) {
    json.textContent = JSON.stringify(body, null, 2);
    var rows = table.querySelector("tbody");
    rows.textContent = "";
    if (!response.ok) {
      status.textContent = response.status + " " + (body.error ? body.error.code + ": " + body.error.message : "");
      hint.textContent = "";
      table.hidden = true;
      bar.hidden = true;
      return;
    }
    status.textContent = "matched=" + body.matched + " · truncated=" + body.truncated +
      " · entryCount=" + body.entryCount + " · usedTokens=" + body.usedTokens + "/" + body.budget +
      " · minEntryTokens=" + body.minEntryTokens;
    hint.textContent = body.hint || "";
    meter.max = body.budget;
    meter.value = body.usedTokens;
    meterText.textContent = body.usedTokens + " / " + body.budget + " tokens (" +
      Math.round(100 * body.usedTokens / body.budget) + "%)";
    bar.hidden = false;
    body.entries.forEach(function (entry) {
      var row = document.createElement("tr");
      row.setAttribute("data-id", entry.id);
      idCell(row, entry.id);
      cell(row, entry.title, "title");
      cell(row, entry.category, "", labels[2]);
      cell(row, String(entry.score), "num", labels[3]);
      cell(row, String(entry.relevance), "num", labels[4]);
      cell(row, String(entry.confidence), "num", labels[5]);
      cell(row, String(entry.tokens), "num", labels[6]);
      rows.appendChild(row);
    });
    table.hidden = body.entries.length === 0;
  }

  function parameters() {
    var params = new URLSearchParams();
    params.set("topic", topic.value);
    params.set("budget", budget.value);
    if (category.value) { params.set("category", category.value); }
    return params;
  }

  function ask() {
    var params = parameters();
    // The question stays in the address, so a result can be bookmarked, shared and reloaded.
    history.replaceState(null, "", "?" + params.toString() + "#playground");
    status.textContent = "…";
    fetch("api/context?" + params.toString(), { headers: { "Accept": "application/json" } })
      .then(function (response) {
        return response.json().then(function (body) { show(response, body); });
      })
      .catch(function (error) { status.textContent = String(error); });
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    ask();
  });

  var asked = new URLSearchParams(window.location.search);
  if (asked.has("topic")) {
    topic.value = asked.get("topic");
    if (asked.get("budget")) { budget.value = asked.get("budget"); }
    if (asked.get("category")) { category.value = asked.get("category"); }
    ask();
  }
})();
