//! `awari-probe serve`: a page to play and analyse positions against perfect
//! play, and the JSON API it uses, over one database directory.
//!
//! `games` opens the database, `api` answers the JSON requests, `assets`
//! serves the embedded page (`probe/web/`).

pub(crate) mod api;
mod assets;
pub(crate) mod games;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::Router;

use super::CmdResult;

/// Serve a page to play and analyse positions, and a JSON API.
///
/// The page (at the address printed) shows the board and the value of every
/// move; the API answers GET /api/position?board=...&captured=M,O&rules=R
/// (the object `score --json` prints; with &repetition=any, the bounds of
/// `score --repetition any --json`), POST /api/play and GET /api/info.
///
/// Example: awari-probe serve --db db --addr 127.0.0.1:8080
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The database directory.
    #[arg(long, default_value = "db")]
    pub db: PathBuf,
    /// The address to listen on (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,
}

/// The routes of the page and the API over `games`.
pub(crate) fn router(games: games::Games) -> Router {
    Router::new()
        .route("/", get(assets::index))
        .route("/app.js", get(assets::app_js))
        .route("/style.css", get(assets::style_css))
        .route("/api/position", get(api::position))
        .route("/api/play", post(api::play))
        .route("/api/info", get(api::info))
        .fallback(api::not_found)
        .method_not_allowed_fallback(api::method_not_allowed)
        .layer(DefaultBodyLimit::max(api::MAX_BODY))
        .with_state(Arc::new(games))
}

/// Serves until interrupted; see [`Args`].
pub(crate) fn run(args: Args) -> CmdResult {
    let games = games::Games::open(&args.db)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.addr).await?;
        let addr = listener.local_addr()?;
        println!(
            "awari-probe serve: open http://{addr}/ (database {})",
            args.db.display()
        );
        axum::serve(listener, router(games))
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
        Ok::<_, Box<dyn std::error::Error>>(())
    })?;
    Ok(ExitCode::SUCCESS)
}
