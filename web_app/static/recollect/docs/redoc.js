/* Starts Redoc on /api/redoc/ with no inline script, from the schema address the page holds. */
(function () {
  "use strict";
  const root = document.getElementById("redoc-container");
  Redoc.init(root.dataset.schemaUrl, {}, root);
})();
