"use strict";
// The API reference: Swagger UI from this site's own static files, started by this file
// rather than an inline script, so the page works under the site's strict CSP.
(function () {
  const node = document.getElementById("swagger-ui");
  const csrf = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
  window.SwaggerUIBundle({
    url: node.dataset.schemaUrl,
    domNode: node,
    // Deep links put a link inside each operation's toggle button (nested controls).
    deepLinking: false,
    presets: [window.SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    // "Try it out" as the logged-in researcher: the session cookie needs the CSRF token.
    requestInterceptor: function (request) {
      if (csrf) request.headers["X-CSRFToken"] = decodeURIComponent(csrf[1]);
      return request;
    },
  });
})();
