# sdcMicro's formals and the argument checks done in R (before Python is needed).

test_that("the formals are sdcMicro's, in its order, with its defaults", {
  f <- formals(pysdcmicro::microaggregation)
  expect_identical(names(f), c("obj", "variables", "aggr", "strata_variables", "method", "weights", "nc",
                               "clustermethod", "measure", "trim", "varsort", "transf", "..."))
  expect_identical(f$method, "mdav")
  expect_identical(f$aggr, 3)
  expect_identical(f$measure, "mean")
  skip_if_not_installed("sdcMicro")
  ours <- formals(pysdcmicro::microaggregation)
  theirs <- formals(sdcMicro::microaggregation)
  expect_identical(as.list(ours)[names(theirs)], as.list(theirs))
  expect_identical(pysdcmicro::microaggregate, pysdcmicro::microaggregation)
})

test_that("obj must be a data.frame or an sdcMicroObj", {
  expect_error(microaggregation(matrix(1:6, 3)), "`obj` must be an sdcMicroObj .* or a data.frame; got an object of class matrix/array.")
})

test_that("a method name that is neither sdcMicro's nor pysdcmicro's is refused, with a suggestion", {
  d <- data.frame(a = as.double(1:9), b = as.double(9:1))
  err <- expect_error(microaggregation(d, method = "MDAV"), class = "pysdcmicro_error")
  expect_match(conditionMessage(err), "^method %in% c\\(\"simple\", ", fixed = FALSE)
  expect_match(conditionMessage(err), "got 'MDAV'. Did you mean 'mdav'?", fixed = TRUE)
  expect_error(microaggregation(d, method = c("mdav", "rmd")), "`method` must be one method name")
  expect_error(microaggregation(d, method = NA), "`method` must be one method name")
})

test_that("bad arguments fail with the argument, the rule and the value", {
  d <- data.frame(a = as.double(1:9), b = as.double(9:1))
  expect_error(microaggregation(d, measure = "mode"), '`measure` must be one of "mean", "median", "trim", "onestep"; got "mode".', fixed = TRUE)
  expect_error(microaggregation(d, trim = 0.7), "`trim` must be a proportion in [0, 0.5]; got 0.7.", fixed = TRUE)
  expect_error(microaggregation(d, time_limit = 0), "`time_limit` must be a number of seconds > 0; got 0.", fixed = TRUE)
  expect_error(microaggregation(d, seed = -1), "`seed` must be a whole number >= 0; got -1.", fixed = TRUE)
  expect_error(microaggregation(d, decimals = 1.5), "`decimals` must be a whole number >= 0; got 1.5.", fixed = TRUE)
  expect_error(microaggregation(d, missing = "drop"), '`missing` must be "keep" or "error"; got "drop".', fixed = TRUE)
  expect_error(microaggregation(d, method = "icsm", max_restarts = 1:2), "method option `max_restarts` must be a single")
  expect_error(microaggregation(d, NULL, 3, NULL, "mdav", NULL, 8, "clara", "mean", 0, 1, "log", 5),
               "extra arguments of microaggregation\\(\\) must be named")
})

test_that("a Python that reticulate cannot use gives one R error line saying how to install", {
  rscript <- file.path(R.home("bin"), "Rscript")
  env <- c(RETICULATE_PYTHON = file.path(tempdir(), "no-such-python"),
           R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep))
  out <- suppressWarnings(system2(rscript, c("-e", shQuote(paste0(
    "r <- tryCatch(pysdcmicro::microaggregation(data.frame(a = as.double(1:6), b = as.double(6:1))), ",
    "error = function(e) e); cat(class(r)[1], conditionMessage(r), sep = '\\n')"))),
    stdout = TRUE, stderr = TRUE, env = paste0(names(env), "=", shQuote(env))))
  expect_identical(out[1], "pysdcmicro_error")
  expect_length(out, 2L)  # one line
  expect_match(out[2], "^pysdcmicro: error: no Python found by reticulate .*no-such-python")
  expect_match(out[2], "pip install pysdcmicro", fixed = TRUE)
  expect_match(out[2], "RETICULATE_PYTHON", fixed = TRUE)
})
