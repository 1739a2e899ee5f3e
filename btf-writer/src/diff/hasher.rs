//! The hasher of the comparison's maps and of the interner's buckets.

use std::hash::{BuildHasherDefault, Hasher};

/// A multiplicative word hasher in the style of rustc's FxHash: several
/// times faster than SipHash on the small keys hashed here, and hash
/// flooding is no concern when comparing two files.
///
/// Kept rather than the workspace's foldhash because it measured faster
/// here: `btfenc diff` of Debian 6.1's vmlinux BTF (btfenc's) against
/// pahole 1.31's runs 695.4 M instructions with it and 705.4 M (+1.4%)
/// with `foldhash::fast::FixedState` for both the maps and the interner's
/// hash (callgrind, reproducible to a few instructions). The descriptions
/// hashed are many small fields, which this hasher mixes in one multiply
/// each.
#[derive(Default)]
pub(super) struct FastHasher(u64);

pub(super) type FastBuild = BuildHasherDefault<FastHasher>;

impl FastHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, value: u8) {
        self.add(u64::from(value));
    }

    fn write_u32(&mut self, value: u32) {
        self.add(u64::from(value));
    }

    fn write_u64(&mut self, value: u64) {
        self.add(value);
    }

    fn write_usize(&mut self, value: usize) {
        self.add(value as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}
