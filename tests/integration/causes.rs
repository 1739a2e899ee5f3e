//! Issue 15's causes, one regression test each, on the reproducers in
//! `fixtures/bad/causes/` (edited gcc assembly, see `make-causes.sh`):
//! btfenc fails with one line naming the file and the DIE or type, and
//! leaves nothing behind; where it writes BTF (the kernel's `encode_force`
//! leaving something out), the kernel loads it. Then a small deterministic
//! DWARF mutation campaign.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use btfenc_tests::{
    assert_clean_failure, btfenc_bin, encode_detached, fixture, kernel_load_btf, report_skip,
    Encoder, LoadResult, RunOutput,
};

use btfenc_tests::raw_dump::Dump;
use btfenc_tests::rng::Rng;

use crate::fixtures::{files_in, read, scratch};

/// btfenc on `bad/causes/NAME.o` (with `flags`) fails cleanly, leaves no
/// output, and its line holds every one of `expected`.
fn fails_naming(name: &str, flags: &[&str], expected: &[&str]) {
    fixture_fails_naming(&format!("bad/causes/{name}.o"), flags, expected);
}

/// btfenc on the fixture at `path` (with `flags`) fails cleanly, leaves no
/// output, and its line holds every one of `expected`.
fn fixture_fails_naming(path: &str, flags: &[&str], expected: &[&str]) {
    let input = fixture(path);
    let dir = scratch();
    let out = dir.path().join("out.btf");
    let run = encode_detached(Encoder::Btfenc, &input, &out, flags);
    assert_clean_failure(&run, &input.to_string_lossy());
    for text in expected {
        assert!(
            run.stderr.contains(text),
            "{path}: no {text:?} in the error\n{}",
            run.describe()
        );
    }
    assert_eq!(
        files_in(dir.path()),
        Vec::<String>::new(),
        "btfenc left files behind"
    );
}

/// btfenc on `bad/causes/NAME.o` with the kernel's features (so with
/// `encode_force`) succeeds, warns with `warning`, and the kernel loads
/// what it wrote.
fn forced_output_loads(name: &str, warning: &str) {
    fixture_forced_output_loads(&format!("bad/causes/{name}.o"), warning);
}

/// btfenc on the fixture at `path` with the kernel's features (so with
/// `encode_force`) succeeds, warns with `warning`, and the kernel loads
/// what it wrote. Returns the run, for more checks of what it said.
fn fixture_forced_output_loads(path: &str, warning: &str) -> RunOutput {
    let name = path;
    let input = fixture(path);
    let dir = scratch();
    let out = dir.path().join("out.btf");
    let run = encode_detached(Encoder::Btfenc, &input, &out, &[FORCE]);
    assert!(run.success(), "{}", run.describe());
    assert!(
        run.stderr.contains(warning) && run.stderr.contains("left out (encode_force)"),
        "{name}: no warning naming {warning:?}\n{}",
        run.describe()
    );
    expect_kernel_loads(&format!("causes::{name}"), &read(&out));
    run
}

fn expect_kernel_loads(test: &str, bytes: &[u8]) {
    match kernel_load_btf(bytes) {
        LoadResult::Loaded => {}
        LoadResult::Rejected { errno, log } => {
            panic!("{test}: the kernel rejects the BTF (errno {errno}):\n{log}")
        }
        LoadResult::Skipped(reason) => report_skip(test, &reason),
    }
}

const FLOATS: &str = "--btf_gen_floats";
const FORCE: &str = concat!("--btf_features=", kernel_features!());

#[test]
fn control_object_encodes_and_loads() {
    // The unedited source of every reproducer: so the failures below are
    // the edits' doing.
    let input = fixture("bad/causes/victim.o");
    let dir = scratch();
    let out = dir.path().join("out.btf");
    let run = encode_detached(Encoder::Btfenc, &input, &out, &[FLOATS]);
    assert!(run.success() && run.stderr.is_empty(), "{}", run.describe());
    expect_kernel_loads("causes::control", &read(&out));
}

// 1. A reference no type DIE answers (it became void).
#[test]
fn dangling_type_reference() {
    for name in ["dangling-type", "mid-die-type"] {
        for flags in [&[FLOATS][..], &[FORCE]] {
            fails_naming(
                name,
                flags,
                &["unit at 0x0", "DIE 0x47 refers to", "no type DIE"],
            );
        }
    }
}

// 2. DIEs after the unit DIE's children ended (they were dropped).
#[test]
fn dies_after_the_unit_end() {
    fails_naming(
        "die-after-unit-end",
        &[FLOATS],
        &[".debug_info at 0x55", "unit DIE (0xc)"],
    );
}

// 3. Names the kernel refuses.
#[test]
fn names_the_kernel_refuses() {
    fails_naming(
        "bad-member-name",
        &[FLOATS],
        &["DIE 0x2e", "struct \"victim\"", "\"sec-ond\""],
    );
    fails_naming(
        "empty-enumerator",
        &[FLOATS],
        &["DIE 0x62", "enum \"vcolor\"", "enumerator"],
    );
    fails_naming(
        "bad-typedef-name",
        &[FORCE],
        &["DIE 0x88", "typedef \"victim t\""],
    );
    // encode_force leaves the name or the enumerator out, and says so.
    forced_output_loads("bad-member-name", "\"sec-ond\"");
    forced_output_loads("empty-enumerator", "enumerator");
}

// 4. Layout and sizes.
#[test]
fn layout_and_sizes() {
    fails_naming(
        "member-past-end",
        &[FLOATS],
        &["DIE 0x2e", "\"second\"", "past the 16 bytes"],
    );
    fails_naming(
        "enum-size-3",
        &[FORCE],
        &["DIE 0x62", "\"vcolor\" of 3 bytes"],
    );
    fails_naming(
        "float-size-6",
        &[FORCE],
        &["DIE 0xe8", "'double' of 6 bytes"],
    );
    forced_output_loads("member-past-end", "\"second\"");
}

// 5. Loops and depth.
#[test]
fn loops_and_resolve_depth() {
    fails_naming("typedef-loop", &[FORCE], &["DIE 0x88", "Loop detected"]);
    fails_naming("struct-holds-itself", &[FORCE], &["Loop detected"]);
    // Legal C: pahole writes a 40-level chain the kernel refuses ("Exceeded
    // max resolving depth:32"); the 1,001-level one made btfenc's dedup
    // report a loop.
    for name in ["ptr40", "ptr1001"] {
        fails_naming(name, &[FORCE], &["MAX_RESOLVE_DEPTH"]);
    }
}

