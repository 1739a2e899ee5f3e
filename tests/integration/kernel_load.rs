//! The running kernel's BTF verifier accepts what btfenc writes.

use btfenc_tests::{kernel_load_btf, report_skip, Encoder, LoadResult};

use crate::fixtures::{encode_into, is_big_endian, read, scratch};

fn assert_kernel_accepts(encoder: Encoder, path: &str, flags: &[&str]) {
    let dir = scratch();
    let out = encode_into(encoder, path, flags, dir.path(), "out.btf");
    let bytes = read(&out);
    if is_big_endian(path) {
        // Deliberate exception: the kernel only reads BTF in its own byte
        // order (little-endian here). What can be checked is that the blob
        // is big-endian: btf.rst's magic 0xeb9f, most significant byte first.
        assert_eq!(
            bytes.get(..2),
            Some(&[0xeb_u8, 0x9f][..]),
            "{path}: BTF is not big-endian"
        );
        return;
    }
    match kernel_load_btf(&bytes) {
        LoadResult::Loaded => {}
        LoadResult::Skipped(reason) => {
            report_skip(&format!("kernel load of {encoder:?} BTF of {path}"), &reason)
        }
        LoadResult::Rejected { errno, log } => panic!(
            "the kernel rejected {encoder:?}'s BTF of {path} (flags {flags:?}), errno {errno}:\n{log}"
        ),
    }
}

mod default_flags {
    per_fixture!(|path| super::assert_kernel_accepts(super::Encoder::Btfenc, path, &[]));
}

mod gen_floats {
    per_fixture!(|path| {
        super::assert_kernel_accepts(super::Encoder::Btfenc, path, &["--btf_gen_floats"])
    });
}

/// Control: pahole's BTF of the same fixture loads too, so a rejection
/// above is btfenc's fault and not the fixture's.
mod pahole_control {
    per_fixture!(|path| {
        super::assert_kernel_accepts(super::Encoder::Pahole, path, &["--btf_gen_floats"])
    });
}
