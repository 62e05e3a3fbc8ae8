"""`itb serve`'s stop signal in a forked child of its process (pyroute2 forks one to
create each namespace): the child ends at once with 128 + the signal instead of raising,
which would unwind a copy of the server's stack through the testbed build's clean-up
and remove the namespaces already made (found under CPU load: the child was still
alive when the signal came)."""

from __future__ import annotations

import os
import signal

import pytest

from itb.cli.serve import _stop


def test_the_main_process_raises_and_a_forked_child_just_ends():
    with pytest.raises(KeyboardInterrupt):
        _stop(signal.SIGTERM, None)
    pid = os.fork()
    if pid == 0:  # the child: must end here, not raise into pytest's stack
        try:
            _stop(signal.SIGTERM, None)
        finally:
            os._exit(99)  # (reached only if _stop raised)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 128 + signal.SIGTERM
