//! The progress bars of a build on the terminal (hidden unless asked for).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The bar of level `seeds` (`boards` boards) being solved and written:
/// one unit per board initialised and one per board decided; boards that
/// end as draws are never "decided", so the bar may finish early.
pub(super) fn progress_bar(show: bool, seeds: u32, boards: u64) -> ProgressBar {
    awari_dbformat::cli::level_bar(show, "level", seeds, 2 * boards)
}

/// A spinner while the statistics of a level present are counted (they
/// read every board of the level and its children: minutes above 30 seeds).
pub(super) fn counting_bar(show: bool, seeds: u32) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("level {prefix:>2} [{elapsed_precise}] {spinner} {msg}")
            .expect("a valid template"),
    );
    bar.set_prefix(seeds.to_string());
    bar.set_message("counting the statistics its file lacks");
    bar.enable_steady_tick(std::time::Duration::from_millis(500));
    bar
}
