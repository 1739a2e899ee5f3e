//! CPU time so far, of the process or of the calling thread, for `-V`.
//!
//! A thread's CPU clock is a system call (~0.6 µs), read a few times per
//! unit (over 10,000 times for a vmlinux): it is only read once `-V` asked
//! for the figures ([`enable_thread_times`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

static THREAD_TIMES: AtomicBool = AtomicBool::new(false);

/// From now on, the walk's per-unit figures read each thread's CPU clock
/// (until then they are zero).
pub fn enable_thread_times() {
    THREAD_TIMES.store(true, Ordering::Relaxed);
}

/// User + system CPU time of every thread of this process so far.
pub(crate) fn process() -> Duration {
    read(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// CPU time of the calling thread so far; zero unless
/// [`enable_thread_times`] was called.
pub(crate) fn thread() -> Duration {
    if THREAD_TIMES.load(Ordering::Relaxed) {
        read(libc::CLOCK_THREAD_CPUTIME_ID)
    } else {
        Duration::ZERO
    }
}

fn read(clock: libc::clockid_t) -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the struct it is given.
    if unsafe { libc::clock_gettime(clock, &mut now) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        now.tv_sec.max(0) as u64,
        now.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}
