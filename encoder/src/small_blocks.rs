//! The global allocator: glibc's malloc, with a per-thread cache of small
//! freed blocks in front of it.
//!
//! Why: lowering a CU allocates a member, parameter or enumerator list for
//! most of its types (1.3 M lists on Debian 6.1's vmlinux), and the
//! collapse frees three in four of them again on the same thread a moment
//! later (the lowering worker frees what the table left of its CU). glibc
//! caches only 7 freed blocks of a size per thread; the rest go through
//! its bins, where a malloc costs about 160 instructions and a free about
//! 130 (callgrind), and the fast bins are consolidated over and over. Here
//! each thread keeps up to [`CLASS_BYTES`] of freed blocks of each size
//! class (and [`THREAD_BYTES`] in all), so most lists are carved from the
//! previous CU's freed ones: 2.5% fewer instructions for either vmlinux
//! (cachegrind, `-j1`), for 1-3 MB more peak RSS.
//!
//! Only the binary uses it: the library leaves the allocator to its user.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::ptr::null_mut;

/// Blocks are cached by size rounded up to this, which is also the
/// alignment glibc gives every block.
const GRANULE: usize = 16;
/// Blocks of up to this many bytes are cached.
const LARGEST: usize = 1024;
const CLASSES: usize = LARGEST / GRANULE;
/// At most this many bytes of one size class are kept per thread.
const CLASS_BYTES: usize = 16 * 1024;
/// At most this many bytes are kept per thread in all.
const THREAD_BYTES: usize = 256 * 1024;

/// The allocator (see the module docs).
pub struct SmallBlocks;

/// A thread's freed blocks of one size class, linked through their first
/// word.
#[derive(Clone, Copy)]
struct FreeList {
    head: *mut u8,
    len: u32,
}

struct Cache {
    lists: [FreeList; CLASSES],
    /// The bytes of all blocks kept.
    bytes: usize,
}

thread_local! {
    // Const-initialized and without a destructor, so that it is usable at
    // any point of a thread's life without allocating. The blocks a
    // thread still holds when it ends stay allocated: btfenc's threads
    // (the main one and the pool's) end with the process.
    static CACHE: UnsafeCell<Cache> = const {
        UnsafeCell::new(Cache {
            lists: [FreeList { head: null_mut(), len: 0 }; CLASSES],
            bytes: 0,
        })
    };
}

/// The size class of `layout`, if its blocks are cached: the size blocks
/// of the class have, and the index of its list.
#[inline]
fn class_of(layout: Layout) -> Option<(usize, usize)> {
    let size = layout.size();
    if size == 0 || size > LARGEST || layout.align() > GRANULE {
        return None;
    }
    let index = (size - 1) / GRANULE;
    Some(((index + 1) * GRANULE, index))
}

/// The layout of a class's blocks, as asked of the system allocator.
#[inline]
fn block_layout(block_size: usize) -> Layout {
    // SAFETY: a non-zero multiple of 16 no larger than LARGEST, aligned
    // to 16: a valid layout.
    unsafe { Layout::from_size_align_unchecked(block_size, GRANULE) }
}

/// Takes a block of class `index` (of `block_size` bytes) from this
/// thread's cache, if it has one.
#[inline]
fn take_cached(index: usize, block_size: usize) -> Option<*mut u8> {
    CACHE
        .try_with(|cache| {
            // SAFETY: only this thread reaches its cache, and nothing in
            // here allocates, so the allocator is not re-entered meanwhile.
            let cache = unsafe { &mut *cache.get() };
            let list = cache.lists.get_mut(index)?;
            let block = list.head;
            if block.is_null() {
                return None;
            }
            // SAFETY: a cached block begins with the address of the next
            // one, written by `keep_cached`.
            list.head = unsafe { block.cast::<*mut u8>().read() };
            list.len -= 1;
            cache.bytes -= block_size;
            Some(block)
        })
        .ok()
        .flatten()
}

