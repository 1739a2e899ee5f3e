//! `kernel-load-btf FILE...`: loads each raw BTF file with
//! `bpf(BPF_BTF_LOAD)`, for the shell checks (scripts/check-kernel.sh).
//! Exit status: 0 all loaded, 1 one was rejected (verifier log on stderr)
//! or unreadable, 77 (automake's "skipped") when the kernel check cannot
//! run here.

use std::process::ExitCode;

use btfenc_tests::{kernel_load_btf, LoadResult};

const EXIT_SKIPPED: u8 = 77;

fn main() -> ExitCode {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        eprintln!("usage: kernel-load-btf FILE...");
        return ExitCode::from(2);
    }
    for file in &files {
        let bytes = match std::fs::read(file) {
            Ok(bytes) => bytes,
            Err(err) => {
                eprintln!("{file}: cannot read: {err}");
                return ExitCode::FAILURE;
            }
        };
        match kernel_load_btf(&bytes) {
            LoadResult::Loaded => println!("{file}: loaded by the kernel"),
            LoadResult::Rejected { errno, log } => {
                eprintln!("{file}: rejected by the kernel (errno {errno}):\n{log}");
                return ExitCode::FAILURE;
            }
            LoadResult::Skipped(reason) => {
                eprintln!("{file}: SKIPPED: {reason}");
                return ExitCode::from(EXIT_SKIPPED);
            }
        }
    }
    ExitCode::SUCCESS
}
