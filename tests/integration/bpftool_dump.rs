//! `btfenc dump` prints exactly what `bpftool btf dump file` prints, and
//! bpftool (libbpf's parser) accepts what btfenc writes.

use std::path::Path;

use btfenc_tests::{bpftool_btf_dump, btfenc, Encoder};

use crate::fixtures::{encode_into, scratch};

fn assert_same_dump(btf: &Path, what: &str) {
    let theirs = bpftool_btf_dump(btf, None);
    assert!(
        theirs.success() && !theirs.stdout.is_empty(),
        "bpftool cannot parse {what}\n{}",
        theirs.describe()
    );
    let ours = btfenc(&["dump".as_ref(), btf.as_os_str()]);
    ours.assert_success();
    assert_eq!(
        ours.stdout_text(),
        theirs.stdout_text(),
        "`btfenc dump` and `bpftool btf dump file` differ on {what}"
    );
}

/// bpftool parses btfenc's output, and both dumps of it agree.
mod of_btfenc_output {
    per_fixture!(|path| {
        let dir = super::scratch();
        let out = super::encode_into(
            super::Encoder::Btfenc,
            path,
            &["--btf_gen_floats"],
            dir.path(),
            "out.btf",
        );
        super::assert_same_dump(&out, &format!("btfenc's BTF of {path}"));
    });
}

/// The dump on its own, independent of the encoder: pahole's output.
mod of_pahole_output {
    per_fixture!(|path| {
        let dir = super::scratch();
        let out = super::encode_into(
            super::Encoder::Pahole,
            path,
            &["--btf_gen_floats"],
            dir.path(),
            "out.btf",
        );
        super::assert_same_dump(&out, &format!("pahole's BTF of {path}"));
    });
}
