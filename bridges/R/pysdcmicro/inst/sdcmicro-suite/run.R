# sdcMicro's own tests and man-page examples that call microaggregation(), run with
# pysdcmicro's microaggregation() in its place, as a user switching to it would (their own
# calls replaced; sdcMicro's internal calls left alone).
#
#   Rscript run.R [SDCMICRO_SOURCE] [--native] [--only-tests | --only-examples]
#
# SDCMICRO_SOURCE (argument or environment variable) is a directory holding sdcMicro's
# source (its man/ and tests/testthat/); sdcMicro's files are read from there, never
# copied. Without it, the installed sdcMicro's help pages are used for the examples and its
# tests are looked for under system.file("tests", package = "sdcMicro") (present when
# installed with --install-tests). --native runs sdcMicro's own microaggregation() instead
# (the baseline). Every replaced call is also compared with sdcMicro's own call on the same
# arguments (same random seed): equal, or different with the messages pysdcmicro gave.
# Exit status 0; the summary is printed. Skips (status 0, with the reason) when sdcMicro,
# testthat or Python's pysdcmicro is missing.

args <- commandArgs(trailingOnly = TRUE)
native <- "--native" %in% args
only_tests <- "--only-tests" %in% args
only_examples <- "--only-examples" %in% args
source_dir <- setdiff(args, c("--native", "--only-tests", "--only-examples"))
source_dir <- if (length(source_dir)) source_dir[1L] else Sys.getenv("SDCMICRO_SOURCE", "")

skip <- function(why) {
  cat("sdcmicro-suite: skipped:", why, "\n")
  quit(status = 0L, save = "no")
}
if (!requireNamespace("sdcMicro", quietly = TRUE)) skip("the R package sdcMicro is not installed")
if (!requireNamespace("testthat", quietly = TRUE)) skip("the R package testthat is not installed")
if (!native && !pysdcmicro::pysdcmicro_available()) {
  skip("Python's pysdcmicro is not importable by reticulate (set RETICULATE_PYTHON)")
}
suppressPackageStartupMessages(library(sdcMicro))
options(pysdcmicro.progress = FALSE)

# ---- the files ---------------------------------------------------------------------------
calls_it <- function(text) any(grepl("microaggregation\\s*\\(", text))
if (nzchar(source_dir)) {
  if (!dir.exists(file.path(source_dir, "man"))) skip(paste0("no man/ directory under '", source_dir, "'"))
  rd_files <- list.files(file.path(source_dir, "man"), pattern = "\\.Rd$", full.names = TRUE)
  rd <- stats::setNames(lapply(rd_files, tools::parse_Rd), basename(rd_files))
  test_dir <- file.path(source_dir, "tests", "testthat")
} else {
  rd <- tools::Rd_db("sdcMicro")
  test_dir <- system.file("tests", "testthat", package = "sdcMicro")
}
examples_of <- function(x) {
  f <- tempfile(fileext = ".R")
  tools::Rd2ex(x, f, commentDontrun = TRUE, commentDonttest = FALSE)
  if (!file.exists(f)) return(NULL)
  text <- readLines(f, warn = FALSE)
  if (!calls_it(text)) return(NULL)
  parse(text = text, keep.source = FALSE)
}
examples <- Filter(Negate(is.null), lapply(rd, examples_of))
test_files <- if (nzchar(test_dir) && dir.exists(test_dir)) {
  Filter(function(f) calls_it(readLines(f, warn = FALSE)), list.files(test_dir, pattern = "\\.R$", full.names = TRUE))
} else character(0)

