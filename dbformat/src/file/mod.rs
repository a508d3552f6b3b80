//! The level file format (see issue 3): to be written.
