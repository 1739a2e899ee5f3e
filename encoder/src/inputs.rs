/*!
Expanding the command line's FILE arguments into the list of ELF files to
encode. Module builds hand btfenc a directory tree or an `@listfile`
instead of a thousand arguments.
*/

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Expands each argument: a directory becomes every `*.ko` below it (sorted,
/// so runs are reproducible), `@FILE` becomes the paths listed in FILE (one
/// per line; blank lines and `#` comments skipped), anything else is taken
/// as a file.
pub fn expand(args: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for arg in args {
        let text = arg.to_string_lossy();
        if let Some(list) = text.strip_prefix('@') {
            let body = fs::read_to_string(list)
                .with_context(|| format!("{list}: cannot read file list"))?;
            out.extend(
                body.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with('#'))
                    .map(PathBuf::from),
            );
        } else if arg.is_dir() {
            let mut found = Vec::new();
            collect_modules(arg, &mut found)?;
            found.sort();
            out.extend(found);
        } else {
            out.push(arg.clone());
        }
    }
    Ok(out)
}

fn collect_modules(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let entries =
        fs::read_dir(dir).with_context(|| format!("{}: cannot read directory", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("{}: cannot read directory", dir.display()))?;
        let path = entry.path();
        let kind = entry
            .file_type()
            .with_context(|| format!("{}: cannot stat", path.display()))?;
        if kind.is_dir() {
            collect_modules(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "ko") {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_and_list_files_expand_in_a_stable_order() {
        let dir = std::env::temp_dir().join(format!("btfenc-inputs-{}", std::process::id()));
        let sub = dir.join("kernel/net");
        fs::create_dir_all(&sub).expect("mkdir");
        for name in ["b.ko", "a.ko", "notes.txt"] {
            fs::write(sub.join(name), b"").expect("write");
        }
        let list = dir.join("list");
        fs::write(&list, "# modules\nx.ko\n\n  y.ko \n").expect("write");
        let got = expand(&[
            dir.join("kernel"),
            PathBuf::from(format!("@{}", list.display())),
        ])
        .expect("expands");
        assert_eq!(
            got,
            [
                sub.join("a.ko"),
                sub.join("b.ko"),
                PathBuf::from("x.ko"),
                PathBuf::from("y.ko")
            ]
        );
        fs::remove_dir_all(&dir).expect("cleanup");
    }
}
