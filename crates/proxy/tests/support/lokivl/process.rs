//! lokivl as a real process (the built `lokivl` binary), and the three
//! things every adversarial case asserts about it: it is still running with
//! no panic or stack overflow on stderr, `/ready` answers within 500 ms, and
//! its peak resident memory (`VmHWM`) stayed within the case's bound.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::support::client::{ready_blocking, ready_once};

/// What `/ready` must answer within, during and after an attack (issue 14).
pub const READY_WITHIN: Duration = Duration::from_millis(500);

/// A single `/ready` answer this late is a stall, not scheduler noise.
const STALL: Duration = Duration::from_secs(2);

/// Texts on stderr that mean a thread died or the process aborted.
const CRASH_MARKERS: &[&str] = &[
    "panicked",
    "has overflowed its stack",
    "fatal runtime error",
    "memory allocation of",
    "attempt to add with overflow",
    "attempt to subtract with overflow",
    "attempt to multiply with overflow",
];

/// A lokivl process on a free loopback port, killed on drop.
pub struct Lokivl {
    child: Child,
    /// `http://127.0.0.1:port`.
    pub base: String,
    /// `127.0.0.1:port`.
    pub addr: String,
    stderr: PathBuf,
}

impl Drop for Lokivl {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.stderr);
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

impl Lokivl {
    /// Starts lokivl in front of `backend` with extra flags and waits until
    /// `/ready` answers 200.
    pub async fn start(backend: &str, flags: &[&str]) -> Lokivl {
        Self::start_unready(backend, flags).await.wait_ready().await
    }

