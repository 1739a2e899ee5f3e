//! Bad input makes btfenc fail cleanly: exit status != 0, exactly one
//! stderr line naming the file and the problem, no panic, and nothing
//! left behind.

use btfenc_tests::{assert_clean_failure, btfenc, encode_detached, fixture, Encoder};

use crate::fixtures::{files_in, read, scratch};

/// `btfenc -J --btf_encode_detached=OUT BAD` fails and leaves no OUT.
fn assert_detached_encode_fails(relative: &str) {
    let input = fixture(relative);
    let dir = scratch();
    let out = dir.path().join("out.btf");
    let run = encode_detached(Encoder::Btfenc, &input, &out, &[]);
    assert_clean_failure(&run, &input.to_string_lossy());
    assert_eq!(
        files_in(dir.path()),
        Vec::<String>::new(),
        "btfenc left files behind"
    );
}

/// `btfenc -J BAD` (in place) fails, leaves the file untouched and
/// leaves no temporary file beside it.
fn assert_in_place_encode_fails(relative: &str) {
    let original = fixture(relative);
    let dir = scratch();
    let copy = dir.path().join("input");
    std::fs::copy(&original, &copy).unwrap_or_else(|err| panic!("cannot copy {relative}: {err}"));
    let before = read(&copy);
    let run = btfenc(&["-J".as_ref(), copy.as_os_str()]);
    assert_clean_failure(&run, &copy.to_string_lossy());
    assert!(
        read(&copy) == before,
        "btfenc modified {relative} although it failed"
    );
    assert_eq!(
        files_in(dir.path()),
        vec!["input".to_string()],
        "btfenc left files behind"
    );
}

/// A unit that fails in the middle of a parallel walk is reported the
/// same way whatever the thread count: the first failure in unit order.
#[test]
fn mid_walk_failure_is_the_same_for_any_thread_count() {
    let input = fixture("bad/corrupt-second-cu.o");
    let dir = scratch();
    let out = dir.path().join("out.btf");
    let messages: Vec<String> = ["-j1", "-j2", "-j8"]
        .iter()
        .map(|jobs| {
            let run = encode_detached(Encoder::Btfenc, &input, &out, &[jobs]);
            assert_clean_failure(&run, &input.to_string_lossy());
            assert!(
                run.stderr.contains("invalid abbreviation code"),
                "{}",
                run.describe()
            );
            run.stderr
        })
        .collect();
    assert!(
        messages.iter().all(|m| *m == messages[0]),
        "messages differ: {messages:?}"
    );
    assert_eq!(
        files_in(dir.path()),
        Vec::<String>::new(),
        "btfenc left files behind"
    );
}

fn assert_dump_fails(relative: &str) {
    let input = fixture(relative);
    let run = btfenc(&["dump".as_ref(), input.as_os_str()]);
    assert_clean_failure(&run, &input.to_string_lossy());
    assert!(
        run.stdout.is_empty(),
        "dump printed output for {relative}: {}",
        run.describe()
    );
}

mod detached {
    use super::assert_detached_encode_fails as check;

    #[test]
    fn not_elf() {
        check("bad/not-elf.bin");
    }

    #[test]
    fn elf_without_dwarf() {
        check("bad/no-dwarf.o");
    }

    #[test]
    fn truncated_debug_info_relocatable() {
        check("bad/truncated-debug-info.o");
    }

    #[test]
    fn truncated_debug_info_executable() {
        check("bad/truncated-debug-info-exec");
    }

    #[test]
    fn corrupt_unit_in_the_middle() {
        check("bad/corrupt-second-cu.o");
    }

    #[test]
    fn btf_blob_is_not_an_encoder_input() {
        check("bad/corrupt-type.btf");
    }

    /// An elf_dwarf finding: `.debug_str_offsets` claims to start 4 bytes
    /// before the end of the address space. Giving back the pages of the
    /// sections read added a page to that end and overflowed (a panic
    /// with debug assertions, a wrapped range without).
    #[test]
    fn section_past_the_file() {
        check("bad/fuzz/string-section-past-the-file.o");
    }
}

mod in_place {
    use super::assert_in_place_encode_fails as check;

    #[test]
    fn not_elf() {
        check("bad/not-elf.bin");
    }

    #[test]
    fn elf_without_dwarf() {
        check("bad/no-dwarf.o");
    }

    #[test]
    fn truncated_debug_info_relocatable() {
        check("bad/truncated-debug-info.o");
    }

    #[test]
    fn truncated_debug_info_executable() {
        check("bad/truncated-debug-info-exec");
    }

    #[test]
    fn unsupported_relocation() {
        check("bad/unsupported-relocation.o");
    }

    #[test]
    fn section_past_the_file() {
        check("bad/fuzz/string-section-past-the-file.o");
    }
}

mod dump {
    use super::assert_dump_fails as check;

    #[test]
    fn header_lengths_past_end_of_file() {
        check("bad/corrupt-header.btf");
    }

    #[test]
    fn unknown_type_kind() {
        check("bad/corrupt-type.btf");
    }

    #[test]
    fn not_elf_nor_btf() {
        check("bad/not-elf.bin");
    }

    #[test]
    fn elf_without_btf_section() {
        check("bad/no-dwarf.o");
    }
}

/// A relocation of a type no compiler puts in a debug section (here
/// R_X86_64_PLT32 in `.rela.debug_info`) is named by its ELF number, the
/// section and the machine, not relocated some other way.
#[test]
fn unsupported_relocation_is_named() {
    let input = fixture("bad/unsupported-relocation.o");
    let dir = scratch();
    let run = encode_detached(Encoder::Btfenc, &input, &dir.path().join("out.btf"), &[]);
    assert_clean_failure(&run, &input.to_string_lossy());
    assert!(
        run.stderr.contains(
            ".debug_info: cannot relocate debug info: ELF relocation type 4 at offset 0x8 \
             (e_machine 62) is not supported in a debug section"
        ),
        "{}",
        run.describe()
    );
}

#[test]
fn missing_input_file() {
    let dir = scratch();
    let missing = dir.path().join("does-not-exist.o");
    let out = dir.path().join("out.btf");
    let run = encode_detached(Encoder::Btfenc, &missing, &out, &[]);
    assert_clean_failure(&run, &missing.to_string_lossy());
    assert!(
        !out.exists(),
        "btfenc wrote {} for a missing input",
        out.display()
    );
}

#[test]
fn unwritable_output_directory() {
    let dir = scratch();
    let out = dir.path().join("no-such-dir").join("out.btf");
    let run = encode_detached(
        Encoder::Btfenc,
        &fixture("obj/gcc-dwarf5/kinds.o"),
        &out,
        &[],
    );
    assert_clean_failure(&run, &out.to_string_lossy());
}

/// A damaged blob on either side of `btfenc diff` is an error (status 2
/// and up, as for diff(1)), never "different" (1) or "same" (0).
#[test]
fn diff_of_corrupt_blob() {
    let corrupt = fixture("bad/corrupt-type.btf");
    let dir = scratch();
    let valid = dir.path().join("valid.btf");
    encode_detached(
        Encoder::Pahole,
        &fixture("obj/gcc-dwarf5/kinds.o"),
        &valid,
        &[],
    )
    .assert_success();
    let run = btfenc(&["diff".as_ref(), valid.as_os_str(), corrupt.as_os_str()]);
    assert_clean_failure(&run, &corrupt.to_string_lossy());
    assert!(
        run.status.code().is_some_and(|code| code >= 2),
        "an unreadable input must not look like a plain difference\n{}",
        run.describe()
    );
}
