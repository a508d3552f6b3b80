//! Every subcommand of `awari-probe` explains itself with an example.
//! (Being an integration test of this package, it also makes `cargo test` build the
//! binary that the end-to-end tests in `tests/` run.)

use std::process::Command;

#[test]
fn every_subcommand_has_help_with_an_example() {
    let exe = env!("CARGO_BIN_EXE_awari-probe");
    for sub in [
        "count", "index", "board", "info", "export", "import", "score", "batch", "verify", "serve",
    ] {
        let out = Command::new(exe).args([sub, "--help"]).output().unwrap();
        assert!(out.status.success(), "{sub} --help failed");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("Example"),
            "{sub} --help has no example:\n{text}"
        );
    }
}
