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
  // -1: no option highlighted yet (Enter then takes the first); the first ↓ highlights the first option.
  var active = -1;
  var shown = [];
  // Chips in the order they were added (those saved before come first, in the page's order), so
  // Backspace takes back the last one added.
  var order = Object.keys(boxes).filter(function (slug) { return boxes[slug].checked; });

  function renderChips() {
    chosen.innerHTML = "";
    order.forEach(function (slug) {
      var li = document.createElement("li");
      li.className = "chip";
      li.dataset.slug = slug;
      li.textContent = slug + " ";
      var x = document.createElement("button");
      x.type = "button"; x.className = "link"; x.textContent = "×"; x.setAttribute("aria-label", "remove " + slug);
      // The chips are redrawn, this button with them: the focus goes to the search box, not the page's top.
      x.addEventListener("click", function () { setChecked(slug, false); search.focus(); });
      li.appendChild(x);
      chosen.appendChild(li);
    });
    if (!chosen.children.length) chosen.innerHTML = '<li class="muted small">none yet</li>';
  }
  // Each change is said (#labeler-status): the chips are redrawn whole, so a screen reader could not
  // tell what Enter added or Backspace took away. Accept, reject and undo then say their own words.
  function setChecked(slug, on) {
    if (!boxes[slug]) return;
    if (boxes[slug].checked !== on) status((on ? "Added " : "Removed ") + slug + ".");
    boxes[slug].checked = on;
    order = order.filter(function (s) { return s !== slug; });
    if (on) order.push(slug);
    renderChips();
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
      // Before any ↓, the first option is marked "default": Enter takes it, and ↓ highlights it.
      li.className = "option" + (i === active ? " active" : "") + (active < 0 && i === 0 ? " default" : "") +
        (boxes[c.slug] && boxes[c.slug].checked ? " picked" : "");
      li.innerHTML = "<strong></strong> <span class='small muted'></span>";
      li.firstChild.textContent = c.slug; li.lastChild.textContent = c.name;
      li.addEventListener("mousedown", function (e) { e.preventDefault(); pick(i); });
      options.appendChild(li);
    });
    options.hidden = shown.length === 0;
    search.setAttribute("aria-expanded", shown.length ? "true" : "false");
    if (shown.length && active >= 0) search.setAttribute("aria-activedescendant", "opt-" + active);
    else search.removeAttribute("aria-activedescendant");
  }
  function pick(i) {
    var c = shown[i];
    if (!c) return;
    setChecked(c.slug, true);
    search.value = ""; active = -1; renderOptions();
  }
  function firstSuggestion() { return document.querySelector("#suggestions .suggestion:not(.done)"); }
  // Accept or reject a suggestion; each decision can be undone (the last one with u, or its Undo button).
  var decisions = [];
  function decide(li, accept) {
    if (!li) return;
    var slug = li.dataset.slug, wasChecked = !!(boxes[slug] && boxes[slug].checked);
    if (accept) setChecked(slug, true);
    li.classList.add("done", accept ? "accepted" : "rejected");
    li.querySelectorAll(".accept, .reject").forEach(function (b) { b.hidden = true; });
    var undo = document.createElement("button");
    undo.type = "button"; undo.className = "link undo"; undo.textContent = "undo";
    undo.setAttribute("aria-label", "undo " + (accept ? "accepting " : "rejecting ") + slug);
    var decision = { li: li, slug: slug, accept: accept, wasChecked: wasChecked, button: undo };
    undo.addEventListener("click", function () { undoDecision(decision); });
    li.appendChild(undo);
    decisions.push(decision);
    status((accept ? "Accepted " : "Rejected ") + slug + "; press u to undo.");
  }
  function undoDecision(d) {
    if (!d || !d.li.classList.contains("done")) return;
    if (d.accept && !d.wasChecked) setChecked(d.slug, false);
    d.li.classList.remove("done", "accepted", "rejected");
    d.li.querySelectorAll(".accept, .reject").forEach(function (b) { b.hidden = false; });
    d.button.remove();
    decisions = decisions.filter(function (x) { return x !== d; });
    status("Undone: " + d.slug + " is a suggestion again.");
  }
  var live = document.getElementById("labeler-status");
  function status(text) { if (live) live.textContent = text; }

  search.addEventListener("input", function () { active = -1; renderOptions(); });
  search.addEventListener("keydown", function (e) {
    if (e.key === "ArrowDown") { active = Math.min(active + 1, shown.length - 1); renderOptions(); e.preventDefault(); }
    else if (e.key === "ArrowUp") { active = Math.max(active - 1, 0); renderOptions(); e.preventDefault(); }
    else if (e.key === "Enter" && !e.ctrlKey) { e.preventDefault(); if (shown.length) pick(Math.max(active, 0)); }
    else if (e.key === "Escape") { search.value = ""; renderOptions(); search.blur(); }
    else if (e.key === "Backspace" && !search.value) {
      if (order.length) setChecked(order[order.length - 1], false);
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
    else if (e.key === "u") undoDecision(decisions[decisions.length - 1]);
    else if (e.key === "s") document.getElementById("save").click();
    else if (e.key === "n" && (link = document.getElementById("next-link"))) window.location = link.href;
    else if (e.key === "p" && (link = document.getElementById("prev-link"))) window.location = link.href;
    else if (e.key === "/") { e.preventDefault(); search.focus(); }
    else return;
  });
  renderChips();
})();
