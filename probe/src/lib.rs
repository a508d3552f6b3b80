//! The `awari-probe` library: perfect-play queries (to be written, issue 5).
