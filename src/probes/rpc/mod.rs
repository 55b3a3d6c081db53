//! `rpc.*`: one request and its response between a client (the measuring thread) and a
//! server, in four placements — the Linux version of the M3 study's local / remote figure.
pub mod breakdown;
