//! The progress bars of a build on the terminal (hidden unless asked for).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The bar of level `seeds` (`boards` boards) being solved and written.
pub(super) fn progress_bar(show: bool, seeds: u32, boards: u64) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    // One unit per board initialised and one per board decided; boards that end
    // as draws are never "decided", so the bar may finish early.
    let bar = ProgressBar::with_draw_target(Some(2 * boards), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template(
        "level {prefix:>2} [{elapsed_precise}] {bar:30} {percent:>3}% {rate} ETA {eta:<4} {msg}",
    )
    .expect("a valid template")
    .with_key(
        "rate",
        |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = write!(w, "{:>6.2} M/s", state.per_sec() / 1e6);
        },
    );
    bar.set_style(style);
    bar.set_prefix(seeds.to_string());
    bar
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
