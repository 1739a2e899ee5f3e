//! pahole's `--verbose` skip lines (`NAME : skipping BTF encoding of
//! function due to REASON`) and the FUNCs they leave, on fixtures with one
//! reason each. The expected files in `fixtures/expected/pahole131/` were
//! written by the real pahole 1.31 (dwarves 1436daf, libbpf dd92bef, the
//! build whose vmlinux output is byte-identical to ../shared/reference) on
//! the same committed objects, with the kernel's flags:
//!
//! ```sh
//! pahole -J -V --btf_features=FEATURES --btf_encode_detached NAME.btf OBJ \
//!     | grep 'skipping BTF encoding of function' > NAME.skips
//! ```
//!
//! (FEATURES: `kernel_features!()`; one thread, so pahole's order is its
//! sort by name, then unit.) pahole prints them on stdout among its other
//! verbose output; btfenc prints only these, on stderr.
//!
//! What `fixtures/src/skips-{a,b}.c` exercise, linked (`prog-gcc`) and as
//! a module would see them (`rel-gcc.o`, `ld -r`):
//! - `weak_strong`: a weak definition in the first unit, the strong one
//!   (parameter `regs`) in the second. Linked, the strong one's
//!   `DW_AT_low_pc` is the symbol's address and its prototype is the
//!   FUNC's; in `rel-gcc.o` no DWARF address matches a symbol (libdwfl
//!   lays the sections out from 0x10000) and the first unit's (`unused`)
//!   wins, as in Linux 6.1's kvm.ko (`kvm_arch_set_irq_inatomic`).
//! - `weak_strong_cold`: the same with a `.cold` piece: the strong
//!   definition has only `DW_AT_ranges`, which libdw's `dwarf_lowpc` does
//!   not read, so even linked the weak one (`unused`) wins, as for the 17
//!   syscall wrappers of Linux 7.3 (`__x64_sys_io_setup(__unused)`).
//! - `twice`: two static functions of one name: "ambiguous address".
//! - `constprop`, `drop_first`, `by_value`: gcc clones with a parameter
//!   dropped or passed by value: "optimized parameters" where the clone's
//!   code is at its `.constprop`/`.isra` symbol (linked); in the module
//!   view no address matches, and a concrete copy that lost a leading
//!   parameter is "reordered parameters", while `constprop` is kept.
//! - `proto_count`, `proto_ret`, `proto_param`: a static inline of
//!   another prototype in the second unit: a mismatch line, then
//!   "inconsistet" (sic) "prototype".
//!
//! `clangparams.o` and `gccparams.o` (see param_locations.rs) give
//! "unexpected register usage for parameter".

use std::ffi::OsStr;
use std::fs;

use btfenc_tests::{btfenc, fixture};

use crate::fixtures::scratch;

const FEATURES: &str = concat!("--btf_features=", kernel_features!());

/// Encodes `object` with -V and checks the skip lines and the BTF against
/// pahole 1.31's.
fn check(object: &str, expected: &str) {
    let dir = scratch();
    let out = dir.path().join("out.btf");
    let input = fixture(object);
    let run = btfenc(&[
        OsStr::new("-J"),
        OsStr::new("-V"),
        OsStr::new(FEATURES),
        OsStr::new("--btf_encode_detached"),
        out.as_os_str(),
        input.as_os_str(),
    ]);
    run.assert_success();
    let want = fs::read_to_string(fixture(&format!("expected/pahole131/{expected}.skips")))
        .expect("expected skip lines");
    assert_eq!(
        run.stderr,
        want,
        "skip lines of {object}\n{}",
        run.describe()
    );
    // Nothing on stdout: the lines go to stderr only.
    assert!(run.stdout.is_empty(), "{}", run.describe());
    let pahole_btf = fixture(&format!("expected/pahole131/{expected}.btf"));
    let diff = btfenc(&[OsStr::new("diff"), out.as_os_str(), pahole_btf.as_os_str()]);
    assert!(
        diff.success(),
        "BTF of {object} differs from pahole 1.31's\n{}",
        diff.describe()
    );
}

#[test]
fn skip_reasons_linked() {
    check("obj/skips/prog-gcc", "prog-gcc");
}

#[test]
fn skip_reasons_relocatable() {
    check("obj/skips/rel-gcc.o", "rel-gcc");
}

#[test]
fn skip_reasons_unexpected_register_clang() {
    check("obj/clang-params/clangparams.o", "clangparams");
}

#[test]
fn skip_reasons_unexpected_register_gcc() {
    check("obj/gcc-params/gccparams.o", "gccparams");
}

/// Without -V nothing is printed.
#[test]
fn skip_lines_only_with_verbose() {
    let dir = scratch();
    let out = dir.path().join("out.btf");
    let input = fixture("obj/skips/prog-gcc");
    let run = btfenc(&[
        OsStr::new("-J"),
        OsStr::new(FEATURES),
        OsStr::new("--btf_encode_detached"),
        out.as_os_str(),
        input.as_os_str(),
    ]);
    run.assert_success();
    assert!(run.stderr.is_empty(), "{}", run.describe());
}
