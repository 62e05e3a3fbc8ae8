"""One multiplexed SSH control connection per host (asyncssh), used from plain threads.

asyncssh runs on one event loop in a background thread; `Connection` offers the
blocking calls the engine needs: `run(argv)`, `process(argv)` (a long-lived program
whose stdin/stdout are pipes, e.g. the node worker), and file transfer over SFTP.
Every command is an argv list; it reaches the remote shell quoted word by word
(`shlex.join`), so no value of a scenario or inventory is ever interpreted by it.

Host keys are verified against the inventory's known_hosts file only: a host whose key
is not there is refused (`UnknownHostKey`), never added silently (accepting one is
`hostkeys`').
"""

from __future__ import annotations

import asyncio
import queue
import shlex
import threading
from collections.abc import Sequence
from pathlib import Path

import asyncssh

from itb.backends.host import Completed
from itb.backends.ssh.inventory import Inventory, InventoryHost
from itb.errors import BackendError, CommandFailed, PreflightError


class UnknownHostKey(PreflightError):
    pass


class HostUnreachable(BackendError):
    """The host stopped answering (connection lost or timed out)."""


_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _loop_lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, daemon=True, name="itb-ssh").start()
        return _loop


async def _await(awaitable):
    return await awaitable


def call(awaitable, timeout: float | None = None):
    """Run a coroutine (or other awaitable) on the SSH loop and wait for its result."""
    fut = asyncio.run_coroutine_threadsafe(_await(awaitable), loop())
    try:
        return fut.result(timeout)
    except TimeoutError:
        fut.cancel()
        raise


def command_line(argv: Sequence[str]) -> str:
    out = [str(a) for a in argv]
    if not out:
        raise ValueError("empty argv")
    return shlex.join(out)


