//! What Linux's /proc says about the server and the machine: resident memory
//! of a process, CPU ticks of a process, of PostgreSQL's processes and of the
//! whole machine.

use std::collections::HashMap;

/// `VmRSS` of a `/proc/<pid>/status` text, in KiB.
pub fn parse_vm_rss_kib(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let mut fields = line["VmRSS:".len()..].split_whitespace();
    let value = fields.next()?.parse().ok()?;
    (fields.next()? == "kB").then_some(value)
}

/// Command name and CPU ticks (user + system) of a `/proc/<pid>/stat` text.
/// The name is between the first `(` and the last `)`: it may hold spaces
/// and parentheses itself.
pub fn parse_pid_stat(stat: &str) -> Option<(&str, u64)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat.get(open + 1..close)?;
    // After the name: state (field 3), …, utime (14), stime (15).
    let rest: Vec<&str> = stat.get(close + 1..)?.split_whitespace().collect();
    let utime: u64 = rest.get(11)?.parse().ok()?;
    let stime: u64 = rest.get(12)?.parse().ok()?;
    Some((comm, utime + stime))
}

/// Machine-wide CPU ticks from a `/proc/stat` text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MachineTicks {
    /// Ticks spent working (user, nice, system, irq, softirq, steal), all CPUs.
    pub busy: u64,
    /// All ticks (busy + idle + iowait), all CPUs.
    pub total: u64,
    /// Number of CPUs (`cpuN` lines).
    pub cpus: u32,
}

/// Parses the `cpu` and `cpuN` lines of `/proc/stat`.
pub fn parse_machine_stat(stat: &str) -> Option<MachineTicks> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line.split_whitespace().skip(1).map(str::parse).collect::<Result<_, _>>().ok()?;
    let field = |i: usize| v.get(i).copied().unwrap_or(0);
    if v.len() < 4 {
        return None;
    }
    let busy = field(0) + field(1) + field(2) + field(5) + field(6) + field(7);
    let cpus =
        stat.lines().filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit)).count();
    Some(MachineTicks { busy, total: busy + field(3) + field(4), cpus: u32::try_from(cpus).ok()? })
}

/// Resident memory of process `pid`, in KiB.
pub fn rss_kib(pid: u32) -> Option<u64> {
    parse_vm_rss_kib(&std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?)
}

/// CPU ticks process `pid` has used so far.
pub fn process_ticks(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_pid_stat(&text).map(|(_, ticks)| ticks)
}

/// The machine's CPU ticks so far.
pub fn machine_ticks() -> Option<MachineTicks> {
    parse_machine_stat(&std::fs::read_to_string("/proc/stat").ok()?)
}

/// CPU ticks of every running process named `comm` (e.g. `postgres`), by pid.
pub fn ticks_of_processes_named(comm: &str) -> HashMap<u32, u64> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return HashMap::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (name, ticks) = parse_pid_stat(&text)?;
            (name == comm).then_some((pid, ticks))
        })
        .collect()
}

/// Ticks used between two snapshots of [`ticks_of_processes_named`]; a
/// process started in between counts from zero.
pub fn ticks_between(before: &HashMap<u32, u64>, after: &HashMap<u32, u64>) -> u64 {
    after.iter().map(|(pid, &t)| t.saturating_sub(before.get(pid).copied().unwrap_or(0))).sum()
}

/// A CPU snapshot of the machine, the server, this process and PostgreSQL.
#[derive(Debug, Clone)]
pub struct CpuSnapshot {
    machine: MachineTicks,
    server: u64,
    own: u64,
    postgres: HashMap<u32, u64>,
}

impl CpuSnapshot {
    /// Takes a snapshot now (`None` if /proc cannot be read).
    pub fn take(server_pid: u32) -> Option<Self> {
        Some(CpuSnapshot {
            machine: machine_ticks()?,
            server: process_ticks(server_pid)?,
            own: process_ticks(std::process::id())?,
            postgres: ticks_of_processes_named("postgres"),
        })
    }
}

/// CPU used between two snapshots, in cores (1.0 = one core busy all along).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuShares {
    /// Number of CPUs of the machine.
    pub cpus: u32,
    /// Everything that ran.
    pub machine: f64,
    /// The server under test.
    pub server: f64,
    /// The load generator.
    pub loadgen: f64,
    /// PostgreSQL (every process named `postgres`).
    pub postgres: f64,
    /// Everything else: other processes on the machine (builds, tests …).
    pub other: f64,
}