    /// Starts lokivl; waits until it accepts connections, whatever `/ready` says.
    pub async fn start_unready(backend: &str, flags: &[&str]) -> Lokivl {
        Self::try_start(backend, flags)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Like [`Self::start_unready`]; `Err` with its stderr when lokivl
    /// exits at startup (a refused configuration).
    pub async fn try_start(backend: &str, flags: &[&str]) -> Result<Lokivl, String> {
        let port = free_port();
        let addr = format!("127.0.0.1:{port}");
        let stderr = std::env::temp_dir().join(format!(
            "lokivl-adversarial-{}-{port}.stderr",
            std::process::id()
        ));
        let file = std::fs::File::create(&stderr).expect("create the stderr file");
        let child = Command::new(env!("CARGO_BIN_EXE_lokivl"))
            .args(["--listen", &addr, "--backend", backend])
            .args(flags)
            .env("LOKIVL_LOG_LEVEL", "warn,lokivl::access=off")
            .env("RUST_BACKTRACE", "0")
            .stdout(Stdio::null())
            .stderr(Stdio::from(file))
            .spawn()
            .expect("start lokivl");
        let mut me = Lokivl {
            child,
            base: format!("http://{addr}"),
            addr,
            stderr,
        };
        let t0 = Instant::now();
        loop {
            if let Some(status) = me.child.try_wait().expect("try_wait") {
                return Err(format!(
                    "lokivl exited at startup ({status}): {}",
                    me.stderr()
                ));
            }
            if tokio::net::TcpStream::connect(&me.addr).await.is_ok() {
                return Ok(me);
            }
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "lokivl did not listen within 30 s: {}",
                me.stderr()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn wait_ready(self) -> Lokivl {
        let t0 = Instant::now();
        while !matches!(
            ready_once(&self.addr, Duration::from_secs(2)).await,
            Ok((200, _))
        ) {
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "lokivl not ready within 30 s: {}",
                self.stderr()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Everything lokivl wrote to stderr so far.
    pub fn stderr(&self) -> String {
        let text = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        // Keep failure messages readable: the head and the tail.
        if text.len() > 8000 {
            let head: String = text.chars().take(3000).collect();
            let tail: String = text
                .chars()
                .rev()
                .take(3000)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            format!("{head}\n[…]\n{tail}")
        } else {
            text
        }
    }

    /// A `VmHWM` or `VmRSS` line of `/proc/<pid>/status`, in bytes.
    fn status_kib(&self, field: &str) -> u64 {
        let text =
            std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap_or_default();
        text.lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kib| kib * 1024)
    }

    /// Peak resident memory so far.
    pub fn peak_rss(&self) -> u64 {
        self.status_kib("VmHWM:")
    }

    /// Resident memory now.
    pub fn rss(&self) -> u64 {
        self.status_kib("VmRSS:")
    }

    /// CPU time (user and system) the process used so far, from
    /// `/proc/<pid>/stat` in clock ticks of 10 ms (Linux's `USER_HZ`).
    pub fn cpu_time(&self) -> Duration {
        let text =
            std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap_or_default();
        // Fields after the command name, which may hold spaces: state is
        // the first, utime the 12th, stime the 13th.
        let after = text.rsplit_once(')').map_or("", |(_, r)| r);
        let f: Vec<u64> = after
            .split_whitespace()
            .skip(11)
            .take(2)
            .filter_map(|v| v.parse().ok())
            .collect();
        Duration::from_millis(f.iter().sum::<u64>() * 10)
    }

    /// Panics unless the process is still running with a clean stderr.
    pub fn assert_alive(&mut self, case: &str) {
        if let Some(status) = self.child.try_wait().expect("try_wait") {
            panic!("{case}: lokivl died ({status}); stderr:\n{}", self.stderr());
        }
        let err = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        if let Some(m) = CRASH_MARKERS.iter().find(|m| err.contains(**m)) {
            panic!("{case}: lokivl's stderr has {m:?}:\n{}", self.stderr());
        }
    }

    /// `/ready` answers 200 within [`READY_WITHIN`]. A single late answer
    /// is probed once more (a loaded CI machine can preempt the test), so
    /// only a real stall, two late answers in a row, fails.
    pub async fn assert_ready(&self, case: &str) {
        let mut last = String::new();
        for _ in 0..2 {
            let addr = self.addr.clone();
            let r = tokio::task::spawn_blocking(move || ready_blocking(&addr, READY_WITHIN))
                .await
                .expect("probe thread");
            match r {
                Ok((200, took)) if took <= READY_WITHIN => return,
                other => last = format!("{other:?}"),
            }
        }
        panic!("{case}: /ready did not answer 200 within {READY_WITHIN:?} twice in a row: {last}");
    }

    /// The three assertions of the suite: alive with a clean stderr,
    /// `/ready` within 500 ms, and peak RSS at most `bound_mib` MiB.
    pub async fn assert_survived(&mut self, case: &str, bound_mib: u64) {
        self.assert_alive(case);
        self.assert_ready(case).await;
        self.assert_alive(case);
        let peak = self.peak_rss();
        println!(
            "{case}: lokivl peak RSS {:.1} MiB (bound {bound_mib} MiB)",
            peak as f64 / 1048576.0
        );
        assert!(peak > 0, "{case}: no VmHWM for pid {}", self.pid());
        assert!(
            peak <= bound_mib << 20,
            "{case}: lokivl peak RSS {:.1} MiB over the bound of {bound_mib} MiB",
            peak as f64 / 1048576.0
        );
    }

    /// Probes `/ready` every 200 ms on a thread of its own until the
    /// returned guard is finished; see [`ReadyProbe::assert_no_stall`].
    pub fn probe_ready(&self) -> ReadyProbe {
        let addr = self.addr.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut samples = Vec::new();
            while !stop2.load(Ordering::SeqCst) {
                samples.push(match ready_blocking(&addr, Duration::from_secs(5)) {
                    Ok((200, took)) => Ok(took),
                    other => Err(format!("{other:?}")),
                });
                std::thread::sleep(Duration::from_millis(200));
            }
            samples
        });
        ReadyProbe { stop, thread }
    }
}

/// Background `/ready` samples taken during an attack.
pub struct ReadyProbe {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Vec<Result<Duration, String>>>,
}

impl ReadyProbe {
    /// Stops probing; fails when `/ready` failed, answered later than
    /// [`READY_WITHIN`] twice in a row (one late sample is tolerated as
    /// scheduler noise on a loaded machine) or once later than [`STALL`],
    /// or was never sampled.
    pub async fn assert_no_stall(self, case: &str) {
        self.stop.store(true, Ordering::SeqCst);
        let thread = self.thread;
        let samples = tokio::task::spawn_blocking(move || thread.join())
            .await
            .expect("join the probe")
            .expect("probe thread");
        let shown: Vec<String> = samples
            .iter()
            .map(|s| match s {
                Ok(d) => format!("{}ms", d.as_millis()),
                Err(e) => e.clone(),
            })
            .collect();
        println!("{case}: /ready during the attack: {}", shown.join(" "));
        assert!(!samples.is_empty(), "{case}: /ready was never probed");
        for s in &samples {
            if let Err(e) = s {
                panic!("{case}: /ready failed during the attack: {e}; all: {shown:?}");
            }
        }
        let late: Vec<bool> = samples
            .iter()
            .map(|s| s.as_ref().is_ok_and(|d| *d > READY_WITHIN))
            .collect();
        assert!(
            !late.windows(2).any(|w| w[0] && w[1]),
            "{case}: /ready answered later than {READY_WITHIN:?} twice in a row: {shown:?}"
        );
        assert!(
            !samples.iter().any(|s| s.as_ref().is_ok_and(|d| *d > STALL)),
            "{case}: /ready answered later than {STALL:?}: {shown:?}"
        );
    }
}

/// Runs the binary with `args` until `stop` returns, then kills it; its stdout and stderr.
pub fn run_captured(
    args: &[&str],
    stop: impl FnOnce(&mut std::process::Child),
) -> (String, String) {
    use std::io::Read as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_lokivl"))
        .args(args)
        .env("LOKIVL_LOG_LEVEL", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start lokivl");
    stop(&mut child);
    let _ = child.kill();
    let _ = child.wait();
    let mut out = String::new();
    let mut err = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (out, err)
}
