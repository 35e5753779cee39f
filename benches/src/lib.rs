//! gpukit benchmarks live in `benches/`.
