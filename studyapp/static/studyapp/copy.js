// Copy buttons: the staff set-up page's fields and the participant's completion code. Each button names
// the element it copies in data-copy (no inline script: the Content-Security-Policy forbids it); its
// data-copied and data-selected say what happened in the page's language. Without the clipboard API the
// text is selected so Ctrl+C copies it. A button hidden in the page is shown once this script runs.
(function () {
  "use strict";
  function selectText(field) {
    if (typeof field.select === "function") {
      field.focus();
      field.select();
      return;
    }
    var range = document.createRange();
    range.selectNodeContents(field);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }
  document.querySelectorAll("button.copy[data-copy]").forEach(function (button) {
    var field = document.getElementById(button.getAttribute("data-copy"));
    if (!field) return;
    button.hidden = false;
    button.addEventListener("click", function () {
      var said = button.parentNode.querySelector(".copied");
      var copied = button.getAttribute("data-copied") || "Copied.";
      var selected = button.getAttribute("data-selected") || "Selected: press Ctrl+C to copy.";
      function done(text) { if (said) { said.textContent = text; } }
      var text = field.value !== undefined ? field.value : field.textContent.trim();
      selectText(field);
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(function () { done(copied); }, function () { done(selected); });
      } else {
        done(selected);
      }
    });
  });
})();
