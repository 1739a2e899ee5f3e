//! Running btfenc, pahole and bpftool, and judging how a run ended.

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use crate::paths::btfenc_bin;

/// Names the pahole binary to compare with (default `pahole`, v1.24 on
/// Debian bookworm).
pub const PAHOLE_ENV: &str = "PAHOLE";
/// Names the bpftool binary (default `bpftool`, then `/usr/sbin/bpftool`).
pub const BPFTOOL_ENV: &str = "BPFTOOL";
/// When set, every skip is also appended to this file, so that `make test`
/// can list the skips at the end instead of letting them scroll by.
pub const SKIP_LOG_ENV: &str = "BTFENC_SKIP_LOG";
/// When set to `1`, a check that would be skipped fails instead (CI runs
/// as root and must not skip the kernel).
pub const NO_SKIP_ENV: &str = "BTFENC_NO_SKIP";

/// What one finished program run left behind.
#[derive(Debug)]
pub struct RunOutput {
    /// The command line, for assertion messages.
    pub command: String,
    /// How the process ended.
    pub status: ExitStatus,
    /// Everything it wrote to stdout.
    pub stdout: Vec<u8>,
    /// Everything it wrote to stderr, lossily decoded.
    pub stderr: String,
}

impl RunOutput {
    /// Whether the process exited with status 0.
    pub fn success(&self) -> bool {
        self.status.success()
    }

    /// stdout as text (lossily decoded: dumps are ASCII).
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// A multi-line account of the run for panic messages.
    pub fn describe(&self) -> String {
        const LIMIT: usize = 4000;
        let stdout = self.stdout_text();
        format!(
            "command: {}\nstatus: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.command,
            self.status,
            truncate_for_message(&stdout, LIMIT),
            truncate_for_message(&self.stderr, LIMIT)
        )
    }

    /// Panics with the whole run described unless it exited with 0.
    pub fn assert_success(&self) -> &Self {
        assert!(self.success(), "expected success\n{}", self.describe());
        self
    }
}

fn truncate_for_message(text: &str, limit: usize) -> &str {
    match text.char_indices().nth(limit) {
        Some((cut, _)) => &text[..cut],
        None => text,
    }
}

/// Runs `program` with `args` to completion, capturing both streams.
///
/// Panics if the program cannot be started: a missing pahole or bpftool is
/// a broken test machine, and every comparison depends on them.
pub fn run<S: AsRef<OsStr>>(program: &Path, args: &[S]) -> RunOutput {
    run_with_env(program, args, &[])
}

/// [`run`] with the variables `env` set (`(name, value)`) on top of the
/// test's own environment.
pub fn run_with_env<S: AsRef<OsStr>>(
    program: &Path,
    args: &[S],
    env: &[(&str, &OsStr)],
) -> RunOutput {
    let command = env
        .iter()
        .map(|(name, value)| format!("{name}={}", value.to_string_lossy()))
        .chain(
            std::iter::once(program.as_os_str())
                .chain(args.iter().map(AsRef::as_ref))
                .map(|part| part.to_string_lossy().into_owned()),
        )
        .collect::<Vec<_>>()
        .join(" ");
    let output = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|err| panic!("cannot run `{command}`: {err}"));
    RunOutput {
        command,
        status: output.status,
        stdout: output.stdout,
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Runs the `btfenc` under test.
pub fn btfenc<S: AsRef<OsStr>>(args: &[S]) -> RunOutput {
    run(&btfenc_bin(), args)
}

/// The pahole binary: `$PAHOLE` or `pahole`.
pub fn pahole_bin() -> PathBuf {
    std::env::var_os(PAHOLE_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("pahole"))
}

/// Runs pahole.
pub fn pahole<S: AsRef<OsStr>>(args: &[S]) -> RunOutput {
    run(&pahole_bin(), args)
}

/// The bpftool binary: `$BPFTOOL`, else `bpftool` from `$PATH`, else
/// `/usr/sbin/bpftool` (not on a normal user's `$PATH` on Debian).
pub fn bpftool_bin() -> PathBuf {
    if let Some(explicit) = std::env::var_os(BPFTOOL_ENV) {
        return PathBuf::from(explicit);
    }
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .map(|dir| dir.join("bpftool"))
        .find(|candidate| candidate.is_file());
    on_path.unwrap_or_else(|| PathBuf::from("/usr/sbin/bpftool"))
}

/// Runs bpftool.
pub fn bpftool<S: AsRef<OsStr>>(args: &[S]) -> RunOutput {
    run(&bpftool_bin(), args)
}

/// `bpftool [-B BASE] btf dump file FILE`: the raw dump that the tests
/// take as the reference reading of a BTF file. `-B` (--base-btf) is how
/// bpftool v7 takes a base; it then prints only the split's own types,
/// numbered after the base's.
pub fn bpftool_btf_dump(file: &Path, base: Option<&Path>) -> RunOutput {
    let mut args: Vec<&OsStr> = Vec::new();
    if let Some(base) = base {
        args.extend([OsStr::new("-B"), base.as_os_str()]);
    }
    args.extend([
        OsStr::new("btf"),
        OsStr::new("dump"),
        OsStr::new("file"),
        file.as_os_str(),
    ]);
    bpftool(&args)
}

/// btfenc's flag to behave as the pahole these tests compare against:
/// Debian bookworm's pahole 1.24 (btfenc emulates pahole 1.31 unless told
/// otherwise). Tests judging btfenc by that pahole's output pass it.
pub const AS_SYSTEM_PAHOLE: &str = "--compat=1.24";

/// Which encoder writes a detached BTF file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoder {
    /// The `btfenc` under test.
    Btfenc,
    /// The reference, pahole.
    Pahole,
}

