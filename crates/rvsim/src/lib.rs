//! RISC-V machine model (see README).
