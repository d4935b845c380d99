# all.equal of pysdcmicro's microaggregation(method = "mdav") to sdcMicro's own: the whole
# sdcMicroObj, @risk, @utility and the object after undolast(), and the micro object of a
# data frame; on sdcMicro's bundled data sets (Tarragona, CASCrefmicrodata = CASC Census,
# EIA, testdata, testdata2, ...), with and without strata and missing cells.
#
#   Rscript equality.R [k]        (sdcMicro and Python's pysdcmicro needed)

k <- as.integer(commandArgs(trailingOnly = TRUE)[1L])
if (is.na(k)) k <- 3L
if (!requireNamespace("sdcMicro", quietly = TRUE) || !pysdcmicro::pysdcmicro_available()) {
  cat("equality: skipped: needs sdcMicro and Python's pysdcmicro\n")
  quit(status = 0L, save = "no")
}
suppressPackageStartupMessages(library(sdcMicro))
load_set <- function(name) {
  e <- new.env()
  utils::data(list = name, package = "sdcMicro", envir = e)
  as.data.frame(e[[name]])
}
blank <- function(d, vars, share, seed = 1) {  # missing cells in `share` of the records of each variable
  set.seed(seed)
  for (v in vars) d[[v]][sample.int(nrow(d), ceiling(share * nrow(d)))] <- NA
  d
}
numeric_cols <- function(d) names(d)[vapply(d, function(v) is.numeric(v) && length(unique(v)) > 2L, TRUE)]
sets <- list()
for (name in c("Tarragona", "CASCrefmicrodata", "EIA")) {
  d <- load_set(name)
  v <- numeric_cols(d)
  sets[[name]] <- list(data = d, num = v, strata = NULL)
  sets[[paste(name, "missing 5%")]] <- list(data = blank(d, v[1:3], 0.05), num = v, strata = NULL)
  sets[[paste(name, "strata")]] <- list(data = transform(d, stratum = factor(rep_len(1:2, nrow(d)))), num = v,
                                        strata = "stratum")
}
for (name in c("testdata", "testdata2")) {
  d <- load_set(name)
  v <- c("expend", "income", "savings")
  sets[[name]] <- list(data = d, num = v, strata = NULL)
  sets[[paste(name, "strata urbrur")]] <- list(data = d, num = v, strata = "urbrur")
  sets[[paste(name, "missing 20%")]] <- list(data = blank(d, v, 0.2), num = v, strata = NULL)
  sets[[paste(name, "strata + missing")]] <- list(data = blank(d, v, 0.05), num = v, strata = "urbrur")
}
ok <- function(x) if (isTRUE(x)) "equal" else paste("DIFFERS:", paste(utils::head(x, 1L), collapse = ""))
cat(sprintf("k = %d\n%-28s %-8s %-8s %-8s %-8s %-8s\n", k, "data", "object", "@risk", "@utility", "undolast", "micro"))
n_ok <- 0L
n_all <- 0L
for (name in names(sets)) {
  s <- sets[[name]]
  d <- s$data
  keys <- setdiff(names(d), c(s$num, s$strata))
  d$pysdcmicro_key <- factor("all")
  obj <- suppressWarnings(createSdcObj(d, keyVars = "pysdcmicro_key", numVars = s$num, strataVar = s$strata))
  ours <- pysdcmicro::microaggregation(obj, aggr = k)
  theirs <- sdcMicro::microaggregation(obj, aggr = k, method = "mdav")
  frame_args <- list(d[, c(s$num, s$strata), drop = FALSE], variables = s$num, aggr = k, strata_variables = s$strata)
  r <- c(ok(all.equal(ours, theirs)), ok(all.equal(ours@risk, theirs@risk)), ok(all.equal(ours@utility, theirs@utility)),
         ok(all.equal(undolast(ours), undolast(theirs))),
         ok(all.equal(do.call(pysdcmicro::microaggregation, frame_args), do.call(sdcMicro::microaggregation, frame_args))))
  n_ok <- n_ok + sum(r == "equal")
  n_all <- n_all + length(r)
  cat(sprintf("%-28s %s\n", name, paste(sprintf("%-8s", ifelse(r == "equal", "equal", "DIFFERS")), collapse = " ")))
  for (x in r[r != "equal"]) cat("    ", x, "\n")
}
cat(sprintf("equal: %d of %d comparisons\n", n_ok, n_all))
