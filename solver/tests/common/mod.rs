//! What the memory tests share; each of them runs alone in its test binary,
//! since the resident size it measures is the whole process's.

/// The process's resident anonymous memory in bytes (`RssAnon`), where /proc
/// tells it.
#[cfg_attr(not(all(target_os = "linux", target_env = "gnu")), allow(dead_code))]
pub fn resident_anonymous() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("RssAnon:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
