//! Supplementary object files: the common file `dwz -m` writes.
//!
//! A file whose DWARF was compressed by `dwz -m COMMON` names COMMON in
//! `.gnu_debugaltlink` (GNU: the path, a NUL, COMMON's build-id), or, with
//! `dwz -5`, in `.debug_sup` (DWARF 5, 7.3.6: version 5, an
//! `is_supplementary` byte, the path, a ULEB128 length and a checksum,
//! which dwz fills with the build-id). Its DIEs then refer into COMMON's
//! `.debug_info` (`DW_FORM_GNU_ref_alt`, `DW_FORM_ref_sup4/8`) and
//! `.debug_str` (`DW_FORM_GNU_strp_alt`, `DW_FORM_strp_sup`), and import
//! COMMON's partial units (`DW_TAG_imported_unit`).
//!
//! [`find_supplementary`] looks for COMMON where debuggers do: a file given
//! by the user, the path in the section (relative to the file's
//! directory), the same name beside the file, then by build-id under a
//! debug directory (`/usr/lib/debug`): `.build-id/NN/REST.debug`, and any
//! file below `.dwz/` (where distributions install dwz common files).

use std::path::{Path, PathBuf};

use object::Object;

use crate::elf::ElfFile;
use crate::error::{Error, ErrorKind, Result};

/// Which section named the supplementary file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SupSection {
    /// `.gnu_debugaltlink` (dwz's GNU extension).
    GnuDebugAltLink,
    /// `.debug_sup` (DWARF 5).
    DebugSup,
}

impl SupSection {
    /// The section's name.
    pub fn name(self) -> &'static str {
        match self {
            SupSection::GnuDebugAltLink => ".gnu_debugaltlink",
            SupSection::DebugSup => ".debug_sup",
        }
    }
}

/// What a file says about its supplementary file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SupLink {
    /// The section it came from.
    pub section: SupSection,
    /// The path as written (relative paths are relative to the file's
    /// directory).
    pub path: PathBuf,
    /// The supplementary file's build-id (`.debug_sup`'s checksum); empty
    /// when the section has none.
    pub build_id: Vec<u8>,
}

/// Parses `.gnu_debugaltlink`: a NUL-terminated path, then the build-id.
pub(crate) fn parse_gnu_debugaltlink(data: &[u8]) -> Option<(PathBuf, Vec<u8>)> {
    let nul = memchr::memchr(0, data)?;
    let path = data.get(..nul)?;
    let build_id = data.get(nul + 1..)?;
    if path.is_empty() {
        return None;
    }
    Some((bytes_to_path(path), build_id.to_vec()))
}

/// Parses `.debug_sup`: `Some((is_supplementary, path, checksum))`.
pub(crate) fn parse_debug_sup(data: &[u8], big_endian: bool) -> Option<(bool, PathBuf, Vec<u8>)> {
    let version = data.get(..2)?;
    let version = if big_endian {
        u16::from_be_bytes([version[0], version[1]])
    } else {
        u16::from_le_bytes([version[0], version[1]])
    };
    if version != 5 {
        return None;
    }
    let is_supplementary = *data.get(2)? != 0;
    let rest = data.get(3..)?;
    let nul = memchr::memchr(0, rest)?;
    let path = rest.get(..nul)?;
    let mut rest = rest.get(nul + 1..)?;
    // ULEB128 length, at most 10 bytes.
    let mut len: u64 = 0;
    let mut shift = 0;
    loop {
        let (&byte, after) = rest.split_first()?;
        rest = after;
        if shift >= 64 {
            return None;
        }
        len |= u64::from(byte & 0x7f) << shift;
        shift += 7;
        if byte & 0x80 == 0 {
            break;
        }
    }
    let checksum = rest.get(..usize::try_from(len).ok()?)?;
    Some((is_supplementary, bytes_to_path(path), checksum.to_vec()))
}

#[cfg(unix)]
fn bytes_to_path(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}

#[cfg(not(unix))]
fn bytes_to_path(bytes: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
}

