"""Each extra alone in a fresh venv, installed offline, running its framework's doc examples.

Run::

    bash scripts/wheelhouse.sh                 # once, online: every dependency wheel
    python -m benchmarks.extras_venvs [--extras local,langgraph] [--out FILE.md]

The project wheel is built from this checkout; every other wheel comes from the
wheelhouse (``.cache/wheels``, or ``$UCMA_WHEELHOUSE``) that ``scripts/wheelhouse.sh``
fills. Each extra gets its own venv (``uv venv`` + ``uv pip install --offline
--no-index``), and its examples are the Python blocks of the docs marked
``<!-- extra: NAME -->`` on the line above their fence, so the docs stay the one
source of truth (``tests/test_docs.py`` runs the same blocks in the dev venv).

The examples run in a child process without network: in a network namespace of its
own (``unshare -n``) where the system allows one, and always behind a socket guard
(a ``sitecustomize`` in the venv) that refuses every non-loopback connection and name
lookup and logs it, so an attempt a library swallows still fails the run. ``HOME``
and ``TMPDIR`` (where tiktoken caches what it downloads) are empty folders, so
nothing downloaded earlier on this machine can stand in for a file the venv lacks.

The report gives, per extra, the size of the venv on disk (all files, as ``du``
counts them) and the frameworks it holds. ``tests/test_extras_offline.py`` runs the
same functions (slow; CI runs it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKED = re.compile(r"<!-- extra: ([\w-]+) -->\n```python\n(.*?)```", re.S)

#: The extras a user installs one at a time, as docs/getting-started.md lists them
#: (``core``: ``ucma`` with no extra).
EXTRAS = ("core", "local", "langchain", "agents", "langgraph", "llamaindex")

#: Distributions that are a framework (or a heavy model stack) UCMA integrates with.
FRAMEWORKS = frozenset(
    {
        "langchain",
        "langchain-classic",
        "langchain-core",
        "langgraph",
        "llama-index-core",
        "openai",
        "torch",
        "transformers",
        "sentence-transformers",
        "matplotlib",
    }
)

#: The frameworks each extra is for; any other one in its venv is pulled for nothing.
USES: dict[str, frozenset[str]] = {
    "core": frozenset(),
    "local": frozenset(),
    "langchain": frozenset({"langchain-core", "langchain-classic"}),
    # langchain's create_agent runs on langgraph
    "agents": frozenset({"langchain-core", "langchain-classic", "langchain", "langgraph"}),
    "langgraph": frozenset({"langchain-core", "langgraph"}),
    "llamaindex": frozenset({"llama-index-core"}),
}

_GUARD = '''
"""Written by benchmarks/extras_venvs.py: no network but loopback in this venv."""
import os
import socket

_LOG = os.environ.get("UCMA_NET_LOG")
_LOCAL = {None, "localhost", "127.0.0.1", "::1", b"localhost", b"127.0.0.1"}


def _refuse(what):
    if _LOG:
        with open(_LOG, "a", encoding="utf-8") as log:
            log.write(what + "\\n")
    raise OSError(f"network blocked (offline test): {what}")


def _check(sock, address):
    if sock.family == getattr(socket, "AF_UNIX", None):
        return
    host = address[0] if isinstance(address, tuple) else address
    if host not in _LOCAL:
        _refuse(f"connect {address!r}")


_connect, _connect_ex, _getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo


def connect(self, address):
    _check(self, address)
    return _connect(self, address)


def connect_ex(self, address):
    _check(self, address)
    return _connect_ex(self, address)


def getaddrinfo(host, *args, **kwargs):
    if host not in _LOCAL:
        _refuse(f"getaddrinfo {host!r}")
    return _getaddrinfo(host, *args, **kwargs)


socket.socket.connect = connect
socket.socket.connect_ex = connect_ex
socket.getaddrinfo = getaddrinfo
'''

_RUNNER = """
import json, os, socket, sys, tempfile, traceback

