//! Finding a vendor library at run time and resolving its symbols lazily.
//!
//! The library must build and run where ROCm is absent, so nothing here links against
//! `libamdhip64` or `librccl`: a [`LibrarySpec`] names the candidates to `dlopen` (and the
//! environment variable that overrides them), a [`DynLib`] is the opened library, and the
//! [`symbol_table!`] macro builds a struct whose every symbol is resolved on first use and
//! cached. A library that cannot be found, or a symbol it lacks, is a [`LoadError`] that
//! names what was looked for, never a panic.

use std::ffi::{c_void, OsString};
use std::fmt;
use std::path::{Path, PathBuf};

/// Why a vendor library or one of its symbols could not be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// No candidate could be opened; `tried` lists every path with the loader's reason.
    #[error("{library} not found; tried: {}", Attempt::join(.tried))]
    LibraryNotFound {
        /// What was looked for, e.g. `HIP runtime (libamdhip64)`.
        library: &'static str,
        /// Every candidate tried, in order, with the reason it failed.
        tried: Vec<Attempt>,
    },
    /// The library was opened but does not export `symbol`.
    #[error("symbol `{symbol}` not found in {path}")]
    SymbolMissing {
        /// The C symbol name.
        symbol: &'static str,
        /// The path of the opened library.
        path: String,
    },
}

/// One candidate path tried by the loader and why it failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// The path or soname passed to `dlopen`.
    pub candidate: String,
    /// The loader's message (`dlerror`).
    pub reason: String,
}

impl Attempt {
    fn join(tried: &[Attempt]) -> String {
        tried.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    }
}

impl fmt::Display for Attempt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.candidate, self.reason)
    }
}

/// Where to look for one vendor library.
#[derive(Debug, Clone, Copy)]
pub struct LibrarySpec {
    /// Human-readable name used in errors.
    pub name: &'static str,
    /// Environment variable whose value, when set and non-empty, is the only path tried.
    pub env_var: &'static str,
    /// Sonames / paths tried in order when the variable is unset.
    pub candidates: &'static [&'static str],
}

impl LibrarySpec {
    /// The paths that would be tried, given the override (normally the environment variable).
    ///
    /// An explicit override is the only candidate: silently loading another library than the
    /// one asked for would hide a misconfiguration.
    pub fn candidate_paths(&self, override_path: Option<OsString>) -> Vec<PathBuf> {
        match override_path {
            Some(p) if !p.is_empty() => vec![PathBuf::from(p)],
            _ => self.candidates.iter().map(PathBuf::from).collect(),
        }
    }

    /// Opens the first candidate that loads, honouring the environment variable.
    pub fn open(&self) -> Result<DynLib, LoadError> {
        self.open_with_override(std::env::var_os(self.env_var))
    }

    /// Opens the first candidate that loads; `override_path` replaces the candidate list.
    pub fn open_with_override(&self, override_path: Option<OsString>) -> Result<DynLib, LoadError> {
        let mut tried = Vec::new();
        for path in self.candidate_paths(override_path) {
            match DynLib::open(&path) {
                Ok(lib) => return Ok(lib),
                Err(reason) => tried.push(Attempt { candidate: path.display().to_string(), reason }),
            }
        }
        Err(LoadError::LibraryNotFound { library: self.name, tried })
    }
}

/// An opened shared library. Dropping it unloads the library, so everything resolved from
/// it must be owned by the same value (the symbol tables below hold their `DynLib`).
pub struct DynLib {
    lib: libloading::Library,
    path: PathBuf,
}

impl fmt::Debug for DynLib {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynLib").field("path", &self.path).finish()
    }
}

impl DynLib {
    /// `dlopen`s one path; the error is the loader's message.
    pub fn open(path: &Path) -> Result<Self, String> {
        // SAFETY: loading a shared library runs its initialisers. The libraries this crate
        // opens (HIP, RCCL, NCCL, and in tests the CUDA runtime) are vendor runtimes meant to be
        // loaded into arbitrary processes; their initialisers do not assume anything of us.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| e.to_string())?;
        Ok(Self { lib, path: path.to_path_buf() })
    }

    /// The path this library was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Resolves `name` (NUL-terminated) as a value of type `T`, or `None` if it is absent.
    ///
    /// # Safety
    /// `T` must be the exact type of the symbol (for functions: an `unsafe extern "C" fn`
    /// pointer with the prototype from the vendor header), and the returned value must not be
    /// used after this `DynLib` is dropped.
    pub unsafe fn symbol<T: Copy>(&self, name: &str) -> Option<T> {
        debug_assert!(name.ends_with('\0'));
        // SAFETY: forwarded from the caller: `T` is the symbol's true type.
        let sym = unsafe { self.lib.get::<T>(name.as_bytes()) }.ok()?;
        Some(*sym)
    }

