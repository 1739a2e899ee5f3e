//! btfenc's BTF holds the same types as pahole v1.24's for the same input
//! and the same flags, as judged by `btfenc diff` (whose own honesty is
//! checked in `diff_cli`). btfenc is asked to emulate 1.24
//! ([`AS_SYSTEM_PAHOLE`]); the legacy flags mean other things to 1.31.

use std::path::Path;

use btfenc_tests::raw_dump::Dump;
use btfenc_tests::{btfenc, Encoder, AS_SYSTEM_PAHOLE};

use crate::fixtures::{encode_into, scratch};

fn assert_matches_pahole(path: &str, flags: &[&str]) {
    let dir = scratch();
    let ours_flags: Vec<&str> = std::iter::once(AS_SYSTEM_PAHOLE)
        .chain(flags.iter().copied())
        .collect();
    let ours = encode_into(Encoder::Btfenc, path, &ours_flags, dir.path(), "btfenc.btf");
    let theirs = encode_into(Encoder::Pahole, path, flags, dir.path(), "pahole.btf");
    let diff = btfenc(&["diff".as_ref(), ours.as_os_str(), theirs.as_os_str()]);
    assert!(
        diff.success() && diff.stdout.is_empty(),
        "btfenc and pahole disagree on {path} with flags {flags:?}\n{}",
        diff.describe()
    );
    // Independent of `btfenc diff`: as many types of each kind, per
    // bpftool. A set comparison alone would miss a type dedup left twice.
    assert_eq!(
        kind_counts(&ours),
        kind_counts(&theirs),
        "{path} {flags:?}: per-kind type counts (btfenc left, pahole right)"
    );
}

fn kind_counts(btf: &Path) -> std::collections::BTreeMap<String, usize> {
    Dump::of_file(btf, None).kind_counts()
}

/// Both encoders with their defaults (no floats: pahole 1.24 then
/// encodes floating-point base types as INT).
mod default_flags {
    per_fixture!(|path| super::assert_matches_pahole(path, &[]));
}

/// `--btf_gen_floats`, which the kernel's own build passes to pahole.
mod gen_floats {
    per_fixture!(|path| super::assert_matches_pahole(path, &["--btf_gen_floats"]));
}

/// pahole 1.24's switches for turning kinds off, all at once: no VAR or
/// DATASEC, no DECL_TAG, no TYPE_TAG, and 64-bit enums as pahole degrades
/// them.
mod skip_encoding {
    per_fixture!(|path| super::assert_matches_pahole(
        path,
        &[
            "--skip_encoding_btf_vars",
            "--skip_encoding_btf_decl_tag",
            "--skip_encoding_btf_type_tag",
            "--skip_encoding_btf_enum64",
        ]
    ));
}

/// `--btf_gen_all` (every feature pahole 1.24 has) and
/// `--btf_encode_force`, which the kernel passes for vmlinux.
mod gen_all_force {
    per_fixture!(|path| super::assert_matches_pahole(
        path,
        &["--btf_gen_all", "--btf_encode_force"]
    ));
}

/// `--lang_exclude` names single DW_LANG values, as pahole's list does:
/// `c89` (any case) leaves out the gnu89 unit of obj/langs/gcc-dwarf5.o,
/// `c11` the other one, and `c` (DW_LANG_C) neither.
mod lang_exclude {
    const BOTH_DIALECTS: &str = "obj/langs/gcc-dwarf5.o";

    #[test]
    fn c89() {
        super::assert_matches_pahole(BOTH_DIALECTS, &["--lang_exclude=c89"]);
        super::assert_matches_pahole(BOTH_DIALECTS, &["--lang_exclude=C89"]);
    }

    #[test]
    fn c11() {
        super::assert_matches_pahole(BOTH_DIALECTS, &["--lang_exclude=c11"]);
    }

    #[test]
    fn c_is_not_every_dialect() {
        super::assert_matches_pahole(BOTH_DIALECTS, &["--lang_exclude=c"]);
        super::assert_matches_pahole(BOTH_DIALECTS, &[]);
    }
}
