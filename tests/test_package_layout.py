"""The package's shape: the core never imports the front ends, ``import pysdcmicro`` is
cheap, and the wheel holds the one package ``pysdcmicro`` with its bridges inside."""

from __future__ import annotations

import ast
import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import pysdcmicro

PACKAGE_DIR = Path(pysdcmicro.__file__).parent
REPO = Path(__file__).resolve().parents[1]


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports anywhere (module level, inside functions, relative
    imports resolved, ``importlib.import_module("...")`` with a literal name), together with
    ``module.name`` for each ``from module import name``, since the name can be a submodule."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and getattr(node.func, "attr", getattr(node.func, "id", None)) in ("import_module", "__import__")):
            target = node.args[0].value
            if target.startswith("."):
                anchor = package
                if len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
                    anchor = str(node.args[1].value)
                level = len(target) - len(target.lstrip("."))
                base = anchor.split(".")
                target = ".".join(base[:len(base) - level + 1] + [target.lstrip(".")])
            found.add(target)
    return found


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _import_map() -> dict[str, set[str]]:
    return {_module_name(path): _imports(path) for path in sorted(PACKAGE_DIR.rglob("*.py"))
            if "__pycache__" not in path.parts}


FRONT_ENDS = ("pysdcmicro.bridges", "pysdcmicro.cli", "pysdcmicro.__main__")


def test_the_core_never_imports_the_bridges():
    imports = _import_map()
    # the scan sees function-level and relative imports: the command line's sdcmicro command
    # imports the bridge inside a function, as `from ..bridges import sdcmicro`
    assert any(_within(m, "pysdcmicro.bridges") for importer, targets in imports.items()
               if _within(importer, "pysdcmicro.cli") for m in targets), "the scan missed cli's import"
    offenders = sorted(f"{importer} imports {target}" for importer, targets in imports.items()
                       if not any(_within(importer, front) for front in FRONT_ENDS)
                       for target in targets if _within(target, "pysdcmicro.bridges"))
    assert offenders == []
    # nor does ``pysdcmicro.__getattr__`` load them
    lazy = {f"pysdcmicro{m}" for m in pysdcmicro._LAZY.values()} | {f"pysdcmicro.{m}" for m in pysdcmicro._SUBMODULES}
    assert not any(_within(m, front) for m in lazy for front in FRONT_ENDS)


def _fresh_python(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(PACKAGE_DIR.parent)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.mark.subprocess
def test_import_pysdcmicro_imports_nothing_heavy():
    heavy = _fresh_python(
        "import sys, pysdcmicro\n"
        "assert pysdcmicro.__file__.startswith(" + repr(str(PACKAGE_DIR)) + "), pysdcmicro.__file__\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'pandas', 'rpy2', 'numba', 'scipy'}),"
        " sorted(m for m in sys.modules if m.startswith('pysdcmicro.')))")
    assert heavy == "[] []"


def test_public_names_load_on_first_use():
    assert set(pysdcmicro.__all__) <= set(dir(pysdcmicro))
    assert set(pysdcmicro._LAZY) <= set(pysdcmicro.__all__)  # the table holds no hidden public name
    for name in pysdcmicro.__all__:
        assert getattr(pysdcmicro, name) is not None, name
    assert pysdcmicro.mdav is sys.modules["pysdcmicro._methods"].mdav
    assert pysdcmicro.microaggregate is sys.modules["pysdcmicro._api"].microaggregate
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        pysdcmicro.no_such_name  # noqa: B018


def _copy_source(dst: Path) -> None:
    """The checkout as a build sees it, without version control or build outputs."""
    skip = {".git", "build", "dist", "__pycache__", ".venv", ".venv-docs", "venv", ".pytest_cache",
            ".hypothesis", "_build", "tmp"}
    shutil.copytree(REPO, dst, ignore=lambda folder, names: [
        n for n in names if n in skip or n.endswith(".egg-info")])


@pytest.mark.subprocess
@pytest.mark.slow
def test_wheel_holds_the_one_package_with_its_bridges(tmp_path):
    src, dist = tmp_path / "src", tmp_path / "dist"
    _copy_source(src)
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(src), "-w", str(dist)],
                         capture_output=True, text=True, timeout=600)
    if out.returncode != 0 and ("No matching distribution found" in out.stderr
                                or "Could not find a version that satisfies" in out.stderr):
        pytest.skip("pip cannot install the build requirements (setuptools) here: " + out.stderr.strip()[-300:])
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    (wheel,) = dist.glob("pysdcmicro-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        entry_points = zf.read(f"{dist_info}/entry_points.txt").decode()
    top = {n.split("/")[0] for n in names}
    extension = {n for n in top if n.startswith("_pysdcmicro_kernels.")}  # pysdcmicro/_aot.py
    assert top - extension == {"pysdcmicro", dist_info}
    if importlib.util.find_spec("numba") is not None and importlib.util.find_spec("numba.pycc") is not None:
        assert len(extension) == 1, "the build did not compile the kernels ahead of time"
    packaged = {n for n in names if n.startswith("pysdcmicro/") and n.endswith(".py")}
    source = {path.relative_to(REPO).as_posix() for path in (REPO / "pysdcmicro").rglob("*.py")
              if "__pycache__" not in path.parts}
    assert source - packaged == set()
    assert {"pysdcmicro/bridges/__init__.py", "pysdcmicro/bridges/sdcmicro.py", "pysdcmicro/cli/_sdcmicro.py",
            "pysdcmicro/__main__.py"} <= packaged
    assert "pysdcmicro = pysdcmicro.__main__:main" in entry_points
