/*!
Getting encoded BTF onto disk: detached files, and `.BTF`/`.BTF.base`
patched into an ELF image.

Why everything goes through [`replace_atomically`]: a kernel build that is
interrupted (or an encoder that fails half-way) must never leave a vmlinux
or `.ko` with a truncated section table. The new file is fully written next
to the old one, given the old one's mode, and renamed over it; on any error
the temporary file is removed and the original is untouched.
*/

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::elf_patch::{self, NewSection};

/// The sections that make up encoded BTF: `.BTF`, and `.BTF.base` when the
/// base was distilled.
#[derive(Debug)]
pub struct Sections<'a> {
    /// Contents of `.BTF`.
    pub btf: &'a [u8],
    /// Contents of `.BTF.base`, for split BTF with a distilled base.
    pub base: Option<&'a [u8]>,
}

/// Writes `bytes` to `path` via a temporary file in the same directory and a
/// rename, so `path` is either the old file or the complete new one.
pub fn replace_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name = path
        .file_name()
        .with_context(|| format!("{}: not a file path", path.display()))?;
    let tmp = dir.join(format!(".{}.btfenc-{}.tmp", file_name.to_string_lossy(), std::process::id()));
    let result = write_then_rename(&tmp, path, bytes);
    if result.is_err() {
        // Best effort: the error that matters is the one being returned.
        let _ = fs::remove_file(&tmp);
    }
    result
}

fn write_then_rename(tmp: &Path, path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file = fs::File::create(tmp)
        .with_context(|| format!("{}: cannot create temporary file {}", path.display(), tmp.display()))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("{}: cannot write {}", path.display(), tmp.display()))?;
    if let Ok(meta) = fs::metadata(path) {
        fs::set_permissions(tmp, meta.permissions())
            .with_context(|| format!("{}: cannot copy file mode", path.display()))?;
    }
    fs::rename(tmp, path).with_context(|| format!("{}: cannot rename {} over it", path.display(), tmp.display()))?;
    Ok(())
}

/// Writes detached output: `OUT` holds `.BTF`, and `OUT.base` holds the
/// distilled `.BTF.base` when there is one.
pub fn write_detached(out: &Path, sections: &Sections<'_>) -> Result<()> {
    if let Some(base) = sections.base {
        replace_atomically(&detached_base_path(out), base)?;
    }
    replace_atomically(out, sections.btf)
}

/// Where the distilled base of detached output `out` goes.
pub fn detached_base_path(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_os_string();
    name.push(".base");
    PathBuf::from(name)
}

/// Returns `elf_bytes` with `.BTF` (and `.BTF.base`) added or replaced as
/// non-ALLOC PROGBITS sections, as pahole writes them. Every other section
/// keeps its bytes and its offset (see [`crate::elf_patch`]).
///
/// An existing ALLOC `.BTF` belongs to a fully linked image whose loader
/// maps it (Debian's debug vmlinux): rewriting it would move data the
/// program headers point at, so it is refused.
pub fn patch_elf(path: &Path, elf_bytes: &[u8], sections: &Sections<'_>) -> Result<Vec<u8>> {
    let mut wanted = vec![NewSection { name: ".BTF", data: sections.btf }];
    if let Some(base) = sections.base {
        wanted.push(NewSection { name: ".BTF.base", data: base });
    }
    // Errors (an ALLOC .BTF included) already say what is wrong; they
    // only need the file name in front.
    elf_patch::patch(elf_bytes, &wanted).map_err(|e| anyhow::anyhow!("{}: {e:#}", path.display()))
}