// 6. What BTF cannot count (it was truncated).
#[test]
fn offsets_and_counts_past_32_bits() {
    fails_naming(
        "legal-extremes",
        &[FLOATS],
        &["struct \"bigs\"", "\"after\"", "bit offset 4294967296"],
    );
    // encode_force leaves the member out, but an array cannot be: it is
    // still an error, naming it.
    fails_naming(
        "legal-extremes",
        &[FORCE],
        &["[65536, 65536, 16]", "2^32 - 1 elements"],
    );
}

// 7. Members of a struct with bitfields (BTF kind_flag), as the kernel
// checks them (btf_*_check_kflag_member). The elf_dwarf fuzz target found
// bitfields btfenc wrote unchecked: one wider than the kernel takes
// ("Invalid member bitfield_size", in the distilled mode), ones ending past
// their struct ("Member exceeds struct_size"); the output check refused
// them, now each is an error naming the struct's DIE and the member, in
// every mode, and with encode_force the member is left out.
#[test]
fn members_of_a_struct_with_bitfields() {
    let dir = scratch();
    let base = dir.path().join("base.btf");
    encode_detached(
        Encoder::Btfenc,
        &fixture("obj/multi-cu/gcc-dwarf5.o"),
        &base,
        &[],
    )
    .assert_success();
    let base_arg = format!("--btf_base={}", base.display());
    let distilled = concat!("--btf_features=", kernel_features!(), ",distilled_base");
    let unforced_distilled = "--btf_features=var,float,enum64,decl_tag,type_tag,distilled_base";
    // The unedited object encodes in every mode (so the failures below are
    // the edits' doing) and the kernel loads it.
    let control = fixture("bad/causes/bitfields.o");
    let out = dir.path().join("control.btf");
    encode_detached(Encoder::Btfenc, &control, &out, &[FLOATS]).assert_success();
    expect_kernel_loads("causes::bitfields_control", &read(&out));
    encode_detached(Encoder::Btfenc, &control, &out, &[distilled, &base_arg]).assert_success();

    for (name, expected, kernel_says) in [
        (
            "int-bitfield-too-wide",
            "member 1 (\"low\"): a bitfield of 40 bits of a 32-bit integer",
            "Invalid member bitfield_size",
        ),
        (
            "enum-bitfield-too-wide",
            "member 2 (\"color\"): an enum bitfield of 33 bits",
            "Invalid member bitfield_size",
        ),
        (
            "bitfield-of-pointer",
            "member 1 (\"low\"): a bitfield of a pointer",
            "Invalid member bitfield_size",
        ),
        (
            "bitfield-past-end",
            "member 3 (\"wide\"): bits 112..132 end past the 16 bytes",
            "Member exceeds struct_size",
        ),
    ] {
        for flags in [
            &[FLOATS][..],
            &[FLOATS, &base_arg],
            &[unforced_distilled, &base_arg],
        ] {
            fails_naming(name, flags, &["DIE 0x43", "struct \"bits\"", expected]);
        }
        // The kernel's verdict on what an encoder without these checks
        // writes: pahole 1.24's BTF of the same object.
        let input = fixture(&format!("bad/causes/{name}.o"));
        let unchecked = dir.path().join(format!("{name}.pahole.btf"));
        encode_detached(Encoder::Pahole, &input, &unchecked, &[]).assert_success();
        match kernel_load_btf(&read(&unchecked)) {
            LoadResult::Rejected { log, .. } => assert!(
                log.contains(kernel_says),
                "{name}: the kernel rejects pahole's BTF, but not with {kernel_says:?}:\n{log}"
            ),
            LoadResult::Loaded => panic!("{name}: the kernel loads pahole 1.24's BTF of it"),
            LoadResult::Skipped(reason) => report_skip("causes::bitfields", &reason),
        }
        // encode_force leaves the member out; standalone and as a distilled
        // pair (joined for the kernel) the output loads.
        forced_output_loads(name, expected);
        let out = dir.path().join(format!("{name}.btf"));
        let run = encode_detached(Encoder::Btfenc, &input, &out, &[distilled, &base_arg]);
        assert!(
            run.success() && run.stderr.contains(expected),
            "{}",
            run.describe()
        );
        let mut pair = out.clone().into_os_string();
        pair.push(".base");
        let joined = join_on(&read(Path::new(&pair)), &read(&out));
        expect_kernel_loads(&format!("causes::{name} (distilled)"), &joined);
    }

    // Legal C the kernel refuses the same way: a 1-byte enum member near
    // the end of a struct with bitfields (counted as 32 bits), and a
    // member past bit 2^24 (a kind_flag offset has 24 bits). pahole 1.24
    // writes the first, which the kernel rejects, and fails on the second.
    fails_naming(
        "legal-kflag",
        &[FLOATS],
        &[
            "struct \"packed_enum_after_bits\"",
            "member 1 (\"small\"): bits 8..40 end past the 4 bytes",
        ],
    );
    forced_output_loads("legal-kflag", "\"packed_enum_after_bits\": member 1");
    forced_output_loads(
        "legal-kflag",
        "struct \"bitfield_past_2mib\": member 1 (\"x\"): bit offset 16777216 does not fit",
    );
}

