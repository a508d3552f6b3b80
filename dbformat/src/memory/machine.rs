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

/// The memory this process has available now: the machine's
/// (`MemAvailable` of /proc/meminfo), or less when its control group limits
/// it (a container, a job of a batch system, `systemd-run -p MemoryMax=`;
/// see [`group_available`]). `None` where neither can be read.
///
/// The budgets default to a share of it, and the solver counts what is
/// left beside its budget as the page cache's room, so in a group limited
/// to less than the machine both must come from the group.
pub fn available() -> Option<u64> {
    let machine = machine_available();
    let group = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|groups| group_available(std::path::Path::new("/sys/fs/cgroup"), &groups));
    match (machine, group) {
        (Some(m), Some(g)) => Some(m.min(g)),
        (m, g) => m.or(g),
    }
}

/// `MemAvailable` of /proc/meminfo, if it can be read.
fn machine_available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The memory the control group of a process has available, from the
/// process's `/proc/self/cgroup` (`groups`) and the cgroup file systems
/// mounted under `root` (`/sys/fs/cgroup`): the group's limit (the least of
/// its own and its ancestors') less what the group holds beyond its page
/// cache, which, as in `MemAvailable`, can be reclaimed. Reads cgroup v1
/// (`memory/…/memory.limit_in_bytes`) and v2 (`…/memory.max`, mounted at
/// `root` or at `root/unified`). `None` when no group limits the memory.
pub fn group_available(root: &std::path::Path, groups: &str) -> Option<u64> {
    // (A v1 "no limit" is a page-rounded i64::MAX.)
    const NO_LIMIT: u64 = 1 << 62;
    let number = |dir: &std::path::Path, name: &str| -> Option<u64> {
        std::fs::read_to_string(dir.join(name))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    let stat = |dir: &std::path::Path, key: &str| -> Option<u64> {
        let text = std::fs::read_to_string(dir.join("memory.stat")).ok()?;
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))?
            .trim()
            .parse()
            .ok()
    };
    // The least limit named by `file` in `dir` and its ancestors up to `top`.
    let least_limit = |top: &std::path::Path, dir: &std::path::Path, file: &str| {
        dir.ancestors()
            .take_while(|d| d.starts_with(top))
            .filter_map(|d| number(d, file))
            .filter(|&limit| limit < NO_LIMIT)
            .min()
    };
    // The limit less what the group uses beyond its page cache.
    let beside = |limit: u64, used: Option<u64>, cache: Option<u64>| {
        limit.saturating_sub(used.unwrap_or(0).saturating_sub(cache.unwrap_or(0)))
    };
    for line in groups.lines() {
        // `id:controllers:path`
        let mut fields = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let relative = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == "memory") {
            let top = root.join("memory");
            let dir = top.join(relative);
            let Some(limit) = least_limit(&top, &dir, "memory.limit_in_bytes") else {
                continue;
            };
            let used = number(&dir, "memory.usage_in_bytes");
            let cache = stat(&dir, "total_cache").or_else(|| stat(&dir, "cache"));
            return Some(beside(limit, used, cache));
        }
        if controllers.is_empty() {
            for top in [root.to_path_buf(), root.join("unified")] {
                let dir = top.join(relative);
                if !dir.join("memory.current").exists() {
                    continue;
                }
                // ("max" does not parse: no limit at that level.)
                let Some(limit) = least_limit(&top, &dir, "memory.max") else {
                    break;
                };
                let used = number(&dir, "memory.current");
                return Some(beside(limit, used, stat(&dir, "file")));
            }
        }
    }
    None
}

/// The default budget: 85% of the available memory (8 GiB where unknown).
pub fn default_budget() -> u64 {
    available().map_or(8 << 30, |a| a / 100 * 85)
}

/// The peak resident memory of this process so far (`VmHWM`), if known.
pub fn peak_resident() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The bytes free for an unprivileged user on the file system of `path`, or
/// of its nearest existing ancestor (`statvfs`), if known.
pub fn free_disk(path: &std::path::Path) -> Option<u64> {
    let path = path.ancestors().find(|p| p.exists())?;
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
        // SAFETY: `c` is a valid C string and `stat` a plain struct that
        // statvfs fills in.
        let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::statvfs(c.as_ptr(), &mut stat) } != 0 {
            return None;
        }
        #[allow(clippy::unnecessary_cast)] // (the fields' types vary by system)
        Some(stat.f_bavail as u64 * stat.f_frsize as u64)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::group_available;
    use std::fs;
    use std::path::Path;

    fn write(dir: &Path, name: &str, text: &str) {
        fs::create_dir_all(dir).unwrap();
        fs::write(dir.join(name), text).unwrap();
    }

    #[test]
    fn a_v1_group_has_its_least_limit_less_what_it_holds_beyond_its_cache() {
        let root = tempfile::tempdir().unwrap();
        let parent = root.path().join("memory/jobs");
        let group = parent.join("job1");
        write(
            &root.path().join("memory"),
            "memory.limit_in_bytes",
            "9223372036854771712\n",
        );
        write(&parent, "memory.limit_in_bytes", "3000\n");
        write(&group, "memory.limit_in_bytes", "5000\n");
        write(&group, "memory.usage_in_bytes", "1800\n");
        write(
            &group,
            "memory.stat",
            "cache 700\nrss 1100\ntotal_cache 800\n",
        );
        let groups = "12:pids:/\n4:memory:/jobs/job1\n0::/\n";
        // The parent's 3000, less 1800 used of which 800 is cache.
        assert_eq!(group_available(root.path(), groups), Some(2000));
    }

    #[test]
    fn a_v2_group_is_read_at_the_root_or_under_unified() {
        for mount in ["", "unified"] {
            let root = tempfile::tempdir().unwrap();
            let top = root.path().join(mount);
            let group = top.join("user.slice/run-1.scope");
            write(&top.join("user.slice"), "memory.max", "max\n");
            write(&group, "memory.max", "4096\n");
            write(&group, "memory.current", "3000\n");
            write(&group, "memory.stat", "anon 1000\nfile 2000\n");
            let groups = "0::/user.slice/run-1.scope\n";
            assert_eq!(
                group_available(root.path(), groups),
                Some(3096),
                "{mount:?}"
            );
        }
    }

    #[test]
    fn a_group_without_a_limit_or_a_group_file_is_none() {
        let root = tempfile::tempdir().unwrap();
        let v1 = root.path().join("memory/jobs");
        write(&v1, "memory.limit_in_bytes", "9223372036854771712\n");
        write(&v1, "memory.usage_in_bytes", "1800\n");
        assert_eq!(group_available(root.path(), "4:memory:/jobs\n"), None);
        let v2 = root.path().join("a");
        write(&v2, "memory.max", "max\n");
        write(&v2, "memory.current", "3000\n");
        assert_eq!(group_available(root.path(), "0::/a\n"), None);
        assert_eq!(group_available(root.path(), ""), None);
        assert_eq!(group_available(root.path(), "garbage"), None);
    }
}
