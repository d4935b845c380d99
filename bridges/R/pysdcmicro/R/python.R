# The Python side, in process through reticulate: pysdcmicro's core and the small helper
# module inst/python/pysdcmicro_r.py, loaded at first use. Python is the one reticulate
# finds by its usual rules (RETICULATE_PYTHON, use_python(), a virtual environment, ...);
# the delayed import in .onLoad tells reticulate to prefer a Python that has pysdcmicro.

.state <- new.env(parent = emptyenv())

.onLoad <- function(libname, pkgname) {
  .state$core <- reticulate::import("pysdcmicro", delay_load = TRUE)
  invisible()
}

.pysdcmicro_condition <- function(message, class = "pysdcmicro_error", call = NULL) {
  structure(class = c(class, "error", "condition"), list(message = message, call = call))
}

.stop <- function(...) stop(.pysdcmicro_condition(paste0(...)))

.install_hint <- function(python) {
  where <- if (is.null(python)) "the Python reticulate uses" else paste0("the Python reticulate uses (", python, ")")
  paste0("install it into ", where, " with `",
         if (is.null(python)) "python" else python, " -m pip install pysdcmicro`, or point reticulate at a Python ",
         "that has it: Sys.setenv(RETICULATE_PYTHON = \"/path/to/bin/python\") before the first call.")
}

# The helper module (pysdcmicro imported and ready), or an R error saying how to install.
.helper <- function() {
  if (!is.null(.state$helper)) return(.state$helper)
  python <- NULL
  ok <- tryCatch({
    reticulate::py_config()  # starts Python; fails if none is found
    python <- reticulate::py_exe()
    TRUE
  }, error = function(e) conditionMessage(e))
  if (!isTRUE(ok)) {
    .stop("pysdcmicro: error: no Python found by reticulate (", .one_line(ok), "); ", .install_hint(NULL))
  }
  helper <- reticulate::import_from_path("pysdcmicro_r", system.file("python", package = "pysdcmicro"),
                                         convert = TRUE)
  problem <- helper$import_core()
  if (nzchar(problem)) {
    .stop("pysdcmicro: error: the Python package pysdcmicro cannot be imported (", .one_line(problem), "); ",
          .install_hint(python))
  }
  helper$setup(python)
  .state$helper <- helper
  helper
}

.one_line <- function(x) gsub("[[:space:]]+", " ", trimws(paste(x, collapse = " ")))

# Whether pysdcmicro's Python side can be used here (without raising).
pysdcmicro_available <- function() {
  isTRUE(tryCatch(!is.null(.helper()), error = function(e) FALSE))
}

# The registered method names, summaries and option names (cached).
.py_methods <- function() {
  if (is.null(.state$methods)) {
    m <- .helper()$methods()
    .state$methods <- list(method = unlist(m$method), summary = unlist(m$summary),
                           options = stats::setNames(lapply(m$options, function(o) as.character(unlist(o))),
                                                     unlist(m$method)))
  }
  .state$methods
}

pysdcmicro_methods <- function() {
  m <- .py_methods()
  data.frame(method = m$method, summary = m$summary, stringsAsFactors = FALSE)
}
