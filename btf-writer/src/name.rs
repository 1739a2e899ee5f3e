//! [`Name`]: a borrowed string in 12 bytes rather than a `&str`'s 16.
//!
//! A vmlinux run keeps about 2 M members and 0.7 M parameters in memory
//! until the dedup; with a `Name` instead of a `&str`, a [`Member`] takes
//! 24 bytes instead of 32 and a [`Param`] 16 instead of 24. BTF's string
//! offsets and lengths are 32-bit anyway, so a 32-bit length loses nothing
//! any BTF can hold.
//!
//! [`Member`]: crate::types::Member
//! [`Param`]: crate::types::Param

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::ops::Deref;
use std::ptr::NonNull;

/// A `&'a str` of at most `u32::MAX` bytes, stored as a pointer and a
/// 32-bit length (12 bytes, 4-byte aligned, so that the fields after it
/// in a struct fill what would be padding).
///
/// It reads as a `str` (`Deref`, `as_str`), and compares, orders, hashes
/// and prints exactly as the `str` it holds.
#[derive(Clone, Copy)]
#[repr(C, packed(4))]
pub struct Name<'a> {
    ptr: NonNull<u8>,
    len: u32,
    text: PhantomData<&'a str>,
}

// SAFETY: a `Name<'a>` is a `&'a str` in another layout: it only ever gives
// shared read access to immutable, borrowed UTF-8 bytes, which `&str` may
// share and send across threads.
unsafe impl Send for Name<'_> {}
// SAFETY: as for `Send` above.
unsafe impl Sync for Name<'_> {}

impl<'a> Name<'a> {
    /// The empty name (an anonymous member, an unnamed parameter).
    pub const EMPTY: Name<'static> = Name {
        ptr: NonNull::dangling(),
        len: 0,
        text: PhantomData,
    };

    /// `text` as a `Name`, or `None` when it is longer than `u32::MAX`
    /// bytes (more than a BTF string section can hold).
    #[inline]
    pub fn new(text: &'a str) -> Option<Name<'a>> {
        let len = u32::try_from(text.len()).ok()?;
        Some(Name {
            ptr: NonNull::from(text.as_bytes()).cast(),
            len,
            text: PhantomData,
        })
    }

    /// The string, with the lifetime of what it borrows.
    #[inline]
    pub fn as_str(self) -> &'a str {
        // Packed fields are copied out, never referenced in place.
        let (ptr, len) = (self.ptr, self.len);
        // SAFETY: `ptr` and `len` come from a `&'a str` in `new` (or are
        // the dangling pointer and 0 of `EMPTY`, a valid empty slice), the
        // length was checked to fit u32 there, and `text` keeps the borrow
        // alive for 'a: the bytes are valid, immutable UTF-8 for 'a.
        unsafe {
            let bytes = std::slice::from_raw_parts(ptr.as_ptr().cast_const(), len as usize);
            std::str::from_utf8_unchecked(bytes)
        }
    }
}

impl Default for Name<'_> {
    fn default() -> Self {
        Name::EMPTY
    }
}

impl Deref for Name<'_> {
    type Target = str;

    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Name<'_> {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl<'a> TryFrom<&'a str> for Name<'a> {
    type Error = NameTooLong;

    fn try_from(text: &'a str) -> Result<Self, NameTooLong> {
        Name::new(text).ok_or(NameTooLong { len: text.len() })
    }
}

/// A string longer than `u32::MAX` bytes offered as a [`Name`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NameTooLong {
    /// Its length in bytes.
    pub len: usize,
}

impl fmt::Display for NameTooLong {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a name of {} bytes is longer than BTF can hold",
            self.len
        )
    }
}

impl std::error::Error for NameTooLong {}

impl PartialEq for Name<'_> {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Name<'_> {}

impl PartialEq<str> for Name<'_> {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Name<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialOrd for Name<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Name<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for Name<'_> {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl fmt::Debug for Name<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::hash_map::DefaultHasher;

    use super::*;

    fn hash_of<T: Hash + ?Sized>(value: &T) -> u64 {
        let mut hasher = DefaultHasher::new();
        value.hash(&mut hasher);
        hasher.finish()
    }

    #[test]
    fn reads_back_the_string_it_was_made_from() {
        let owned = String::from("task_struct");
        let name = Name::new(&owned).unwrap();
        assert_eq!(name.as_str(), "task_struct");
        assert_eq!(name.len(), owned.len());
        assert!(std::ptr::eq(name.as_str(), owned.as_str()));
        assert_eq!(Name::EMPTY.as_str(), "");
        assert_eq!(Name::default(), Name::new("").unwrap());
    }

    #[test]
    fn compares_hashes_and_prints_as_str() {
        let words = ["", "a", "ab", "b", "é", "a\0b"];
        for x in words {
            let nx = Name::new(x).unwrap();
            assert_eq!(hash_of(&nx), hash_of(x));
            assert_eq!(format!("{nx:?}"), format!("{x:?}"));
            assert_eq!(format!("{nx}"), x);
            for y in words {
                let ny = Name::new(y).unwrap();
                assert_eq!(nx == ny, x == y);
                assert_eq!(nx == y, x == y);
                assert_eq!(nx.cmp(&ny), x.cmp(y));
            }
        }
    }

    #[test]
    fn is_smaller_than_a_str_reference() {
        assert_eq!(std::mem::size_of::<Name<'_>>(), 12);
        assert_eq!(std::mem::size_of::<Option<Name<'_>>>(), 12);
    }

    #[test]
    fn crosses_threads_like_a_str_reference() {
        let owned = String::from("shared");
        let name = Name::new(&owned).unwrap();
        let lens = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..2).map(|_| scope.spawn(move || name.len())).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap())
                .collect::<Vec<_>>()
        });
        assert_eq!(lens, [6, 6]);
    }
}
