//! What the command-line tools share: sizes written by people, the progress
//! bar of a level's work, and a quiet end on a closed pipe.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::error::{Error, Result};

/// Reads a size such as `512M`, `20G`, `20GiB`, `1.5T` or a plain number of
/// bytes. Suffixes are binary (K = 1024); case and a trailing `B` or `iB`
/// do not matter.
///
/// # Errors
/// [`Error::Size`] when the text is not a size (or is negative).
pub fn parse_size(text: &str) -> Result<u64> {
    let t = text.trim();
    let bad = || Error::Size {
        input: text.to_string(),
    };
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let number: f64 = number.trim().parse().map_err(|_| bad())?;
    let unit = unit.trim().to_ascii_uppercase();
    let shift = match unit.trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(bad()),
    };
    if !(number.is_finite() && number >= 0.0) {
        return Err(bad());
    }
    Ok((number * (1u64 << shift) as f64) as u64)
}

/// A progress bar on standard error for the work of level `seeds`, `total`
/// units long, labelled `what` (`level`, `verify level`): elapsed time,
/// percentage, rate in millions a second, and time left. Hidden when
/// `show` is false (JSON output, or another MPI rank than the first).
pub fn level_bar(show: bool, what: &str, seeds: u32, total: u64) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    let template = format!(
        "{what} {{prefix:>2}} [{{elapsed_precise}}] {{bar:30}} {{percent:>3}}% {{rate}} ETA {{eta:<4}} {{msg}}"
    );
    let style = ProgressStyle::with_template(&template)
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

/// Makes a closed standard output (`awari-solve --json | head -1`) end the
/// process quietly, as it does other command-line tools, rather than make
/// the next print panic. Call it first in `main`, before any thread starts.
pub fn quiet_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: restores the default action of one signal, before any thread
    // is started.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_binary_and_forgiving() {
        assert_eq!(parse_size("512M").unwrap(), 512 << 20);
        assert_eq!(parse_size("20GiB").unwrap(), 20 << 30);
        assert_eq!(parse_size("1.5g").unwrap(), 3 << 29);
        assert_eq!(parse_size("2gb").unwrap(), 2 << 30);
        assert_eq!(parse_size(" 64K ").unwrap(), 64 << 10);
        assert_eq!(parse_size("1000").unwrap(), 1000);
        for bad in ["lots", "-1G", "1X", "", "G"] {
            let err = parse_size(bad).unwrap_err().to_string();
            assert!(err.contains("is not a size"), "{bad:?}: {err}");
        }
    }
}
