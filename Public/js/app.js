// Progressive enhancement only: every page works without this file.
(function () {
  "use strict";

  // Copy buttons: the Clipboard API where the page is a secure context, else select the hidden
  // textarea and use the older copy command, which also works over plain HTTP.
  function copyText(source, button) {
    var text = source.value;
    var done = function () {
      var label = button.textContent;
      button.textContent = "Copied";
      setTimeout(function () { button.textContent = label; }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { fallbackCopy(source) && done(); });
    } else if (fallbackCopy(source)) {
      done();
    }
  }

  function fallbackCopy(source) {
    source.removeAttribute("readonly");
    source.select();
    source.setSelectionRange(0, source.value.length);
    var copied = false;
    try { copied = document.execCommand("copy"); } catch (error) { copied = false; }
    source.setAttribute("readonly", "");
    window.getSelection && window.getSelection().removeAllRanges();
    return copied;
  }

  document.querySelectorAll(".copy-button").forEach(function (button) {
    var source = document.getElementById(button.getAttribute("data-copy-target"));
    if (!source) { return; }
    button.hidden = false;
    button.addEventListener("click", function () { copyText(source, button); });
  });

  // Tab in the code field inserts a tab instead of leaving the field (Escape, then Tab, leaves it).
  document.querySelectorAll("textarea[data-tab-inserts]").forEach(function (area) {
    var escaped = false;
    area.addEventListener("keydown", function (event) {
      if (event.key === "Escape") { escaped = true; return; }
      if (event.key !== "Tab" || event.shiftKey || escaped) { escaped = false; return; }
      event.preventDefault();
      var start = area.selectionStart, end = area.selectionEnd;
      area.setRangeText("\t", start, end, "end");
    });
  });

  // Keyboard shortcuts outside text fields: "n" for a new snippet, "e" to edit the one shown.
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (event.metaKey || event.ctrlKey || event.altKey) { return; }
    if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.tagName === "SELECT" || target.isContentEditable)) { return; }
    var link = null;
    if (event.key === "n") { link = document.querySelector("a[accesskey='n']"); }
    if (event.key === "e") { link = document.querySelector(".snippet .actions a[href$='/edit']"); }
    if (link) { event.preventDefault(); window.location.href = link.href; }
  });
})();
