# The R side of pysdcmicro: microaggregate an sdcMicroObj with a pysdcmicro method by
# calling the command `pysdcmicro sdcmicro IN.rds OUT.rds` on temporary .rds files.
# Base R only (system2, tempfile, saveRDS, readRDS): nothing beyond what sdcMicro imports.

pysdcmicro_command <- function() {
  cmd <- getOption("pysdcmicro.command")
  if (is.null(cmd)) {
    env <- Sys.getenv("PYSDCMICRO_COMMAND", "")
    cmd <- if (nzchar(env)) env else "pysdcmicro"
  }
  if (!is.character(cmd) || length(cmd) < 1L || anyNA(cmd) || !nzchar(cmd[1L])) {
    stop("option `pysdcmicro.command` must be a character vector naming the pysdcmicro program ",
         "(and any leading arguments); got ", paste(deparse(cmd), collapse = " "), ".", call. = FALSE)
  }
  cmd
}

.pysdcmicro_condition <- function(message, class = "pysdcmicro_error", call = NULL) {
  structure(class = c(class, "error", "condition"), list(message = message, call = call))
}

.not_found_message <- function(cmd) {
  paste0("pysdcmicro command not found: ", sQuote(cmd[1L], FALSE), " is not an executable on the PATH. ",
         "Install the Python side with pip install \"pysdcmicro[r]\" (rpy2 >= 3.5.17, < 3.6), then ",
         "point R to it: options(pysdcmicro.command = \"/path/to/venv/bin/pysdcmicro\") or the ",
         "environment variable PYSDCMICRO_COMMAND.")
}

# Run `pysdcmicro ARGS`; stdout lines on success, an R error carrying the command's
# "pysdcmicro: error: ..." line on failure. The child uses this R (R_HOME) and this
# session's library paths (R_LIBS), so it loads the same sdcMicro as the caller.
.run_pysdcmicro <- function(args) {
  cmd <- pysdcmicro_command()
  exe <- Sys.which(path.expand(cmd[1L]))
  if (!nzchar(exe)) stop(.pysdcmicro_condition(.not_found_message(cmd)))
  out <- tempfile("pysdcmicro-", fileext = ".out")
  err <- tempfile("pysdcmicro-", fileext = ".err")
  on.exit(unlink(c(out, err)), add = TRUE)
  env <- c(paste0("R_HOME=", shQuote(R.home())),
           paste0("R_LIBS=", shQuote(paste(.libPaths(), collapse = .Platform$path.sep))))
  status <- suppressWarnings(system2(exe, c(shQuote(cmd[-1L]), shQuote(args)),
                                     stdout = out, stderr = err, env = env))
  stdout <- if (file.exists(out)) readLines(out, warn = FALSE) else character(0)
  stderr <- if (file.exists(err)) readLines(err, warn = FALSE) else character(0)
  if (!identical(as.integer(status), 0L)) {
    msg <- grep("^pysdcmicro: error: ", stderr, value = TRUE)
    if (length(msg)) {
      msg <- msg[length(msg)]
    } else {  # not one of ours (a traceback, a killed process): its last lines
      tail <- utils::tail(stderr[nzchar(trimws(stderr))], 3L)
      msg <- paste0("pysdcmicro: error: the command `", paste(c(cmd, args[1L]), collapse = " "),
                    "` failed with exit status ", status,
                    if (length(tail)) paste0(": ", paste(trimws(tail), collapse = " | ")) else "", ".")
    }
    stop(.pysdcmicro_condition(msg))
  }
  for (w in grep("^pysdcmicro: warning: ", stderr, value = TRUE)) warning(w, call. = FALSE)
  stdout
}

.check_names <- function(x, what) {
  if (is.null(x)) return(NULL)
  if (!is.character(x) || length(x) < 1L || anyNA(x) || !all(nzchar(x)) || any(grepl(",", x, fixed = TRUE))) {
    stop("`", what, "` must be a character vector of column names (without commas); got ",
         paste(deparse(x), collapse = " "), ".", call. = FALSE)
  }
  paste(x, collapse = ",")
}

