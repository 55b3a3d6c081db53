//! The state of this process that a probe's definition can require: how many threads it has
//! and which child processes exist. A system call on a descriptor is defined for one thread
//! whose files no other task shares: a second thread makes the kernel take a reference on
//! every descriptor it looks up (the table is shared), and a child forked while a descriptor
//! is open shares that file.

use std::collections::BTreeSet;

/// What the process looked like at one edge of a measurement.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TaskState {
    /// Threads of this process (`Threads:` of /proc/self/status); None when unreadable.
    pub threads: Option<u32>,
    /// Live child processes; None when they could not be listed.
    pub children: Option<BTreeSet<i32>>,
}

impl TaskState {
    /// This process now.
    pub fn now() -> TaskState {
        TaskState {
            threads: super::cputime::thread_count(std::process::id() as i32),
            children: children_of_self(),
        }
    }
}

/// The children of every thread of this process: /proc/self/task/*/children, or, on a kernel
/// built without that file, the processes whose parent is this one.
fn children_of_self() -> Option<BTreeSet<i32>> {
    let mut out = BTreeSet::new();
    let mut listed = false;
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        if let Ok(s) = std::fs::read_to_string(task.path().join("children")) {
            listed = true;
            out.extend(s.split_whitespace().filter_map(|p| p.parse::<i32>().ok()));
        }
    }
    if listed {
        return Some(out);
    }
    let me = std::process::id() as i32;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // The fields after the command name, which may hold spaces and parentheses.
        let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
        if rest
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<i32>().ok())
            == Some(me)
        {
            out.insert(pid);
        }
    }
    Some(out)
}

/// How far the process was from "one thread, its files shared with no other task" over a
/// window that opened its descriptors after `before` and closed them after `after`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alone {
    /// The most threads seen at either edge (None: unreadable).
    pub threads: Option<u32>,
    /// Children alive at the end that were not alive before the descriptors were opened:
    /// forked while they were open, so they hold them too (None: not listed).
    pub forked: Option<Vec<i32>>,
}

impl Alone {
    pub fn between(before: &TaskState, after: &TaskState) -> Alone {
        Alone {
            threads: match (before.threads, after.threads) {
                (Some(a), Some(b)) => Some(a.max(b)),
                _ => None,
            },
            forked: match (&before.children, &after.children) {
                (Some(b), Some(a)) => Some(a.difference(b).copied().collect()),
                _ => None,
            },
        }
    }

    /// One thread and no child forked in the window: the state holds.
    pub fn holds(&self) -> bool {
        self.threads == Some(1) && self.forked.as_ref().is_some_and(|f| f.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_thread_is_counted() {
        let before = TaskState::now().threads.unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            let _ = rx.recv();
        });
        let during = TaskState::now().threads.unwrap();
        drop(tx);
        t.join().unwrap();
        assert_eq!(during, before + 1);
    }

    #[test]
    fn a_planted_fork_is_listed() {
        let before = TaskState::now();
        // SAFETY: the child only pauses until it is killed; it touches no lock of the parent.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            loop {
                // SAFETY: pause has no preconditions.
                unsafe { libc::pause() };
            }
        }
        assert!(pid > 0);
        let after = TaskState::now();
        // SAFETY: our own child, killed and reaped once.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
        let a = Alone::between(&before, &after);
        assert_eq!(a.forked, Some(vec![pid]));
        assert!(!a.holds());
    }

    #[test]
    fn one_thread_without_new_children_holds() {
        let s = TaskState {
            threads: Some(1),
            children: Some(BTreeSet::from([7])),
        };
        assert!(Alone::between(&s, &s).holds());
        let two = TaskState {
            threads: Some(2),
            ..s.clone()
        };
        assert!(!Alone::between(&s, &two).holds());
        let unknown = TaskState {
            threads: None,
            ..s.clone()
        };
        assert!(!Alone::between(&unknown, &s).holds());
    }
}
