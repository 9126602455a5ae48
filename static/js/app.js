/* Site-wide behaviour, served from 'self' so the Content-Security-Policy needs no inline script
   and no eval (config/csp.py). */
(function () {
  "use strict";

  /* The configurator's live form re-plans on every input except the scenario selector, which
     loads a preset instead.  (Was an htmx trigger filter, "input[target.name!='scenario']", which
     htmx evaluates with Function(): refused under the CSP.) */
  document.addEventListener("htmx:confirm", function (event) {
    var elt = event.detail && event.detail.elt;
    var trigger = event.detail && event.detail.triggeringEvent;
    if (!elt || !elt.matches || !elt.matches("form[data-live-form]") || !trigger) return;
    var target = trigger.target;
    if (target && target.name === "scenario") {
      event.preventDefault();
      return;
    }
    /* The "change" that follows an "input" the form already sent (the field loses focus, e.g. when
       a "why?" is opened) would plan the same form again and replace the results, closing what the
       reader just opened: a form identical to the last one sent is not sent again. */
    var sent = new URLSearchParams(new FormData(elt)).toString();
    if (trigger.type === "change" && elt.dataset.lastSent === sent) {
      event.preventDefault();
      return;
    }
    elt.dataset.lastSent = sent;
  });

  /* A refused request (429: too many renders at once; 409, 413 …) answers under its own status
     with the panel that says why, marked "X-Refusal: panel"; htmx leaves error answers out of
     the page unless told, so swap those in. */
  document.addEventListener("htmx:beforeSwap", function (event) {
    var xhr = event.detail && event.detail.xhr;
    if (xhr && xhr.status >= 400 && xhr.getResponseHeader("X-Refusal") === "panel") {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });

  /* "Copy" buttons: copy the text of the element named by data-copy. */
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button.copy");
    if (!button) return;
    var pre = document.getElementById(button.dataset.copy);
    if (pre && navigator.clipboard) {
      navigator.clipboard.writeText(pre.textContent).then(function () {
        var old = button.textContent;
        button.textContent = "✓";
        setTimeout(function () { button.textContent = old; }, 1200);
      });
    }
  });
})();
