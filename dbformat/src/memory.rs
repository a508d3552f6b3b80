//! What this machine has, and sizes for people: shared by the solver's
//! budgets and the probe's.

/// A size for people: `1.5 GiB`.
pub fn format_size(bytes: u64) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{value:.1} {}", units[unit])
    }
}

/// The memory this machine has available now (`MemAvailable` of /proc/meminfo),
/// or `None` where that cannot be read.
pub fn available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The default budget: 85% of the available memory (8 GiB where unknown).
pub fn default_budget() -> u64 {
    available().map_or(8 << 30, |a| a / 100 * 85)
}
