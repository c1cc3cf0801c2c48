//! CPU time and peak RSS of a process, from `/proc`.

use std::fs;

/// Clock ticks per second of `/proc/<pid>/stat` times (`USER_HZ`, 100 on
/// every Linux architecture lokivl targets).
const USER_HZ: f64 = 100.0;

/// A reading of one process.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Sample {
    /// User plus system CPU seconds since the process started.
    pub(crate) cpu_seconds: f64,
    /// Peak resident set size (`VmHWM`), KiB.
    pub(crate) peak_rss_kib: u64,
}

/// Reads `/proc/<pid>/stat` and `/proc/<pid>/status`; `None` if the process is gone.
pub(crate) fn sample(pid: u32) -> Option<Sample> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    Some(Sample {
        cpu_seconds: cpu_seconds(&stat)?,
        peak_rss_kib: vm_hwm_kib(&status)?,
    })
}

/// Resets the peak RSS so the next `VmHWM` covers only what follows
/// (`echo 5 > /proc/<pid>/clear_refs`). Returns whether it worked.
pub(crate) fn reset_peak(pid: u32) -> bool {
    fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok()
}

/// `utime + stime` in seconds from the text of `/proc/<pid>/stat`.
fn cpu_seconds(stat: &str) -> Option<f64> {
    // The command name (field 2) may hold spaces; fields after its `)` are plain.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    // `rest` starts at field 3 (state); utime and stime are fields 14 and 15.
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) as f64 / USER_HZ)
}

/// `VmHWM` in KiB from the text of `/proc/<pid>/status`.
fn vm_hwm_kib(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_ascii_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_spaces_in_name() {
        let stat = "1234 (victoria logs) S 1 1234 1234 0 -1 4194560 9000 0 3 0 250 75 0 0 20 0 12 0 100 5000000 3000 18446744073709551615";
        assert_eq!(cpu_seconds(stat), Some(3.25));
        assert_eq!(cpu_seconds("garbage"), None);
    }

    #[test]
    fn parses_vm_hwm() {
        let status =
            "Name:\tlokivl\nVmPeak:\t  900000 kB\nVmHWM:\t   40960 kB\nVmRSS:\t   30000 kB\n";
        assert_eq!(vm_hwm_kib(status), Some(40960));
    }

    #[test]
    fn reads_own_process() {
        let me = sample(std::process::id());
        assert!(me.is_some_and(|s| s.peak_rss_kib > 0 && s.cpu_seconds >= 0.0));
    }
}
