"""The sandbox one submission's code runs in: bubblewrap for what it can see, cgroups for what it can use.

Bubblewrap (``bwrap``, https://github.com/containers/bubblewrap) starts the runner
(:mod:`transformer_course.grading.inside.runner`) and its kernel in new namespaces:

* **files**: the Python environment read-only; the course package in a copy that lacks what the
  assignment asks the learner to write (:mod:`transformer_course.grading.redaction`), mounted where
  Python finds it first, while every other copy of the package and the course directory are hidden
  under empty directories; a private ``/tmp``; a working directory ``/submission`` holding the
  submission's notebook (read-only) and the assignment's data files; matplotlib's font list, made once
  per worker (:func:`matplotlib_font_list`), read-only in its configuration directory. Nothing of the course
  (solutions, submissions, the gradebook, feedback) and no other submission is there;
* **processes**: a PID namespace of its own, so the grader's processes are invisible and, when the
  sandbox ends, everything the submission started ends with it (``--die-with-parent`` too);
* **network**: none, only a loopback of its own (the kernel talks to the runner over it);
* **user**: an unprivileged user (nobody, 65534) with no capabilities.

Limits hold for the sandbox as a whole: memory across all its processes, the number of its
processes (or threads) and the CPU time it may use (a quota of ``cpus`` cores) are set on a cgroup
of its own (cgroup v1's memory, pids and cpu controllers, or cgroup v2), and every process is also
refused more than the memory limit of address space (``prlimit --as``, where ``prlimit`` is
installed). Where no cgroup can be made (not root and no delegated cgroup v2), only that per-process
limit holds: the number of processes and the CPU quota are not limited. A run does not report it
(:meth:`Cgroup.create` just returns None); README's "What grading guarantees" says so.

Nothing of the grader's paths that can be avoided reaches the sandbox: the notebook and the data
files are copied into the grader's scratch directory and mounted from there (the sandbox's
``/proc/self/mountinfo`` names the source of every mount), and the Python environment, which must
keep its path, is mounted after the sandbox's own ``/tmp``, so that an environment under ``/tmp``
stays visible.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass, field
from pathlib import Path

from .limits import GradingLimits
from .pipe import runner_command

WORKING_DIRECTORY = "/submission"  # the kernel's working directory inside the sandbox
PACKAGE_DIRECTORY = "/opt/transformer-course"  # where the redacted course package is mounted
SANDBOX_USER = 65534  # nobody
CGROUP_ROOT = Path("/sys/fs/cgroup")


class SandboxUnavailable(RuntimeError):
    """Bubblewrap is missing or cannot create its namespaces here."""


def check_bubblewrap() -> None:
    """Raise :class:`SandboxUnavailable` unless ``bwrap`` is installed and can start a sandbox."""
    if shutil.which("bwrap") is None:
        raise SandboxUnavailable(
            "bubblewrap is not installed: autograde runs every submission in its sandbox "
            "(Debian/Ubuntu: apt-get install bubblewrap); --no-sandbox grades without it and gives up its protection"
        )
    probe = subprocess.run(
        [
            "bwrap",
            "--unshare-all",
            "--uid",
            str(SANDBOX_USER),
            "--gid",
            str(SANDBOX_USER),
            "--ro-bind",
            "/",
            "/",
            "true",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if probe.returncode != 0:
        raise SandboxUnavailable(f"bubblewrap cannot create a sandbox here: {probe.stderr.strip()[:300]}")


# ----------------------------------------------------------------------------- limits


@dataclass
class Cgroup:
    """A cgroup (v1: one per controller; v2: one) holding every process of one sandbox."""

    directories: tuple[Path, ...]
    version: int

    @staticmethod
    def create(name: str, limits: GradingLimits) -> Cgroup | None:
        """A fresh cgroup ``name`` with the memory, process and CPU limits, or None where none can be made."""
        period = 100_000  # microseconds; the quota is this much per core
        v1 = (CGROUP_ROOT / "memory", CGROUP_ROOT / "pids")
        if all(_writable_controller(controller) for controller in v1):
            cpu = [CGROUP_ROOT / "cpu"] if _writable_controller(CGROUP_ROOT / "cpu") else []
            directories = tuple(controller / name for controller in (*v1, *cpu))
            settings = {
                "memory.limit_in_bytes": limits.memory_limit_mb * 2**20,
                "pids.max": limits.max_processes,
                "cpu.cfs_period_us": period,
                "cpu.cfs_quota_us": limits.cpus * period,
            }
            return Cgroup._made(directories, settings, 1)
        own = _own_cgroup_v2()
        if own is not None:
            controllers = set((own / "cgroup.subtree_control").read_text().split())
            if {"memory", "pids"} <= controllers:
                settings = {
                    "memory.max": limits.memory_limit_mb * 2**20,
                    "memory.swap.max": 0,
                    "pids.max": limits.max_processes,
                    "cpu.max": f"{limits.cpus * period} {period}",
                }
                return Cgroup._made((own / name,), settings, 2)
        return None

    @staticmethod
    def _made(directories: tuple[Path, ...], settings: dict[str, int | str], version: int) -> Cgroup | None:
        try:
            for directory in directories:
                directory.mkdir()
            for setting, value in settings.items():
                for directory in directories:
                    if (directory / setting).exists():
                        (directory / setting).write_text(str(value))
        except OSError:
            Cgroup(directories, version).remove()
            return None
        return Cgroup(directories, version)

    def join_command(self) -> list[str]:
        """A command prefix that moves the command into this cgroup before it starts (children inherit it).

        A small Python program, given the cgroups' paths as arguments (no shell reads them), writes its
        process id into each and then becomes the command.
        """
        procs = [str(directory / "cgroup.procs") for directory in self.directories]
        return [sys.executable, "-I", "-S", "-c", _JOIN_CGROUPS, str(len(procs)), *procs]

    def out_of_memory_kills(self) -> int:
        """How many processes of this cgroup the kernel has killed for want of memory."""
        kills = 0
        for directory in self.directories:
            for name in ("memory.oom_control", "memory.events"):
                try:
                    for line in (directory / name).read_text().splitlines():
                        key, _, value = line.partition(" ")
                        if key == "oom_kill":
                            kills += int(value)
                except (OSError, ValueError):
                    continue
        return kills

    def kill_all(self) -> None:
        """SIGKILL every process still in the cgroup, until none is left (a few seconds at most)."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            pids = self._pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.05)

    def remove(self) -> None:
        """Kill what is left and delete the cgroup."""
        self.kill_all()
        for directory in self.directories:
            for _ in range(50):
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)

    def _pids(self) -> list[int]:
        pids = set()
        for directory in self.directories:
            try:
                pids.update(int(pid) for pid in (directory / "cgroup.procs").read_text().split())
            except (OSError, ValueError):
                continue
        return sorted(pids)


