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

test_that("obj must be a data.frame with records or an sdcMicroObj; a matrix is refused as sdcMicro refuses it", {
  expect_error(microaggregation(matrix(1:6, 3)), paste0("`obj` must be an sdcMicroObj .* or a data.frame; got an object ",
                                                        "of class matrix/array \\(sdcMicro's microaggregation\\(\\) ",
                                                        "refuses a matrix too: pass as.data.frame\\(obj\\)\\)."))
  expect_error(microaggregation(data.frame(a = double(0), b = double(0))),
               "`obj` has no records (0 rows); there is nothing to microaggregate.", fixed = TRUE, class = "pysdcmicro_error")
  skip_if_not_installed("sdcMicro")
  m <- as.matrix(sdc_data("testdata")[1:30, c("expend", "income", "savings")])
  expect_error(sdcMicro::microaggregation(m), "unable to find an inherited method")
})

test_that("errors on weights name the rule and the first offending positions in one short line", {
  d <- data.frame(a = as.double(1:300), b = as.double(300:1))
  w <- rep(1, 300)
  w[c(7, 40, 41, 200)] <- c(-1, NA, 0, Inf)
  err <- expect_error(microaggregation(d, weights = w), class = "pysdcmicro_error")
  expect_identical(conditionMessage(err), paste0(
    "`weights` must be finite numbers > 0 (a weight of 0 could make one record's values its group's value); ",
    "got -1 at position 7, NA at position 40, 0 at position 41 (and 1 more)."))
  err <- expect_error(microaggregation(d, weights = as.double(1:1000)), class = "pysdcmicro_error")
  expect_identical(conditionMessage(err), "`weights` must hold one number per record (300); got 1000.")
  expect_error(microaggregation(d, weights = letters), paste0("`weights` must be NULL, TRUE, a column name or a ",
                                                              "numeric vector; got a character vector of length 26."),
               fixed = TRUE)
  d$w <- c(0, rep(2, 299))
  expect_error(microaggregation(d, variables = c("a", "b"), weights = "w"),
               "the weight column 'w' must be finite numbers > 0 .*; got 0 at position 1.")
})

test_that("a stratum smaller than aggr is refused by its variables' values, before Python is needed", {
  d <- data.frame(a = as.double(1:12), b = as.double(c(5:1, 12:6)), g = c("tiny", rep("big", 11)),
                  u = c(1, 1, 2, 2, rep(1, 8)), r = c(2, 2, 1, 2, rep(1, 8)))
  err <- expect_error(microaggregation(d, variables = c("a", "b"), strata_variables = "g"), class = "pysdcmicro_error")
  expect_match(conditionMessage(err), paste0("^stratum g=tiny has 1 record; every stratum needs at least aggr = 3 ",
                                             "records. sdcMicro's mdav releases the records of such a stratum unmasked"))
  expect_match(conditionMessage(err), "which pysdcmicro refuses: merge the stratum with another \\(recode g\\) or lower `aggr`.$")
  err <- expect_error(microaggregation(d, variables = c("a", "b"), strata_variables = c("u", "r")))
  expect_match(conditionMessage(err), "^stratum u=1, r=2 has 2 records \\(and 2 more strata have fewer than 3\\);")
  expect_false(grepl("__pysdcmicro", conditionMessage(err), fixed = TRUE))
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
  expect_error(microaggregation(d, measure = "trim", trim = 0.7), "`trim` must be a proportion in [0, 0.5]; got 0.7.",
               fixed = TRUE)
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

test_that("without pysdcmicro's Python, sdcMicro's methods that pysdcmicro implements stop; the others run in sdcMicro", {
  skip_if_not_installed("sdcMicro")
  rscript <- file.path(R.home("bin"), "Rscript")
  env <- c(RETICULATE_PYTHON = file.path(tempdir(), "no-such-python"),
           R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep))
  out <- suppressWarnings(system2(rscript, c("-e", shQuote(paste0(
    "d <- data.frame(a = c(1, 5, 2, 8, 3, 9, 4), b = c(2, 1, 7, 3, 9, 4, 4), c = c(5, 5, 1, 2, 8, 3, 6)); ",
    "for (m in c('simple', 'single', 'onedims', 'pca')) { r <- tryCatch(pysdcmicro::microaggregation(d, method = m), ",
    "error = function(e) e); cat(m, class(r)[1], conditionMessage(r), sep = ' | '); cat('\\n') }; ",
    "set.seed(1); r <- suppressMessages(pysdcmicro::microaggregation(d, method = 'influence', nc = 2)); ",
    "cat('influence', class(r), sep = ' | ')"))),
    stdout = TRUE, stderr = TRUE, env = paste0(names(env), "=", shQuote(env))))
  for (m in c("simple", "single", "onedims", "pca")) {
    line <- grep(paste0("^", m, " \\| "), out, value = TRUE)
    expect_match(line, paste0("^", m, " \\| pysdcmicro_error \\| pysdcmicro: error: no Python found by reticulate"))
    expect_match(line, "pip install pysdcmicro", fixed = TRUE)
  }
  expect_match(out, "^influence \\| micro$", all = FALSE)
})