/// `ENCODER -J FLAGS --btf_encode_detached=OUT INPUT`, the same command
/// line for both encoders (btfenc is a drop-in replacement).
pub fn encode_detached(encoder: Encoder, input: &Path, out: &Path, flags: &[&str]) -> RunOutput {
    let mut args: Vec<&OsStr> = vec![OsStr::new("-J")];
    args.extend(flags.iter().map(OsStr::new));
    let detached = format!("--btf_encode_detached={}", out.display());
    args.push(OsStr::new(&detached));
    args.push(input.as_os_str());
    match encoder {
        Encoder::Btfenc => btfenc(&args),
        Encoder::Pahole => pahole(&args),
    }
}

/// Asserts the way btfenc must fail on bad input: a non-zero exit status,
/// no panic, and exactly one line on stderr that names `file` (as it was
/// given on the command line).
pub fn assert_clean_failure(run: &RunOutput, file: &str) {
    assert!(
        !run.success(),
        "expected a failure on {file}\n{}",
        run.describe()
    );
    assert!(
        !run.stderr.contains("panicked"),
        "btfenc panicked on {file}\n{}",
        run.describe()
    );
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "expected exactly one line on stderr for {file}\n{}",
        run.describe()
    );
    let line = lines.first().copied().unwrap_or_default();
    assert!(
        line.contains(file),
        "the error line does not name {file}: {line:?}\n{}",
        run.describe()
    );
}

/// Reports a check that could not run, loudly and never as a silent pass.
///
/// Writes straight to the stderr handle: libtest captures `eprintln!` of
/// passing tests, but not writes to the stream itself. With
/// `BTFENC_NO_SKIP=1` the skip becomes a failure.
pub fn report_skip(test: &str, reason: &str) {
    let message = format!("SKIPPED {test}: {reason}");
    if std::env::var(NO_SKIP_ENV).is_ok_and(|value| value == "1") {
        panic!("{message} (and {NO_SKIP_ENV}=1 forbids skipping)");
    }
    let _ = writeln!(std::io::stderr().lock(), "\n!!!!!!!! {message} !!!!!!!!");
    if let Some(log) = std::env::var_os(SKIP_LOG_ENV) {
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .and_then(|mut file| writeln!(file, "{message}"));
        if let Err(err) = appended {
            let _ = writeln!(
                std::io::stderr().lock(),
                "cannot append to ${SKIP_LOG_ENV}: {err}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_captures_status_and_streams() {
        let out = run(Path::new("sh"), &["-c", "echo out; echo err >&2; exit 3"]);
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(out.stdout_text(), "out\n");
        assert_eq!(out.stderr, "err\n");
        assert!(out.command.contains("exit 3"));
    }

    #[test]
    fn clean_failure_accepts_one_naming_line() {
        let out = run(Path::new("sh"), &["-c", "echo 'x.o: no DWARF' >&2; exit 1"]);
        assert_clean_failure(&out, "x.o");
    }

    #[test]
    #[should_panic(expected = "exactly one line")]
    fn clean_failure_rejects_two_lines() {
        let out = run(
            Path::new("sh"),
            &["-c", "printf 'x.o: a\\nb\\n' >&2; exit 1"],
        );
        assert_clean_failure(&out, "x.o");
    }

    #[test]
    #[should_panic(expected = "panicked")]
    fn clean_failure_rejects_a_panic() {
        let out = run(
            Path::new("sh"),
            &["-c", "echo \"thread 'main' panicked at x.o\" >&2; exit 101"],
        );
        assert_clean_failure(&out, "x.o");
    }

    #[test]
    #[should_panic(expected = "expected a failure")]
    fn clean_failure_rejects_success() {
        let out = run(Path::new("sh"), &["-c", "echo x.o >&2"]);
        assert_clean_failure(&out, "x.o");
    }
}
