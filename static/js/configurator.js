/* The configurator page's own behaviour (htmx does the re-planning).
 *
 * - The quote header (customer, title, discount, language) is kept in
 *   sessionStorage, so a reload or a language switch never loses it.
 * - A language switch first sends the configuration (the server remembers it
 *   in the session), then switches: nothing typed is lost.
 */
(function () {
  "use strict";
  var KEY = "configurator.quote-header";

  function keptFields() {
    return Array.prototype.slice.call(document.querySelectorAll("#quote-form [data-keep]"));
  }

  function saveHeader() {
    var values = {};
    keptFields().forEach(function (el) { values[el.name] = el.value; });
    try { sessionStorage.setItem(KEY, JSON.stringify(values)); } catch (e) { /* storage off */ }
  }

  function restoreHeader() {
    var values;
    try { values = JSON.parse(sessionStorage.getItem(KEY) || "{}"); } catch (e) { values = {}; }
    keptFields().forEach(function (el) {
      if (Object.prototype.hasOwnProperty.call(values, el.name)) {
        el.value = values[el.name];
      }
    });
  }

  document.addEventListener("input", function (event) {
    if (event.target.closest("#quote-form")) saveHeader();
  });
  document.addEventListener("change", function (event) {
    if (event.target.closest("#quote-form")) saveHeader();
  });
  document.addEventListener("submit", function (event) {
    if (event.target.id === "quote-form") {
      try { sessionStorage.removeItem(KEY); } catch (e) { /* storage off */ }
      // Remember on this history entry which form was saved: Back to it opens the saved quote.
      var key = event.target.querySelector("input[name=idempotency_key]");
      if (key && window.history && history.replaceState) {
        var state = Object.assign({}, history.state || {}, { quoteSavedKey: key.value });
        try { history.replaceState(state, ""); } catch (e) { /* state too large: Back shows the form */ }
      }
    }
  });

  /* Back after "Save as quote": the browser shows this page again, from its cache or afresh,
     with the configuration it first loaded and the customer it restores.  Saving that would
     quietly make a second quote, so the page asks the server which quote the saved form made
     and opens it instead (the form's key is the quote's idempotency key). */
  window.addEventListener("pageshow", function () {
    var form = document.getElementById("quote-form");
    var saved = window.history && history.state && history.state.quoteSavedKey;
    if (!form || !saved || !window.fetch || !/^[A-Za-z0-9_-]{16,64}$/.test(saved)) return;
    fetch(form.dataset.createdUrl.replace("__key__", saved), {
      headers: { Accept: "application/json" }, credentials: "same-origin"
    }).then(function (response) {
      return response.ok ? response.json() : null;
    }).then(function (data) {
      if (data && data.url) window.location.replace(data.url);
    }, function () { /* offline: the form stays, and its key still makes saving again one quote */ });
  });

  var switching = false;
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.classList || !form.classList.contains("langswitch") || switching) return;
    var config = document.getElementById("config-form");
    var workspace = document.getElementById("workspace");
    if (!config || !workspace || !window.fetch) return;
    event.preventDefault();
    saveHeader();
    var submitter = event.submitter;
    var token = config.querySelector("input[name=csrfmiddlewaretoken]");
    var done = function () {
      switching = true;
      if (form.requestSubmit && submitter) form.requestSubmit(submitter);
      else form.submit();
    };
    fetch(workspace.dataset.updateUrl, {
      method: "POST",
      body: new FormData(config),
      headers: { "HX-Request": "true", "X-CSRFToken": token ? token.value : "" },
      credentials: "same-origin"
    }).then(done, done);
  });

  // A scenario's values, set in place (the inputs are never replaced).
  document.addEventListener("configurator:set-fields", function (event) {
    var form = document.getElementById("config-form");
    var fields = (event.detail && event.detail.fields) || {};
    if (!form) return;
    Object.keys(fields).forEach(function (name) {
      var el = form.elements.namedItem(name);
      if (!el) return;
      if (el.type === "checkbox") el.checked = !!fields[name];
      else el.value = fields[name];
    });
  });

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", restoreHeader);
  else restoreHeader();
})();
