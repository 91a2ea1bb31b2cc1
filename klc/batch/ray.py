"""The Ray executor: files as Ray tasks on a local instance or a cluster (``--address``);
the driver sends each file's bytes, so no shared file system is assumed.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, Any

from klc.batch.config import ERROR, REWRITTEN, BatchConfig, FileResult
from klc.batch.local import OnResult
from klc.batch.walk import Source
from klc.batch.worker import WorkerState, _gate_job, _read, _rules_for, _tune_gc, process_bytes
from klc.errors import KlcError, shown

if TYPE_CHECKING:
    pass

class RayExecutor:
    """The same work as Ray tasks, on a local Ray instance or a cluster (``--address``).

    Files are tasks: the driver reads each file and sends its bytes (no shared file system
    is assumed), the task returns the result with the new bytes, and the driver writes.
    Rules travel as text inside the configuration and are compiled once per Ray worker
    process. With ``--gate`` and GPUs in the cluster, each candidate is gated by a task that
    asks for ``num_gpus=1`` (Ray sets ``CUDA_VISIBLE_DEVICES`` for it); without GPUs the gate
    runs in the file's task (compile only), as locally. With ``--optimize`` and GPUs, the
    file's task itself asks for one GPU. At most ``inflight`` tasks are outstanding, so the
    driver never holds more than that many files' bytes."""

    name = "ray"

    def __init__(self, address: str | None = None, inflight: int | None = None,
                 jobs: int | None = None) -> None:
        self.address = address
        self.inflight = inflight
        self.jobs = jobs  # CPUs of a new local instance (none: all of this machine's)
        self.gpus = 0
        self._started = False

    def start(self) -> None:
        """Join the cluster (or start a local instance): before anything is written."""
        from klc.extras import require

        ray = require("ray", "--executor ray")
        if ray.is_initialized():
            return
        if self.address:
            _probe(self.address)
        kw: dict[str, Any] = {}
        if self.address is None and not os.environ.get("RAY_ADDRESS"):
            kw = {"_node_ip_address": "127.0.0.1", "num_cpus": self.jobs}  # local only
        try:
            ray.init(address=self.address, include_dashboard=False, log_to_driver=False,
                     configure_logging=False, **kw)
        except (ConnectionError, RuntimeError, ValueError) as e:
            where = self.address or "a new local instance"
            raise KlcError(f"--executor ray: cannot start or reach Ray at {where}: "
                           f"{str(e).splitlines()[0] if str(e) else type(e).__name__}"
                           ) from None
        self._started = True

    def stop(self) -> None:
        if self._started:
            import ray

            ray.shutdown()
            self._started = False

    def run(self, config: BatchConfig, sources: list[Source], on_result: OnResult,
            want_diff: bool, send_unchanged: bool) -> None:
        import ray

        if not ray.is_initialized():
            self.start()
        self._run(ray, config, sources, on_result, want_diff, send_unchanged)

    def _run(self, ray: Any, config: BatchConfig, sources: list[Source], on_result: OnResult,
             want_diff: bool, send_unchanged: bool) -> None:
        resources = ray.cluster_resources()
        self.gpus = int(resources.get("GPU", 0))
        use_gpus = self.gpus > 0 and (config.gate or config.optimize)
        gate_in_task = not (use_gpus and config.gate and not config.optimize)
        file_task = ray.remote(num_cpus=1, num_gpus=1 if use_gpus and config.optimize else 0,
                               max_retries=1)(_ray_file)
        gate_task = ray.remote(num_cpus=1, num_gpus=1, max_retries=1)(_ray_gate)
        cfg = ray.put(config)
        limit = self.inflight or max(4, 4 * int(resources.get("CPU", 1)))
        queue = iter(sources)
        running: dict[Any, Source] = {}

        def submit_next() -> bool:
            for src in queue:
                try:
                    data = _read(src.path)
                except KlcError as e:
                    on_result(src, FileResult(src.path, ERROR, str(e)))
                    continue
                running[file_task.remote(cfg, data, src.path, want_diff, gate_in_task,
                                         send_unchanged)] = src
                return True
            return False

        try:
            while len(running) < limit and submit_next():
                pass
            while running:
                done, _ = ray.wait(list(running), num_returns=1)
                ref = done[0]
                src = running.pop(ref)
                res = _ray_result(ray, ref, src)
                if res.original is not None and res.status == REWRITTEN:
                    running[gate_task.remote(cfg, res, send_unchanged)] = src
                else:
                    on_result(src, res)
                    submit_next()
        except BaseException:
            for ref in running:
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)
            raise


def _probe(address: str, timeout: float = 10.0) -> None:
    """Fail fast on a cluster address nobody answers at (Ray itself retries for minutes)."""
    import socket

    hostport = address.split("://", 1)[-1]
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        return  # "auto", "local": Ray's own words
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as e:
        raise KlcError(f"--address {address}: no Ray cluster answers there "
                       f"({e.strerror or e})") from None


def _ray_result(ray: Any, ref: Any, src: Source) -> FileResult:
    try:
        return ray.get(ref)
    except Exception as e:  # the task's process died (a fault the gate did not catch)
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return FileResult(src.path, ERROR, f"{shown(src.path)}: Ray task failed: {first}")


def _ray_file(config: BatchConfig, data: bytes, path: str, want_diff: bool,
              gate_inline: bool, send_unchanged: bool) -> FileResult:
    """A Ray task: one file, from its bytes."""
    _tune_gc()  # a Ray worker process serves this batch's tasks
    _use_flags(config)
    state = WorkerState(config, _rules_for(config), want_diff, gate_inline,
                        config.gate and not gate_inline, send_unchanged)
    return process_bytes(state, data, path)


def _ray_gate(config: BatchConfig, res: FileResult, send_unchanged: bool) -> FileResult:
    """A Ray task with one GPU: gate one rewritten file."""
    _use_flags(config)
    return _gate_job(config, res, send_unchanged)


def _use_flags(config: BatchConfig) -> None:
    """The command's -I/-D in this Ray worker (klc.cuda.flags reads the environment)."""
    if config.build_flags:
        os.environ["KLC_BUILD_FLAGS"] = config.build_flags
    else:
        os.environ.pop("KLC_BUILD_FLAGS", None)
