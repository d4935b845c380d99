# Tests that need neither sdcMicro nor Python: arguments, finding the command, errors.

test_that("the command comes from the option, else the environment, else the PATH", {
  withr_env <- Sys.getenv("PYSDCMICRO_COMMAND", NA)
  on.exit(if (is.na(withr_env)) Sys.unsetenv("PYSDCMICRO_COMMAND") else Sys.setenv(PYSDCMICRO_COMMAND = withr_env),
          add = TRUE)
  old <- options(pysdcmicro.command = NULL)
  on.exit(options(old), add = TRUE)
  Sys.unsetenv("PYSDCMICRO_COMMAND")
  expect_identical(pysdcmicro_command(), "pysdcmicro")
  Sys.setenv(PYSDCMICRO_COMMAND = "/opt/venv/bin/pysdcmicro")
  expect_identical(pysdcmicro_command(), "/opt/venv/bin/pysdcmicro")
  options(pysdcmicro.command = c("/usr/bin/python3", "-m", "pysdcmicro.cli"))
  expect_identical(pysdcmicro_command(), c("/usr/bin/python3", "-m", "pysdcmicro.cli"))
  options(pysdcmicro.command = 3)
  expect_error(pysdcmicro_command(), "option `pysdcmicro.command` must be a character vector")
})

test_that("obj must be an sdcMicroObj", {
  expect_error(microaggregate(data.frame(a = 1:5)),
               "`obj` must be an sdcMicroObj \\(from sdcMicro::createSdcObj\\(\\)\\); got an object of class data.frame.")
})

test_that("bad arguments fail in R with the parameter, the rule and the value", {
  old <- options(pysdcmicro.command = "/nonexistent/pysdcmicro")
  on.exit(options(old))
  o <- fake_obj()
  expect_error(microaggregate(o, aggr = 1), "`aggr` must be a whole number >= 2; got 1.", fixed = TRUE)
  expect_error(microaggregate(o, aggr = 2.5), "`aggr` must be a whole number >= 2; got 2.5.", fixed = TRUE)
  expect_error(microaggregate(o, aggr = "3"), "`aggr` must be a whole number >= 2", fixed = TRUE)
  expect_error(microaggregate(o, method = c("mdav", "icsm")), "`method` must be one method name", fixed = TRUE)
  expect_error(microaggregate(o, variables = 1:2), "`variables` must be a character vector of column names")
  expect_error(microaggregate(o, strata_variables = "a,b"), "`strata_variables` must be a character vector")
  expect_error(microaggregate(o, time_limit = 0), "`time_limit` must be a number of seconds > 0; got 0.", fixed = TRUE)
  expect_error(microaggregate(o, seed = -1), "`seed` must be a whole number >= 0; got -1.", fixed = TRUE)
  expect_error(microaggregate(o, NULL, 3, "mdav", NULL, NULL, NULL, 2), "must be named")
  expect_error(microaggregate(o, method = "icsm", max_restarts = 1:2), "method option `max_restarts` must be a single")
})

test_that("a missing command is an R error saying how to install and point to it", {
  old <- options(pysdcmicro.command = "/nonexistent/pysdcmicro")
  on.exit(options(old))
  err <- expect_error(microaggregate(fake_obj(), method = "mdav"), class = "pysdcmicro_error")
  expect_match(conditionMessage(err), "^pysdcmicro command not found: '/nonexistent/pysdcmicro'")
  expect_match(conditionMessage(err), 'pip install "pysdcmicro[r]"', fixed = TRUE)
  expect_match(conditionMessage(err), "PYSDCMICRO_COMMAND", fixed = TRUE)
})

test_that("the command's error line becomes the R error message", {
  cmd <- fake_command(c("pysdcmicro: warning: something first",
                        "pysdcmicro: error: unknown column 'incme' in `variables`. Did you mean 'income'?"), 2L)
  old <- options(pysdcmicro.command = cmd)
  on.exit(options(old))
  err <- expect_error(microaggregate(fake_obj(), method = "mdav", variables = "incme"), class = "pysdcmicro_error")
  expect_identical(conditionMessage(err),
                   "pysdcmicro: error: unknown column 'incme' in `variables`. Did you mean 'income'?")
})