/// An elf_dwarf finding in the distilled mode: a module's struct carries a
/// member decl tag that the base's same struct does not, so the split's
/// DECL_TAG tags a member of a base struct, which the distilled base
/// describes without members ("Invalid component_idx"; libbpf's
/// btf__distill_base writes it so). An error naming the tag and the
/// struct; split on the full base the same module encodes and loads.
#[test]
fn member_tag_on_a_distilled_struct() {
    let dir = scratch();
    let build = |name: &str, source: &str| {
        let path = dir.path().join(format!("{name}.c"));
        std::fs::write(&path, source).unwrap();
        let object = path.with_extension("o");
        let built = Command::new("clang")
            .args(["-g", "-O0", "-c"])
            .arg(&path)
            .arg("-o")
            .arg(&object)
            .status()
            .expect("running clang");
        assert!(built.success());
        object
    };
    let base_object = build("base", "struct dt { int a; int b; } base_global;\n");
    let module = build(
        "module",
        "struct dt { int a __attribute__((btf_decl_tag(\"tagged\"))); int b; } module_global;\n",
    );
    let base = dir.path().join("base.btf");
    encode_detached(Encoder::Btfenc, &base_object, &base, &[]).assert_success();
    let base_arg = format!("--btf_base={}", base.display());
    let out = dir.path().join("out.btf");
    let distilled = concat!("--btf_features=", kernel_features!(), ",distilled_base");
    let run = encode_detached(Encoder::Btfenc, &module, &out, &[distilled, &base_arg]);
    assert_clean_failure(&run, &module.to_string_lossy());
    assert!(
        run.stderr
            .contains("decl tag \"tagged\" on member 0 of the base's \"dt\""),
        "{}",
        run.describe()
    );
    assert!(!out.exists());
    let run = encode_detached(Encoder::Btfenc, &module, &out, &[FORCE, &base_arg]);
    assert!(run.success(), "{}", run.describe());
    let joined = join_on(&read(&base), &read(&out));
    expect_kernel_loads("causes::member_tag_on_a_distilled_struct", &joined);
}

/// The `(offset, size)` in the file of the ELF64 little-endian section
/// `name`, and the offset of its header.
fn section(bytes: &[u8], name: &str) -> Option<(usize, usize)> {
    let u16_at = |at: usize| Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?));
    let u32_at = |at: usize| Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    let u64_at = |at: usize| Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?));
    let shoff = u64_at(0x28)? as usize;
    let (entsize, count, strndx) = (
        u16_at(0x3a)? as usize,
        u16_at(0x3c)? as usize,
        u16_at(0x3e)? as usize,
    );
    let header = |index: usize| shoff + index * entsize;
    let strtab = u64_at(header(strndx) + 0x18)? as usize;
    (0..count).find_map(|index| {
        let name_at = strtab + u32_at(header(index))? as usize;
        let end = name_at + bytes.get(name_at..)?.iter().position(|&b| b == 0)?;
        (bytes.get(name_at..end)? == name.as_bytes()).then_some(())?;
        Some((
            u64_at(header(index) + 0x18)? as usize,
            u64_at(header(index) + 0x20)? as usize,
        ))
    })
}

/// Runs btfenc with `args`, killed after `limit`: (exit status or None
/// for a hang, stderr, wall time).
fn run_with_timeout(args: &[&std::ffi::OsStr], limit: Duration) -> (Option<i32>, String, Duration) {
    run_program_with_timeout(&btfenc_bin(), args, limit)
}

/// [`run_with_timeout`] for any program; a death by signal is status -1.
fn run_program_with_timeout(
    program: &Path,
    args: &[&std::ffi::OsStr],
    limit: Duration,
) -> (Option<i32>, String, Duration) {
    let start = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("cannot run {}: {err}", program.display()));
    // Read as it comes: a child writing more than a pipe holds (a batch
    // with many warnings) would otherwise block, and look like a hang.
    let mut pipe = child.stderr.take().expect("stderr is piped");
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = std::io::Read::read_to_end(&mut pipe, &mut bytes);
        bytes
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() < limit => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let stderr = String::from_utf8_lossy(&reader.join().unwrap_or_default()).into_owned();
    let Some(status) = status else {
        return (None, String::new(), start.elapsed());
    };
    (Some(status.code().unwrap_or(-1)), stderr, start.elapsed())
}

// 7. A compression header that claims 8 GiB.
#[test]
fn compressed_size_claims_are_not_trusted() {
    let original = read(&fixture("obj/compressed/zlib-kinds.o"));
    let (offset, _) = section(&original, ".debug_info").expect("no .debug_info");
    let dir = scratch();
    let input = dir.path().join("claims-8g.o");
    let mut bytes = original.clone();
    // Elf64_Chdr: ch_type (ELFCOMPRESS_ZLIB), ch_reserved, ch_size.
    assert_eq!(
        &bytes[offset..offset + 4],
        &1u32.to_le_bytes(),
        "not a zlib section"
    );
    bytes[offset + 8..offset + 16].copy_from_slice(&(8u64 << 30).to_le_bytes());
    std::fs::write(&input, &bytes).unwrap();
    let out = dir.path().join("out.btf");
    let detached = format!("--btf_encode_detached={}", out.display());
    let (status, stderr, elapsed) = run_with_timeout(
        &["-J".as_ref(), detached.as_ref(), input.as_os_str()],
        Duration::from_secs(20),
    );
    assert!(
        status.is_some_and(|code| code != 0),
        "status {status:?}: {stderr}"
    );
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines.len() == 1 && lines[0].contains("claims-8g.o") && lines[0].contains(".debug_info"),
        "{stderr}"
    );
    assert!(!out.exists());
}

/// How many mutants the campaign tries (BTFENC_MUTANTS overrides).
const MUTANTS: usize = 300;

