/*!
`btfenc verify FILE... [--base FILE]`: would the running kernel's
`BPF_BTF_LOAD` accept this BTF? The checks are `btf::validate`, the
kernel's own (Linux 6.18); a split is checked on its base as
`btf_parse_module` does, a module carrying `.BTF.base` on that distilled
base.

Output: nothing for an accepted file; one line per violation,
`FILE: [ID] KIND NAME: MESSAGE (kernel function)`. Exit status 0 when every
file passes, 1 when one breaks a rule, 2 when one cannot be read.
*/

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, Context, Result};
use btf::validate::{first_of, validate, Checked, Options, Violation};
use rayon::prelude::*;

use crate::commands::read_btf_bytes;

/// The `.BTF` of an ELF file, or the whole file when it is raw BTF.
fn btf_of<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a [u8]> {
    if !bytes.starts_with(b"\x7fELF") {
        return Ok(bytes);
    }
    btf::read::elf_section(bytes, ".BTF")
        .map_err(|e| anyhow!("{}: {e}", path.display()))?
        .with_context(|| format!("{}: no .BTF section", path.display()))
}

/// The kernel's own BTF (vmlinux, a distilled base) has no size limit;
/// `BPF_BTF_LOAD` has one.
const KERNEL_BTF: Options = Options {
    byte_order: btf::validate::ByteOrder::Native,
    size_limit: false,
    layout_section: false,
};

fn lines(prefix: &str, violations: Vec<Violation>) -> Vec<String> {
    violations
        .into_iter()
        .map(|v| format!("{prefix}: {v}"))
        .collect()
}

/// The violations of one file, as output lines.
fn verify_one(path: &Path, base: Option<&Checked<'_>>) -> Result<Vec<String>> {
    let bytes = read_btf_bytes(path)?;
    let shown = path.display().to_string();
    let raw = btf_of(path, &bytes)?;
    let distilled = if bytes.starts_with(b"\x7fELF") {
        btf::read::elf_section(&bytes, ".BTF.base").map_err(|e| anyhow!("{shown}: {e}"))?
    } else {
        None
    };
    if let Some(small) = distilled {
        let small = match validate(small, None, KERNEL_BTF) {
            Ok(checked) => checked,
            Err(v) => return Ok(lines(&format!("{shown}: .BTF.base"), v)),
        };
        return Ok(match validate(raw, Some(&small), Options::default()) {
            Ok(_) => Vec::new(),
            Err(v) => lines(&shown, v),
        });
    }
    Ok(match validate(raw, base, Options::default()) {
        Ok(_) => Vec::new(),
        Err(v) => lines(&shown, v),
    })
}

/// Runs `btfenc verify`.
pub fn run(files: &[PathBuf], base: Option<&Path>) -> Result<ExitCode> {
    let base_bytes = base.map(read_btf_bytes).transpose()?;
    let base_raw = match (base, base_bytes.as_deref()) {
        (Some(path), Some(bytes)) => Some((path, btf_of(path, bytes)?)),
        _ => None,
    };
    let mut out = io::stdout().lock();
    let base_checked = match base_raw {
        None => None,
        Some((path, raw)) => match validate(raw, None, KERNEL_BTF) {
            Ok(checked) => Some(checked),
            Err(v) => {
                // Nothing can be checked on a base the kernel would refuse.
                for line in lines(&format!("{} (base)", path.display()), v) {
                    writeln!(out, "{line}").context("writing to stdout")?;
                }
                return Ok(ExitCode::from(1));
            }
        },
    };
    let results: Vec<Result<Vec<String>>> = files
        .par_iter()
        .map(|f| verify_one(f, base_checked.as_ref()))
        .collect();
    let (mut rejected, mut failed) = (false, false);
    for result in results {
        match result {
            Ok(found) => {
                rejected |= !found.is_empty();
                for line in found {
                    writeln!(out, "{line}").context("writing to stdout")?;
                }
            }
            Err(err) => {
                failed = true;
                say!("btfenc: {}", crate::error_line(&err));
            }
        }
    }
    out.flush().context("writing to stdout")?;
    Ok(ExitCode::from(if failed {
        2
    } else if rejected {
        1
    } else {
        0
    }))
}

/// The checks on BTF btfenc reads or writes (see
/// [`btf::validate::Options::AS_WRITTEN`]).
pub(crate) const AS_WRITTEN: Options = Options::AS_WRITTEN;

/// The raw `.BTF` of an input file (raw BTF or ELF).
pub(crate) fn raw_btf<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a [u8]> {
    btf_of(path, bytes)
}

/// Checks BTF btfenc is about to write to `out`; an error names the file
/// and the first rule broken, and nothing must then be written.
pub(crate) fn check_output<'a>(
    out: &Path,
    what: &str,
    raw: &'a [u8],
    base: Option<&'a Checked<'a>>,
) -> Result<Checked<'a>> {
    validate(raw, base, AS_WRITTEN).map_err(|v| {
        anyhow!(
            "{}: refusing to write {what} the kernel would reject: {}",
            out.display(),
            first_of(&v)
        )
    })
}

/// Checks an input BTF; an error names the file and the first rule broken.
pub(crate) fn check_input<'a>(
    path: &Path,
    what: &str,
    raw: &'a [u8],
    base: Option<&'a Checked<'a>>,
) -> Result<Checked<'a>> {
    validate(raw, base, AS_WRITTEN).map_err(|v| {
        anyhow!(
            "{}: {what} the kernel would reject: {}",
            path.display(),
            first_of(&v)
        )
    })
}

/// For `dump` and `diff`, which show BTF as it is: a one-line warning on
/// stderr when the kernel would reject the input, and on they go.
pub(crate) fn warn_input(path: &Path, raw: &[u8], base_raw: Option<&[u8]>) {
    let base = match base_raw.map(|b| validate(b, None, AS_WRITTEN)) {
        Some(Err(_)) => {
            // The base gets its own warning where it is read.
            return;
        }
        Some(Ok(checked)) => Some(checked),
        None => None,
    };
    if let Err(v) = validate(raw, base.as_ref(), AS_WRITTEN) {
        say!(
            "btfenc: warning: {}: the kernel would reject this BTF: {} ({} violation{})",
            path.display(),
            v[0],
            v.len(),
            if v.len() == 1 { "" } else { "s" }
        );
    }
}
