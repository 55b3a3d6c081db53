//! Placeholder until the machine-facts module lands (kept minimal on purpose).
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Machine {
    pub hostname: String,
}

pub fn collect() -> Machine {
    Machine::default()
}

pub fn allowed_cpus() -> Vec<usize> {
    crate::evidence::placement::allowed_cpus()
}

impl Machine {
    pub fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
}

pub fn render_text(m: &Machine) -> String {
    format!("{m:?}")
}
