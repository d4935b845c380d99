"""``pysdcmicro sdcmicro IN.rds OUT.rds`` and the R package ``bridges/R/pysdcmicro``, marked ``r``.

* Argument errors and ``--list-methods`` need neither R nor rpy2.
* Missing R / rpy2 are faked in a subprocess; a missing sdcMicro is shown by running the
  command with R libraries that lack it.
* Reading files needs R and rpy2; sdcMicroObj work needs sdcMicro (skips with the reason
  elsewhere). The reference is the in-process bridge and sdcMicro's own
  ``microaggregation()``, called live on the same object.
* The R package's testthat suite runs (R CMD INSTALL into a temporary library, reticulate
  pointed at this Python) where R, reticulate and
  testthat are installed; its sdcMicro tests skip inside R when sdcMicro is absent.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pysdcmicro.bridges import sdcmicro as bridge
from pysdcmicro.cli import main

pytestmark = pytest.mark.r

REPO = Path(__file__).resolve().parents[2]
RPKG = REPO / "bridges" / "R" / "pysdcmicro"


def _command(*args: str, env: dict | None = None, code: str | None = None) -> subprocess.CompletedProcess:
    """`pysdcmicro ARGS` in a fresh Python (optionally after `code`), with `env` changes (None removes)."""
    full = dict(os.environ)
    for key, value in (env or {}).items():
        if value is None:
            full.pop(key, None)
        else:
            full[key] = value
    prog = textwrap.dedent(code or "") + "\nimport sys\nfrom pysdcmicro.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    return subprocess.run([sys.executable, "-c", prog, *args], capture_output=True, text=True, env=full,
                          cwd=str(REPO), timeout=300)


@pytest.fixture(scope="module")
def r_only():
    try:
        return bridge.check_r(sdcmicro=False)
    except bridge.RUnavailableError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def sdc(sdcmicro_r):
    return sdcmicro_r[1]


# --------------------------------------------------------------------------------------
# No R needed
# --------------------------------------------------------------------------------------

def test_list_methods_needs_no_r(capsys):
    assert main(["sdcmicro", "--list-methods"]) == 0
    lines = capsys.readouterr().out.splitlines()
    names = [line.split("\t")[0] for line in lines]
    assert {"mdav", "icsm", "vmdav"} <= set(names)
    assert all(len(line.split("\t")) == 2 and line.split("\t")[1] for line in lines)


@pytest.mark.subprocess
def test_building_the_parser_does_not_import_rpy2():
    out = subprocess.run([sys.executable, "-c", "import sys; from pysdcmicro.cli import _build_parser, main\n"
                          "_build_parser(); main(['sdcmicro', '--list-methods'])\n"
                          "print('RPY2', 'rpy2' in sys.modules)"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("RPY2 False")


@pytest.mark.parametrize("argv,message", [
    (["sdcmicro"], "`sdcmicro` needs IN.rds and OUT.rds; got neither."),
    (["sdcmicro", "in.rds"], "`sdcmicro` needs IN.rds and OUT.rds; got only IN.rds."),
    (["sdcmicro", "in.rds", "out.rds"], "`--k` is required (the minimum group size, sdcMicro's aggr); got none."),
    (["sdcmicro", "/nonexistent/in.rds", "out.rds", "--k", "3"], "IN.rds '/nonexistent/in.rds' does not exist"),
])
def test_argument_errors(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("pysdcmicro: error: ") and message in err


def test_unknown_method_and_option_fail_before_r_starts(tmp_path, capsys):
    src = tmp_path / "in.rds"
    src.write_bytes(b"not read")
    assert main(["sdcmicro", str(src), str(tmp_path / "out.rds"), "--k", "3", "--method", "mdva"]) == 2
    assert "unknown method 'mdva'" in capsys.readouterr().err
    assert main(["sdcmicro", str(src), str(tmp_path / "out.rds"), "--k", "3", "--method", "vmdav",
                 "--option", "gama=0.2"]) == 2
    assert "gama" in capsys.readouterr().err
    assert not (tmp_path / "out.rds").exists()


@pytest.mark.subprocess
def test_missing_r_and_missing_rpy2(tmp_path):
    src = tmp_path / "in.rds"
    src.write_bytes(b"x")
    out = _command("sdcmicro", str(src), str(tmp_path / "o.rds"), "--k", "3",
                   env={"PATH": str(tmp_path), "R_HOME": None})
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("pysdcmicro: error: R not found: ")
    out = _command("sdcmicro", str(src), str(tmp_path / "o.rds"), "--k", "3",
                   code='import sys; sys.modules["rpy2"] = None', env={"R_HOME": str(tmp_path)})
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("pysdcmicro: error: rpy2 not importable: ")
    assert 'pip install "pysdcmicro[r]"' in out.stderr


# --------------------------------------------------------------------------------------
# R and rpy2
# --------------------------------------------------------------------------------------

def test_not_an_rds_file_and_not_an_sdcmicroobj(r_only, tmp_path, capsys):
    bad = tmp_path / "bad.rds"
    bad.write_text("hello\n")
    assert main(["sdcmicro", str(bad), str(tmp_path / "o.rds"), "--k", "3"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"pysdcmicro: error: IN.rds '{bad}' could not be read by R's readRDS(): ")
    import rpy2.robjects as ro

    frame = tmp_path / "frame.rds"
    ro.r("function(p) saveRDS(data.frame(a = 1:5, b = 5:1), p)")(str(frame))
    assert main(["sdcmicro", str(frame), str(tmp_path / "o.rds"), "--k", "3"]) == 2
    err = capsys.readouterr().err
    assert (f"pysdcmicro: error: IN.rds '{frame}' must hold an sdcMicroObj (an S4 object from "
            "sdcMicro::createSdcObj(), saved with saveRDS()); it holds an object of class data.frame.") in err
    assert not (tmp_path / "o.rds").exists()


# --------------------------------------------------------------------------------------
# sdcMicro
# --------------------------------------------------------------------------------------

def _same(ro, a, b, tolerance=1e-12):
    out = list(ro.r("function(a, b, tol) all.equal(a, b, tolerance = tol)")(a, b, tolerance))
    return out == [True], out


def test_command_equals_the_bridge_and_sdcmicro(sdc, casc, tmp_path, capsys):
    ro = sdc
    df = casc("tarragona")
    obj = bridge.to_sdcmicro(df, num_vars=list(df.columns))
    src, dst = tmp_path / "in.rds", tmp_path / "out.rds"
    ro.r("saveRDS")(obj, str(src))
    assert main(["sdcmicro", str(src), str(dst), "--k", "3", "--method", "mdav"]) == 0
    summary = capsys.readouterr().out
    assert summary.startswith("mdav: k=3, 834 records, ") and "status done" in summary
    ours = ro.r("readRDS")(str(dst))
    ok, why = _same(ro, ours, bridge.microaggregation(obj, aggr=3, method="mdav"))
    assert ok, why
    ok, why = _same(ro, ours, ro.r("sdcMicro::microaggregation")(obj, aggr=3, method="mdav"))
    assert ok, why
    assert ro.r("identical")(ro.r("sdcMicro::undolast")(ours), obj)[0]
    # options, seed and variables pass through; OUT.rds may be IN.rds itself
    cols = list(df.columns)
    assert main(["sdcmicro", str(src), str(src), "--k", "4", "--method", "vmdav", "--option", "gamma=0.2",
                 "--variables", ",".join(cols[:5]), "--seed", "1", "-q"]) == 0
    assert capsys.readouterr().out == ""
    again = ro.r("readRDS")(str(src))
    ok, why = _same(ro, again, bridge.microaggregation(obj, variables=cols[:5], aggr=4, method="vmdav", gamma=0.2,
                                                      rng=1))
    assert ok, why


@pytest.mark.subprocess
def test_command_errors_with_sdcmicro(sdc, tmp_path, capsys):
    ro = sdc
    obj = ro.r("""function() {
        e <- new.env(); utils::data("testdata", package = "sdcMicro", envir = e)
        sdcMicro::createSdcObj(e$testdata, keyVars = c("urbrur", "roof"), numVars = c("expend", "income", "savings"))
    }""")()
    src = tmp_path / "in.rds"
    ro.r("saveRDS")(obj, str(src))
    assert main(["sdcmicro", str(src), str(tmp_path / "o.rds"), "--k", "3", "--variables", "incme"]) == 2
    assert "unknown column 'incme' in `variables`. Did you mean 'income'?" in capsys.readouterr().err
    assert main(["sdcmicro", str(src), str(tmp_path / "o.rds"), "--k", "5000"]) == 2
    assert "aggr" in capsys.readouterr().err
    assert not (tmp_path / "o.rds").exists()
    # Without sdcMicro in R's libraries (it is found through R_LIBS here): the bridge's message.
    if not os.environ.get("R_LIBS") and not os.environ.get("R_LIBS_USER"):
        pytest.skip("sdcMicro is in a default R library here; cannot hide it to test the missing-sdcMicro message")
    empty = tmp_path / "emptylib"
    empty.mkdir()
    out = _command("sdcmicro", str(src), str(tmp_path / "o.rds"), "--k", "3",
                   env={"R_LIBS": str(empty), "R_LIBS_USER": str(empty)})
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("pysdcmicro: error: sdcMicro not installed in R: install.packages('sdcMicro')")


# --------------------------------------------------------------------------------------
# The R package
# --------------------------------------------------------------------------------------

def _r_has(package: str) -> bool:
    out = subprocess.run(["Rscript", "-e", f"cat(requireNamespace('{package}', quietly = TRUE))"],
                         capture_output=True, text=True, timeout=120)
    return out.stdout.strip().endswith("TRUE")


@pytest.mark.subprocess
@pytest.mark.slow
def test_r_package_testthat(tmp_path):
    """R CMD INSTALL the package into a temporary library and run its testthat tests with
    reticulate pointed at this Python; the sdcMicro tests run where R finds sdcMicro (R_LIBS)."""
    if shutil.which("R") is None:
        pytest.skip("R not found")
    if not _r_has("testthat"):
        pytest.skip("R package testthat not installed (Debian: apt-get install r-cran-testthat)")
    if not _r_has("reticulate"):
        pytest.skip("R package reticulate not installed (Debian: apt-get install r-cran-reticulate)")
    lib = tmp_path / "lib"
    lib.mkdir()
    inst = subprocess.run(["R", "CMD", "INSTALL", "--no-test-load", "-l", str(lib), str(RPKG)],
                          capture_output=True, text=True, timeout=300)
    assert inst.returncode == 0, inst.stdout[-2000:] + inst.stderr[-2000:]
    libs = os.pathsep.join([str(lib)] + [p for p in os.environ.get("R_LIBS", "").split(os.pathsep) if p])
    env = {**os.environ, "R_LIBS": libs, "RETICULATE_PYTHON": sys.executable}
    run = subprocess.run(["Rscript", "-e", "library(testthat); library(pysdcmicro); "
                          "res <- as.data.frame(test_dir('tests/testthat', reporter = 'summary', stop_on_failure = FALSE)); "
                          "cat('\\nRESULT', sum(res$failed), sum(res$error), sum(res$skipped), sum(res$nb), '\\n')"],
                         capture_output=True, text=True, timeout=900, cwd=str(RPKG), env=env)
    tail = run.stdout[-3000:] + run.stderr[-2000:]
    assert run.returncode == 0, tail
    result = [line for line in run.stdout.splitlines() if line.startswith("RESULT")]
    assert result, tail
    failed, errors, skipped, expectations = (int(float(x)) for x in result[-1].split()[1:])
    assert failed == 0 and errors == 0, tail
    assert expectations > 20, tail
