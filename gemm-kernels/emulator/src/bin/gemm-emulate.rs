//! `gemm-emulate`: run any kernel of any code object in the emulator (see `gemm_emu::cli`).

use clap::Parser;
use gemm_emu::cli::{run, EmulateArgs};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(about = "Run a kernel of an AMDHSA code object in the gfx942/gfx950 emulator")]
struct Cli {
    #[command(flatten)]
    args: EmulateArgs,
}

fn main() -> ExitCode {
    match run(Cli::parse().args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(2),
        Err(e) => {
            eprintln!("gemm-emulate: {e}");
            ExitCode::FAILURE
        }
    }
}
