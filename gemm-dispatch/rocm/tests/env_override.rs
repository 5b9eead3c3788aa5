//! `GEMM_HIP_LIBRARY` / `GEMM_RCCL_LIBRARY` replace the search: a wrong path is a clean
//! "not found" error naming it, never a fallback to another library and never a panic.
//! (One test in its own binary, so setting the variables races with nothing.)

use gemm_rocm::hip::Hip;
use gemm_rocm::nccl::Nccl;
use gemm_rocm::LoadError;

#[test]
fn overrides_name_the_paths_tried() {
    std::env::set_var("GEMM_HIP_LIBRARY", "/nonexistent");
    std::env::set_var("GEMM_RCCL_LIBRARY", "/nonexistent/librccl.so");

    let err = Hip::load().unwrap_err();
    let LoadError::LibraryNotFound { library, tried } = &err else {
        panic!("expected LibraryNotFound, got {err:?}");
    };
    assert!(library.contains("libamdhip64"), "{library}");
    assert_eq!(tried.len(), 1, "{tried:?}");
    assert_eq!(tried[0].candidate, "/nonexistent");
    let text = err.to_string();
    assert!(text.contains("not found") && text.contains("/nonexistent"), "{text}");
    eprintln!("{text}");

    let err = Nccl::load().unwrap_err();
    let text = err.to_string();
    assert!(text.contains("/nonexistent/librccl.so") && text.contains("RCCL"), "{text}");
    eprintln!("{text}");
    let err = Nccl::load_nccl().unwrap_err();
    assert!(err.to_string().contains("/nonexistent/librccl.so"), "{err}");
}
