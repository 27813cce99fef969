// trafka console: sortable tables, the value rendering toggle and the search within a page of records.
// Everything works without this script except those three conveniences.
"use strict";

function sortBy(table, th) {
  const index = Array.from(th.parentNode.children).indexOf(th);
  const numeric = th.dataset.type === "number";
  const ascending = th.getAttribute("aria-sort") !== "ascending";
  const body = table.tBodies[0];
  const rows = Array.from(body.rows).filter((r) => r.cells.length > index && r.cells[index].dataset.value !== undefined);
  const key = (row) => {
    const v = row.cells[index].dataset.value;
    return numeric ? parseFloat(v) : v.toLowerCase();
  };
  rows.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0) * (ascending ? 1 : -1));
  rows.forEach((r) => body.appendChild(r));
  th.parentNode.querySelectorAll("th").forEach((h) => h.removeAttribute("aria-sort"));
  th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
}

function showAs(kind) {
  document.querySelectorAll("pre.rendered").forEach((pre) => {
    pre.querySelectorAll("span").forEach((span) => { span.hidden = !span.classList.contains("as-" + kind); });
  });
}

function filterRecords(query) {
  const needle = query.trim().toLowerCase();
  document.querySelectorAll("#records tr.record").forEach((row) => {
    row.hidden = needle !== "" && !row.textContent.toLowerCase().includes(needle);
  });
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("table.sortable th").forEach((th) => {
    th.tabIndex = 0;
    th.title = "Sort";
    const table = th.closest("table");
    th.addEventListener("click", () => sortBy(table, th));
    th.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(table, th); } });
  });
  const render = document.getElementById("render");
  if (render) render.addEventListener("change", () => showAs(render.value));
  const search = document.getElementById("search");
  if (search) search.addEventListener("input", () => filterRecords(search.value));
});
