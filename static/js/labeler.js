// Keyboard-first concept labelling. The form underneath is a plain list of checkboxes, so the page
// works without JavaScript; this script adds chips, type-ahead search and shortcuts on top of it.
(function () {
  var form = document.getElementById("labeler");
  if (!form) return;
  var concepts = JSON.parse(document.getElementById("concept-data").textContent);
  var search = document.getElementById("concept-search");
  var options = document.getElementById("concept-options");
  var chosen = document.getElementById("chosen");
  var boxes = {};
  form.querySelectorAll("input[name=concepts]").forEach(function (box) { boxes[box.value] = box; });
  document.getElementById("all-concepts").classList.add("enhanced");
  var active = 0;
  var shown = [];

  function renderChips() {
    chosen.innerHTML = "";
    Object.keys(boxes).forEach(function (slug) {
      if (!boxes[slug].checked) return;
      var li = document.createElement("li");
      li.className = "chip";
      li.dataset.slug = slug;
      li.textContent = slug + " ";
      var x = document.createElement("button");
      x.type = "button"; x.className = "link"; x.textContent = "×"; x.setAttribute("aria-label", "remove " + slug);
      x.addEventListener("click", function () { setChecked(slug, false); });
      li.appendChild(x);
      chosen.appendChild(li);
    });
    if (!chosen.children.length) chosen.innerHTML = '<li class="muted small">none yet</li>';
  }
  function setChecked(slug, on) {
    if (boxes[slug]) { boxes[slug].checked = on; renderChips(); }
  }
  function matches(query) {
    var q = query.trim().toLowerCase();
    if (!q) return [];
    var starts = [], contains = [];
    concepts.forEach(function (c) {
      var slug = c.slug.toLowerCase();
      if (slug.indexOf(q) === 0) starts.push(c);
      else if (slug.indexOf(q) >= 0 || c.name.toLowerCase().indexOf(q) >= 0 || c.description.toLowerCase().indexOf(q) >= 0) contains.push(c);
    });
    return starts.concat(contains).slice(0, 12);
  }
  function renderOptions() {
    shown = matches(search.value);
    options.innerHTML = "";
    var lastModule = null;
    shown.forEach(function (c, i) {
      if (c.module !== lastModule) {
        var head = document.createElement("li");
        head.className = "group small muted"; head.textContent = c.module || "no module"; head.setAttribute("role", "presentation");
        options.appendChild(head); lastModule = c.module;
      }
      var li = document.createElement("li");
      li.setAttribute("role", "option"); li.dataset.slug = c.slug; li.id = "opt-" + i;
      li.className = "option" + (i === active ? " active" : "") + (boxes[c.slug] && boxes[c.slug].checked ? " picked" : "");
      li.innerHTML = "<strong></strong> <span class='small muted'></span>";
      li.firstChild.textContent = c.slug; li.lastChild.textContent = c.name;
      li.addEventListener("mousedown", function (e) { e.preventDefault(); pick(i); });
      options.appendChild(li);
    });
    options.hidden = shown.length === 0;
    search.setAttribute("aria-expanded", shown.length ? "true" : "false");
    if (shown.length) search.setAttribute("aria-activedescendant", "opt-" + active);
  }
  function pick(i) {
    var c = shown[i];
    if (!c) return;
    setChecked(c.slug, true);
    search.value = ""; active = 0; renderOptions();
  }
  function firstSuggestion() { return document.querySelector("#suggestions .suggestion:not(.done)"); }
  function decide(li, accept) {
    if (!li) return;
    if (accept) setChecked(li.dataset.slug, true);
    li.classList.add("done", accept ? "accepted" : "rejected");
  }

  search.addEventListener("input", function () { active = 0; renderOptions(); });
  search.addEventListener("keydown", function (e) {
    if (e.key === "ArrowDown") { active = Math.min(active + 1, shown.length - 1); renderOptions(); e.preventDefault(); }
    else if (e.key === "ArrowUp") { active = Math.max(active - 1, 0); renderOptions(); e.preventDefault(); }
    else if (e.key === "Enter" && !e.ctrlKey) { e.preventDefault(); if (shown.length) pick(active); }
    else if (e.key === "Escape") { search.value = ""; renderOptions(); search.blur(); }
    else if (e.key === "Backspace" && !search.value) {
      var chips = chosen.querySelectorAll(".chip");
      if (chips.length) setChecked(chips[chips.length - 1].dataset.slug, false);
    }
  });
  document.querySelectorAll("#suggestions .accept").forEach(function (b) {
    b.addEventListener("click", function () { decide(b.closest(".suggestion"), true); });
  });
  document.querySelectorAll("#suggestions .reject").forEach(function (b) {
    b.addEventListener("click", function () { decide(b.closest(".suggestion"), false); });
  });
  document.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && e.ctrlKey) { e.preventDefault(); document.getElementById("save").click(); return; }
    var typing = e.target.matches && e.target.matches("input[type=search], input[type=text], textarea");
    if (typing || e.altKey || e.ctrlKey || e.metaKey) return;
    var link;
    if (e.key === "a") decide(firstSuggestion(), true);
    else if (e.key === "r") decide(firstSuggestion(), false);
    else if (e.key === "s") document.getElementById("save").click();
    else if (e.key === "n" && (link = document.getElementById("next-link"))) window.location = link.href;
    else if (e.key === "p" && (link = document.getElementById("prev-link"))) window.location = link.href;
    else if (e.key === "/") { e.preventDefault(); search.focus(); }
    else return;
  });
  renderChips();
})();
