// Render math with the vendored KaTeX on first load and after every htmx swap.
(function () {
  var options = {
    delimiters: [
      { left: "$$", right: "$$", display: true },
      { left: "\\[", right: "\\]", display: true },
      { left: "\\(", right: "\\)", display: false },
      { left: "$", right: "$", display: false },
    ],
    ignoredClasses: ["no-math"],
    throwOnError: false,
  };
  function renderMath(root) {
    if (window.renderMathInElement) {
      root.querySelectorAll(".math").forEach(function (el) { window.renderMathInElement(el, options); });
      if (root.classList && root.classList.contains("math")) window.renderMathInElement(root, options);
    }
  }
  window.prob2vecRenderMath = renderMath;
  if (window.htmx) {
    htmx.onLoad(renderMath);  // fires for the page and for each swapped fragment
  } else {
    document.addEventListener("DOMContentLoaded", function () { renderMath(document.body); });
  }
})();
