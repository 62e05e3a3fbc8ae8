//! How ITB's native programs (flow, linkem) die with the process that started them: a
//! run owns what it starts, and nothing it started outlives it.

/// With `ITB_DIE_WITH_PARENT=<pid>` (set by ITB for what a run starts), the kernel
/// sends SIGKILL when the parent dies; if the parent is already gone (the program's
/// parent is no longer that PID), exit at once with status 1.
pub fn die_with_parent() {
    let Some(ppid) = parent_wanted(std::env::var("ITB_DIE_WITH_PARENT").ok().as_deref()) else {
        return;
    };
    // SAFETY: prctl with PR_SET_PDEATHSIG and a signal number; getppid has no arguments.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) };
    if unsafe { libc::getppid() } != ppid {
        std::process::exit(1);
    }
}

/// The parent's PID the variable names, if it names one.
fn parent_wanted(value: Option<&str>) -> Option<i32> {
    value?.trim().parse::<i32>().ok().filter(|&p| p > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_pid_names_a_parent() {
        assert_eq!(parent_wanted(Some("4321")), Some(4321));
        assert_eq!(parent_wanted(Some(" 17\n")), Some(17));
        assert_eq!(parent_wanted(None), None);
        assert_eq!(parent_wanted(Some("")), None);
        assert_eq!(parent_wanted(Some("abc")), None);
        assert_eq!(parent_wanted(Some("0")), None); // (no process is anyone's parent 0)
        assert_eq!(parent_wanted(Some("-5")), None);
    }
}
