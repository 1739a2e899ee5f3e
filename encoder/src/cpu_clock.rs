//! CPU time so far, of the process or of the calling thread, for `-V`.

use std::time::Duration;

/// User + system CPU time of every thread of this process so far.
pub(crate) fn process() -> Duration {
    read(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// CPU time of the calling thread so far.
pub(crate) fn thread() -> Duration {
    read(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn read(clock: libc::clockid_t) -> Duration {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime only writes the struct it is given.
    if unsafe { libc::clock_gettime(clock, &mut now) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(now.tv_sec.max(0) as u64, now.tv_nsec.clamp(0, 999_999_999) as u32)
}