.check_number <- function(x, what, rule, ok) {
  if (is.null(x)) return(NULL)
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || !ok(x)) {
    stop("`", what, "` must be ", rule, "; got ", paste(deparse(x), collapse = " "), ".", call. = FALSE)
  }
  format(x, digits = 15, scientific = FALSE, trim = TRUE)
}

.option_args <- function(options) {
  if (!length(options)) return(character(0))
  nm <- names(options)
  if (is.null(nm) || any(!nzchar(nm))) {
    stop("extra arguments of microaggregate() are method options and must be named ",
         "(e.g. restarts = 2); got an unnamed one.", call. = FALSE)
  }
  unlist(lapply(seq_along(options), function(i) {
    v <- options[[i]]
    if (!is.atomic(v) || length(v) != 1L || is.na(v)) {
      stop("method option `", nm[i], "` must be a single number, string or TRUE/FALSE; got ",
           paste(deparse(v), collapse = " "), ".", call. = FALSE)
    }
    text <- if (is.logical(v)) tolower(as.character(v))
            else if (is.numeric(v)) format(v, digits = 15, trim = TRUE) else as.character(v)
    c("--option", paste0(nm[i], "=", text))
  }), use.names = FALSE)
}

microaggregate <- function(obj, variables = NULL, aggr = 3, method = "auto", strata_variables = NULL,
                           time_limit = NULL, seed = NULL, ...) {
  if (!inherits(obj, "sdcMicroObj")) {
    stop("`obj` must be an sdcMicroObj (from sdcMicro::createSdcObj()); got an object of class ",
         paste(class(obj), collapse = "/"), ".", call. = FALSE)
  }
  if (!is.character(method) || length(method) != 1L || is.na(method) || !nzchar(method)) {
    stop("`method` must be one method name (see pysdcmicro_methods()); got ",
         paste(deparse(method), collapse = " "), ".", call. = FALSE)
  }
  k <- .check_number(aggr, "aggr", "a whole number >= 2", function(x) x >= 2 && x == round(x))
  args <- c("sdcmicro", "IN", "OUT", "--k", k, "--method", method)
  v <- .check_names(variables, "variables")
  if (!is.null(v)) args <- c(args, "--variables", v)
  s <- .check_names(strata_variables, "strata_variables")
  if (!is.null(s)) args <- c(args, "--strata", s)
  t <- .check_number(time_limit, "time_limit", "a number of seconds > 0", function(x) x > 0)
  if (!is.null(t)) args <- c(args, "--time-limit", t)
  sd <- .check_number(seed, "seed", "a whole number >= 0", function(x) x >= 0 && x == round(x))
  if (!is.null(sd)) args <- c(args, "--seed", sd)
  args <- c(args, .option_args(list(...)))

  input <- tempfile("pysdcmicro-in-", fileext = ".rds")
  output <- tempfile("pysdcmicro-out-", fileext = ".rds")
  on.exit(unlink(c(input, output)), add = TRUE)
  saveRDS(obj, input, compress = FALSE)
  args[2:3] <- c(input, output)
  summary <- .run_pysdcmicro(args)
  if (isTRUE(getOption("pysdcmicro.verbose", FALSE)) && length(summary)) message(paste(summary, collapse = "\n"))
  res <- readRDS(output)
  if (!inherits(res, "sdcMicroObj")) {  # a broken command
    stop(.pysdcmicro_condition(paste0("pysdcmicro: error: the command wrote an object of class ",
                                      paste(class(res), collapse = "/"), ", not an sdcMicroObj.")))
  }
  res
}

pysdcmicro_methods <- function() {
  lines <- .run_pysdcmicro(c("sdcmicro", "--list-methods"))
  lines <- lines[grepl("\t", lines, fixed = TRUE)]
  parts <- strsplit(lines, "\t", fixed = TRUE)
  data.frame(method = vapply(parts, `[`, "", 1L),
             summary = vapply(parts, function(p) paste(p[-1L], collapse = " "), ""),
             stringsAsFactors = FALSE)
}