# ---- the replacement, compared with sdcMicro's own call -----------------------------------
differences <- list()
n_calls <- 0L
where <- ""
replacement <- function(...) {
  n_calls <<- n_calls + 1L
  seed <- if (exists(".Random.seed", globalenv())) get(".Random.seed", globalenv()) else NULL
  notes <- character(0)
  ours <- withCallingHandlers(pysdcmicro::microaggregation(...), message = function(m) {
    notes <<- c(notes, trimws(conditionMessage(m)))
  })
  after <- if (exists(".Random.seed", globalenv())) get(".Random.seed", globalenv()) else NULL
  if (!is.null(seed)) assign(".Random.seed", seed, globalenv())
  theirs <- tryCatch(suppressMessages(suppressWarnings(sdcMicro::microaggregation(...))),
                     error = function(e) e)
  if (!is.null(after)) assign(".Random.seed", after, globalenv())
  same <- if (inherits(theirs, "error")) paste("sdcMicro failed:", conditionMessage(theirs)) else all.equal(ours, theirs)
  if (!isTRUE(same)) {
    differences[[length(differences) + 1L]] <<- list(where = where, call = deparse(sys.call(), width.cutoff = 120L)[1L],
                                                     difference = paste(utils::head(same, 2L), collapse = "; "),
                                                     messages = notes[grepl("^pysdcmicro: |ignored", notes)])
  }
  ours
}
env_for_run <- function() {
  e <- new.env(parent = globalenv())
  if (!native) assign("microaggregation", replacement, envir = e)
  e
}

# ---- man-page examples: every top-level expression, in order ----------------------------
ex_total <- 0L
ex_ok <- 0L
ex_failed <- character(0)
if (!only_tests) {
  for (page in names(examples)) {
    e <- env_for_run()
    set.seed(1)
    for (i in seq_along(examples[[page]])) {
      ex_total <- ex_total + 1L
      where <- paste0(page, " #", i)
      pdf(NULL)
      res <- tryCatch({
        suppressMessages(suppressWarnings(utils::capture.output(eval(examples[[page]][[i]], e))))
        TRUE
      }, error = function(err) conditionMessage(err))
      grDevices::dev.off()
      if (isTRUE(res)) ex_ok <- ex_ok + 1L
      else ex_failed <- c(ex_failed, paste0(where, ": ", gsub("\\s+", " ", res)))
    }
  }
}

# ---- test blocks --------------------------------------------------------------------------
bl_total <- 0L
bl_ok <- 0L
bl_failed <- character(0)
if (!only_examples) {
  for (f in test_files) {
    where <- basename(f)
    reporter <- testthat::ListReporter$new()
    e <- env_for_run()
    set.seed(1)
    suppressMessages(suppressWarnings(utils::capture.output(
      testthat::test_file(f, reporter = reporter, env = e))))
    for (r in reporter$get_results()) {
      bl_total <- bl_total + 1L
      bad <- Filter(function(x) inherits(x, c("expectation_failure", "expectation_error", "expectation_skip")), r$results)
      if (!length(bad)) bl_ok <- bl_ok + 1L
      else bl_failed <- c(bl_failed, paste0(basename(f), ": ", r$test, ": ", gsub("\\s+", " ", conditionMessage(bad[[1L]]))))
    }
  }
}

# ---- summary ------------------------------------------------------------------------------
cat(sprintf("sdcmicro-suite: %s (sdcMicro %s%s)\n", if (native) "sdcMicro's own microaggregation()" else
              "pysdcmicro's microaggregation() in place of sdcMicro's",
            as.character(utils::packageVersion("sdcMicro")), if (nzchar(source_dir)) paste0(", files from ", source_dir) else ""))
if (!only_examples && !length(test_files)) {
  cat("test blocks: none run: no sdcMicro test file found (", if (nzchar(test_dir)) test_dir else
      "sdcMicro was installed without its tests", "); pass sdcMicro's source directory\n", sep = "")
} else if (!only_examples) {
  cat(sprintf("test blocks: %d/%d pass (%d files)\n", bl_ok, bl_total, length(test_files)))
}
if (!only_tests) cat(sprintf("example expressions: %d/%d run (%d help pages)\n", ex_ok, ex_total, length(examples)))
for (x in c(bl_failed, ex_failed)) cat("  FAILED ", x, "\n", sep = "")
if (!native) {
  cat(sprintf("replaced calls: %d; equal to sdcMicro's: %d; different: %d\n", n_calls, n_calls - length(differences),
              length(differences)))
  for (d in differences) {
    cat("  DIFFERS ", d$where, ": ", d$call, "\n    ", d$difference, "\n", sep = "")
    for (m in d$messages) cat("    message: ", m, "\n", sep = "")
    if (!length(d$messages)) cat("    (no message)\n")
  }
}