/// A path for a one-line message: as it is, or quoted and escaped when it
/// holds control characters (a newline would split the line).
fn shown(path: &Path) -> String {
    let text = path.display().to_string();
    if text.chars().any(char::is_control) {
        format!("{text:?}")
    } else {
        text
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl ElfFile {
    /// The supplementary file this file's DWARF needs, if any:
    /// `.gnu_debugaltlink`, or a `.debug_sup` whose `is_supplementary`
    /// flag is clear (a supplementary file itself has one with the flag
    /// set, and needs nothing).
    pub fn supplementary_link(&self) -> Result<Option<SupLink>> {
        let bad = |section: SupSection, what: &str| {
            Error::new(
                self.path(),
                ErrorKind::InvalidDwarf(format!("{} is {what}", section.name())),
            )
            .in_section(section.name())
        };
        if let Some(data) = self.section_data(SupSection::GnuDebugAltLink.name())? {
            let section = SupSection::GnuDebugAltLink;
            let (path, build_id) = parse_gnu_debugaltlink(&data)
                .ok_or_else(|| bad(section, "not a path and a build-id"))?;
            return Ok(Some(SupLink {
                section,
                path,
                build_id,
            }));
        }
        if let Some(data) = self.section_data(SupSection::DebugSup.name())? {
            let section = SupSection::DebugSup;
            let (is_supplementary, path, build_id) = parse_debug_sup(&data, self.is_big_endian())
                .ok_or_else(|| {
                bad(
                    section,
                    "not version 5, a flag, a path and a checksum (DWARF 5, 7.3.6)",
                )
            })?;
            if is_supplementary {
                return Ok(None);
            }
            if path.as_os_str().is_empty() {
                return Err(bad(section, "without a file name"));
            }
            return Ok(Some(SupLink {
                section,
                path,
                build_id,
            }));
        }
        Ok(None)
    }

    /// The `NT_GNU_BUILD_ID` note's bytes, if the file has one.
    pub fn build_id(&self) -> Option<Vec<u8>> {
        let file = object::File::parse(self.bytes()).ok()?;
        file.build_id().ok().flatten().map(<[u8]>::to_vec)
    }

    /// Whether this file is the one `link` asks for: its `.debug_sup`
    /// (with the supplementary flag) has the checksum `link` has, or it
    /// has the build-id `link` has. A link without either matches any
    /// file.
    fn matches_link(&self, link: &SupLink) -> std::result::Result<(), String> {
        if link.build_id.is_empty() {
            return Ok(());
        }
        let own_sup = self
            .section_data(SupSection::DebugSup.name())
            .ok()
            .flatten()
            .and_then(|data| parse_debug_sup(&data, self.is_big_endian()));
        if let Some((true, _, checksum)) = &own_sup {
            if *checksum == link.build_id {
                return Ok(());
            }
        }
        match (self.build_id(), own_sup) {
            (Some(id), _) if id == link.build_id => Ok(()),
            (_, Some((true, _, checksum))) => {
                Err(format!(".debug_sup checksum {}", hex(&checksum)))
            }
            (Some(id), _) => Err(format!("build-id {}", hex(&id))),
            (None, _) => Err("no build-id".into()),
        }
    }

    /// Whether the file has a `.debug_info` section (a common file that is
    /// only stripped of it is no use).
    fn has_debug_info(&self) -> bool {
        object::File::parse(self.bytes())
            .ok()
            .is_some_and(|file| file.section_by_name(".debug_info").is_some())
    }
}

/// How deep [`find_supplementary`] looks below `DEBUG_DIR/.dwz`.
const DWZ_DIR_DEPTH: usize = 4;
/// How many files it looks at there, at most.
const DWZ_DIR_FILES: usize = 10_000;

/// Opens the supplementary file `link` names for `main` (see the module
/// docs for where it looks). `explicit` (`--dwarf-alt`) is the only place
/// looked at when given. A file found must carry the build-id the link
/// asks for. The error names every place looked at.
pub fn find_supplementary(
    main: &ElfFile,
    link: &SupLink,
    explicit: Option<&Path>,
    debug_dir: &Path,
) -> Result<ElfFile> {
    let mut looked: Vec<String> = Vec::new();
    let try_path = |path: &Path, looked: &mut Vec<String>| -> Option<ElfFile> {
        if !path.is_file() {
            looked.push(shown(path));
            return None;
        }
        match ElfFile::open(path) {
            Ok(file) => match file.matches_link(link) {
                Ok(()) if file.has_debug_info() => Some(file),
                Ok(()) => {
                    looked.push(format!("{} (no .debug_info)", shown(path)));
                    None
                }
                Err(why) => {
                    looked.push(format!("{} (has {why})", shown(path)));
                    None
                }
            },
            Err(err) => {
                looked.push(format!("{} ({})", shown(path), err.kind()));
                None
            }
        }
    };
    if let Some(path) = explicit {
        if let Some(file) = try_path(path, &mut looked) {
            return Ok(file);
        }
        return Err(not_found(main, link, &looked));
    }
    let dir = main
        .path()
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut candidates = Vec::new();
    if link.path.is_absolute() {
        candidates.push(link.path.clone());
    } else {
        candidates.push(dir.join(&link.path));
    }
    if let Some(name) = link.path.file_name() {
        let beside = dir.join(name);
        if !candidates.contains(&beside) {
            candidates.push(beside);
        }
    }
    if link.build_id.len() >= 2 {
        let id = hex(&link.build_id);
        let (head, tail) = id.split_at(2);
        candidates.push(
            debug_dir
                .join(".build-id")
                .join(head)
                .join(format!("{tail}.debug")),
        );
    }
    for candidate in &candidates {
        if let Some(file) = try_path(candidate, &mut looked) {
            return Ok(file);
        }
    }
    // Any file below DEBUG_DIR/.dwz with the build-id.
    let dwz = debug_dir.join(".dwz");
    if !link.build_id.is_empty() {
        let mut found = None;
        let mut seen = 0;
        let mut stack = vec![(dwz.clone(), 0)];
        while let Some((dir, depth)) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            entries.sort();
            for path in entries {
                seen += 1;
                if seen > DWZ_DIR_FILES {
                    break;
                }
                if path.is_dir() {
                    if depth < DWZ_DIR_DEPTH {
                        stack.push((path, depth + 1));
                    }
                } else if found.is_none() {
                    let Ok(file) = ElfFile::open(&path) else {
                        continue;
                    };
                    if file.matches_link(link).is_ok() && file.has_debug_info() {
                        found = Some(file);
                    }
                }
            }
            if found.is_some() {
                break;
            }
        }
        if let Some(file) = found {
            return Ok(file);
        }
        looked.push(format!("{}/** (by build-id)", shown(&dwz)));
    }
    Err(not_found(main, link, &looked))
}

/// The file was not found: where it was looked for. A program adds how
/// its user names the file (btfenc: `--dwarf-alt`) when none was given.
fn not_found(main: &ElfFile, link: &SupLink, looked: &[String]) -> Error {
    let id = if link.build_id.is_empty() {
        String::new()
    } else {
        format!(", build-id {}", hex(&link.build_id))
    };
    Error::new(
        main.path(),
        ErrorKind::MissingSupplementary(format!(
            "{} names {:?}{id}; looked for {}",
            link.section.name(),
            link.path,
            looked.join(", "),
        )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gnu_debugaltlink_is_a_path_and_a_build_id() {
        let (path, id) = parse_gnu_debugaltlink(b"common.alt\0\x01\x02\x03").expect("parses");
        assert_eq!(path, Path::new("common.alt"));
        assert_eq!(id, [1, 2, 3]);
        assert!(parse_gnu_debugaltlink(b"no nul").is_none());
        assert!(parse_gnu_debugaltlink(b"\0\x01").is_none());
    }

    #[test]
    fn debug_sup_is_version_flag_path_and_checksum() {
        let data = b"\x05\x00\x00../x.sup\0\x02\xab\xcd";
        let (sup, path, id) = parse_debug_sup(data, false).expect("parses");
        assert!(!sup);
        assert_eq!(path, Path::new("../x.sup"));
        assert_eq!(id, [0xab, 0xcd]);
        let (sup, _, id) = parse_debug_sup(b"\x00\x05\x01\0\x00", true).expect("big-endian");
        assert!(sup);
        assert!(id.is_empty());
        // Version 4, a checksum running past the end, a LEB that never ends.
        assert!(parse_debug_sup(b"\x04\x00\x00a\0\x00", false).is_none());
        assert!(parse_debug_sup(b"\x05\x00\x00a\0\x05\x01", false).is_none());
        assert!(parse_debug_sup(
            b"\x05\x00\x00a\0\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
            false
        )
        .is_none());
    }
}
