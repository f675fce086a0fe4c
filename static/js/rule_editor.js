// The rule editor (and the report drill-down's copy of it): a pattern box, one branch per line, that
// grows with its content and counts its characters against the limit, "Append" buttons that add a
// suggested branch as a new line (the live preview then scores it), "Move it" links that move a line
// to the statement-only box, and a warning before leaving
// with changes that are not saved (in either box: the pattern, or the branches matched in the
// statement only). Without JavaScript the "Append"
// links open the editor previewing the appended pattern instead.
(function () {
  function autosize(box) {
    box.style.height = "auto";
    box.style.height = box.scrollHeight + 2 + "px";
  }

  function setUp(form) {
    var box = form.querySelector("textarea[name=pattern]");
    if (!box) return;
    var flag = function (name) {
      var input = form.querySelector("input[name=" + name + "]");
      return input ? (input.checked ? "1" : "0") : null;
    };
    var statementBox = form.querySelector("textarea[name=statement_pattern]");
    var saved = [form.dataset.savedPattern || "", form.dataset.savedIgnoreCase, form.dataset.savedEnabled];
    var dirty = function () {
      var ignoreCase = flag("ignore_case"), enabled = flag("enabled");
      return box.value !== saved[0] ||
        (statementBox !== null && statementBox.value !== (form.dataset.savedStatementPattern || "")) ||
        (ignoreCase !== null && ignoreCase !== saved[1]) || (enabled !== null && enabled !== saved[2]);
    };
    // The live preview waits for the request in flight and then sends the latest text once
    // (hx-sync="this:queue last"): replacing it aborted the request, which htmx logs as an error. The
    // answer for text typed over since is then not shown, so the preview never describes older text.
    document.addEventListener("htmx:beforeSwap", function (event) {  // fired on the preview it replaces
      var request = event.detail.requestConfig;
      if (!request || request.elt !== form) return;
      var sent = request.formData;
      if (sent.get("pattern") !== box.value ||
          (statementBox !== null && sent.get("statement_pattern") !== statementBox.value)) {
        event.detail.shouldSwap = false;
      }
    });

    var leaving = false;  // saving or previewing through the form is no loss
    form.addEventListener("submit", function () { leaving = true; });
    window.addEventListener("beforeunload", function (event) {
      if (!leaving && !window.prob2vecLeaving && dirty()) {
        event.preventDefault();
        event.returnValue = "";  // older browsers need a value to show the prompt
      }
    });

    // The pattern's length against the editor's limit (the box refuses to go past it), and a word
    // when it is close: authors near the limit otherwise find their typing stopped without a reason.
    var length = form.querySelector(".pattern-length");
    var showLength = function () {
      if (!length) return;
      var near = box.value.length > parseInt(length.dataset.near, 10);
      length.querySelector(".pattern-length-count").textContent = box.value.length;
      length.classList.toggle("bad", near);
      length.classList.toggle("muted", !near);
      length.querySelector(".pattern-length-near").hidden = !near;
    };
    box.addEventListener("input", function () { autosize(box); showLength(); });
    autosize(box);
    showLength();
    if (statementBox) {
      statementBox.addEventListener("input", function () { autosize(statementBox); });
      autosize(statementBox);
    }

    // "Move it": a line of the first box that misfires on solutions goes to the end of the
    // statement-only box; the live preview then scores both (the link previews it without JavaScript).
    document.addEventListener("click", function (event) {
      var link = event.target.closest("[data-move-to-statement]");
      if (!link || !statementBox) return;
      var line = link.getAttribute("data-move-to-statement");
      var lines = box.value.split("\n");
      var at = lines.findIndex(function (l) { return l.trim() === line; });
      if (at < 0) return;  // the box changed since the preview: let the link preview the move
      event.preventDefault();
      lines.splice(at, 1);
      box.value = lines.join("\n");
      statementBox.value = statementBox.value.trim() ? statementBox.value.replace(/\s+$/, "") + "\n" + line : line;
      autosize(box);
      autosize(statementBox);
      showLength();
      statementBox.dispatchEvent(new Event("input", { bubbles: true }));  // htmx previews it like typing
    });

    document.addEventListener("click", function (event) {
      var link = event.target.closest("[data-append-branch]");
      if (!link) return;
      event.preventDefault();
      var branch = link.getAttribute("data-append-branch");
      // One branch per line (the server joins the lines with `|`).
      box.value = box.value.trim() ? box.value.replace(/\s+$/, "") + "\n" + branch : branch;
      autosize(box);
      box.dispatchEvent(new Event("input", { bubbles: true }));  // htmx previews it like typing
      box.focus();
      box.setSelectionRange(box.value.length, box.value.length);
    });
  }

  function start() {
    document.querySelectorAll("form.rule-form").forEach(setUp);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