_JOIN_CGROUPS = (
    "import os, sys\n"
    "count = int(sys.argv[1])\n"
    "for path in sys.argv[2 : 2 + count]:\n"
    "    with open(path, 'w') as file:\n"
    "        file.write(str(os.getpid()))\n"
    "os.execvp(sys.argv[2 + count], sys.argv[2 + count :])\n"
)


def remove_cgroups(prefix: str) -> None:
    """Remove what is left of the cgroups named ``prefix-*`` (a sandbox whose grader was killed leaves one)."""
    own = _own_cgroup_v2()
    for controller in (CGROUP_ROOT / "memory", CGROUP_ROOT / "pids", CGROUP_ROOT / "cpu", CGROUP_ROOT, own):
        if controller is None or not controller.is_dir():
            continue
        for directory in controller.glob(f"{prefix}-*"):
            Cgroup((directory,), 1).remove()


def _writable_controller(controller: Path) -> bool:
    return (controller / "cgroup.procs").is_file() and os.access(controller, os.W_OK)


def _own_cgroup_v2() -> Path | None:
    """This process's cgroup on a cgroup v2 hierarchy, if it is there and writable."""
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            if line.startswith("0::"):
                path = CGROUP_ROOT / line[3:].lstrip("/")
                if (path / "cgroup.subtree_control").is_file() and os.access(path, os.W_OK):
                    return path
    except OSError:
        pass
    return None


