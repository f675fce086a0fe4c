// Render math with the vendored KaTeX on first load and after every htmx swap; small behaviours that
// pages would otherwise write inline (the Content-Security-Policy allows no inline script).
(function () {
  var delimiters = [
    { left: "$$", right: "$$", display: true },
    { left: "\\[", right: "\\]", display: true },
    { left: "\\(", right: "\\)", display: false },
    { left: "$", right: "$", display: false },
  ];
  // Course text (problems, titles, solutions): sizes capped at 10em, macros expanded at most 200 times,
  // and no \href, \url, \includegraphics or \htmlClass (trust off).
  var options = {
    delimiters: delimiters, ignoredClasses: ["no-math"], throwOnError: false,
    maxSize: 10, maxExpand: 200, trust: false,
  };
  // Text a student typed (a reason sent through the API) is still read as math, but may not draw
  // anything larger than a character or two: `\rule{3000px}{3000px}` becomes a small box.
  var userOptions = Object.assign({}, options, { maxSize: 2, maxExpand: 20 });
  function render(el) {
    window.renderMathInElement(el, el.classList.contains("user-text") ? userOptions : options);
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