blocks = json.load(open(sys.argv[1], encoding="utf-8"))
log = os.environ["UCMA_NET_LOG"]
try:  # the guard is in place (a connection anywhere is refused)
    socket.create_connection(("192.0.2.1", 9), timeout=1)
    sys.exit("the socket guard let a connection through")
except OSError:
    pass
assert open(log, encoding="utf-8").read(), "the socket guard did not log"
open(log, "w").close()
import ucma_core
if not ucma_core.__file__.startswith(sys.prefix):
    sys.exit(f"ucma_core was imported from {ucma_core.__file__}, not from the venv {sys.prefix}")
failed = []
for name, code in blocks:
    os.chdir(tempfile.mkdtemp())
    try:
        exec(compile(code, name, "exec"), {"__name__": "__doc_example__"})
    except BaseException:
        failed.append(name)
        traceback.print_exc()
    reached = open(log, encoding="utf-8").read()
    if reached:
        failed.append(name + " (network: " + reached.strip() + ")")
        open(log, "w").close()
    print("ran", name, flush=True)
sys.exit(("failed: " + ", ".join(failed)) if failed else 0)
"""


@dataclass(frozen=True)
class Venv:
    """One extra's venv: where it is, its size in bytes, and the distributions it holds."""

    extra: str
    path: Path
    size: int
    installed: frozenset[str]

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    @property
    def frameworks(self) -> frozenset[str]:
        return self.installed & FRAMEWORKS

    @property
    def unused(self) -> frozenset[str]:
        """Frameworks installed that the extra does not use."""
        return self.frameworks - USES[self.extra]


def wheelhouse() -> Path:
    """The folder of dependency wheels ``scripts/wheelhouse.sh`` fills."""
    return Path(os.environ.get("UCMA_WHEELHOUSE", ROOT / ".cache" / "wheels"))


def uv_bin() -> str:
    """The ``uv`` executable (``pip install uv``; it is in the ``dev`` extra)."""
    try:
        import uv

        return str(uv.find_uv_bin())
    except (ImportError, FileNotFoundError):
        found = shutil.which("uv")
        if found is None:
            raise FileNotFoundError("uv is not installed: pip install uv") from None
        return found


def examples(extra: str) -> list[tuple[str, str]]:
    """The doc blocks marked for ``extra``, as ``(file:number, code)``."""
    out = []
    for path in DOCS:
        for n, match in enumerate(MARKED.finditer(path.read_text(encoding="utf-8")), 1):
            if match.group(1) == extra:
                out.append((f"{path.name}:{extra}:{n}", match.group(2)))
    return out


