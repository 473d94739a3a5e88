// Renders /api/v1/openapi.json with the bundled Redoc (no fonts or scripts from elsewhere).
var el = document.getElementById("redoc");
Redoc.init(el.dataset.specUrl, { hideDownloadButton: false, expandResponses: "200,201,202", theme: { typography: { fontFamily: "system-ui, sans-serif", headings: { fontFamily: "system-ui, sans-serif" } } } }, el);