test_that("a crash without an error line still says what failed", {
  cmd <- fake_command(c("Traceback (most recent call last):", "  File \"x.py\", line 1", "KeyError: 'x'"), 1L)
  old <- options(pysdcmicro.command = cmd)
  on.exit(options(old))
  err <- expect_error(pysdcmicro_methods(), class = "pysdcmicro_error")
  expect_match(conditionMessage(err), "failed with exit status 1: .*KeyError: 'x'")
})

test_that("pysdcmicro_methods() reads NAME<TAB>SUMMARY lines", {
  cmd <- fake_command(character(0), 0L, stdout_lines = c("mdav\tMDAV, fixed size", "icsm\tICSM local search"))
  old <- options(pysdcmicro.command = cmd)
  on.exit(options(old))
  expect_identical(pysdcmicro_methods(),
                   data.frame(method = c("mdav", "icsm"), summary = c("MDAV, fixed size", "ICSM local search")))
})

test_that("the real command lists its methods (needs the pysdcmicro command)", {
  skip_without_command()
  m <- pysdcmicro_methods()
  expect_true(all(c("mdav", "icsm", "vmdav") %in% m$method))
  expect_true(all(nzchar(m$summary)))
})

test_that("the real command refuses a file that holds no S4 sdcMicroObj (needs the command, R, rpy2)", {
  skip_without_command()
  err <- expect_error(microaggregate(fake_obj(), method = "mdav"), class = "pysdcmicro_error")
  if (grepl("rpy2 not importable", conditionMessage(err), fixed = TRUE))
    skip("the pysdcmicro command's Python has no rpy2 (pip install \"pysdcmicro[r]\")")
  expect_match(conditionMessage(err),
               "^pysdcmicro: error: IN.rds '.*' must hold an sdcMicroObj .*; it holds an object of class sdcMicroObj.")
})

test_that("a command path starting with ~ is expanded", {
  home <- tempfile("home-")
  dir.create(home)
  old_home <- Sys.getenv("HOME")
  on.exit(Sys.setenv(HOME = old_home), add = TRUE)
  cmd <- fake_command(character(0), 0L, stdout_lines = "mdav\tMDAV")
  file.copy(cmd, file.path(home, "pysdcmicro"))
  Sys.chmod(file.path(home, "pysdcmicro"), "0755")
  Sys.setenv(HOME = home)
  old <- options(pysdcmicro.command = "~/pysdcmicro")
  on.exit(options(old), add = TRUE)
  expect_identical(pysdcmicro_methods()$method, "mdav")
})

test_that("arguments reach the command; its warnings become R warnings; OUT.rds is read back", {
  log <- tempfile("args-")
  path <- tempfile("fake-pysdcmicro-")
  writeLines(c("#!/bin/sh",
               sprintf("printf '%%s\\n' \"$@\" > %s", shQuote(log)),
               "cp \"$2\" \"$3\"",
               "echo 'pysdcmicro: warning: status limit: time limit reached; best partition kept' >&2",
               "exit 0"), path)
  Sys.chmod(path, "0755")
  old <- options(pysdcmicro.command = path)
  on.exit(options(old))
  obj <- structure(list(tag = "x"), class = "sdcMicroObj")
  expect_warning(res <- microaggregate(obj, variables = c("a", "b"), aggr = 4, method = "icsm",
                                       strata_variables = "s", time_limit = 2.5, seed = 7,
                                       max_restarts = 2L, restart_scope = "region", flag = TRUE),
                 "^pysdcmicro: warning: status limit: time limit reached")
  expect_identical(res, obj)
  args <- readLines(log)
  expect_identical(args[1], "sdcmicro")
  expect_match(args[2:3], "\\.rds$")
  expect_false(any(file.exists(args[2:3])))  # temporary files removed
  expect_identical(args[-(1:3)],
                   c("--k", "4", "--method", "icsm", "--variables", "a,b", "--strata", "s", "--time-limit", "2.5",
                     "--seed", "7", "--option", "max_restarts=2", "--option", "restart_scope=region",
                     "--option", "flag=true"))
})