# ----------------------------------------------------------------------------- the runner's command


@dataclass
class SandboxSpec:
    """Where one submission's runner starts and what it may see.

    Attributes:
        package_directory: the redacted copy of the course package (holding ``transformer_course/``).
        notebook: the submission's notebook, shown read-only in the working directory.
        data_files: files the assignment ships, shown read-only beside it.
        hidden: paths that must not be visible (the course root); each is covered by an empty directory
            where it lies inside something mounted.
        limits: memory, processes and threads.
        sandbox: False runs the runner as a plain process (``--no-sandbox``): no bubblewrap at all.
        font_list: matplotlib's font list (:func:`matplotlib_font_list`), shown read-only in the sandbox's
            ``MPLCONFIGDIR``; None: matplotlib makes its own in the sandbox.
    """

    package_directory: Path
    notebook: Path
    data_files: tuple[Path, ...]
    hidden: tuple[Path, ...]
    limits: GradingLimits
    sandbox: bool = True
    font_list: Path | None = None


@dataclass
class Launch:
    """How to start a runner: ``command + program``, its environment and working directory.

    ``bwrap_arguments``, when there are any, are options of bubblewrap (the last word of
    ``command``): :func:`transformer_course.grading.execute.started` hands them to ``bwrap --args FD``
    through a file descriptor, so that the sandbox, whose first process is bwrap itself, cannot read
    the grader's paths in its ``/proc/1/cmdline``.
    """

    command: list[str]
    program: list[str]
    environment: dict[str, str]
    directory: Path
    bwrap_arguments: list[str] = field(default_factory=list)


def runner_launch(spec: SandboxSpec, scratch: Path) -> Launch:
    """How to start the runner for ``spec``.

    ``scratch`` is a private directory of the grader; without the sandbox the runner works there.
    """
    memory = spec.limits.memory_limit_mb * 2**20
    runner = runner_command(_python(), PACKAGE_DIRECTORY if spec.sandbox else spec.package_directory)
    prlimit = ["prlimit", f"--as={memory}", "--"] if shutil.which("prlimit") else []
    settings = {
        "PYTHONPATH": PACKAGE_DIRECTORY if spec.sandbox else str(spec.package_directory),
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "NBGRADER_EXECUTION": "autograde",
        "OMP_NUM_THREADS": str(spec.limits.threads),
        "MKL_NUM_THREADS": str(spec.limits.threads),
    }
    work = scratch / "work"
    work.mkdir(parents=True, exist_ok=True)
    for path in (spec.notebook, *spec.data_files):
        shutil.copyfile(path, work / path.name)
    if not spec.sandbox:
        return Launch(prlimit, runner, dict(os.environ, **settings), work)
    host_path = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    return Launch(prlimit + ["bwrap"], ["--", *runner], host_path, scratch, _bwrap_arguments(spec, settings, work))


def _bwrap_arguments(spec: SandboxSpec, settings: dict[str, str], work: Path) -> list[str]:
    """bubblewrap's options: new namespaces, an unprivileged user, read-only Python, one notebook (from ``work``).

    bubblewrap mounts in the order of its options: the sandbox's own ``/tmp`` comes before the
    Python environment, which may itself lie under ``/tmp``.
    """
    home = "/tmp/home"
    environment = {
        "PATH": f"{_python().parent}:/usr/bin:/bin",
        "HOME": home,
        "IPYTHONDIR": f"{home}/.ipython",
        "MPLCONFIGDIR": f"{home}/.matplotlib",
        "JUPYTER_RUNTIME_DIR": f"{home}/.jupyter-runtime",
        "XDG_CACHE_HOME": f"{home}/.cache",
        "LANG": "C.UTF-8",
        **settings,
    }
    # fmt: off
    arguments = [
        "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
        "--uid", str(SANDBOX_USER), "--gid", str(SANDBOX_USER), "--hostname", "sandbox", "--clearenv",
    ]
    # fmt: on
    for name, value in environment.items():
        arguments += ["--setenv", name, value]
    arguments += _system_mounts()
    arguments += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", home]
    mounted = _python_trees()
    for tree in mounted:
        arguments += ["--ro-bind", str(tree), str(tree)]
    for covered in _covered(mounted, spec.hidden):
        arguments += ["--tmpfs", str(covered)]
    if spec.font_list is not None:
        arguments += ["--dir", environment["MPLCONFIGDIR"]]
        arguments += ["--ro-bind", str(spec.font_list), f"{environment['MPLCONFIGDIR']}/{spec.font_list.name}"]
    arguments += ["--ro-bind", str(spec.package_directory), PACKAGE_DIRECTORY, "--tmpfs", WORKING_DIRECTORY]
    for path in (spec.notebook, *spec.data_files):
        arguments += ["--ro-bind", str(work / path.name), f"{WORKING_DIRECTORY}/{path.name}"]
    return arguments + ["--chdir", WORKING_DIRECTORY]