/// Mutated `.debug_info`/`.debug_abbrev` bytes of a two-CU gcc object:
/// no panic, no hang, every failure one line naming the file, and every
/// BTF written loads in the kernel. Counts go to stderr.
#[test]
fn dwarf_mutation_campaign() {
    let original = read(&fixture("bad/causes/two-cu.o"));
    let sections: Vec<(usize, usize)> = [".debug_info", ".debug_abbrev"]
        .iter()
        .map(|name| section(&original, name).unwrap_or_else(|| panic!("no {name}")))
        .collect();
    let count = std::env::var("BTFENC_MUTANTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(MUTANTS);
    let keep = std::env::var_os("BTFENC_KEEP_MUTANTS");
    let dir = scratch();
    let mut rng = Rng(0x15_15_15_15);
    let (mut encoded, mut refused, mut loaded) = (0, 0, 0);
    let mut problems = Vec::new();
    let mut skipped = None;
    for index in 0..count {
        let bytes = mutate(&original, &sections, &mut rng);
        let input = dir.path().join(format!("mutant-{index:04}.o"));
        std::fs::write(&input, &bytes).unwrap();
        if let Some(keep) = &keep {
            let _ = std::fs::copy(&input, Path::new(keep).join(format!("mutant-{index:04}.o")));
        }
        let out = dir.path().join("out.btf");
        let _ = std::fs::remove_file(&out);
        let detached = format!("--btf_encode_detached={}", out.display());
        let (status, stderr, _) = run_with_timeout(
            &[
                "-J".as_ref(),
                FORCE.as_ref(),
                detached.as_ref(),
                input.as_os_str(),
            ],
            Duration::from_secs(30),
        );
        let name = input.to_string_lossy();
        match status {
            None => problems.push(format!("mutant {index}: hang")),
            Some(_) if stderr.contains("panicked") => {
                problems.push(format!("mutant {index}: panic: {stderr}"))
            }
            Some(0) => {
                encoded += 1;
                match kernel_load_btf(&read(&out)) {
                    LoadResult::Loaded => loaded += 1,
                    LoadResult::Rejected { errno, log } => problems.push(format!(
                        "mutant {index}: the kernel rejects (errno {errno}): {log}"
                    )),
                    LoadResult::Skipped(reason) => skipped = Some(reason),
                }
            }
            Some(_) => {
                refused += 1;
                let lines: Vec<&str> = stderr.lines().collect();
                if lines.len() != 1 || !lines[0].contains(name.as_ref()) {
                    problems.push(format!(
                        "mutant {index}: not one line naming the file: {stderr:?}"
                    ));
                }
                if out.exists() {
                    problems.push(format!("mutant {index}: failed but left {}", out.display()));
                }
            }
        }
    }
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!(
            "DWARF mutation campaign: {count} mutants, {encoded} encoded ({loaded} loaded by the \
             kernel), {refused} refused, {} problems\n",
            problems.len()
        )
        .as_bytes(),
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        encoded > 0 && refused > 0,
        "a campaign that cannot tell anything apart"
    );
    if let Some(reason) = skipped {
        report_skip("causes::dwarf_mutation_campaign (kernel loads)", &reason);
    }
}

/// The campaign above on a real module (issue 15 item 4): Debian 6.1's
/// `tcp_bbr.ko` with mutated `.debug_info`/`.debug_abbrev` bytes (fixed
/// seed), encoded with the kernel's features split on the reference
/// vmlinux BTF and standalone, each mode in one batch run (the base is
/// read once). No panic, no hang; each failure exactly one line naming
/// its file (and no output); every output loaded by the kernel (a split
/// joined with its base). Needs the corpus: `make check-kernel` runs it
/// (`BTFENC_CAMPAIGN_MODULE`, the module; `BTFENC_MUTANTS`, default 300).
/// With `BTFENC_CAMPAIGN_PAHOLE=1` the installed pahole (1.24) encodes the
/// same mutants one by one, for comparison (reported, not judged).
#[test]
#[ignore = "needs the Debian corpus: make check-kernel runs it"]
fn module_mutation_campaign() {
    let Some(module) = std::env::var_os("BTFENC_CAMPAIGN_MODULE") else {
        panic!("BTFENC_CAMPAIGN_MODULE is not set (make check-kernel sets it)");
    };
    let base = btfenc_tests::reference_root().join("debian-6.1.0-56-cloud-amd64/vmlinux.btf");
    let base_bytes = read(&base);
    let original = read(Path::new(&module));
    let sections: Vec<(usize, usize)> = [".debug_info", ".debug_abbrev"]
        .iter()
        .map(|name| section(&original, name).unwrap_or_else(|| panic!("no {name}")))
        .collect();
    let count = std::env::var("BTFENC_MUTANTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300);
    let dir = scratch();
    let inputs = dir.path().join("mutants");
    std::fs::create_dir(&inputs).unwrap();
    let mut rng = Rng(0x15_04_bb_72);
    let mut names = Vec::new();
    for index in 0..count {
        let bytes = mutate(&original, &sections, &mut rng);
        let name = format!("mutant-{index:04}");
        std::fs::write(inputs.join(format!("{name}.ko")), &bytes).unwrap();
        names.push(name);
    }
    let base_arg = format!("--btf_base={}", base.display());
    let mut problems = Vec::new();
    let mut skipped = None;
    let mut report = Vec::new();
    for (mode, split) in [("split", true), ("standalone", false)] {
        let out = dir.path().join(format!("out-{mode}"));
        std::fs::create_dir(&out).unwrap();
        let detached = format!("--btf_encode_detached={}", out.display());
        let mut args: Vec<&std::ffi::OsStr> = vec!["-J".as_ref(), "-j".as_ref(), FORCE.as_ref()];
        if split {
            args.push(base_arg.as_ref());
        }
        args.extend([detached.as_ref(), inputs.as_os_str()]);
        let (status, stderr, took) = run_with_timeout(&args, Duration::from_secs(600));
        let Some(status) = status else {
            problems.push(format!("{mode}: the batch hangs (killed after {took:?})"));
            continue;
        };
        if stderr.contains("panicked") {
            problems.push(format!("{mode}: panic: {stderr}"));
        }
        let (mut encoded, mut refused, mut loaded) = (0, 0, 0);
        for name in &names {
            let input = inputs.join(format!("{name}.ko"));
            let input_name = input.display().to_string();
            let output = out.join(format!("{name}.btf"));
            // Warnings (encode_force) name the file too; errors are the rest.
            let errors: Vec<&str> = stderr
                .lines()
                .filter(|l| l.contains(&format!("{input_name}:")) && !l.contains(": warning: "))
                .collect();
            if output.exists() {
                encoded += 1;
                if !errors.is_empty() {
                    problems.push(format!("{mode} {input_name}: written, but: {errors:?}"));
                }
                let btf = read(&output);
                let blob = if split {
                    join_on(&base_bytes, &btf)
                } else {
                    btf
                };
                match kernel_load_btf(&blob) {
                    LoadResult::Loaded => loaded += 1,
                    LoadResult::Rejected { errno, log } => problems.push(format!(
                        "{mode} {input_name}: the kernel rejects (errno {errno}): {}",
                        log.lines().rev().take(2).collect::<Vec<_>>().join(" | ")
                    )),
                    LoadResult::Skipped(reason) => skipped = Some(reason),
                }
            } else {
                refused += 1;
                if errors.len() != 1 {
                    let mentions: Vec<&str> = stderr
                        .lines()
                        .filter(|l| l.contains(name.as_str()))
                        .collect();
                    problems.push(format!(
                        "{mode} {input_name}: no output, and {} lines naming it: {mentions:?}",
                        errors.len()
                    ));
                }
            }
        }
        if refused > 0 && status != 2 {
            problems.push(format!("{mode}: {refused} failed, exit status {status}"));
        }
        report.push(format!(
            "{mode}: {encoded} encoded ({loaded} loaded by the kernel), {refused} refused, \
             0 crashes, 0 hangs, in {:.1} s",
            took.as_secs_f64()
        ));
        if std::env::var_os("BTFENC_CAMPAIGN_PAHOLE").is_some_and(|v| v == "1") {
            report.push(pahole_on_mutants(
                &names,
                &inputs,
                split.then_some((&base, &base_bytes)),
            ));
        }
    }
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!(
            "module mutation campaign on {} ({count} mutants):\n  {}\n  {} problems\n",
            Path::new(&module).display(),
            report.join("\n  "),
            problems.len()
        )
        .as_bytes(),
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    if let Some(reason) = skipped {
        report_skip("causes::module_mutation_campaign (kernel loads)", &reason);
    }
}

/// The installed pahole (Debian's 1.24) on each mutant, with the nearest
/// flags (`--btf_gen_floats --btf_encode_force`): crashes (death by
/// signal), hangs (30 s), refusals, outputs the kernel loads or rejects.
fn pahole_on_mutants(names: &[String], inputs: &Path, base: Option<(&Path, &[u8])>) -> String {
    let dir = scratch();
    let (mut crashes, mut hangs, mut refused, mut loaded, mut rejected) = (0, 0, 0, 0, 0);
    let pahole = btfenc_tests::tools::pahole_bin();
    for name in names {
        let input = inputs.join(format!("{name}.ko"));
        let out = dir.path().join(format!("{name}.btf"));
        let detached = format!("--btf_encode_detached={}", out.display());
        let base_arg = base.map(|(path, _)| format!("--btf_base={}", path.display()));
        let mut args: Vec<&std::ffi::OsStr> = vec![
            "-J".as_ref(),
            "--btf_gen_floats".as_ref(),
            "--btf_encode_force".as_ref(),
        ];
        if let Some(arg) = &base_arg {
            args.push(arg.as_ref());
        }
        args.extend([detached.as_ref(), input.as_os_str()]);
        match run_program_with_timeout(&pahole, &args, Duration::from_secs(30)) {
            (None, _, _) => hangs += 1,
            (Some(-1), _, _) => crashes += 1,
            (Some(0), _, _) if out.exists() => {
                let btf = read(&out);
                let blob = match base {
                    Some((_, base_bytes)) => join_on(base_bytes, &btf),
                    None => btf,
                };
                match kernel_load_btf(&blob) {
                    LoadResult::Loaded => loaded += 1,
                    _ => rejected += 1,
                }
            }
            _ => refused += 1,
        }
    }
    format!(
        "pahole 1.24 on the same mutants: {crashes} crashes, {hangs} hangs, {refused} refused, \
         {} encoded ({loaded} loaded by the kernel, {rejected} rejected)",
        loaded + rejected
    )
}

/// A split joined with its base into one blob, as the kernel would see
/// them (`BPF_BTF_LOAD` takes no base): the base's types then the
/// split's, the base's strings then the split's, under a 24-byte header.
fn join_on(base: &[u8], split: &[u8]) -> Vec<u8> {
    let u32_at = |b: &[u8], at: usize| {
        b.get(at..at + 4)
            .map_or(0, |w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])) as usize
    };
    let section = |b: &[u8], off: usize, len: usize| {
        let start = u32_at(b, 4) + u32_at(b, off);
        start..start + u32_at(b, len)
    };
    let (bt, bs) = (section(base, 8, 12), section(base, 16, 20));
    let (st, ss) = (section(split, 8, 12), section(split, 16, 20));
    let mut out = vec![0x9f, 0xeb, 1, 0];
    for v in [
        24,
        0,
        bt.len() + st.len(),
        bt.len() + st.len(),
        bs.len() + ss.len(),
    ] {
        out.extend_from_slice(&(v as u32).to_le_bytes());
    }
    for range in [(base, bt), (split, st), (base, bs), (split, ss)] {
        out.extend_from_slice(&range.0[range.1]);
    }
    out
}

