// Render math with the vendored KaTeX on first load and after every htmx swap; small behaviours that
// pages would otherwise write inline (the Content-Security-Policy allows no inline script).
(function () {
  var delimiters = [
    { left: "$$", right: "$$", display: true },
    { left: "\\[", right: "\\]", display: true },
    { left: "\\(", right: "\\)", display: false },
    { left: "$", right: "$", display: false },
  ];
  // Display environments textbooks write outside $$ (problems/latex_html.py _MATH_ENV, the same list).
  ["align", "align*", "equation", "equation*", "gather", "gather*"].forEach(function (env) {
    delimiters.push({ left: "\\begin{" + env + "}", right: "\\end{" + env + "}", display: true });
  });
  // Commands KaTeX lacks that real books write inside math: Grinstead & Snell's own \mat{P} (its
  // matrices, in bold) and plain TeX's \mbox, \pmatrix{a & b \cr c & d} and \matrix. Without these,
  // 56 of the book's 705 problems showed "\mat" in red where a matrix was named.
  var macros = {
    "\\mat": "\\mathbf{#1}",
    "\\mbox": "\\text{#1}",
    "\\cr": "\\\\",
    "\\pmatrix": "\\begin{pmatrix}#1\\end{pmatrix}",
    "\\matrix": "\\begin{matrix}#1\\end{matrix}",
  };
  // Course text (problems, titles, solutions): sizes capped at 10em, macros expanded at most 200 times,
  // and no \href, \url, \includegraphics or \htmlClass (trust off).
  var options = {
    delimiters: delimiters, ignoredClasses: ["no-math", "katex"], throwOnError: false,
    maxSize: 10, maxExpand: 200, trust: false,
  };
  // Text a student typed (a reason sent through the API) is still read as math, but may not draw
  // anything larger than a character or two: `\rule{3000px}{3000px}` becomes a small box.
  var userOptions = Object.assign({}, options, { maxSize: 2, maxExpand: 20 });
  function render(el) {
    // A fresh copy for each element: KaTeX writes a text's \gdef into the macros it is given, which
    // must not carry over from one text (a student's reason) to the next.
    var opts = el.classList.contains("user-text") ? userOptions : options;
    window.renderMathInElement(el, Object.assign({}, opts, { macros: Object.assign({}, macros) }));
  }
  function renderMath(root) {
    if (!window.renderMathInElement) return;
    root.querySelectorAll(".math").forEach(render);
    if (root.classList && root.classList.contains("math")) render(root);
  }
  window.prob2vecRenderMath = renderMath;
  if (window.htmx) {
    htmx.onLoad(renderMath);  // fires for the page and for each swapped fragment
  } else {
    document.addEventListener("DOMContentLoaded", function () { renderMath(document.body); });
  }

  // A region that htmx replaces is new to a screen reader, which says nothing of it (a live region
  // swapped in whole is not announced): a swapped fragment's [data-announce] element ("12 problems")
  // is written into the page's own live region (#live-status, base.html), which stays put.
  function announce(root) {
    var live = document.getElementById("live-status");
    if (!live || root === document.body || !root.querySelector) return;
    var el = root.matches && root.matches("[data-announce]") ? root : root.querySelector("[data-announce]");
    if (!el) return;
    var text = (el.dataset.announce || el.textContent).replace(/\s+/g, " ").trim();
    live.textContent = "";  // the same words again (the same count) are said again
    window.setTimeout(function () { live.textContent = text; }, 50);
  }
  if (window.htmx) htmx.onLoad(announce);

  // A control inside the region htmx replaces ("Next →" under the bank's list) is replaced with it: the
  // focus fell to the page's body, and the next Tab started again from the skip link. It goes to the
  // new region instead (focusable by script only), so Tab goes on into the new list.
  var focusedIn = null;
  document.addEventListener("htmx:beforeSwap", function (e) {
    var target = e.detail.target;
    focusedIn = target && target.id && target.contains(document.activeElement) ? target.id : null;
  });
  document.addEventListener("htmx:afterSettle", function () {
    var id = focusedIn, region = id && document.getElementById(id);
    focusedIn = null;
    if (!region || (document.activeElement && document.activeElement !== document.body)) return;
    if (!region.hasAttribute("tabindex")) region.setAttribute("tabindex", "-1");
    region.focus({ preventScroll: true });
  });

  // Forms whose state lives in the URL (data-url-state: the bank's filters). htmx restores a page from
  // its history snapshot, which keeps the markup but not what was typed into the boxes: after back or
  // forward, set every field from the address bar, so the boxes say what the results show.
  function syncFormsFromUrl() {
    var params = new URLSearchParams(window.location.search);
    document.querySelectorAll("form[data-url-state]").forEach(function (form) {
      Array.prototype.forEach.call(form.elements, function (field) {
        if (!field.name || field.type === "submit" || field.type === "button" || field.type === "hidden") return;
        var values = params.getAll(field.name), present = params.has(field.name);
        if (field.type === "checkbox" || field.type === "radio") {
          var group = form.querySelectorAll('input[name="' + field.name + '"]');
          field.checked = present ? values.indexOf(field.value) >= 0 : field === group[0] && field.type === "radio";
        } else if (field.tagName === "SELECT") {
          Array.prototype.forEach.call(field.options, function (option, i) {
            option.selected = present ? values.indexOf(option.value) >= 0 : !field.multiple && i === 0;
          });
        } else {
          field.value = present ? values[0] : "";
        }
      });
    });
  }
  document.addEventListener("htmx:historyRestore", syncFormsFromUrl);
  // The same URL pushed twice (a field's change event after its input already updated the list) would
  // make Back appear to do nothing: replace the entry instead.
  document.addEventListener("htmx:beforeHistoryUpdate", function (e) {
    var h = e.detail.history;
    if (h && h.type === "push" && new URL(h.path, window.location.href).href === window.location.href) h.type = "replace";
  });
  window.addEventListener("pageshow", function (e) { if (e.persisted) syncFormsFromUrl(); });

  // Unsaved edits kept as local drafts (fields marked data-draft): saved in localStorage under the
  // page's path and the field's name as the person types, and put back when they come back to the page
  // (after signing in again, say), with a note offering to discard them. A draft equal to what the
  // server now shows has been saved, and is dropped.
  var draftPrefix = "prob2vec-draft:";
  function draftKey(field) { return draftPrefix + window.location.pathname + "#" + field.name; }
  function draftRead(key) {
    try { return JSON.parse(window.localStorage.getItem(key) || "null"); } catch (err) { return null; }
  }
  function draftWrite(field) {
    try {
      if (field.value === field.defaultValue) {
        window.localStorage.removeItem(draftKey(field));
      } else {
        window.localStorage.setItem(draftKey(field), JSON.stringify({ value: field.value, base: field.defaultValue, at: Date.now() }));
      }
    } catch (err) { /* storage full or refused: the edit is simply not kept */ }
  }
  function draftNote(field, text, actionLabel, action) {
    var note = document.createElement("p");
    note.className = "draft-note";
    note.setAttribute("role", "status");
    note.textContent = text + " ";
    var button = document.createElement("button");
    button.type = "button";
    button.className = "link";
    button.textContent = actionLabel;
    button.addEventListener("click", function () { action(); note.remove(); });
    note.appendChild(button);
    field.parentNode.insertBefore(note, field);
  }
  // What a draft is of, in words for its note: "the nchoosek rule's pattern". The form names the whole
  // (data-draft-of) and the field's label its part (data-draft-name, else the label's own words: its
  // help text would make the note quote it).
  function draftName(field) {
    var label = field.labels && field.labels[0], part = field.name;
    if (label && label.dataset.draftName) {
      part = label.dataset.draftName;
    } else if (label) {
      var words = label.cloneNode(true);
      words.querySelectorAll(".muted, .helptext").forEach(function (help) { help.remove(); });
      part = words.textContent.trim().replace(/:$/, "").toLowerCase();
    }
    var whole = field.closest("[data-draft-of]");
    return whole ? whole.dataset.draftOf + "'s " + part : part;
  }
  function draftsRestore(root) {
    var fields = Array.prototype.slice.call(root.querySelectorAll("[data-draft]"));
    if (root.matches && root.matches("[data-draft]")) fields.push(root);
    fields.forEach(function (field) {
      if (field.dataset.draftReady) return;
      field.dataset.draftReady = "1";
      field.addEventListener("input", function () { draftWrite(field); });
      var key = draftKey(field), draft = draftRead(key);
      if (!draft || typeof draft.value !== "string") return;
      if (draft.value === field.value) { window.localStorage.removeItem(key); return; }  // saved since
      var when = new Date(draft.at).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
      var name = draftName(field);
      var restore = function () {
        field.value = draft.value;
        field.dispatchEvent(new Event("input", { bubbles: true }));
      };
      if (draft.base === field.value) {
        // Nothing changed on the server since the draft began: put it back, and offer to drop it.
        var saved = field.value;
        restore();
        draftNote(field, "Your unsaved draft of " + name + " (from " + when + ") was restored; it is not saved yet.", "Discard it", function () {
          field.value = saved;
          window.localStorage.removeItem(key);
          field.dispatchEvent(new Event("input", { bubbles: true }));
        });
      } else {
        draftNote(field, "You have an unsaved draft of " + name + " (from " + when + "); the saved version has changed since.", "Restore my draft", restore);
      }
    });
  }
  // A form with drafts, once submitted, names its page; the next page saying "saved" (a message with
  // class saved) drops that page's drafts. A submit that ends on the login page (expired session) keeps them.
  var pendingKey = "prob2vec-draft-pending";
  document.addEventListener("submit", function (e) {
    if (e.target.querySelector && e.target.querySelector("[data-draft]")) {
      try { window.sessionStorage.setItem(pendingKey, window.location.pathname); } catch (err) { /* no storage */ }
    }
  });
  try {
    var pending = window.sessionStorage.getItem(pendingKey);
    if (pending && document.querySelector(".messages li.saved")) {
      Object.keys(window.localStorage).forEach(function (key) {
        if (key.indexOf(draftPrefix + pending + "#") === 0) window.localStorage.removeItem(key);
      });
      window.sessionStorage.removeItem(pendingKey);
    }
  } catch (err) { /* no storage */ }

  // After htmx has set up the page, so that a restored draft's input event updates its live preview.
  if (window.htmx) {
    htmx.onLoad(draftsRestore);
  } else {
    document.addEventListener("DOMContentLoaded", function () { draftsRestore(document); });
  }

  // An htmx request made after the session expired: go to the login page (the whole page, never into a
  // panel) and come back here afterwards. The server says so with HX-Redirect and X-Login-Required
  // (prob2vec_site/htmx.py); a login page reached some other way is caught by its URL.
  function leaveForLogin() {
    window.prob2vecLeaving = true;  // the rule editor's "leave this page?" stays quiet: drafts keep the edits
    document.querySelectorAll("[data-draft]").forEach(draftWrite);
  }
  document.addEventListener("htmx:beforeOnLoad", function (e) {
    var xhr = e.detail.xhr;
    if (xhr && xhr.getResponseHeader("X-Login-Required")) leaveForLogin();
  });
  document.addEventListener("htmx:beforeSwap", function (e) {
    var xhr = e.detail.xhr, login = document.body.dataset.loginUrl;
    if (!xhr || !login || !xhr.responseURL) return;
    if (new URL(xhr.responseURL).pathname === login && window.location.pathname !== login) {
      e.detail.shouldSwap = false;
      leaveForLogin();
      window.location.href = login + "?next=" + encodeURIComponent(window.location.pathname + window.location.search);
    }
  });

  // The header: on a phone the navigation sits behind a Menu button (CSS shows it whole without JS);
  // one group open at a time, closed by a click elsewhere or Escape.
  document.documentElement.classList.add("js");
  document.addEventListener("click", function (e) {
    var toggle = e.target.closest && e.target.closest(".nav-toggle");
    if (toggle) {
      var open = toggle.closest(".topbar").classList.toggle("nav-open");
      toggle.setAttribute("aria-expanded", open ? "true" : "false");
    }
    document.querySelectorAll("details.navgroup[open]").forEach(function (d) {
      if (!d.contains(e.target)) d.removeAttribute("open");
    });
  });
  document.addEventListener("keydown", function (e) {
    if (e.key !== "Escape") return;
    document.querySelectorAll("details.navgroup[open]").forEach(function (d) {
      d.removeAttribute("open");
      d.querySelector("summary").focus();
    });
  });

  // <details data-fold-on-phone>: open on a wide screen, folded on a phone unless one of its fields is set.
  if (window.matchMedia && window.matchMedia("(max-width: 760px)").matches) {
    document.querySelectorAll("details[data-fold-on-phone]").forEach(function (d) {
      var set = Array.prototype.some.call(d.querySelectorAll("select[multiple] option, input[type=search], input[type=text]"), function (f) {
        return f.tagName === "OPTION" ? f.selected : f.value;
      });
      if (!set) d.removeAttribute("open");
    });
  }

  // <select data-submit-on-change>: choosing submits its form (the propose page's module picker).
  document.addEventListener("change", function (e) {
    if (e.target.matches && e.target.matches("[data-submit-on-change]") && e.target.form) e.target.form.requestSubmit();
  });

  // The judge page: keys 1, 2 and 0 press the buttons that carry them (data-key).
  document.addEventListener("keydown", function (e) {
    if (!document.getElementById("judge-form")) return;
    if (e.target.matches("input, textarea, select") || e.ctrlKey || e.altKey || e.metaKey) return;
    var b = document.querySelector('#judge-form button[data-key="' + e.key + '"]');
    if (b) { e.preventDefault(); b.click(); }
  });
})();
