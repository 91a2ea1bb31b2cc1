"""The batch's compile check with nvcc, where one is installed: the whole translation unit
(host code too, the project's headers as they are), as the project's own build compiles it.

``find_nvcc`` looks on ``PATH`` (``shutil.which``; ``$KLC_NVCC`` names another, or ``none``
turns it off); without one the check falls back to NVRTC (the gate's compile stage: device
code, host code blanked). The source is written to a temporary folder and compiled with the
file's own folder and the command's ``-I``/``-D`` (klc.cuda.flags) on the include path, so
its quoted includes resolve as they do beside the original; ``-c`` to an object that is
thrown away. nvcc is never needed: it is an option taken where present.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

ENV = "KLC_NVCC"
TIMEOUT_S = 300


@dataclass(frozen=True)
class NvccResult:
    ok: bool
    error: str  # the first error line (file:line: error ...), "" when ok
    compiler: str  # "nvcc 13.0.88"


def find_nvcc() -> str | None:
    """The nvcc to use, or None (none installed, or ``KLC_NVCC=none``)."""
    named = os.environ.get(ENV)
    if named is not None:
        if named.strip().lower() in ("", "none", "0", "off"):
            return None
        return shutil.which(named)
    return shutil.which("nvcc")


def nvcc_version(nvcc: str) -> str:
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60,
                             check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return "nvcc"
    m = re.search(r"V(\d+\.\d+\.\d+)", out)
    return f"nvcc {m.group(1)}" if m else "nvcc"


def nvcc_compile(nvcc: str, source: bytes, path: str, arch: str) -> NvccResult:
    """Compile ``source`` (named ``path``) as one translation unit for ``arch``."""
    from klc.cuda.flags import flags_for

    flags = flags_for(path)
    here = str(Path(path).resolve().parent)
    name = Path(path).name if path.endswith((".cu", ".cuh")) else "unit.cu"
    version = nvcc_version(nvcc)
    with tempfile.TemporaryDirectory(prefix="klc-nvcc-") as tmp:
        src = Path(tmp) / name
        src.write_bytes(source)
        cmd = [nvcc, "-c", "-x", "cu", f"-arch={arch}", f"-I{here}",
               *flags.compiler_options(), str(src), "-o", str(Path(tmp) / "unit.o")]
        try:
            code, log = _run(cmd)
        except subprocess.TimeoutExpired:
            return NvccResult(False, f"{path}: nvcc ran over {TIMEOUT_S} s", version)
        except OSError as e:
            return NvccResult(False, f"{path}: nvcc could not run ({e.strerror})", version)
    if code == 0:
        return NvccResult(True, "", version)
    log = log.replace(str(src), path)
    first = next((ln for ln in log.splitlines() if "error" in ln), log.strip()[:300])
    return NvccResult(False, first.strip(), version)


def _run(cmd: list[str]) -> tuple[int, str]:
    """Run nvcc in a process group of its own, and end the whole group (nvcc, cicc, ptxas,
    the host compiler) on a timeout or an interrupt: nothing is left running."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=TIMEOUT_S)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    return proc.returncode, out
