//! From a raw error to the glossary's normalised code (`docs/GLOSSARY.md`, "Normalised
//! error codes"). The raw error is always kept beside it.
//!
//! Sources: errno names (POSIX, `errno(3)`); Node's `err.code` and `ERR_FS_CP_*` codes (Node
//! docs, "Errors"); Deno's error classes (`Deno.errors`, Deno API docs); Win32 codes inside
//! .NET HResults `0x8007xxxx` (learn.microsoft.com, "System Error Codes"); CoreCLR on Unix
//! reports the errno itself as the HResult (e.g. 17 for CreateNew on an existing file,
//! measured here on CoreCLR 3.1.23, see `docs/RUNTIMES.md`).

use crate::exec::protocol::RawError;

const ERRNO_NAMES: &[&str] = &[
    "EEXIST",
    "ENOENT",
    "ENOTEMPTY",
    "EISDIR",
    "ENOTDIR",
    "EPERM",
    "EACCES",
    "EBUSY",
    "EXDEV",
    "ENOSPC",
    "EDQUOT",
    "EROFS",
    "EIO",
    "ENAMETOOLONG",
];

/// Normalised codes that mean the scratch file system failed (full, over quota, read-only,
/// an I/O error) or the harness's path was too long: they describe the machine, never the
/// call, so an attempt that meets one is a harness error, not an outcome.
pub const FS_FAILURE_CODES: &[&str] = &["ENOSPC", "EDQUOT", "EROFS", "EIO", "ENAMETOOLONG"];

/// Returns the normalised code: one of `EEXIST`, `ENOENT`, `ENOTEMPTY`, `EISDIR`, `ENOTDIR`,
/// `EPERM`, `EACCES`, `EBUSY`, `EXDEV`, `SHARING_VIOLATION`, the file-system failures
/// [`FS_FAILURE_CODES`], or `OTHER`.
pub fn normalize(raw: &RawError) -> &'static str {
    if let Some(code) = raw.code.as_deref() {
        if let Some(n) = ERRNO_NAMES.iter().find(|n| **n == code) {
            return n;
        }
        match code {
            "ERR_FS_CP_EEXIST" | "CHECK_EXISTS" => return "EEXIST",
            "ERR_FS_EISDIR" | "ERR_FS_CP_DIR_TO_NON_DIR" => return "EISDIR",
            "ERR_FS_CP_NON_DIR_TO_DIR" => return "ENOTDIR",
            "ENOTEMPTY" | "ERR_FS_CP_EINVAL" => {}
            _ => {}
        }
        if let Some(n) = from_powershell_error_id(code) {
            return n;
        }
    }
    match raw.kind.as_str() {
        "AlreadyExists" | "CheckExists" => return "EEXIST",
        "NotFound" | "System.IO.FileNotFoundException" | "System.IO.DirectoryNotFoundException" => return "ENOENT",
        "IsADirectory" => return "EISDIR",
        "NotADirectory" => return "ENOTDIR",
        "PermissionDenied" | "System.UnauthorizedAccessException" => return "EACCES",
        "Busy" => return "EBUSY",
        _ => {}
    }
    if let Some(n) = from_java_exception(&raw.kind) {
        return n;
    }
    if let Some(hr) = raw.hresult {
        if let Some(n) = from_hresult(hr) {
            return n;
        }
    }
    "OTHER"
}

/// The java.nio.file exceptions that name one errno each (Javadoc of `java.nio.file`,
/// https://docs.oracle.com/en/java/javase/17/docs/api/java.base/java/nio/file/package-summary.html:
/// `FileAlreadyExistsException` "Checked exception thrown when an attempt is made to create a
/// file or directory and a file of that name already exists", and so on). The JDK raises them
/// from the errno of the failed system call (`UnixException.translateToIOException`,
/// EEXIST → FileAlreadyExistsException, ENOENT → NoSuchFileException, EACCES →
/// AccessDeniedException); the others' generic `FileSystemException` is left to the probe's
/// `code`.
fn from_java_exception(class: &str) -> Option<&'static str> {
    Some(match class.strip_prefix("java.nio.file.")? {
        "FileAlreadyExistsException" => "EEXIST",
        "NoSuchFileException" => "ENOENT",
        "DirectoryNotEmptyException" => "ENOTEMPTY",
        "AccessDeniedException" => "EACCES",
        "NotDirectoryException" => "ENOTDIR",
        _ => return None,
    })
}

/// PowerShell's own refusals, by the first part of the error record's FullyQualifiedErrorId
/// (`DirectoryExist,Microsoft.PowerShell.Commands.NewItemCommand`): the FileSystem provider
/// raises these itself, with a generic HResult (COR_E_IO), before or instead of a .NET call
/// (ids from PowerShell's FileSystemProvider, github.com/PowerShell/PowerShell,
/// `src/System.Management.Automation/namespaces/FileSystemProvider.cs`; seen here with pwsh
/// 7.6.9). Ids that cover several causes (`RenameItemIOError`) are left to the HResult.
fn from_powershell_error_id(fqid: &str) -> Option<&'static str> {
    match fqid.split(',').next()? {
        // "An item with the specified name … already exists." (New-Item, Move-Item of a folder)
        "DirectoryExist" => Some("EEXIST"),
        // "Cannot create link because the path already exists"
        "SymLinkExists" => Some("EEXIST"),
        // "Container cannot be copied onto existing leaf item." (a folder onto a file, as
        // Node's ERR_FS_CP_DIR_TO_NON_DIR)
        "CopyContainerItemToLeafError" => Some("EISDIR"),
        // "Unable to write content because it is a directory"
        "WriteContainerContentException" => Some("EISDIR"),
        _ => None,
    }
}