// Findings of the elf_dwarf fuzz target (make fuzz), one test each.

/// A member DIE without `DW_AT_type` (the fuzzer changed the member
/// abbreviation's attribute) used to become a void member, which the
/// kernel refuses ("Invalid member"): an error naming the DIE, or with
/// `encode_force` the member left out.
#[test]
fn member_without_a_type() {
    fails_naming(
        "member-without-type",
        &[FLOATS],
        &["DIE 0x2e", "member 0 (\"first\")", "no DW_AT_type"],
    );
    forced_output_loads("member-without-type", "no DW_AT_type");
}

/// gcc's `_Atomic` member: its type has no BTF form (pahole 1.31 stops,
/// "Unsupported DW_TAG_atomic_type"; pahole 1.24 writes a void member the
/// kernel refuses): the same error, or the member left out.
#[test]
fn atomic_member() {
    let dir = scratch();
    let source = dir.path().join("atomic.c");
    std::fs::write(&source, "struct at { _Atomic int a; int b; } g;\n").unwrap();
    let object = dir.path().join("atomic.o");
    let built = Command::new("gcc")
        .args(["-g", "-c"])
        .arg(&source)
        .arg("-o")
        .arg(&object)
        .status()
        .expect("running gcc");
    assert!(built.success());
    let out = dir.path().join("out.btf");
    let run = encode_detached(Encoder::Btfenc, &object, &out, &[]);
    assert_clean_failure(&run, &object.to_string_lossy());
    assert!(run.stderr.contains("_Atomic"), "{}", run.describe());
    let run = encode_detached(Encoder::Btfenc, &object, &out, &[FORCE]);
    assert!(run.success(), "{}", run.describe());
    expect_kernel_loads("causes::atomic_member", &read(&out));
}

