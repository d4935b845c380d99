# The drop-in's rules where sdcMicro and pysdcmicro could part: weights (the object's
# weightVar, the weighted median, sdcMicro's pairing of weights in sorted data), missing
# cells, trim, row names, variable checks, R's row numbers in errors.

weighted_testdata <- function() {
  d <- sdc_data("testdata")
  set.seed(11)
  d$sampling_weight <- round(stats::runif(nrow(d), 1, 200))  # testdata's own weights are all 100
  d
}

test_that("an sdcMicroObj's weightVar weights the sorting methods by default, as in sdcMicro; mdav stays unweighted", {
  skip_without_both()
  obj <- testdata_obj(data = weighted_testdata())
  for (measure in c("mean", "median")) {
    run <- with_messages(microaggregation(obj, method = "simple", measure = measure))
    expect_length(run$messages, 0)
    expect_true(isTRUE(all.equal(run$value, sdcMicro::microaggregation(obj, method = "simple", measure = measure))))
  }
  expect_true(isTRUE(all.equal(microaggregation(obj), sdcMicro::microaggregation(obj))))
  unweighted <- with_messages(microaggregation(obj, method = "simple", weights = FALSE))
  expect_match(unweighted$messages, "weights = FALSE: unweighted group means; sdcMicro's simple on an sdcMicroObj always",
               all = FALSE, fixed = TRUE)
  expect_false(isTRUE(all.equal(unweighted$value@manipNumVars,
                                sdcMicro::microaggregation(obj, method = "simple")@manipNumVars)))
  # pysdcmicro's own methods: weightVar only with weights = TRUE
  plain <- microaggregation(obj, method = "vmdav")
  expect_true(isTRUE(all.equal(plain, microaggregation(obj, method = "vmdav", weights = FALSE))))
  expect_false(isTRUE(all.equal(plain@manipNumVars, microaggregation(obj, method = "vmdav", weights = TRUE)@manipNumVars)))
  # trim and onestep: sdcMicro ignores the weights, and so does the default here
  expect_true(isTRUE(all.equal(suppressMessages(microaggregation(obj, method = "simple", measure = "trim", trim = 0.2)),
                               sdcMicro::microaggregation(obj, method = "simple", measure = "trim", trim = 0.2))))
})

test_that("weighted median equals sdcMicro's where sdcMicro pairs weights and records right (simple, no strata)", {
  skip_without_both()
  d <- weighted_testdata()[1:400, c("expend", "income", "savings", "sampling_weight")]
  x <- d[, 1:3]
  run <- with_messages(microaggregation(x, method = "simple", measure = "median", weights = d$sampling_weight))
  expect_length(run$messages, 0)
  expect_true(isTRUE(all.equal(run$value, sdcMicro::microaggregation(x, method = "simple", measure = "median",
                                                                     weights = d$sampling_weight))))
  # ties at a cumulative share of exactly 1/2: the mean of the two middle values
  tie <- data.frame(a = c(1, 2, 10, 20, 30, 40), b = c(6, 5, 4, 3, 2, 1))
  expect_identical(microaggregation(tie, method = "simple", measure = "median", weights = c(1, 1, 2, 2, 1, 1))$mx,
                   sdcMicro::microaggregation(tie, method = "simple", measure = "median", weights = c(1, 1, 2, 2, 1, 1))$mx)
})

test_that("weighted single pairs each record with its own weight; sdcMicro's takes them by sorted position", {
  skip_without_both()
  d <- weighted_testdata()[1:300, ]
  x <- d[, c("expend", "income", "savings")]
  w <- d$sampling_weight
  for (measure in c("mean", "median")) {
    run <- with_messages(microaggregation(x, method = "single", measure = measure, weights = w))
    expect_match(run$messages, "weighted single: sdcMicro's microaggregation() takes the weights by position in its sorted",
                 all = FALSE, fixed = TRUE)
    sorted <- sort(x$expend, index.return = TRUE)$ix  # sdcMicro's order of the records
    expect_true(isTRUE(all.equal(run$value, sdcMicro::microaggregation(x, method = "single", measure = measure,
                                                                       weights = w[sorted]))))
  }
})

