//! Reproducibility: the same input gives byte-identical BTF on every run
//! and for every number of worker threads.

use btfenc_tests::Encoder;

use crate::fixtures::{encode_into, read, scratch};

fn assert_identical_runs(path: &str, runs: &[(&str, &[&str])]) {
    let dir = scratch();
    let mut first: Option<(&str, Vec<u8>)> = None;
    for (index, (label, flags)) in runs.iter().enumerate() {
        let out = encode_into(
            Encoder::Btfenc,
            path,
            flags,
            dir.path(),
            &format!("run{index}.btf"),
        );
        let bytes = read(&out);
        match &first {
            None => first = Some((label, bytes)),
            Some((first_label, first_bytes)) => assert!(
                *first_bytes == bytes,
                "{path}: output of `{label}` differs from `{first_label}` ({} vs {} bytes)",
                bytes.len(),
                first_bytes.len()
            ),
        }
    }
}

mod repeated_runs {
    per_fixture!(|path| super::assert_identical_runs(
        path,
        &[
            ("run 1", &["--btf_gen_floats"]),
            ("run 2", &["--btf_gen_floats"])
        ]
    ));
}

mod thread_counts {
    per_fixture!(|path| super::assert_identical_runs(
        path,
        &[
            ("-j1", &["-j1", "--btf_gen_floats"]),
            ("-j4", &["-j4", "--btf_gen_floats"]),
            ("-j", &["-j", "--btf_gen_floats"]),
        ]
    ));
}

/// Writing over an existing, longer OUT gives exactly the fresh output:
/// no stale tail (pahole 1.24 does not truncate, and the kernel then
/// rejects the file with "Unsupported section found").
mod overwrite_longer_file {
    per_fixture!(|path| {
        let dir = super::scratch();
        let fresh = super::encode_into(super::Encoder::Btfenc, path, &[], dir.path(), "fresh.btf");
        let reused = dir.path().join("reused.btf");
        let garbage = vec![0xa5_u8; super::read(&fresh).len() * 2 + 4096];
        std::fs::write(&reused, garbage)
            .unwrap_or_else(|err| panic!("cannot write {}: {err}", reused.display()));
        super::encode_into(super::Encoder::Btfenc, path, &[], dir.path(), "reused.btf");
        assert!(
            super::read(&reused) == super::read(&fresh),
            "{path}: encoding over a longer file left different bytes"
        );
    });
}