/// No type at all: DWARF without types (assembly built with -g), and a
/// module that refers to no base type (its distilled base would be
/// empty). The kernel refuses BTF without types ("No type found"): one
/// line naming the file, nothing written.
#[test]
fn nothing_to_encode() {
    let dir = scratch();
    let build = |name: &str, source: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, source).unwrap();
        let object = path.with_extension("o");
        let built = Command::new("gcc")
            .args(["-g", "-c"])
            .arg(&path)
            .arg("-o")
            .arg(&object)
            .status()
            .expect("running gcc");
        assert!(built.success());
        object
    };
    let empty = build("empty.s", "\t.text\n\tnop\n");
    let out = dir.path().join("out.btf");
    let run = encode_detached(Encoder::Btfenc, &empty, &out, &[]);
    assert_clean_failure(&run, &empty.to_string_lossy());
    assert!(
        run.stderr.contains("describes no type"),
        "{}",
        run.describe()
    );
    assert!(!out.exists());

    let base = dir.path().join("base.btf");
    let base_object = fixture("obj/multi-cu/gcc-dwarf5.o");
    encode_detached(Encoder::Btfenc, &base_object, &base, &[]).assert_success();
    let lonely = build("lonely.c", "struct lonely { struct lonely *next; } g;\n");
    let base_arg = format!("--btf_base={}", base.display());
    let distilled = concat!("--btf_features=", kernel_features!(), ",distilled_base");
    let run = encode_detached(Encoder::Btfenc, &lonely, &out, &[&base_arg, distilled]);
    assert_clean_failure(&run, &lonely.to_string_lossy());
    assert!(
        run.stderr.contains("refers to no base type"),
        "{}",
        run.describe()
    );
    assert!(!out.exists());
}

/// Four more `elf_dwarf` findings, kept in `fixtures/bad/fuzz/` as found:
/// a member of function type, a void parameter, bitfields that lost their
/// size, a struct declaration without a name (an anonymous FWD). Each used to give BTF the kernel refuses; now one line naming
/// the file and the DIE (with `encode_force` where a member can be left
/// out: then the kernel loads the output).
#[test]
fn fuzz_findings_in_the_dwarf() {
    for (name, flags, expected) in [
        (
            "function-typed-member",
            &[FLOATS][..],
            &["DIE 0x623", "void or a function type"][..],
        ),
        (
            "void-parameter",
            &[FORCE][..],
            &["DIE 0x52e", "parameter 1 is void or a function type"][..],
        ),
        (
            "bitfields-without-size",
            &[FLOATS][..],
            &["DIE 0x2e3", "is not on a byte, and it is no bitfield"][..],
        ),
        (
            "anonymous-declaration",
            &[FORCE][..],
            &["DIE 0x12c4", "declaration of struct (anon)"][..],
        ),
    ] {
        fixture_fails_naming(&format!("bad/fuzz/{name}.o"), flags, expected);
    }
    let input = fixture("bad/fuzz/bitfields-without-size.o");
    let dir = scratch();
    let out = dir.path().join("out.btf");
    let run = encode_detached(Encoder::Btfenc, &input, &out, &[FORCE]);
    assert!(run.success(), "{}", run.describe());
    expect_kernel_loads("causes::fuzz_findings_in_the_dwarf", &read(&out));
}

/// One mutant of `original`: 1 to 4 bytes, each in one of `sections`
/// (start, length), zeroed, set to 0xff, one bit flipped, or random; the
/// same `rng` sequence gives the same mutants.
fn mutate(original: &[u8], sections: &[(usize, usize)], rng: &mut Rng) -> Vec<u8> {
    let mut bytes = original.to_vec();
    for _ in 0..1 + rng.below(4) {
        let (start, len) = sections[rng.below(sections.len())];
        let at = start + rng.below(len);
        bytes[at] = match rng.below(4) {
            0 => 0,
            1 => 0xff,
            2 => bytes[at] ^ (1 << rng.below(8)),
            _ => rng.next_u64() as u8,
        };
    }
    bytes
}

/// A function described by two DIEs in one unit (the abstract instance
/// `fx_structs_walk` at 0x109a, with the parameters' types, and its
/// out-of-line copy at 0x184) is left out once per DIE: each warning names
/// its own DIE (llvm-dwarfdump shows both as that function's
/// `DW_TAG_subprogram`), so no line repeats another.
#[test]
fn each_dwarf_description_of_a_left_out_function_is_named() {
    let run = fixture_forced_output_loads(
        "bad/fuzz/parameter-of-undefined-union.o",
        "function \"fx_structs_walk\"",
    );
    let about: Vec<&str> = run
        .stderr
        .lines()
        .filter(|line| line.contains("function \"fx_structs_walk\""))
        .collect();
    assert_eq!(about.len(), 2, "{}", run.describe());
    assert!(about[0].contains("DIE 0x184: "), "{}", run.describe());
    assert!(about[1].contains("DIE 0x109a: "), "{}", run.describe());
    let mut lines: Vec<&str> = run.stderr.lines().collect();
    let count = lines.len();
    lines.sort_unstable();
    lines.dedup();
    assert_eq!(lines.len(), count, "a warning repeats:\n{}", run.describe());
}

/// `btf_decl_tag("")` (clang writes the empty value; an `elf_dwarf` fuzz
/// run found it on a parameter): the kernel refuses a DECL_TAG without a
/// value (btf_decl_tag_check_meta, "Invalid value"). Without
/// `encode_force` the first is an error naming its DIE. With it each empty
/// tag (on a member, a struct, a typedef, a variable, a function and a
/// parameter) is left out with a warning naming its DIE, and every
/// well-formed tag beside it stays, as bpftool reads the output. Without
/// `decl_tag` no tag is encoded, so none is looked at.
#[test]
fn empty_decl_tags_are_left_out_and_the_others_kept() {
    let path = "bad/causes/empty-decl-tags.o";
    fixture_fails_naming(
        path,
        &["--btf_features=var,decl_tag"],
        &[
            "CU at .debug_info+0x0",
            "DIE 0x98: the type has an empty btf_decl_tag (the kernel wants a value)",
        ],
    );
    let input = fixture(path);
    let dir = scratch();
    let out = dir.path().join("out.btf");
    let run = encode_detached(Encoder::Btfenc, &input, &out, &[FORCE]);
    assert!(run.success(), "{}", run.describe());
    // DIEs as llvm-dwarfdump numbers them.
    for warning in [
        "DIE 0x98: the type has an empty btf_decl_tag",
        "DIE 0x72: member 0 has an empty btf_decl_tag",
        "DIE 0x72: the type has an empty btf_decl_tag",
        "DIE 0x23: variable \"et_percpu\" has an empty btf_decl_tag",
        "DIE 0x39: function \"et_func\": the function has an empty btf_decl_tag",
        "DIE 0x39: function \"et_func\": parameter 1 (\"s\") has an empty btf_decl_tag",
    ] {
        let lines: Vec<&str> = run
            .stderr
            .lines()
            .filter(|line| line.contains(warning) && line.ends_with("left out (encode_force)"))
            .collect();
        assert_eq!(lines.len(), 1, "{warning:?}\n{}", run.describe());
    }
    let dump = Dump::of_file(&out, None);
    let tags: Vec<(&str, &str)> = dump
        .types
        .iter()
        .filter(|ty| ty.kind == "DECL_TAG")
        .map(|ty| {
            let target = dump.target(ty).map_or("?", |target| target.name.as_str());
            (ty.name.as_str(), target)
        })
        .collect();
    assert_eq!(
        tags,
        [
            ("kept_member_tag", "et_struct"),
            ("kept_struct_tag", "et_struct"),
            ("kept_param_tag", "et_func"),
            ("kept_func_tag", "et_func"),
            ("kept_var_tag", "et_percpu"),
        ],
        "{}",
        run.describe()
    );
    expect_kernel_loads("causes::empty_decl_tags", &read(&out));

    let untagged = dir.path().join("untagged.btf");
    let run = encode_detached(Encoder::Btfenc, &input, &untagged, &["--btf_features=var"]);
    assert!(run.success() && run.stderr.is_empty(), "{}", run.describe());
    expect_kernel_loads("causes::empty_decl_tags (no decl_tag)", &read(&untagged));
}

