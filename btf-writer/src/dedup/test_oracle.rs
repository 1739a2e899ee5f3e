//! The dedup tests' oracle: the system libbpf's own `btf__dedup`, run on
//! BTF written by the crate's writer (the tests read its output back with
//! the crate's reader).

use crate::raw::Endian;
use crate::types::Btf;
use crate::{read, write};

/// The C source of a tiny oracle: libbpf's own `btf__dedup` on a raw
/// BTF file (optionally split on a raw base), written back raw.
const ORACLE_C: &str = r#"
#include <bpf/btf.h>
#include <stdio.h>
int main(int argc, char **argv) {
    struct btf *base = NULL, *btf;
    const void *data;
    __u32 size;
    FILE *f;
    int err;
    if (argc > 3) {
        base = btf__parse_raw(argv[3]);
        if (!base) return 2;
    }
    btf = base ? btf__parse_raw_split(argv[1], base) : btf__parse_raw(argv[1]);
    if (!btf) return 3;
    err = btf__dedup(btf, NULL);
    if (err) { fprintf(stderr, "btf__dedup: %d\n", err); return 4; }
    data = btf__raw_data(btf, &size);
    f = fopen(argv[2], "wb");
    if (!f || fwrite(data, 1, size, f) != size) return 5;
    fclose(f);
    return 0;
}
"#;

/// Builds the oracle against the system libbpf (1.1 on this machine, the
/// one pahole 1.24 uses); `None` when gcc or libbpf is missing.
///
/// One build serves every test process: it is kept under the system's
/// temporary directory, named by a hash of its source, and each process
/// builds under a name of its own and renames the result into place (a
/// rename replaces atomically, so concurrent test processes never run a
/// half-written file). A directory per process was left behind by every
/// run.
pub(super) fn oracle() -> Option<std::path::PathBuf> {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::OnceLock;
    static ORACLE: OnceLock<Option<std::path::PathBuf>> = OnceLock::new();
    ORACLE
        .get_or_init(|| {
            let mut hasher = foldhash::fast::FixedState::default().build_hasher();
            hasher.write(ORACLE_C.as_bytes());
            let dir = std::env::temp_dir().join("btfenc-dedup-oracle");
            std::fs::create_dir_all(&dir).ok()?;
            let exe = dir.join(format!("oracle-{:016x}", hasher.finish()));
            if exe.is_file() {
                return Some(exe);
            }
            let own = format!("{}.{}", exe.display(), std::process::id());
            let src = std::path::PathBuf::from(format!("{own}.c"));
            std::fs::write(&src, ORACLE_C).ok()?;
            let built = std::process::Command::new("gcc")
                .arg("-O1")
                .arg("-o")
                .arg(&own)
                .arg(&src)
                .arg("-lbpf")
                .status();
            let _ = std::fs::remove_file(&src);
            if !built.ok()?.success() {
                let _ = std::fs::remove_file(&own);
                return None;
            }
            std::fs::rename(&own, &exe).ok()?;
            Some(exe)
        })
        .clone()
}

/// What the oracle produced: the deduplicated raw BTF and the raw base it
/// was split on.
pub(super) struct OracleOutput {
    pub(super) deduped: Vec<u8>,
    pub(super) base: Option<Vec<u8>>,
}

/// Runs libbpf's dedup on `btf` (split on `base` if given); `None` when
/// the oracle is unavailable, `Err(exit status)` when libbpf failed.
pub(super) fn libbpf_dedup(
    btf: &Btf<'_>,
    base: Option<&Btf<'_>>,
) -> Option<Result<OracleOutput, i32>> {
    let exe = oracle()?;
    static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    // The directory is shared by every test process (see `oracle`).
    let n = format!(
        "{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let dir = exe.parent()?.to_path_buf();
    let input = dir.join(format!("in{n}.btf"));
    let output = dir.join(format!("out{n}.btf"));
    let mut cmd = std::process::Command::new(&exe);
    cmd.arg(&input).arg(&output);
    let mut base_blob = None;
    let mut base_path = None;
    let mut split = btf.clone();
    split.base_str_len = 0;
    if let Some(base) = base {
        let blob = written(base);
        // libbpf reads the split's string offsets as continuing after the
        // base it is given: this one, whatever base `btf` was made on.
        split.base_str_len = read::parse(&blob, None)
            .unwrap_or_else(|e| panic!("the base just written does not parse: {e}"))
            .str_end();
        let path = dir.join(format!("base{n}.btf"));
        std::fs::write(&path, &blob).ok()?;
        cmd.arg(&path);
        base_path = Some(path);
        base_blob = Some(blob);
    }
    std::fs::write(&input, written(&split)).ok()?;
    let status = cmd.status().ok()?;
    let result = if status.success() {
        std::fs::read(&output)
            .map(|deduped| OracleOutput {
                deduped,
                base: base_blob,
            })
            .map_err(|_| -1)
    } else {
        Err(status.code().unwrap_or(-1))
    };
    // A vmlinux-sized base is 4 MB: left behind, every test run would
    // leave tens of them in the temporary directory.
    for path in [Some(&input), Some(&output), base_path.as_ref()]
        .into_iter()
        .flatten()
    {
        let _ = std::fs::remove_file(path);
    }
    Some(result)
}

/// `btf` as raw BTF, every name in its own string section (libbpf's dedup
/// moves names shared with the base to the base's offsets). A test input
/// the format cannot hold fails the test.
fn written(btf: &Btf<'_>) -> Vec<u8> {
    write::write(btf, Endian::Little)
        .unwrap_or_else(|e| panic!("a dedup test input cannot be written: {e}"))
}
