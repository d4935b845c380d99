# Tests that need Python's pysdcmicro (found by reticulate) or sdcMicro skip with the reason
# where they are absent. The references are sdcMicro's own results on the same data: nothing
# is hard-coded.
skip_without_python <- function() {
  if (!pysdcmicro::pysdcmicro_available()) {
    skip("Python's pysdcmicro is not importable by reticulate (set RETICULATE_PYTHON to a Python that has it)")
  }
}

skip_without_both <- function() {
  skip_if_not_installed("sdcMicro")
  skip_without_python()
}

sdc_data <- function(name) {
  e <- new.env()
  utils::data(list = name, package = "sdcMicro", envir = e)
  as.data.frame(e[[name]])
}

testdata_obj <- function(strata = NULL, data = sdc_data("testdata")) {
  keys <- setdiff(c("urbrur", "roof", "walls", "water", "electcon", "relat", "sex"), strata)
  sdcMicro::createSdcObj(data, keyVars = keys, numVars = c("expend", "income", "savings"),
                         w = "sampling_weight", strataVar = strata)
}

tarragona_obj <- function() {
  d <- sdc_data("Tarragona")
  d$key <- factor(rep("all", nrow(d)))  # createSdcObj needs a key variable; a constant one identifies nobody
  sdcMicro::createSdcObj(d, keyVars = "key", numVars = setdiff(names(d), "key"))
}

# Messages of an expression, and its value.
with_messages <- function(expr) {
  notes <- character(0)
  value <- withCallingHandlers(expr, message = function(m) {
    notes <<- c(notes, conditionMessage(m))
    invokeRestart("muffleMessage")
  })
  list(value = value, messages = notes)
}

# Smallest group size of the masked values (rows with equal masked vectors share a group).
min_group <- function(mx) min(table(do.call(paste, as.data.frame(mx))))
