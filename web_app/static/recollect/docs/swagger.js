/* Starts Swagger UI on /api/docs/ from what the page holds, with no inline script: the schema's address,
   drf-spectacular's SWAGGER_UI_SETTINGS, and the CSRF token that "Try it out" sends with the browser's
   session on anything but a GET. */
(function () {
  "use strict";
  const root = document.getElementById("swagger-ui");
  const settings = JSON.parse(JSON.parse(document.getElementById("swagger-settings").textContent) || "{}");
  const csrfToken = document.querySelector('meta[name="csrf-token"]').content;
  const csrfHeader = root.dataset.csrfHeader;

  function requestInterceptor(request) {
    if (!["GET", undefined].includes(request.method) && request.credentials === "same-origin") {
      request.headers[csrfHeader] = csrfToken;
    }
    return request;
  }

  window.ui = SwaggerUIBundle({
    url: root.dataset.schemaUrl,
    dom_id: "#swagger-ui",
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    requestInterceptor,
    ...settings,
  });
})();
