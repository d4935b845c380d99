# Equality with sdcMicro's own microaggregation(), called here on the same data.

test_that("mdav on an sdcMicroObj equals sdcMicro's: whole object, risk, utility, undolast()", {
  skip_without_both()
  for (obj in list(tarragona_obj(), testdata_obj(), testdata_obj(strata = "urbrur"))) {
    native <- sdcMicro::microaggregation(obj, method = "mdav")
    ours <- microaggregation(obj, method = "mdav")
    expect_s4_class(ours, "sdcMicroObj")
    expect_equal(ours@risk, native@risk)
    expect_equal(ours@utility, native@utility)
    expect_true(isTRUE(all.equal(ours, native)))  # every slot
    expect_false(isTRUE(all.equal(ours@manipNumVars, obj@manipNumVars)))
    expect_true(isTRUE(all.equal(sdcMicro::undolast(ours), sdcMicro::undolast(native))))
    expect_true(isTRUE(all.equal(sdcMicro::undolast(ours), obj)))
  }
})

test_that("mdav on a data.frame gives sdcMicro's micro object, with and without strata", {
  skip_without_both()
  d <- sdc_data("testdata")[1:600, ]
  for (args in list(list(d[, c("expend", "income", "savings")], aggr = 4),
                    list(d, variables = c("expend", "income"), strata_variables = "sex"),
                    list(sdc_data("Tarragona"), aggr = 5))) {
    ours <- do.call(microaggregation, args)
    native <- do.call(sdcMicro::microaggregation, args)
    expect_s3_class(ours, "micro")
    expect_identical(names(ours), names(native))
    expect_true(isTRUE(all.equal(ours, native)))
  }
})

test_that("missing cells are kept missing and grouped as sdcMicro's mdav does", {
  skip_without_both()
  d <- sdc_data("testdata")[1:500, c("expend", "income", "savings")]
  d$income[c(3, 50, 77, 200)] <- NA
  d$savings[c(5, 50, 310)] <- NA
  ours <- microaggregation(d)
  expect_identical(unname(is.na(ours$mx)), unname(is.na(d)))
  expect_true(isTRUE(all.equal(ours, sdcMicro::microaggregation(d))))
  obj <- testdata_obj(data = cbind(sdc_data("testdata")[1:500, setdiff(names(sdc_data("testdata")), names(d))], d))
  expect_true(isTRUE(all.equal(microaggregation(obj), sdcMicro::microaggregation(obj))))
})

test_that("sdcMicro's methods that pysdcmicro lacks run in sdcMicro, with a message", {
  skip_without_both()
  d <- sdc_data("testdata")[1:300, c("expend", "income", "savings")]
  set.seed(3)  # rmd draws random subsamples
  run <- with_messages(microaggregation(d, method = "rmd"))
  expect_match(run$messages, "method 'rmd' is sdcMicro's; pysdcmicro does not implement it", all = FALSE)
  set.seed(3)
  expect_true(isTRUE(all.equal(run$value, sdcMicro::microaggregation(d, method = "rmd"))))
  obj <- testdata_obj()
  expect_true(isTRUE(all.equal(suppressMessages(microaggregation(obj, method = "pca")),
                               sdcMicro::microaggregation(obj, method = "pca"))))
})

test_that("strata follow sdcMicro's rules; where they differ, a message says so", {
  skip_without_both()
  obj <- testdata_obj()
  run <- with_messages(microaggregation(obj, variables = c("income", "savings"), strata_variables = "sex"))
  expect_match(run$messages, "Argument 'strata_variables' is ignored", all = FALSE, fixed = TRUE)
  expect_true(isTRUE(all.equal(run$value, suppressMessages(
    sdcMicro::microaggregation(obj, variables = c("income", "savings"), strata_variables = "sex")))))
  d <- sdc_data("testdata")[1:800, ]
  two <- with_messages(microaggregation(d, variables = c("expend", "income"), strata_variables = c("urbrur", "sex")))
  # a data frame: sdcMicro uses every combination too, and the results are equal
  expect_false(any(grepl("strata variables", two$messages, fixed = TRUE)))
  expect_true(isTRUE(all.equal(two$value, sdcMicro::microaggregation(d, variables = c("expend", "income"),
                                                                     strata_variables = c("urbrur", "sex")))))
  # an sdcMicroObj: sdcMicro uses only the last strataVar, pysdcmicro every combination
  obj2 <- suppressWarnings(testdata_obj(strata = c("urbrur", "sex")))  # sdcMicro's validity check warns on two
  run2 <- with_messages(suppressWarnings(microaggregation(obj2)))
  expect_match(run2$messages, "2 strata variables \\(urbrur, sex\\): sdcMicro's microaggregation\\(\\) uses only the last",
               all = FALSE)
  # every combination of urbrur and sex is a stratum: no group mixes two
  cell <- interaction(d$urbrur, d$sex)
  grp <- do.call(paste, two$value$mx)
  expect_true(all(tapply(cell, grp, function(v) length(unique(v))) == 1L))
})