class Connection:
    """The control connection to one inventory host."""

    def __init__(self, inv: Inventory, host: InventoryHost):
        self.inv, self.host = inv, host
        self.name = host.name
        self.user = inv.user(host)
        self.conn: asyncssh.SSHClientConnection | None = None
        self.lost: str | None = None  # why the connection ended, once it has

    # -- opening ------------------------------------------------------------------------
    def where(self) -> str:
        return f"{self.user}@{self.host.address}:{self.host.port}"

    def open(self) -> Connection:
        h, inv = self.host, self.inv
        key = inv.key(h)
        if key is not None and not key.is_file():
            what = (
                "is a directory, not a private key file"
                if key.is_dir()
                else "not a regular file"
                if key.exists()
                else "no such file"
            )
            raise PreflightError(f"host {h.name}: field key: {key}: {what}")
        kh = inv.known_hosts()
        if not kh.is_file():
            raise UnknownHostKey(
                f"host {h.name} ({self.where()}): known_hosts {kh} does not exist, so its host "
                "key cannot be verified: refused (accept the hosts' keys first: "
                "`itb inventory trust INVENTORY` shows them and asks)"
            )
        opts = dict(
            host=h.address,
            port=h.port,
            username=self.user,
            known_hosts=str(kh),
            config=[],
            connect_timeout=inv.ssh.connect_timeout_s,
            keepalive_interval=2,
            keepalive_count_max=3,
        )
        if key is not None:  # else the user's agent and ~/.ssh keys, as ssh would
            opts |= {"client_keys": [str(key)], "agent_path": None}
        try:
            self.conn = call(asyncssh.connect(**opts), timeout=inv.ssh.connect_timeout_s + 5)
        except asyncssh.HostKeyNotVerifiable as e:
            raise UnknownHostKey(
                f"host {h.name} ({self.where()}): its host key is not accepted in {kh} "
                f"({e.reason}): refused. A first contact must be accepted explicitly: "
                "`itb inventory trust INVENTORY` shows the key and adds it"
            ) from None
        except asyncssh.PermissionDenied:
            raise PreflightError(
                f"host {h.name}: field key: {self.user}@{h.address} refused "
                f"the key {key or '(none given)'} (permission denied)"
            ) from None
        except asyncssh.KeyImportError as e:
            raise PreflightError(
                f"host {h.name}: field key: {key}: not a usable private key ({e})"
            ) from None
        except (OSError, asyncssh.Error, TimeoutError) as e:
            raise PreflightError(
                f"host {h.name}: field address: cannot connect to "
                f"{h.address}:{h.port}: {e or type(e).__name__}"
            ) from None
        return self

    def close(self) -> None:
        if self.conn is not None:
            conn, self.conn = self.conn, None
            try:
                conn.close()
                call(conn.wait_closed(), timeout=5)
            except Exception:
                pass

    def host_key_fingerprint(self) -> str | None:
        """SHA-256 fingerprint of the host key the server presented (None: not connected)."""
        key = self.conn.get_server_host_key() if self.conn is not None else None
        return key.get_fingerprint("sha256") if key is not None else None

    def alive(self) -> bool:
        return self.conn is not None and not self.conn.is_closed()

    def _need(self) -> asyncssh.SSHClientConnection:
        if self.conn is None or self.conn.is_closed():
            raise HostUnreachable(f"host {self.name}: the SSH connection is closed")
        return self.conn

    # -- commands -----------------------------------------------------------------------
    def run(
        self,
        argv: Sequence[str],
        *,
        check: bool = True,
        timeout: float | None = 60,
        input: str | None = None,
    ) -> Completed:
        line = command_line(argv)
        conn = self._need()
        try:
            res = call(conn.run(line, check=False, input=input), timeout=timeout)
        except TimeoutError:
            raise HostUnreachable(
                f"host {self.name}: no answer within {timeout} s to {line[:200]}"
            ) from None
        except (OSError, asyncssh.Error) as e:
            raise HostUnreachable(
                f"host {self.name}: connection lost running {line[:200]} ({e})"
            ) from None
        if res.exit_status is None and res.exit_signal is None:
            # the channel closed without an exit status: the server (or the link) went away
            raise HostUnreachable(
                f"host {self.name}: connection lost running {line[:200]} (no exit status)"
            )
        rc = res.exit_status if res.exit_status is not None else -9
        out = Completed(list(map(str, argv)), rc, res.stdout or "", res.stderr or "")
        if check and rc != 0:
            raise CommandFailed(self.name, out.argv, rc, out.stderr or out.stdout)
        return out

    def process(self, argv: Sequence[str]) -> RemoteProc:
        line = command_line(argv)
        conn = self._need()
        try:
            proc = call(conn.create_process(line, encoding=None), timeout=30)
        except (OSError, asyncssh.Error, TimeoutError) as e:
            raise HostUnreachable(f"host {self.name}: cannot start {line[:200]} ({e})") from None
        return RemoteProc(proc)

    # -- files --------------------------------------------------------------------------
    def put(self, local: Path, remote: str, mode: int | None = None) -> None:
        async def go():
            async with self._need().start_sftp_client() as sftp:
                await sftp.put(str(local), remote)
                if mode is not None:
                    await sftp.chmod(remote, mode)

        self._sftp(go, f"copying {local} to {remote}")

    def get(self, remote: str, local: Path) -> None:
        """Copy a remote directory (recursively) or file to `local`."""

        async def go():
            async with self._need().start_sftp_client() as sftp:
                if not await sftp.exists(remote):
                    return
                if await sftp.isdir(remote):
                    local.mkdir(parents=True, exist_ok=True)
                    for name in await sftp.listdir(remote):
                        if name in (".", ".."):
                            continue
                        src = f"{remote}/{name}"
                        if await sftp.isdir(src):
                            await sftp.get(src, str(local / name), recurse=True)
                        else:
                            await sftp.get(src, str(local / name))
                else:
                    local.parent.mkdir(parents=True, exist_ok=True)
                    await sftp.get(remote, str(local))

        self._sftp(go, f"copying {remote} from it")

    def read_text(self, remote: str) -> str | None:
        async def go():
            async with self._need().start_sftp_client() as sftp:
                try:
                    async with sftp.open(remote, "r") as f:
                        return await f.read()
                except asyncssh.SFTPNoSuchFile:
                    return None

        return self._sftp(go, f"reading {remote}")

    def write_text(self, remote: str, text: str) -> None:
        """Written to a temporary name, then renamed: a reader sees old or new, whole."""

        async def go():
            async with self._need().start_sftp_client() as sftp:
                tmp = remote + ".tmp"
                async with sftp.open(tmp, "w") as f:
                    await f.write(text)
                await sftp.posix_rename(tmp, remote)

        self._sftp(go, f"writing {remote}")

    def _sftp(self, go, what: str, timeout: float = 120):
        try:
            return call(go(), timeout=timeout)
        except TimeoutError:
            raise HostUnreachable(
                f"host {self.name}: no answer within {timeout} s {what}"
            ) from None
        except (OSError, asyncssh.Error) as e:
            raise HostUnreachable(f"host {self.name}: {what} failed: {e}") from None


