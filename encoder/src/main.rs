/*!
btfenc: DWARF to BTF, a drop-in replacement for `pahole -J`.

`main` only maps `run`'s result to an exit status: 0 on success, 1 when
`diff` finds differences, 2 on any error (printed on one line, naming the
file and the problem).

The encoding itself is the library's (`btf::encode::encode`: ELF in, BTF
bytes out). This binary is the command line around it: `args` parses
pahole's flags, `config` turns them into `btf::encode::Options`,
`commands` runs one file or a batch (and adds the hints that name
options to the library's errors), `output` and `elf_patch` put the bytes
where pahole would (a detached file, or `.BTF`/`.BTF.base` in place),
`verify` checks BTF as the kernel would (`btfenc verify`, and what
`dedup` and `relocate` write; `-J`'s output the library checks itself).
`small_blocks` is the allocator.
*/

/// `eprintln!` that cannot panic: a stderr that cannot be written (a
/// build log on a full disk, `2>/dev/full`) must not turn a finished or
/// failing run into a panic; the exit status still tells.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `eprint!` (no newline) that cannot panic, as [`say!`].
macro_rules! say_partial {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

mod args;
mod commands;
mod config;
mod elf_patch;
mod inputs;
mod output;
mod small_blocks;
mod stats;
mod verify;

/// glibc's malloc with a larger per-thread cache of small blocks in front
/// (see `small_blocks`).
#[global_allocator]
static ALLOCATOR: small_blocks::SmallBlocks = small_blocks::SmallBlocks;

use std::process::ExitCode;

fn main() -> ExitCode {
    let argv = args::normalize_argv(std::env::args_os());
    let invoked_as = argv
        .first()
        .and_then(|a| {
            std::path::Path::new(a)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
        })
        .unwrap_or_default();
    let cli = match args::parse(argv) {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help/usage itself; usage errors exit 2 like pahole's argp.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match commands::run(cli, &invoked_as) {
        Ok(code) => code,
        Err(err) => {
            say!("btfenc: {}", error_line(&err));
            ExitCode::from(2)
        }
    }
}

/// An error and its causes on one line, `FILE: STEP: CAUSE`, as every
/// failure is reported: one line per failed file, even in a batch's log.
fn error_line(err: &anyhow::Error) -> String {
    format!("{err:#}").replace('\n', " ")
}