test_that("measure and weights are honoured for mdav, with a message saying why it differs from sdcMicro", {
  skip_without_both()
  d <- sdc_data("testdata")[1:300, c("expend", "income", "savings", "sampling_weight")]
  x <- d[, 1:3]
  mean_run <- microaggregation(x)
  med <- with_messages(microaggregation(x, measure = "median"))
  expect_match(med$messages, "sdcMicro's mdav ignores `measure`", all = FALSE, fixed = TRUE)
  grp <- do.call(paste, mean_run$mx)  # same partition, the groups' medians released
  expect_equal(med$value$mx$income, as.numeric(stats::ave(x$income, grp, FUN = stats::median)))
  w <- with_messages(microaggregation(x, weights = d$sampling_weight))
  expect_match(w$messages, "`weights` are honoured", all = FALSE, fixed = TRUE)
  expect_equal(sum(w$value$mx$income * d$sampling_weight), sum(x$income * d$sampling_weight))
})

test_that("pysdcmicro's own methods and options run from R; undolast() restores the object", {
  skip_without_both()
  obj <- tarragona_obj()
  icsm <- microaggregation(obj, method = "icsm", seed = 0, max_restarts = 1)
  expect_s4_class(icsm, "sdcMicroObj")
  expect_gte(min_group(icsm@manipNumVars), 3)
  expect_true(isTRUE(all.equal(sdcMicro::undolast(icsm), obj)))
})

test_that("time limits, worker processes and method errors from R (needs Python only)", {
  skip_without_python()
  set.seed(5)
  d <- as.data.frame(matrix(stats::rnorm(1200), ncol = 4, dimnames = list(NULL, c("a", "b", "c", "d"))))
  run <- with_messages(microaggregation(d, method = "auto", time_limit = 3, seed = 1, n_jobs = 2))
  expect_s3_class(run$value, "micro")
  expect_gte(min_group(run$value$mx), 3)
  expect_false(any(grepl("Traceback|Error", run$messages)))
  mdav <- microaggregation(d)
  sse <- function(m) sum(sweep(as.matrix(m$mx) - as.matrix(d), 2, apply(d, 2, stats::sd), "/")^2)  # on z-scores
  expect_lte(sse(run$value), sse(mdav) * (1 + 1e-9))  # auto is never worse than MDAV
  err <- expect_error(microaggregation(d, method = "icsm", no_such_option = 1), class = "pysdcmicro_error")
  expect_match(conditionMessage(err), "^pysdcmicro: error: method 'icsm' has no option 'no_such_option'")
})

test_that("Python's warnings become messages, numpy's arithmetic notes never reach R", {
  skip_without_python()
  d <- data.frame(a = c(1, 2, 3, 10, 11, 12, 20, 21, 22), b = rep(5, 9), c = c(2, 1, 3, 9, 8, 7, 30, 31, NA))
  run <- with_messages(microaggregation(d))
  expect_match(run$messages, "ConstantColumnWarning", all = FALSE)
  expect_false(any(grepl("RuntimeWarning|invalid value", run$messages)))
  expect_identical(run$value$mx$b, d$b)
})

test_that("worker processes started from R run the same Python as the one inside R", {
  skip_without_python()
  # R puts its library directories first on LD_LIBRARY_PATH; a worker inheriting that may
  # load another libpython (a pyenv Python then failed in auto's workers)
  v <- pysdcmicro:::.helper()$check_workers()
  expect_identical(v$worker, v$parent)
})

test_that("sdcMicro's sorting methods run in Python and equal sdcMicro's, varsort and onestep included", {
  skip_without_both()
  d <- as.data.frame(sdc_data("Tarragona"))[, 1:5]
  for (call in list(list(method = "single", varsort = 2), list(method = "pca", measure = "onestep"),
                    list(method = "simple"))) {
    ours <- suppressMessages(do.call(pysdcmicro::microaggregation, c(list(d, aggr = 3), call)))
    theirs <- do.call(sdcMicro::microaggregation, c(list(d, aggr = 3), call))
    expect_equal(ours$mx, theirs$mx, info = call$method)
  }
})

test_that("onedims runs in Python, without a message, and equals sdcMicro's, with strata too", {
  skip_without_both()
  d <- as.data.frame(sdc_data("Tarragona"))[, 1:5]
  for (measure in c("mean", "median")) {
    run <- with_messages(pysdcmicro::microaggregation(d, aggr = 3, method = "onedims", measure = measure))
    expect_length(run$messages, 0)
    expect_true(isTRUE(all.equal(run$value, sdcMicro::microaggregation(d, aggr = 3, method = "onedims",
                                                                       measure = measure))))
  }
  for (obj in list(testdata_obj(), testdata_obj(strata = "urbrur"))) {
    run <- with_messages(microaggregation(obj, method = "onedims"))
    expect_false(any(grepl("is sdcMicro's", run$messages, fixed = TRUE)))
    expect_true(isTRUE(all.equal(run$value, sdcMicro::microaggregation(obj, method = "onedims"))))
  }
})