impl CpuShares {
    /// The shares between `before` and `after`.
    pub fn between(before: &CpuSnapshot, after: &CpuSnapshot) -> Option<Self> {
        let all = after.machine.total.checked_sub(before.machine.total)?;
        if all == 0 || after.machine.cpus == 0 {
            return None;
        }
        // Ticks of one CPU over the interval: process ticks / this = cores.
        let per_cpu = all as f64 / f64::from(after.machine.cpus);
        let cores = |ticks: u64| ticks as f64 / per_cpu;
        let machine = cores(after.machine.busy.saturating_sub(before.machine.busy));
        let server = cores(after.server.saturating_sub(before.server));
        let loadgen = cores(after.own.saturating_sub(before.own));
        let postgres = cores(ticks_between(&before.postgres, &after.postgres));
        Some(CpuShares {
            cpus: after.machine.cpus,
            machine,
            server,
            loadgen,
            postgres,
            other: (machine - server - loadgen - postgres).max(0.0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATUS: &str = "Name:\tcredencial\nUmask:\t0022\nState:\tS (sleeping)\nVmPeak:\t  612340 kB\n\
                          VmSize:\t  548212 kB\nVmHWM:\t   40124 kB\nVmRSS:\t   38512 kB\nRssAnon:\t   20480 kB\n\
                          Threads:\t5\n";

    #[test]
    fn vm_rss_is_read_in_kib() {
        assert_eq!(parse_vm_rss_kib(STATUS), Some(38_512));
    }

    #[test]
    fn vm_rss_is_not_confused_with_the_high_water_mark_or_rss_anon() {
        let text = "VmHWM:\t  99 kB\nRssAnon:\t 77 kB\nVmRSS:\t 1234 kB\n";
        assert_eq!(parse_vm_rss_kib(text), Some(1_234));
    }

    #[test]
    fn a_status_without_vm_rss_gives_nothing() {
        // A kernel thread or a zombie has no VmRSS line.
        assert_eq!(parse_vm_rss_kib("Name:\tkthreadd\nState:\tS (sleeping)\n"), None);
        assert_eq!(parse_vm_rss_kib("VmRSS:\t\n"), None);
        assert_eq!(parse_vm_rss_kib("VmRSS:\t12 MB\n"), None);
        assert_eq!(parse_vm_rss_kib("VmRSS:\tlots kB\n"), None);
    }

    #[test]
    fn pid_stat_gives_the_name_and_user_plus_system_ticks() {
        let stat = "4242 (credencial) S 1 4242 4242 0 -1 4194560 1019 0 0 0 1500 250 0 0 20 0 5 0 \
                    123456 561356800 9628 18446744073709551615";
        assert_eq!(parse_pid_stat(stat), Some(("credencial", 1_750)));
    }

    #[test]
    fn a_process_name_with_spaces_and_parentheses_is_read_whole() {
        let stat = "77 (tokio (rt) 1) R 1 77 77 0 -1 0 0 0 0 0 30 12 0 0 20 0 1 0 1 1 1";
        assert_eq!(parse_pid_stat(stat), Some(("tokio (rt) 1", 42)));
    }

    #[test]
    fn machine_stat_sums_busy_and_all_ticks_and_counts_cpus() {
        let stat = "cpu  100 5 50 1000 20 3 2 1 0 0\ncpu0 50 2 25 500 10 1 1 0 0 0\n\
                    cpu1 50 3 25 500 10 2 1 1 0 0\nintr 12345\nctxt 999\n";
        assert_eq!(parse_machine_stat(stat), Some(MachineTicks { busy: 161, total: 1_181, cpus: 2 }));
    }

    #[test]
    fn shares_are_in_cores() {
        let before = CpuSnapshot {
            machine: MachineTicks { busy: 0, total: 0, cpus: 2 },
            server: 10,
            own: 5,
            postgres: HashMap::from([(1, 100), (2, 50)]),
        };
        // 10 s on 2 CPUs at 100 Hz = 2,000 ticks; 1.5 cores busy.
        let after = CpuSnapshot {
            machine: MachineTicks { busy: 1_500, total: 2_000, cpus: 2 },
            server: 510,
            own: 205,
            // Backend 2 ended; backend 3 started meanwhile.
            postgres: HashMap::from([(1, 300), (3, 100)]),
        };
        let shares = CpuShares::between(&before, &after).expect("shares");
        assert_eq!(shares.machine, 1.5);
        assert_eq!(shares.server, 0.5);
        assert_eq!(shares.loadgen, 0.2);
        assert_eq!(shares.postgres, 0.3);
        assert!((shares.other - 0.5).abs() < 1e-9, "{shares:?}");
    }
}
