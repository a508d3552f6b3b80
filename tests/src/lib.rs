//! End-to-end tests of the binaries live in `tests/tests/`; this library is empty on purpose.