/// Keeps `block` (of class `index`, `block_size` bytes) in this thread's
/// cache; false when the cache is full and the block must be freed.
#[inline]
fn keep_cached(block: *mut u8, index: usize, block_size: usize) -> bool {
    CACHE
        .try_with(|cache| {
            // SAFETY: as in `take_cached`.
            let cache = unsafe { &mut *cache.get() };
            if cache.bytes + block_size > THREAD_BYTES {
                return false;
            }
            let Some(list) = cache.lists.get_mut(index) else {
                return false;
            };
            if (list.len as usize + 1) * block_size > CLASS_BYTES {
                return false;
            }
            // SAFETY: the block is at least 16 bytes and 16-aligned, and
            // the caller has given it up.
            unsafe { block.cast::<*mut u8>().write(list.head) };
            list.head = block;
            list.len += 1;
            cache.bytes += block_size;
            true
        })
        .unwrap_or(false)
}

// SAFETY: every block handed out is either the system allocator's, for a
// layout at least as large and as aligned as asked (a class's blocks are
// allocated at the class's size, aligned to 16), or such a block freed
// earlier and not handed out since. Blocks go back to the system
// allocator with the layout they were allocated with.
unsafe impl GlobalAlloc for SmallBlocks {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let Some((block_size, index)) = class_of(layout) else {
            // SAFETY: the caller's layout, passed on.
            return unsafe { System.alloc(layout) };
        };
        match take_cached(index, block_size) {
            Some(block) => block,
            // SAFETY: a valid layout (see block_layout).
            None => unsafe { System.alloc(block_layout(block_size)) },
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let Some((block_size, index)) = class_of(layout) else {
            // SAFETY: allocated by the system with this layout (above).
            return unsafe { System.dealloc(ptr, layout) };
        };
        if !keep_cached(ptr, index, block_size) {
            // SAFETY: a class's block, allocated with its layout.
            unsafe { System.dealloc(ptr, block_layout(block_size)) }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if class_of(layout).is_none() {
            // SAFETY: the caller's layout, passed on.
            return unsafe { System.alloc_zeroed(layout) };
        }
        // SAFETY: the caller's layout; a non-null block has its size.
        unsafe {
            let block = self.alloc(layout);
            if !block.is_null() {
                block.write_bytes(0, layout.size());
            }
            block
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees that `new_size` with this alignment
        // is a valid layout and that `ptr` was allocated here with
        // `layout`; the copy is within both blocks.
        unsafe {
            let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
            match (class_of(layout), class_of(new_layout)) {
                (None, None) => System.realloc(ptr, layout, new_size),
                // The block was allocated at the class's size: it fits.
                (Some((old, _)), Some((new, _))) if old == new => ptr,
                _ => {
                    let block = self.alloc(new_layout);
                    if !block.is_null() {
                        std::ptr::copy_nonoverlapping(ptr, block, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                    block
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes this thread's cache holds.
    fn cached_bytes() -> usize {
        // SAFETY: this thread's cache, read between allocations.
        CACHE.with(|cache| unsafe { (*cache.get()).bytes })
    }

    /// The blocks this thread's cache holds of class `index`.
    fn cached_blocks(index: usize) -> u32 {
        // SAFETY: as in cached_bytes.
        CACHE.with(|cache| unsafe { (*cache.get()).lists[index].len })
    }

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).unwrap()
    }

    fn alloc(layout: Layout) -> *mut u8 {
        // SAFETY: the tests' layouts have non-zero sizes.
        let block = unsafe { SmallBlocks.alloc(layout) };
        assert!(!block.is_null());
        block
    }

    fn free(block: *mut u8, layout: Layout) {
        // SAFETY: the tests free each block once, with its layout.
        unsafe { SmallBlocks.dealloc(block, layout) }
    }

    fn realloc(block: *mut u8, old: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as in free; new_size is non-zero.
        let block = unsafe { SmallBlocks.realloc(block, old, new_size) };
        assert!(!block.is_null());
        block
    }

    fn bytes<'b>(block: *mut u8, len: usize) -> &'b mut [u8] {
        // SAFETY: the tests read and write only blocks they hold, within
        // their sizes.
        unsafe { std::slice::from_raw_parts_mut(block, len) }
    }

    /// Runs `test` on a thread of its own, whose cache starts (nearly)
    /// empty whatever the tests before it left in theirs (with
    /// `--test-threads=1` they share the main thread).
    fn on_a_new_thread(test: impl FnOnce() + Send + 'static) {
        std::thread::spawn(test).join().unwrap();
    }

    #[test]
    fn the_tests_run_on_this_allocator() {
        // Otherwise the tests below would test nothing btfenc runs.
        on_a_new_thread(|| {
            let before = cached_bytes();
            drop(vec![0u8; 40]);
            assert_eq!(cached_bytes(), before + 48);
            let again = vec![1u8; 33];
            assert_eq!(cached_bytes(), before);
            drop(again);
        });
    }

    #[test]
    fn a_freed_block_serves_the_next_request_of_its_class() {
        on_a_new_thread(|| {
            let first = alloc(layout(100, 8));
            bytes(first, 100).fill(0xa5);
            free(first, layout(100, 8));
            // 97..=112 bytes share a class.
            let second = alloc(layout(112, 16));
            assert_eq!(second, first);
            free(second, layout(112, 16));
        });
    }

    #[test]
    fn blocks_are_aligned_zeroed_and_kept_apart() {
        let mut blocks = Vec::new();
        for size in 1..=LARGEST + 100 {
            let align = [1, 2, 4, 8, 16, 32, 64][size % 7];
            // SAFETY: a non-zero size.
            let block = unsafe { SmallBlocks.alloc_zeroed(layout(size, align)) };
            assert!(!block.is_null());
            assert_eq!(block as usize % align, 0, "size {size} align {align}");
            assert!(bytes(block, size).iter().all(|&b| b == 0), "size {size}");
            bytes(block, size).fill(size as u8);
            blocks.push((block, layout(size, align)));
        }
        for &(block, layout) in &blocks {
            let size = layout.size();
            assert!(bytes(block, size).iter().all(|&b| b == size as u8));
        }
        for (block, layout) in blocks {
            free(block, layout);
        }
    }

    #[test]
    fn realloc_keeps_the_contents_across_classes_and_to_the_system() {
        let mut v: Vec<u64> = Vec::new();
        for i in 0..10_000u64 {
            v.push(i * 7);
        }
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 * 7));
        v.truncate(3);
        v.shrink_to_fit();
        assert_eq!(v, [0, 7, 14]);

        let block = alloc(layout(24, 8));
        bytes(block, 24).fill(7);
        // Same class (17..=32 bytes): the block itself.
        let same = realloc(block, layout(24, 8), 30);
        assert_eq!(same, block);
        let grown = realloc(same, layout(30, 8), 5000);
        assert!(bytes(grown, 24).iter().all(|&b| b == 7));
        let shrunk = realloc(grown, layout(5000, 8), 20);
        assert!(bytes(shrunk, 20).iter().all(|&b| b == 7));
        free(shrunk, layout(20, 8));
    }

    #[test]
    fn a_thread_keeps_at_most_its_budget() {
        on_a_new_thread(|| {
            let sixty_four = layout(64, 8);
            let blocks: Vec<_> = (0..2 * CLASS_BYTES / 64)
                .map(|_| alloc(sixty_four))
                .collect();
            for block in blocks {
                free(block, sixty_four);
            }
            let index = class_of(sixty_four).unwrap().1;
            assert_eq!(cached_blocks(index) as usize, CLASS_BYTES / 64);
            let mut held = Vec::new();
            for size in (16..=LARGEST).step_by(16) {
                for _ in 0..CLASS_BYTES / size {
                    held.push((alloc(layout(size, 8)), layout(size, 8)));
                }
            }
            for (block, layout) in held {
                free(block, layout);
            }
            assert!(cached_bytes() <= THREAD_BYTES);
            assert!(cached_bytes() > THREAD_BYTES - LARGEST);
        });
    }

    #[test]
    fn a_block_freed_on_another_thread_is_cached_there() {
        let block = Box::new([3u8; 200]);
        let (before, after) = std::thread::spawn(move || {
            let before = cached_bytes();
            drop(block);
            (before, cached_bytes())
        })
        .join()
        .unwrap();
        assert_eq!(after, before + 208);
    }
}