def matplotlib_font_list(directory: Path) -> Path | None:
    """matplotlib's list of the fonts installed, made by the course's interpreter in ``directory``; None if it fails.

    matplotlib scans the installed fonts and writes this list (``fontlist-vX.json``) the first time it is
    imported with an empty ``MPLCONFIGDIR``, as every sandbox's is: about half a second of CPU per
    submission on the course's machine. Made once here, where no submission's code runs, and shown read-only
    in each sandbox, the list is read instead. Its ``HOME`` is ``directory``, as empty as the sandbox's, so
    the list names the fonts the sandbox sees (the system's and matplotlib's own).
    """
    directory.mkdir(parents=True, exist_ok=True)
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(directory),
        "MPLCONFIGDIR": str(directory),
    }
    try:
        subprocess.run(
            [str(_python()), "-I", "-c", "import matplotlib.font_manager"],
            env=environment,
            capture_output=True,
            timeout=300,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    made = sorted(directory.glob("fontlist-*.json"))
    if len(made) != 1:
        return None
    made[0].chmod(0o644)  # readable by the sandbox's user
    return made[0]


def _python() -> Path:
    """This interpreter, named by a path inside the trees the sandbox mounts: its directory resolved, its name kept.

    The name stays as it was started because a virtual environment's interpreter is often a link to the base
    one, and Python recognises the environment by the path it was started by.
    """
    executable = Path(sys.executable)
    return executable.parent.resolve() / executable.name


def _system_mounts() -> list[str]:
    """/usr read-only, and /bin, /lib... as on the host (symbolic links into /usr on merged-/usr systems)."""
    arguments = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64"):
        path = Path("/") / name
        if path.is_symlink():
            arguments += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            arguments += ["--ro-bind", str(path), str(path)]
    for name in ("/etc/ld.so.cache", "/etc/alternatives", "/etc/fonts"):
        if Path(name).exists():
            arguments += ["--ro-bind", name, name]
    return arguments


def _python_trees() -> list[Path]:
    """The directories Python needs, outside /usr: the environment, its base installation, the interpreter."""
    candidates = {
        Path(path).resolve()
        for path in (
            sys.prefix,
            sys.base_prefix,
            Path(sys.executable).resolve().parent.parent,
            sysconfig.get_paths()["purelib"],
        )
    }
    trees: list[Path] = []
    for path in sorted(candidates, key=lambda path: len(path.parts)):
        if path.parts[:2] != ("/", "usr") and not any(tree == path or tree in path.parents for tree in trees):
            trees.append(path)
    return trees


def _covered(mounted: list[Path], hidden: tuple[Path, ...]) -> list[Path]:
    """The hidden paths, and every other installed copy of the course package, that lie inside a mounted tree."""
    candidates = [Path(path).resolve() for path in hidden]
    for entry in sys.path:
        package = Path(entry or ".").resolve() / "transformer_course"
        if package.is_dir():
            candidates.append(package)
    roots = [*mounted, Path("/usr")]
    covered = []
    for path in candidates:
        if path.exists() and any(root in path.parents for root in roots) and path not in covered:
            covered.append(path)
    return covered
