//! The page's files, embedded in the binary: it loads nothing else.

use axum::http::header;
use axum::response::{IntoResponse, Response};

/// The page.
const INDEX_HTML: &str = include_str!("../../../web/index.html");
/// Its script.
const APP_JS: &str = include_str!("../../../web/app.js");
/// Its style sheet.
const STYLE_CSS: &str = include_str!("../../../web/style.css");

/// One embedded file with its content type.
fn file(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// `GET /`: the page.
pub(super) async fn index() -> Response {
    file("text/html; charset=utf-8", INDEX_HTML)
}

/// `GET /app.js`.
pub(super) async fn app_js() -> Response {
    file("text/javascript; charset=utf-8", APP_JS)
}

/// `GET /style.css`.
pub(super) async fn style_css() -> Response {
    file("text/css; charset=utf-8", STYLE_CSS)
}
