//! How a call becomes one plan: the catalogue kernel that runs a problem
//! ([`kernel_plan`]: can a kernel run it, and its argument bytes), ranked by the timing model's
//! characterisation table the build embeds ([`cost_table`], [`choice`]); split-K and the split
//! tail ([`splitk`]); the transpose pre-pass ([`transpose`]); one grouped launch for many problems ([`grouped`]); fused epilogues and fp8
//! scales ([`fused`]); and the physics every predicted time obeys ([`bounds`]) on one sampled grid of shapes ([`sampled`]). [`gemm_plan`] puts them together: the launches of one GEMM on one device.
//! Backends execute plans; nothing here touches memory or a device.

pub mod block_scaled;
pub mod bounds;
pub mod choice;
pub mod cost_table;
pub mod fused;
pub mod gemm_plan;
pub mod grouped;
pub mod kernel_plan;
pub mod sampled;
pub mod splitk;
pub mod transpose;