/// Eight `elf_dwarf` findings of the CI run of 26f322d and the runs after
/// it, kept in `fixtures/bad/fuzz/` as found; each gave BTF the kernel
/// refuses. A function (not a function type) whose parameter lost its
/// `DW_AT_type`, one returning a function type, an odd-sized base type
/// (so pahole's 4-byte fake int) ending past a packed struct, a float
/// member moved off its alignment, a member and a function's parameter by
/// value of a union the unit only declares, a `btf_type_tag` annotation
/// without a value, and a `btf_decl_tag` without a value on a parameter. Without `encode_force` each is one line
/// naming the file and the function or DIE; with it the function or member
/// is left out, with a warning, and the kernel loads the rest.
#[test]
fn fuzz_findings_in_signatures_and_member_sizes() {
    for (name, failure, warning) in [
        (
            // Without encode_force a member's name comes first.
            "subprogram-void-parameter",
            None,
            "DIE 0xbce: function \"fx_funcs_touch\": parameter 1 (\"h\") is void or a function type",
        ),
        (
            // Without encode_force a member problem comes first.
            "subprogram-function-return",
            None,
            "DIE 0x60c: function \"dz_pid\": its return type is a function type",
        ),
        (
            "odd-sized-int-member",
            None,
            "DIE 0xec1: struct \"fx_packed\": member 3 (\"s\"): at byte 13 with 4 bytes, \
             it ends past the 15 bytes",
        ),
        (
            "empty-type-tag",
            None,
            "DIE 0xdb3: pointer with an empty btf_type_tag (the kernel wants a value)",
        ),
        (
            "parameter-of-undefined-union",
            None,
            "DIE 0x109a: function \"fx_structs_walk\": parameter 1 (\"n\") is a union \
             \"_word\" only declared in this unit",
        ),
        (
            "member-of-undefined-union",
            None,
            "DIE 0x134e: struct \"fx_percpu_stats\": member 0 (\"packets\"): its type, union \
             \"fx_opaque_u\", is only declared in this unit",
        ),
        (
            "empty-parameter-decl-tag",
            None,
            "DIE 0xd36: function \"fx_tagged_func\": parameter 1 (\"t\") has an empty \
             btf_decl_tag (the kernel wants a value)",
        ),
        (
            "misaligned-float-member",
            Some("DIE 0x155: struct \"fx_base_types\": member 14 (\"f\"): a 4-byte floating-point member at bit 656 is not aligned"),
            "DIE 0x155: struct \"fx_base_types\": member 14 (\"f\"): a 4-byte floating-point \
             member at bit 656 is not aligned to 4 bytes (btf_float_check_member",
        ),
    ] {
        let path = format!("bad/fuzz/{name}.o");
        if let Some(failure) = failure {
            fixture_fails_naming(&path, &[FLOATS], &["CU at .debug_info+", failure]);
        }
        fixture_forced_output_loads(&path, warning);
    }
    // The same finding in a big-endian object (which the kernel here
    // cannot load), where it is the first problem.
    fixture_fails_naming(
        "bad/fuzz/big-endian-void-parameter.o",
        &[FLOATS],
        &[
            "CU at .debug_info+0x0",
            "DIE 0x3a: function \"fx_tagged_func\": parameter 3 (\"p\") is void or a function type",
        ],
    );
}