fn from_hresult(hr: i64) -> Option<&'static str> {
    let u = (hr as u64) & 0xFFFF_FFFF;
    if u & 0xFFFF_0000 == 0x8007_0000 {
        // FACILITY_WIN32: the low word is a Win32 error code
        return match u & 0xFFFF {
            80 | 183 => Some("EEXIST"),
            2 | 3 => Some("ENOENT"),
            5 => Some("EACCES"),
            32 | 33 => Some("SHARING_VIOLATION"),
            145 => Some("ENOTEMPTY"),
            267 => Some("ENOTDIR"),
            17 => Some("EXDEV"),
            // ERROR_HANDLE_DISK_FULL, ERROR_DISK_FULL, ERROR_WRITE_PROTECT, ERROR_FILENAME_EXCED_RANGE
            39 | 112 => Some("ENOSPC"),
            19 => Some("EROFS"),
            206 => Some("ENAMETOOLONG"),
            _ => None,
        };
    }
    // CoreCLR and Mono on Unix: the HResult is the errno
    match hr {
        17 => Some("EEXIST"),
        2 => Some("ENOENT"),
        21 => Some("EISDIR"),
        20 => Some("ENOTDIR"),
        39 => Some("ENOTEMPTY"),
        13 => Some("EACCES"),
        1 => Some("EPERM"),
        16 => Some("EBUSY"),
        18 => Some("EXDEV"),
        11 => Some("SHARING_VIOLATION"),
        28 => Some("ENOSPC"),
        122 => Some("EDQUOT"),
        30 => Some("EROFS"),
        5 => Some("EIO"),
        36 => Some("ENAMETOOLONG"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{normalize, RawError};

    fn raw(kind: &str, code: Option<&str>, hresult: Option<i64>) -> RawError {
        RawError { kind: kind.into(), code: code.map(Into::into), hresult, ..RawError::default() }
    }

    /// Java's exceptions by class; a generic FileSystemException goes by the probe's code.
    #[test]
    fn java_exception_classes() {
        assert_eq!(normalize(&raw("java.nio.file.FileAlreadyExistsException", None, None)), "EEXIST");
        assert_eq!(normalize(&raw("java.nio.file.NoSuchFileException", None, None)), "ENOENT");
        assert_eq!(normalize(&raw("java.nio.file.DirectoryNotEmptyException", None, None)), "ENOTEMPTY");
        assert_eq!(normalize(&raw("java.nio.file.FileSystemException", None, None)), "OTHER");
        assert_eq!(normalize(&raw("java.nio.file.FileSystemException", Some("EBUSY"), None)), "EBUSY");
        assert_eq!(normalize(&raw("FileAlreadyExistsException", None, None)), "OTHER");
    }

    #[test]
    fn node_deno_dotnet_codes() {
        assert_eq!(normalize(&raw("Error", Some("EEXIST"), None)), "EEXIST");
        assert_eq!(normalize(&raw("SystemError", Some("ERR_FS_CP_EEXIST"), None)), "EEXIST");
        assert_eq!(normalize(&raw("AlreadyExists", None, None)), "EEXIST");
        assert_eq!(normalize(&raw("System.IO.IOException", None, Some(-2147024816))), "EEXIST"); // 0x80070050, Mono
        assert_eq!(normalize(&raw("System.IO.IOException", None, Some(0x8007_00B7))), "EEXIST"); // 183
        assert_eq!(normalize(&raw("System.IO.IOException", None, Some(17))), "EEXIST"); // CoreCLR on Linux
        assert_eq!(normalize(&raw("System.IO.IOException", None, Some(-2147024864))), "SHARING_VIOLATION"); // 0x80070020
        assert_eq!(normalize(&raw("System.IO.FileNotFoundException", None, Some(-2147024894))), "ENOENT");
        assert_eq!(normalize(&raw("errorlevel", None, None)), "OTHER");
        assert_eq!(normalize(&raw("Error", Some("ENOSPC"), None)), "ENOSPC");
        assert_eq!(normalize(&raw("System.IO.IOException", None, Some(28))), "ENOSPC"); // CoreCLR on Linux
        assert_eq!(normalize(&raw("System.IO.IOException", None, Some(0x8007_0070))), "ENOSPC"); // 112
        assert_eq!(normalize(&raw("System.IO.IOException", None, Some(0x8007_0013))), "EROFS");
        // 19
    }

    #[test]
    fn powershell_error_ids() {
        let ps = |id: &str| normalize(&raw("", Some(id), Some(-2146232800)));
        assert_eq!(ps("DirectoryExist,Microsoft.PowerShell.Commands.NewItemCommand"), "EEXIST");
        assert_eq!(ps("DirectoryExist,Microsoft.PowerShell.Commands.MoveItemCommand"), "EEXIST");
        assert_eq!(ps("SymLinkExists,Microsoft.PowerShell.Commands.NewItemCommand"), "EEXIST");
        assert_eq!(ps("CopyContainerItemToLeafError,Microsoft.PowerShell.Commands.CopyItemCommand"), "EISDIR");
        assert_eq!(ps("WriteContainerContentException,Microsoft.PowerShell.Commands.AddContentCommand"), "EISDIR");
        // an id of several causes keeps to the HResult (COR_E_IO here: none)
        assert_eq!(ps("RenameItemIOError,Microsoft.PowerShell.Commands.RenameItemCommand"), "OTHER");
        // the .NET exception's errno still wins where PowerShell passes it on
        assert_eq!(normalize(&raw("System.IO.IOException", Some("NewItemIOError,X"), Some(17))), "EEXIST");
    }
}
