(function () {
  "use strict";
  var form = document.getElementById("pg-form");
  var status = document.getElementById("pg-status");
  var hint = document.getElementById("pg-hint");
  var table = document.getElementById("pg-entries");
  var json = document.getElementById("pg-json");

  function cell(row, text, cls) {
    var td = document.createElement("td");
    td.textContent = text;
    if (cls) { td.className = cls; }
    row.appendChild(td);
  }

  function show(response, body) {
    json.textContent = JSON.stringify(body, null, 2);
    var rows = table.querySelector("tbody");
    rows.textContent = "";
    if (!response.ok) {
      status.textContent = response.status + " " + (body.error ? body.error.code + ": " + body.error.message : "");
      hint.textContent = "";
      table.hidden = true;
      return;
    }
    status.textContent = "matched=" + body.matched + " · truncated=" + body.truncated +
      " · entryCount=" + body.entryCount + " · usedTokens=" + body.usedTokens + "/" + body.budget +
      " · minEntryTokens=" + body.minEntryTokens;
    hint.textContent = body.hint || "";
    body.entries.forEach(function (entry) {
      var row = document.createElement("tr");
      row.setAttribute("data-id", entry.id);
      cell(row, entry.id);
      cell(row, entry.title);
      cell(row, entry.category);
      cell(row, String(entry.score), "num");
      cell(row, String(entry.relevance), "num");
      cell(row, String(entry.confidence), "num");
      cell(row, String(entry.tokens), "num");
      rows.appendChild(row);
    });
    table.hidden = body.entries.length === 0;
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var params = new URLSearchParams();
    params.set("topic", document.getElementById("pg-topic").value);
    params.set("budget", document.getElementById("pg-budget").value);
    var category = document.getElementById("pg-category").value;
    if (category) { params.set("category", category); }
    status.textContent = "…";
    fetch("api/context?" + params.toString(), { headers: { "Accept": "application/json" } })
      .then(function (response) {
        return response.json().then(function (body) { show(response, body); });
      })
      .catch(function (error) { status.textContent = String(error); });
  });
})();