/// `elf_dwarf` findings of session 13's campaign, kept in `bad/fuzz/` as
/// found: per-CPU variables whose places the kernel refuses in a DATASEC.
/// With 1.31's rule (a VAR is as large as its type) a mutated struct
/// larger than its symbol overlaps the next variable ("Invalid offset",
/// btf_datasec_check_meta); with 1.24's (as large as its symbol) the place
/// is smaller than the type ("Invalid size", btf_datasec_resolve). pahole
/// writes both as they are. Without `encode_force` each is one line naming
/// the DIE (and, for an overlap, the other variable); with it the variable
/// is left out, its neighbour kept, and the kernel loads the rest.
#[test]
fn fuzz_findings_in_variable_places() {
    let overlap = "bad/fuzz/overlapping-percpu-variables.o";
    let overlap_message = "CU at .debug_info+0xd00: DIE 0xd23: variable \"fx_tagged_percpu\" \
                           at .data..percpu+0x20 (4 bytes) overlaps variable \
                           \"fx_percpu_stats_var\" at +0x8 (28 bytes; CU at .debug_info+0x965, \
                           DIE 0x9ce), and the kernel takes no overlapping variables in a DATASEC";
    fixture_fails_naming(overlap, &[FLOATS], &[overlap_message]);
    let run = fixture_forced_output_loads(overlap, overlap_message);
    assert_eq!(
        run.stderr.matches("overlaps variable").count(),
        1,
        "{}",
        run.describe()
    );

    let dir = scratch();
    let out = dir.path().join("out.btf");
    let input = fixture(overlap);
    let run = encode_detached(Encoder::Btfenc, &input, &out, &[FORCE]);
    assert!(run.success(), "{}", run.describe());
    let dump = Dump::of_file(&out, None);
    assert_eq!(dump.find_all("VAR", "fx_tagged_percpu").len(), 0);
    assert_eq!(dump.find_all("VAR", "fx_percpu_stats_var").len(), 1);
    let sections = dump.find_all("DATASEC", ".data..percpu");
    assert_eq!(sections.len(), 1, "{}", run.describe());
    assert!(
        sections[0]
            .members
            .iter()
            .any(|m| m.contains("offset=8 size=28")),
        "{:?}",
        sections[0].members
    );

    let legacy_message = "CU at .debug_info+0x0: DIE 0x2a4: variable \"fx_percpu_counter\": its \
                          symbol has 4 bytes, fewer than the 24 of its type";
    let small = "bad/fuzz/percpu-symbol-smaller-than-type.o";
    fixture_fails_naming(small, &["--compat=1.24", FLOATS], &[legacy_message]);
    let input = fixture(small);
    let out = dir.path().join("legacy.btf");
    let run = encode_detached(
        Encoder::Btfenc,
        &input,
        &out,
        &["--compat=1.24", FLOATS, "--btf_encode_force"],
    );
    assert!(
        run.success() && run.stderr.contains(legacy_message),
        "{}",
        run.describe()
    );
    // Three DIEs the mutation gave larger types are left out; the fourth,
    // of a 4-byte type, takes the symbol's place.
    assert_eq!(
        run.stderr.matches("fewer than the").count(),
        3,
        "{}",
        run.describe()
    );
    let dump = Dump::of_file(&out, None);
    let sections = dump.find_all("DATASEC", ".data..percpu");
    assert_eq!(sections.len(), 1, "{}", run.describe());
    assert_eq!(sections[0].members.len(), 1, "{:?}", sections[0].members);
    assert!(
        sections[0].members[0].contains("offset=0 size=4"),
        "{:?}",
        sections[0].members
    );
    expect_kernel_loads("causes::percpu_symbol_smaller_than_type", &read(&out));
    // With 1.31's rule the same variable is as large as its type, and fits.
    let out = dir.path().join("v131.btf");
    let run = encode_detached(Encoder::Btfenc, &input, &out, &[FLOATS]);
    assert!(run.success() && run.stderr.is_empty(), "{}", run.describe());
    expect_kernel_loads(
        "causes::percpu_symbol_smaller_than_type (1.31)",
        &read(&out),
    );
}

/// An `elf_dwarf` finding: base types turned into enumeration types, one
/// of which (`unsigned int`, DIE 0x5b9) has a name the kernel refuses and
/// no enumerator. encode_force would leave an ENUM without a name or a
/// value, which libbpf's dedup takes for a declaration of any anonymous
/// enum whatever its size (btf_compat_enum): a 2-byte member then got a
/// 4-byte enum and ended past its struct ("Member exceeds struct_size").
/// Nothing can be left out in the enum's place, so it is an error even
/// with encode_force.
#[test]
fn fuzz_finding_enum_without_name_or_enumerators() {
    fixture_fails_naming(
        "bad/fuzz/enum-left-without-name-or-enumerators.o",
        &[FORCE],
        &[
            "CU at .debug_info+0x57f: DIE 0x5b9: enum \"unsigned int\" is left without a name \
             or an enumerator the kernel takes",
            "libbpf's dedup would take it for a declaration of any anonymous enum",
        ],
    );
}

/// `elf_dwarf` findings: a function type (DW_TAG_subroutine_type) whose
/// parameter is, by value, a union the file only declares. C allows it,
/// and in a vmlinux another unit may define the union (the dedup then
/// resolves the declaration), so no unit can judge it: the encoder refuses
/// it once the dedup is done, naming the FUNC_PROTO, the argument and the
/// union, with or without encode_force, and writes nothing.
#[test]
fn fuzz_findings_function_types_of_undefined_unions() {
    for (name, expected) in [
        (
            "function-type-of-undefined-union",
            "[94] FUNC_PROTO: its argument 2 is union fx_opaque_u by value, which no unit defines",
        ),
        (
            "function-type-of-undefined-union-2",
            "[90] FUNC_PROTO: its argument 1 is union _int128 by value, which no unit defines",
        ),
    ] {
        fixture_fails_naming(
            &format!("bad/fuzz/{name}.o"),
            &[FORCE],
            &[
                expected,
                "the kernel wants a known size (btf_func_proto_check)",
            ],
        );
    }
}

/// An `elf_dwarf` finding: the base type `int` got float encoding, so
/// with the `float` feature it lowers to a FLOAT, and pahole indexes a
/// unit's arrays by its first `int` whatever it is ("Invalid index",
/// btf_array_resolve). Without encode_force that is an error naming the
/// DIE; with it, the unit's arrays get an `int` of their own, and the
/// kernel loads the result.
#[test]
fn fuzz_finding_float_int_as_array_index() {
    let path = "bad/fuzz/float-int-as-array-index.o";
    let problem = "DIE 0x4c6: the unit's arrays would be indexed by its \"int\", here a float \
                   base type: the kernel wants an integer index (\"Invalid index\", \
                   btf_array_resolve)";
    fixture_fails_naming(path, &[FLOATS], &[problem]);
    fixture_forced_output_loads(path, problem);
}

/// An `elf_dwarf` finding: `float` became a 12-byte base type (i386's
/// `long double` size, a valid FLOAT size), and the 4-byte anonymous union
/// `pun` of `struct fx_nested` holds it as `as_float`. The member check
/// counted a float of an odd size as pahole's 4-byte fake int, which is
/// what an odd-sized *integer* lowers to; with `float` the member is a
/// 12-byte FLOAT and ends past the union ("Member exceeds struct_size",
/// btf_float_check_member). It is now left out, and the kernel loads the
/// rest.
#[test]
fn fuzz_finding_float_member_past_its_union() {
    fixture_forced_output_loads(
        "bad/fuzz/float-member-past-its-union.o",
        "DIE 0x700: union (anon): member 0 (\"as_float\"): at byte 0 with 12 bytes, it ends \
         past the 4 bytes",
    );
}