test_that("trim and onestep with weights: accepted, weights unused (as in sdcMicro), a note says so", {
  skip_without_both()
  x <- sdc_data("testdata")[1:300, c("expend", "income", "savings")]
  for (measure in c("trim", "onestep")) {
    run <- with_messages(microaggregation(x, method = "simple", measure = measure, trim = 0.2,
                                          weights = seq(1, 3, length.out = 300)))
    expect_match(run$messages, paste0("`weights` are not used with measure = \"", measure, "\""), all = FALSE, fixed = TRUE)
    expect_true(isTRUE(all.equal(run$value, sdcMicro::microaggregation(x, method = "simple", measure = measure,
                                                                       trim = 0.2))))
  }
})

test_that("trim with another measure is accepted and unused, as in sdcMicro", {
  skip_without_both()
  x <- sdc_data("testdata")[1:300, c("expend", "income", "savings")]
  run <- with_messages(microaggregation(x, method = "pca", measure = "median", trim = 0.3))
  expect_match(run$messages, "`trim` is not used with measure = \"median\" (as in sdcMicro).", all = FALSE, fixed = TRUE)
  expect_true(isTRUE(all.equal(run$value, sdcMicro::microaggregation(x, method = "pca", measure = "median", trim = 0.3))))
})

test_that("missing cells with the sorting methods: a message counts the cells sdcMicro would release as NA", {
  skip_without_both()
  x <- sdc_data("testdata")[1:300, c("expend", "income", "savings")]
  x$income[c(2, 7, 100)] <- NA
  x$savings[c(2, 250)] <- NA
  run <- with_messages(microaggregation(x, method = "simple"))
  theirs <- sdcMicro::microaggregation(x, method = "simple")
  extra <- sum(is.na(theirs$mx)) - sum(is.na(run$value$mx))
  expect_gt(extra, 0)
  expect_match(run$messages, paste0("missing cells: sdcMicro's simple releases NA for every record of a group in a ",
                                    "column where the group has a missing cell \\(its group mean has no na.rm\\); .*: ",
                                    extra, " cells \\(of 5 groups, counted per column\\)"), all = FALSE)
  expect_identical(unname(is.na(run$value$mx)), unname(is.na(x)))
  observed <- !is.na(theirs$mx)
  expect_equal(as.matrix(run$value$mx)[observed], as.matrix(theirs$mx)[observed])
})

test_that("mx is numbered 1..n as in sdcMicro, whatever the input's row names", {
  skip_without_both()
  d <- sdc_data("testdata")[101:130, c("expend", "income", "savings")]
  for (method in c("simple", "single", "onedims", "pca", "mdav")) {
    ours <- microaggregation(d, method = method)
    theirs <- sdcMicro::microaggregation(d, method = method)
    expect_true(isTRUE(all.equal(ours, theirs)), info = method)
    expect_identical(attr(ours$mx, "row.names"), attr(theirs$mx, "row.names"), info = method)
  }
})

test_that("variables on an sdcMicroObj must be numVars, checked before sdcMicro's own function runs", {
  skip_without_both()
  obj <- testdata_obj()
  err <- expect_error(microaggregation(obj, variables = c("expend", "walls")), class = "pysdcmicro_error")
  expect_identical(conditionMessage(err), paste0("`variables`: 'walls' is not a numeric key variable (numVars) of `obj`, ",
                                                 "so it cannot be microaggregated; the numVars are: expend, income, savings."))
  run <- with_messages(tryCatch(microaggregation(obj, variables = "sampling_weight"), error = function(e) e))
  expect_s3_class(run$value, "pysdcmicro_error")
  expect_length(run$messages, 0)  # refused before the mafast note
  expect_error(microaggregation(obj, variables = c("expend", "incme")),
               "Cannot find variable: incme .*numVars.* Did you mean 'income'\\?", class = "pysdcmicro_error")
})

test_that("row numbers in errors are R's (from 1), in R's terms", {
  skip_without_python()
  d <- data.frame(expend = as.double(1:30), income = as.double(30:1), savings = as.double((1:30) %% 7))
  d$income[5] <- Inf
  err <- expect_error(microaggregation(d), class = "pysdcmicro_error")
  expect_match(conditionMessage(err), "column 'income' has an infinite value (Inf) at row 5;", fixed = TRUE)
  d$income[5] <- 1
  d$income[2] <- NA
  err <- expect_error(microaggregation(d, missing = "error"), class = "pysdcmicro_error")
  expect_match(conditionMessage(err), "column 'income' has a missing value (NA) at row 2;", fixed = TRUE)
  expect_match(conditionMessage(err), 'pass missing = "keep" to keep them', fixed = TRUE)
  expect_false(grepl("CLI", conditionMessage(err), fixed = TRUE))
})
