//! btfenc against the references nobody here wrote: pahole v1.24's BTF,
//! bpftool's dump, the kernel's BTF verifier, and facts derived by hand
//! from the C fixtures and Documentation/bpf/btf.rst.
//!
//! Every check that applies to each fixture object is generated per
//! fixture by [`per_fixture!`], so a failure names the fixture.

/// Expands to one `#[test]` per fixture object calling `$check(path)`,
/// where `path` is relative to `fixtures/`. The list lives here once.
macro_rules! per_fixture {
    ($check:expr) => {
        per_fixture!(@each $check;
            gcc_dwarf4_kinds => "obj/gcc-dwarf4/kinds.o",
            gcc_dwarf4_structs => "obj/gcc-dwarf4/structs.o",
            gcc_dwarf4_funcs => "obj/gcc-dwarf4/funcs.o",
            gcc_dwarf4_tags => "obj/gcc-dwarf4/tags.o",
            gcc_dwarf5_kinds => "obj/gcc-dwarf5/kinds.o",
            gcc_dwarf5_structs => "obj/gcc-dwarf5/structs.o",
            gcc_dwarf5_funcs => "obj/gcc-dwarf5/funcs.o",
            gcc_dwarf5_tags => "obj/gcc-dwarf5/tags.o",
            clang_kinds => "obj/clang/kinds.o",
            clang_structs => "obj/clang/structs.o",
            clang_funcs => "obj/clang/funcs.o",
            clang_tags => "obj/clang/tags.o",
            multi_cu_gcc_dwarf5 => "obj/multi-cu/gcc-dwarf5.o",
            multi_cu_clang => "obj/multi-cu/clang.o",
            exec_gcc => "obj/exec/prog-gcc",
            exec_clang => "obj/exec/prog-clang",
            bpfeb_structs => "obj/bpf/structs-bpfeb.o",
            bpfeb_tags => "obj/bpf/tags-bpfeb.o",
            bpfel_tags => "obj/bpf/tags-bpfel.o",
            zlib_kinds => "obj/compressed/zlib-kinds.o",
            zstd_kinds => "obj/compressed/zstd-kinds.o",
            zlib_multi_cu => "obj/compressed/zlib-multi-cu.o",
            zlib_exec => "obj/compressed/prog-zlib",
            lto_gcc => "obj/lto/prog-gcc",
        );
    };
    (@each $check:expr; $($name:ident => $path:expr),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                ($check)($path)
            }
        )*
    };
}

/// The kernel's `--btf_features` list (scripts/Makefile.btf, pahole >=
/// 1.26), as a literal that `concat!` can extend.
macro_rules! kernel_features {
    () => {
        "encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func,decl_tag_kfuncs"
    };
}

mod attributes;
mod bad_input;
mod bpftool_dump;
mod c_dump;
mod causes;
mod cli;
mod dedup_cli;
mod determinism;
mod diff_cli;
mod dwz;
mod facts;
mod fixtures;
mod in_place;
mod kernel_load;
mod kfuncs;
mod layout;
mod lld_placeholder;
mod module_cycles;
mod modules;
mod pahole_parity;
mod param_locations;
mod skip_lines;
mod split;
mod true_signature;
mod verify_kernel;
