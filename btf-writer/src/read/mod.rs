//! Parsing raw BTF blobs (standalone or split) and finding them in ELF
//! files, without copying: names borrow from the blob.
//!
//! ```no_run
//! # fn main() -> Result<(), btf::Error> {
//! let vmlinux = std::fs::read("vmlinux.btf").unwrap();
//! let module = std::fs::read("xfs.btf").unwrap();
//! let base = btf::read::parse(&vmlinux, None)?;
//! let split = btf::read::parse(&module, Some(&base))?;
//! assert_eq!(split.btf.first_id().0, base.btf.count() + 1);
//! # Ok(()) }
//! ```
//!
//! Every rule of the format is checked and reported with the byte offset
//! and type id concerned (see [`crate::ErrorKind`]); no input makes the
//! reader panic. Kinds, flags and fields that the model cannot hold (a
//! named PTR, a kind_flag on a TYPEDEF, ...) are errors too, so that
//! `write(parse(x))` loses nothing.

mod blob;
mod decode;
mod elf;
mod header;
mod names;

pub use self::blob::{parse, parse_with, Parsed};
pub use self::elf::{elf_section, parse_file, parse_file_with};
pub(crate) use self::header::check_section_tiling;
pub use self::header::{parse_header, Sections};
pub use self::names::{NameArena, StringSection};

#[cfg(test)]
mod tests;