def build_wheel(out: Path) -> Path:
    """This checkout's wheel (no dependencies, no network: the running venv's setuptools)."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        env=_clean_env(),
    )
    (wheel,) = out.glob("ucma-*.whl")
    return wheel


def _clean_env() -> dict[str, str]:
    """This environment without what would make a child import the checkout or go online."""
    drop = {"PYTHONPATH", "VIRTUAL_ENV", "PIP_FIND_LINKS", "OPENAI_API_KEY", "UV_INDEX_URL"}
    return {k: v for k, v in os.environ.items() if k not in drop}


def make_venv(extra: str, wheel: Path, where: Path, uv_cache: Path) -> Venv:
    """A fresh venv with ``ucma[extra]`` (``core``: no extra) from ``wheel`` and the
    wheelhouse, offline."""
    uv = uv_bin()
    env = {**_clean_env(), "UV_CACHE_DIR": str(uv_cache), "UV_OFFLINE": "1", "UV_NO_CONFIG": "1"}
    path = where / f"venv-{extra}"
    wanted = "ucma" if extra == "core" else f"ucma[{extra}]"
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(path)], check=True, env=env)
    done = subprocess.run(
        [
            *(uv, "pip", "install", "-q", "--python", str(path / "bin" / "python")),
            *("--offline", "--no-index", "--find-links", str(wheelhouse())),
            f"{wanted} @ {wheel.as_uri()}",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"installing {wanted} offline failed:\n{done.stderr}")
    listed = subprocess.run(
        [
            str(path / "bin" / "python"),
            "-c",
            "import importlib.metadata as m, json; "
            "print(json.dumps([d.metadata['Name'] for d in m.distributions()]))",
        ],
        capture_output=True,
        text=True,
        check=True,
        env=_clean_env(),
    )
    names = frozenset(re.sub(r"[-_.]+", "-", n).lower() for n in json.loads(listed.stdout))
    return Venv(extra, path, _size(path), names)


def _size(path: Path) -> int:
    """Bytes of every file under ``path`` (links not followed), as ``du`` counts them."""
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            total += os.lstat(os.path.join(folder, name)).st_blocks * 512
    return total


def _site_packages(venv: Path) -> Path:
    (site,) = venv.glob("lib/python*/site-packages")
    return site


def run_examples(venv: Venv, work: Path) -> subprocess.CompletedProcess[str]:
    """Run the extra's doc examples in the venv, offline; the finished child process."""
    (_site_packages(venv.path) / "sitecustomize.py").write_text(textwrap.dedent(_GUARD))
    work.mkdir(parents=True, exist_ok=True)
    (work / "blocks.json").write_text(json.dumps(examples(venv.extra)))
    (work / "runner.py").write_text(_RUNNER)
    for sub in ("home", "tmp"):
        (work / sub).mkdir(exist_ok=True)
    log = work / "network.log"
    log.write_text("")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(work / "home"),
        "TMPDIR": str(work / "tmp"),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
        "UCMA_NET_LOG": str(log),
        "PYTHONWARNINGS": "ignore::DeprecationWarning",
    }
    command = [str(venv.python), str(work / "runner.py"), str(work / "blocks.json")]
    return subprocess.run(
        [*_no_network(), *command],
        capture_output=True,
        text=True,
        env=env,
        cwd=work,
        check=False,
        timeout=600,
    )


def _no_network() -> list[str]:
    """``unshare -n`` (a network namespace with nothing but a downed loopback) where allowed."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return []
    probe = subprocess.run([unshare, "-n", "true"], capture_output=True, check=False)
    return [unshare, "-n"] if probe.returncode == 0 else []


def built(extras: tuple[str, ...], where: Path) -> Iterator[tuple[Venv, subprocess.CompletedProcess[str]]]:
    """Build the wheel once, then a venv per extra with its examples run; yields each."""
    wheel = build_wheel(where / "dist")
    for extra in extras:
        venv = make_venv(extra, wheel, where, where / "uv-cache")
        yield venv, run_examples(venv, where / f"run-{extra}")


def table(rows: list[tuple[Venv, subprocess.CompletedProcess[str]]]) -> str:
    """The Markdown report: size and frameworks per extra."""
    lines = [
        "| install | venv size (MB) | distributions | frameworks in it | doc examples run offline |",
        "|---|---:|---:|---|---|",
    ]
    for venv, done in rows:
        frameworks = ", ".join(sorted(venv.frameworks)) or "none"
        status = f"{len(examples(venv.extra))} passed" if done.returncode == 0 else "FAILED"
        name = "ucma" if venv.extra == "core" else f"ucma[{venv.extra}]"
        lines.append(
            f"| `{name}` | {venv.size / 1e6:.0f} | {len(venv.installed)} | {frameworks} | {status} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--extras", default=",".join(EXTRAS))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        for venv, done in built(tuple(args.extras.split(",")), Path(tmp)):
            print(f"{venv.extra}: {venv.size / 1e6:.0f} MB, exit {done.returncode}", flush=True)
            if done.returncode != 0:
                print(done.stdout, done.stderr, sep="\n")
            rows.append((venv, done))
        report = table(rows)
    print(report)
    if args.out:
        args.out.write_text(report + "\n")


if __name__ == "__main__":
    main()
