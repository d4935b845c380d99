# Per-call cost of pysdcmicro's microaggregation() against sdcMicro's own, side by side in
# one R session: the first call (Python started and pysdcmicro imported in it), then warm
# mdav on Tarragona and on sdcMicro's testdata (as sdcMicroObj and as data frame), in
# alternation, median of `reps` calls each. Prints elapsed and CPU seconds.
#
#   Rscript overhead.R [reps]        (sdcMicro and Python's pysdcmicro needed)

reps <- as.integer(commandArgs(trailingOnly = TRUE)[1L])
if (is.na(reps)) reps <- 7L
if (!requireNamespace("sdcMicro", quietly = TRUE)) {
  cat("overhead: skipped: the R package sdcMicro is not installed\n")
  quit(status = 0L, save = "no")
}
suppressPackageStartupMessages(library(sdcMicro))
e <- new.env()
utils::data(list = c("Tarragona", "testdata"), package = "sdcMicro", envir = e)
tarr <- as.data.frame(e$Tarragona)
tdat <- as.data.frame(e$testdata)
t_obj <- createSdcObj(cbind(tarr, key = factor("all")), keyVars = "key", numVars = names(tarr))
d_obj <- createSdcObj(tdat, keyVars = c("urbrur", "roof", "walls", "water", "electcon", "relat", "sex"),
                      numVars = c("expend", "income", "savings"), w = "sampling_weight")
d_frame <- tdat[, c("expend", "income", "savings")]

clock <- function(f) {
  t0 <- proc.time()
  f()
  t <- proc.time() - t0
  c(elapsed = t[["elapsed"]], cpu = t[["user.self"]] + t[["sys.self"]])
}
first <- clock(function() pysdcmicro::microaggregation(t_obj))
if (!pysdcmicro::pysdcmicro_available()) {
  cat("overhead: skipped: Python's pysdcmicro is not importable by reticulate\n")
  quit(status = 0L, save = "no")
}
cat(sprintf("first call in this session (Tarragona sdcMicroObj, Python start included): %.3f s elapsed, %.3f s CPU\n",
            first[["elapsed"]], first[["cpu"]]))
cases <- list("Tarragona sdcMicroObj" = t_obj, "testdata sdcMicroObj" = d_obj, "Tarragona data.frame" = tarr,
              "testdata data.frame" = d_frame)
cat(sprintf("%-24s %10s %10s %10s %10s %8s %8s\n", "mdav, warm, median of", "sdcMicro", "pysdcmicro", "sdcM CPU",
            "pysdc CPU", "ratio", "target"))
for (name in names(cases)) {
  x <- cases[[name]]
  pysdcmicro::microaggregation(x)  # warm
  sdcMicro::microaggregation(x)
  a <- b <- matrix(NA_real_, reps, 2L)
  for (i in seq_len(reps)) {
    a[i, ] <- clock(function() sdcMicro::microaggregation(x))
    b[i, ] <- clock(function() pysdcmicro::microaggregation(x))
  }
  sa <- apply(a, 2L, stats::median)
  sb <- apply(b, 2L, stats::median)
  cat(sprintf("%-24s %9.3fs %9.3fs %9.3fs %9.3fs %8.2f %7.3fs\n", paste0(name, " (", reps, ")"), sa[1], sb[1], sa[2], sb[2],
              sb[1] / sa[1], 1.5 * sa[1] + 0.05))
}
