//! Loading a BTF blob into the running kernel with `bpf(BPF_BTF_LOAD)`:
//! the kernel's own BTF verifier is the final judge of well-formedness.

/// `BPF_BTF_LOAD` in `enum bpf_cmd` (include/uapi/linux/bpf.h).
const BPF_BTF_LOAD: libc::c_int = 18;

/// Log level 1: the verifier explains the first problem it finds.
const LOG_LEVEL_ERRORS: u32 = 1;

/// The log buffer for a failed load. Kernels before 6.4 cap the size at
/// `UINT_MAX >> 8`; this is that cap.
const LOG_SIZE: usize = (u32::MAX >> 8) as usize;

/// The `BPF_BTF_LOAD` member of `union bpf_attr`. Fields the kernel does
/// not know must be zero; `btf_log_true_size` (6.4+) is written back by
/// newer kernels and left zero by us.
#[repr(C)]
#[derive(Debug, Default)]
struct BtfLoadAttr {
    btf: u64,
    btf_log_buf: u64,
    btf_size: u32,
    btf_log_size: u32,
    btf_log_level: u32,
    btf_log_true_size: u32,
}

/// What the kernel said about a BTF blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadResult {
    /// The kernel accepted it (the fd it returned is already closed).
    Loaded,
    /// The kernel rejected it: the errno and the verifier's log.
    Rejected {
        /// `errno` of the failed syscall (usually `EINVAL`).
        errno: i32,
        /// The verifier log from a retry at log level 1.
        log: String,
    },
    /// The check could not run here (no privilege, no bpf syscall, or the
    /// blob is too big to pass); tests must report this loudly.
    Skipped(String),
}

/// Asks the kernel to load `bytes` as BTF.
///
/// A first attempt runs without a log (cheap, and the common case is
/// success); on failure it retries at log level 1 to fetch the verifier's
/// explanation.
pub fn kernel_load_btf(bytes: &[u8]) -> LoadResult {
    let Ok(size) = u32::try_from(bytes.len()) else {
        return LoadResult::Skipped(format!("BTF of {} bytes exceeds u32", bytes.len()));
    };
    let first = load_once(bytes, size, None);
    let errno = match first {
        Ok(()) => return LoadResult::Loaded,
        Err(errno) => errno,
    };
    if let Some(reason) = skip_reason(errno) {
        return LoadResult::Skipped(reason);
    }
    let mut log = vec![0u8; LOG_SIZE];
    match load_once(bytes, size, Some(&mut log)) {
        // A load that succeeds only with a log would be a kernel oddity;
        // report what actually happened first.
        Ok(()) => LoadResult::Rejected {
            errno,
            log: "(the retry with a log succeeded)".to_string(),
        },
        Err(retry_errno) => {
            let end = log.iter().position(|&byte| byte == 0).unwrap_or(log.len());
            let text = String::from_utf8_lossy(log.get(..end).unwrap_or_default());
            LoadResult::Rejected {
                errno: retry_errno,
                log: text.into_owned(),
            }
        }
    }
}

/// The kernel's verdict alone: one `BPF_BTF_LOAD` without a log (cheaper
/// than [`kernel_load_btf`], which retries with one on failure). `Err`
/// carries the reason the check cannot run here.
pub fn kernel_accepts_btf(bytes: &[u8]) -> Result<bool, String> {
    let Ok(size) = u32::try_from(bytes.len()) else {
        return Err(format!("BTF of {} bytes exceeds u32", bytes.len()));
    };
    match load_once(bytes, size, None) {
        Ok(()) => Ok(true),
        Err(errno) => match skip_reason(errno) {
            Some(reason) => Err(reason),
            None => Ok(false),
        },
    }
}

fn skip_reason(errno: i32) -> Option<String> {
    match errno {
        libc::EPERM | libc::EACCES => Some(format!(
            "bpf(BPF_BTF_LOAD) not permitted (errno {errno}): run the tests as root or with CAP_BPF"
        )),
        libc::ENOSYS => Some("this kernel has no bpf() syscall (ENOSYS)".to_string()),
        _ => None,
    }
}

/// One `BPF_BTF_LOAD`; closes the returned fd. `Err` carries errno.
fn load_once(bytes: &[u8], size: u32, log: Option<&mut [u8]>) -> Result<(), i32> {
    let mut attr = BtfLoadAttr {
        btf: bytes.as_ptr() as u64,
        btf_size: size,
        ..BtfLoadAttr::default()
    };
    if let Some(log) = log {
        attr.btf_log_buf = log.as_mut_ptr() as u64;
        attr.btf_log_size = u32::try_from(log.len()).unwrap_or(u32::MAX >> 8);
        attr.btf_log_level = LOG_LEVEL_ERRORS;
    }
    // SAFETY: `attr` is a properly laid out prefix of `union bpf_attr`,
    // and the size passed is exactly its size. The kernel only reads
    // `bytes` (valid for `size` bytes) and writes at most `btf_log_size`
    // bytes into the log buffer, both of which outlive the call.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            BPF_BTF_LOAD,
            &mut attr as *mut BtfLoadAttr,
            std::mem::size_of::<BtfLoadAttr>(),
        )
    };
    if ret < 0 {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0));
    }
    // The fd only keeps the BTF object alive; nothing here needs it.
    if let Ok(fd) = libc::c_int::try_from(ret) {
        // SAFETY: the kernel just returned this fd to us and nothing else
        // owns it.
        unsafe {
            libc::close(fd);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal BTF blob by hand from Documentation/bpf/btf.rst: the
    /// 24-byte header, one `INT 'int' size=4 bits=32 signed` and the
    /// string section "\0int\0".
    fn hand_made_int_blob(kind_bits: u32) -> Vec<u8> {
        let mut blob = Vec::new();
        let type_len: u32 = 16;
        let strings = b"\0int\0";
        blob.extend_from_slice(&0xeb9f_u16.to_le_bytes()); // magic
        blob.push(1); // version
        blob.push(0); // flags
        blob.extend_from_slice(&24_u32.to_le_bytes()); // hdr_len
        blob.extend_from_slice(&0_u32.to_le_bytes()); // type_off
        blob.extend_from_slice(&type_len.to_le_bytes());
        blob.extend_from_slice(&type_len.to_le_bytes()); // str_off
        blob.extend_from_slice(&(strings.len() as u32).to_le_bytes());
        blob.extend_from_slice(&1_u32.to_le_bytes()); // name_off -> "int"
        blob.extend_from_slice(&(kind_bits << 24).to_le_bytes()); // info
        blob.extend_from_slice(&4_u32.to_le_bytes()); // size
        blob.extend_from_slice(&((1_u32 << 24) | 32).to_le_bytes()); // SIGNED, 32 bits
        blob.extend_from_slice(strings);
        blob
    }

    fn report(result: &LoadResult) -> bool {
        if let LoadResult::Skipped(reason) = result {
            crate::tools::report_skip("kernel::tests", reason);
            return false;
        }
        true
    }

    #[test]
    fn kernel_accepts_a_hand_made_int() {
        let result = kernel_load_btf(&hand_made_int_blob(1));
        if report(&result) {
            assert_eq!(result, LoadResult::Loaded);
        }
    }

    #[test]
    fn kernel_rejects_an_unknown_kind_with_a_log() {
        let result = kernel_load_btf(&hand_made_int_blob(31));
        if report(&result) {
            match result {
                LoadResult::Rejected { errno, log } => {
                    assert_eq!(errno, libc::EINVAL);
                    assert!(!log.is_empty(), "the verifier log is empty");
                }
                other => panic!("kernel accepted kind 31: {other:?}"),
            }
        }
    }
}
