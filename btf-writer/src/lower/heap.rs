//! Handing freed heap memory back to the system while a big table is
//! rebuilt from many small ones (see [`super::assemble`]).
//!
//! glibc keeps freed blocks below its mmap threshold for reuse and gives
//! back only the top of each heap. Moving millions of lowered types out of
//! per-CU vectors into one table would therefore keep the emptied CU
//! vectors resident next to the new table until the process ends: on
//! Debian's vmlinux, 130 MB more peak RSS. `malloc_trim` returns the free
//! whole pages of every arena.

/// Gives the allocator's free pages back to the system, where that is
/// possible and needed (glibc); a no-op elsewhere.
pub(super) fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes the allocator's own locks and only unmaps
    // memory that no allocation uses; it has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}
