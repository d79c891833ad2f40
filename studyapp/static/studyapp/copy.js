// Copy buttons of the staff set-up page: each button names the field it copies in data-copy
// (no inline script: the Content-Security-Policy forbids it). Without the clipboard API the field's
// text is selected so Ctrl+C copies it.
(function () {
  "use strict";
  document.querySelectorAll("button.copy[data-copy]").forEach(function (button) {
    button.addEventListener("click", function () {
      var field = document.getElementById(button.getAttribute("data-copy"));
      var said = button.parentNode.querySelector(".copied");
      function done(text) { if (said) { said.textContent = text; } }
      field.focus();
      field.select();
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(field.value).then(function () { done("Copied."); }, function () { done("Selected: press Ctrl+C to copy."); });
      } else {
        done("Selected: press Ctrl+C to copy.");
      }
    });
  });
})();
