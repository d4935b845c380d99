# With real sdcMicro (skipped with the reason elsewhere). The reference is sdcMicro's own
# microaggregation(), called here on the same object: nothing is hard-coded.

tarragona_obj <- function() {
  e <- new.env()
  utils::data("Tarragona", package = "sdcMicro", envir = e)
  d <- as.data.frame(e$Tarragona)
  d$key <- factor(rep("all", nrow(d)))  # createSdcObj needs a key variable; a constant one identifies nobody
  sdcMicro::createSdcObj(d, keyVars = "key", numVars = setdiff(names(d), "key"))
}

testdata_obj <- function() {
  e <- new.env()
  utils::data("testdata", package = "sdcMicro", envir = e)
  sdcMicro::createSdcObj(e$testdata, keyVars = c("urbrur", "roof", "walls", "water", "electcon", "relat", "sex"),
                         numVars = c("expend", "income", "savings"), w = "sampling_weight")
}

test_that("mdav equals sdcMicro's microaggregation(method = 'mdav') on Tarragona and testdata", {
  skip_without_sdcmicro()
  for (obj in list(tarragona_obj(), testdata_obj())) {
    native <- sdcMicro::microaggregation(obj, aggr = 3, method = "mdav")
    ours <- microaggregate(obj, aggr = 3, method = "mdav")
    expect_s4_class(ours, "sdcMicroObj")
    expect_equal(ours@manipNumVars, native@manipNumVars, tolerance = 1e-12)
    expect_equal(ours@risk, native@risk, tolerance = 1e-12)
    expect_equal(ours@utility, native@utility, tolerance = 1e-12)
    expect_true(isTRUE(all.equal(ours, native, tolerance = 1e-12)))  # every slot
    expect_false(isTRUE(all.equal(ours@manipNumVars, obj@manipNumVars)))
  }
})

test_that("icsm loses less information than mdav; undolast() restores the object", {
  skip_without_sdcmicro()
  obj <- tarragona_obj()
  mdav <- microaggregate(obj, aggr = 3, method = "mdav")
  icsm <- microaggregate(obj, aggr = 3, method = "icsm", seed = 0)
  expect_lt(il_of(icsm), il_of(mdav))
  sizes <- table(do.call(paste, as.data.frame(icsm@manipNumVars)))
  expect_gte(min(sizes), 3)  # k-anonymous on the masked values
  expect_identical(sdcMicro::undolast(icsm), obj)
})

test_that("variables, extra options and command errors from R", {
  skip_without_sdcmicro()
  obj <- testdata_obj()
  one <- microaggregate(obj, variables = c("income", "savings"), aggr = 4, method = "mdav")
  expect_identical(one@manipNumVars$expend, obj@manipNumVars$expend)
  expect_equal(one, sdcMicro::microaggregation(obj, variables = c("income", "savings"), aggr = 4, method = "mdav"),
               tolerance = 1e-12)
  v <- microaggregate(obj, aggr = 3, method = "vmdav", gamma = 0.5)
  expect_s4_class(v, "sdcMicroObj")
  err <- expect_error(microaggregate(obj, variables = "incme", method = "mdav"), class = "pysdcmicro_error")
  expect_match(conditionMessage(err), "^pysdcmicro: error: unknown column 'incme' in `variables`")
  err <- expect_error(microaggregate(obj, method = "mdva"), class = "pysdcmicro_error")
  expect_match(conditionMessage(err), "^pysdcmicro: error: unknown method 'mdva'")
})