    /// Whether the library exports `name` (without the trailing NUL), without typing it.
    pub fn has_symbol(&self, name: &str) -> bool {
        let mut z = name.as_bytes().to_vec();
        z.push(0);
        // SAFETY: the symbol is only looked up as an untyped address and never dereferenced
        // or called.
        unsafe { self.lib.get::<*mut c_void>(&z) }.is_ok()
    }

    /// The error for a symbol this library lacks.
    pub fn missing(&self, symbol: &'static str) -> LoadError {
        LoadError::SymbolMissing { symbol, path: self.path.display().to_string() }
    }
}

/// Builds a struct of lazily resolved function pointers over a [`DynLib`].
///
/// Each field is named exactly as the C symbol (so the name cannot drift from the symbol),
/// gets an accessor of the same name returning `Result<fn, LoadError>`, and is listed in
/// `SYMBOLS`. Resolution happens on first use and is cached (`OnceLock`).
macro_rules! symbol_table {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* $field:ident : $ty:ty, )*
        }
    ) => {
        $(#[$meta])*
        #[allow(non_snake_case)]
        pub struct $name {
            lib: $crate::loader::DynLib,
            $( $field: ::std::sync::OnceLock<Option<$ty>>, )*
        }

        #[allow(non_snake_case)]
        impl $name {
            /// Every symbol of this table, in declaration order.
            pub const SYMBOLS: &'static [&'static str] = &[$(stringify!($field)),*];

            /// Wraps an opened library; nothing is resolved yet.
            pub fn new(lib: $crate::loader::DynLib) -> Self {
                Self { lib, $( $field: ::std::sync::OnceLock::new(), )* }
            }

            /// The library the symbols come from.
            pub fn library(&self) -> &$crate::loader::DynLib {
                &self.lib
            }

            $(
                $(#[$fmeta])*
                pub fn $field(&self) -> Result<$ty, $crate::loader::LoadError> {
                    let resolved = self.$field.get_or_init(|| {
                        // SAFETY: `$ty` is the prototype of this symbol in the vendor header
                        // cited on the field, and the pointer never outlives `self.lib`: it is
                        // stored next to it and only handed out through `&self`.
                        unsafe { self.lib.symbol::<$ty>(concat!(stringify!($field), "\0")) }
                    });
                    resolved.ok_or_else(|| self.lib.missing(stringify!($field)))
                }
            )*

            /// Resolves every symbol and returns the names the library lacks.
            pub fn missing_symbols(&self) -> Vec<&'static str> {
                let mut missing = Vec::new();
                $( if self.$field().is_err() { missing.push(stringify!($field)); } )*
                missing
            }
        }
    };
}
pub(crate) use symbol_table;

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: LibrarySpec = LibrarySpec {
        name: "test library (libdoesnotexist)",
        env_var: "GEMM_TEST_NEVER_SET_LIBRARY",
        candidates: &["libdoesnotexist-gemm.so.9", "/nonexistent/libdoesnotexist-gemm.so"],
    };

    #[test]
    fn every_candidate_is_tried_and_named() {
        let err = SPEC.open_with_override(None).unwrap_err();
        let LoadError::LibraryNotFound { library, tried } = &err else {
            panic!("unexpected {err:?}");
        };
        assert_eq!(*library, SPEC.name);
        let names: Vec<_> = tried.iter().map(|a| a.candidate.as_str()).collect();
        assert_eq!(names, SPEC.candidates);
        assert!(tried.iter().all(|a| !a.reason.is_empty()));
        let text = err.to_string();
        for c in SPEC.candidates {
            assert!(text.contains(c), "{text}");
        }
    }

    #[test]
    fn override_replaces_the_search() {
        let paths = SPEC.candidate_paths(Some("/x/lib.so".into()));
        assert_eq!(paths, vec![PathBuf::from("/x/lib.so")]);
        // An empty variable counts as unset.
        assert_eq!(SPEC.candidate_paths(Some("".into())).len(), SPEC.candidates.len());
    }

    #[test]
    fn libc_opens_and_reports_symbols() {
        let lib = DynLib::open(Path::new("libc.so.6")).expect("libc.so.6");
        assert!(lib.has_symbol("strlen"));
        assert!(!lib.has_symbol("gemm_no_such_symbol"));
        // SAFETY: strlen's prototype from <string.h>.
        let strlen =
            unsafe { lib.symbol::<unsafe extern "C" fn(*const std::ffi::c_char) -> usize>("strlen\0") }.unwrap();
        // SAFETY: a NUL-terminated literal.
        assert_eq!(unsafe { strlen(c"abcd".as_ptr()) }, 4);
    }
}
