//! Memory: what the machine has, the arrays the hot loops touch, and the
//! ceiling that keeps a process within its budget.
//!
//! - [`machine`]: the memory available (within a control group), the default
//!   budget, the peak resident set, free disk, and sizes for people.
//! - [`huge`]: large zeroed arrays in huge pages ([`huge::HugeArray`]).
//! - [`mapped`]: arrays in files, mapped shared (the partitions of a level on
//!   disk, files of scores).
//! - [`resident`]: a ceiling on the resident set, held by giving back the
//!   pages of arrays mapped from files.
//! - [`cache`]: the prefetch hint of the hot loops.

pub mod cache;
pub mod huge;
pub mod machine;
pub mod mapped;
pub mod resident;

pub use machine::{
    available, default_budget, format_size, free_disk, group_available, peak_resident,
};

/// Memory a process of the tools takes besides its levels and the state of
/// the level being solved or checked: the program, the pages of the level
/// files being read, the writer's buffers, rounding to huge pages (about
/// 50 MB measured at level 21). Both the solver's and the verifier's plans
/// count it.
pub const PROCESS_BYTES: u64 = 64 << 20;