class _Stdin:
    def __init__(self, proc: asyncssh.SSHClientProcess):
        self.proc = proc

    def write(self, data: bytes) -> None:
        if self.proc.is_closing():
            raise BrokenPipeError("the remote process's channel is closed")
        loop().call_soon_threadsafe(self.proc.stdin.write, data)

    def flush(self) -> None:
        pass


class _Lines:
    """The remote stdout as an iterator of byte lines (ends at EOF)."""

    def __init__(self, q: queue.Queue):
        self.q = q

    def __iter__(self):
        while True:
            line = self.q.get()
            if line is None:
                return
            yield line


class _Buffer:
    def __init__(self):
        self.data = bytearray()

    def read(self) -> bytes:
        return bytes(self.data)


class RemoteProc:
    """What the engine needs of a `subprocess.Popen` for a program on a remote host."""

    def __init__(self, proc: asyncssh.SSHClientProcess):
        self.proc = proc
        self.pid = None
        self.returncode: int | None = None
        self.stdin = _Stdin(proc)
        self._lines: queue.Queue = queue.Queue()
        self.stdout = _Lines(self._lines)
        self.stderr = _Buffer()
        self._done = threading.Event()
        asyncio.run_coroutine_threadsafe(self._pump(), loop())

    async def _pump(self) -> None:
        async def err():
            try:
                while chunk := await self.proc.stderr.read(4096):
                    self.stderr.data += chunk[-4096:]
            except (OSError, asyncssh.Error):
                pass

        task = asyncio.ensure_future(err())
        try:
            while line := await self.proc.stdout.readline():
                self._lines.put(line)
        except (OSError, asyncssh.Error):
            pass
        finally:
            self._lines.put(None)
            try:
                await asyncio.wait_for(self.proc.wait_closed(), 5)
            except (TimeoutError, OSError, asyncssh.Error):
                pass
            await asyncio.wait([task], timeout=1)
            st = self.proc.exit_status
            self.returncode = st if st is not None and st >= 0 else -9
            self._done.set()

    def poll(self) -> int | None:
        return self.returncode if self._done.is_set() else None

    def communicate(self, input=None, timeout: float | None = None) -> tuple[bytes, bytes]:
        """Everything it printed until its end (as `Popen.communicate`, bytes)."""
        import subprocess
        import time

        deadline = None if timeout is None else time.monotonic() + timeout
        out = []
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                assert timeout is not None  # (without one, the get waits for a line)
                raise subprocess.TimeoutExpired("remote process", timeout) from None
            if line is None:
                break
            out.append(line)
        self._done.wait(5)
        return b"".join(out), self.stderr.read()

    def wait(self, timeout: float | None = None) -> int:
        import subprocess

        if timeout is None:
            self._done.wait()
        elif not self._done.wait(timeout):
            raise subprocess.TimeoutExpired("remote process", timeout)
        assert self.returncode is not None  # (set before _done)
        return self.returncode

    def kill(self) -> None:
        """Closing the channel: the remote program sees EOF on its stdin (the worker then
        kills what it started)."""
        loop().call_soon_threadsafe(self.proc.close)

    terminate = kill
