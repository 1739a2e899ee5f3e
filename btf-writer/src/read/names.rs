//! Name lookup across a BTF's string section and its bases'.

use crate::error::{ErrorKind, FormatError};

/// Where the reader keeps the names it reads that are not UTF-8 (see
/// [`crate::strings::RAW_NAME_MARK`]), for as long as what it read lives:
/// create one beside the bytes and pass it to [`super::parse_with`].
#[derive(Debug, Default)]
pub struct NameArena(bumpalo::Bump);

impl NameArena {
    /// An empty arena (it allocates only when a name needs it).
    pub fn new() -> Self {
        NameArena(bumpalo::Bump::new())
    }
}

/// One string section and the absolute offset of its first byte.
#[derive(Clone, Copy, Debug)]
pub struct StringSection<'a> {
    /// Absolute offset of `bytes[0]`: 0 for a standalone BTF, the base's
    /// string length for a split.
    pub start: u32,
    /// The section, NUL-terminated (or empty, for a split).
    pub bytes: &'a [u8],
    /// The whole section when it is valid UTF-8: then a name is a sub-slice
    /// and needs no validation of its own.
    text: Option<&'a str>,
}

impl<'a> StringSection<'a> {
    pub(super) fn new(start: u32, bytes: &'a [u8]) -> Self {
        StringSection {
            start,
            bytes,
            text: std::str::from_utf8(bytes).ok(),
        }
    }

    /// Absolute offset one past the last byte.
    pub fn end(&self) -> u32 {
        self.start.saturating_add(self.bytes.len() as u32)
    }

    /// The string at `rel` bytes into this section; one that is not UTF-8
    /// in its model form in `arena`, or an error without one.
    fn at(
        &self,
        rel: usize,
        offset: u32,
        arena: Option<&'a NameArena>,
    ) -> Result<&'a str, FormatError> {
        // The errors are built only on the way out (let-else, not `ok_or`):
        // an eagerly built one costs a call to its drop on every name read,
        // 6 M instructions for one module's vmlinux base.
        let Some(tail) = self.bytes.get(rel..) else {
            return Err(ErrorKind::NameOutOfRange(offset).into());
        };
        // The section ends with a NUL (checked at parse), so a NUL is found
        // for every in-range offset.
        let Some(len) = memchr::memchr(0, tail) else {
            return Err(ErrorKind::NameOutOfRange(offset).into());
        };
        let text = match self.text {
            // Only a name that starts or ends inside a character (an
            // offset into a name) fails here.
            Some(text) => text.get(rel..rel + len),
            None => tail.get(..len).and_then(|b| std::str::from_utf8(b).ok()),
        };
        match (text, arena) {
            (Some(text), _) => Ok(text),
            (None, Some(arena)) => {
                let bytes = tail.get(..len).unwrap_or_default();
                Ok(arena.0.alloc_str(&crate::strings::raw_name(bytes)))
            }
            (None, None) => Err(ErrorKind::NameNotUtf8(offset).into()),
        }
    }
}

/// The string sections a BTF's names can point into, base first.
#[derive(Clone, Debug, Default)]
pub(super) struct Names<'a> {
    pub sections: Vec<StringSection<'a>>,
}

impl<'a> Names<'a> {
    /// The name at absolute offset `offset` (see [`StringSection::at`]
    /// for `arena`).
    #[inline]
    pub fn get(&self, offset: u32, arena: Option<&'a NameArena>) -> Result<&'a str, FormatError> {
        if offset == 0 {
            // Offset 0 is "" in a standalone section and, for a split, in
            // its base; without this shortcut an empty split section would
            // have to be consulted first.
            return Ok("");
        }
        for section in self.sections.iter().rev() {
            if let Some(rel) = offset.checked_sub(section.start) {
                if rel as usize >= section.bytes.len() {
                    return Err(ErrorKind::NameOutOfRange(offset).into());
                }
                return section.at(rel as usize, offset, arena);
            }
        }
        Err(ErrorKind::NameOutOfRange(offset).into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_through_base_and_split() {
        let names = Names {
            sections: vec![
                StringSection::new(0, b"\0int\0"),
                StringSection::new(5, b"xfs\0\xff\0"),
            ],
        };
        assert_eq!(names.get(0, None).unwrap(), "");
        assert_eq!(names.get(1, None).unwrap(), "int");
        assert_eq!(names.get(2, None).unwrap(), "nt");
        assert_eq!(names.get(5, None).unwrap(), "xfs");
        assert_eq!(
            names.get(9, None).unwrap_err().kind,
            ErrorKind::NameNotUtf8(9)
        );
        assert_eq!(
            names.get(11, None).unwrap_err().kind,
            ErrorKind::NameOutOfRange(11)
        );
        let arena = NameArena::new();
        assert_eq!(names.get(9, Some(&arena)).unwrap(), "\0\u{ff}");
        assert_eq!(names.get(5, Some(&arena)).unwrap(), "xfs");
    }
}
