//! The `awari-solver` library (to be written, issue 4).
