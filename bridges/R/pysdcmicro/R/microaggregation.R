# microaggregation(): sdcMicro's function of the same name, with pysdcmicro's methods run in
# process through reticulate. Same formals, defaults, argument checks and return classes
# as sdcMicro 5.8.1's: a data.frame gives a "micro" object, an sdcMicroObj gives the
# updated sdcMicroObj (previous state kept for undolast(), numeric risk and utility
# recomputed by sdcMicro's own dRisk() and dUtility()). Every difference from sdcMicro's
# result is said in a message().

#: sdcMicro's method names, in the order of its own check of `method`.
.sdc_methods <- c("simple", "single", "onedims", "pca", "mcdpca", "pppca", "clustmcdpca", "clustpppca",
                  "clustpca", "rmd", "mdav", "influence")

#: Arguments of pysdcmicro (through `...`) that are not method options.
.own_args <- c("time_limit", "seed", "decimals", "missing", "progress", "improve")

.measures <- c("mean", "median", "trim", "onestep")

.is_sdcobj <- function(obj) isS4(obj) && methods::is(obj, "sdcMicroObj")

.need_sdcmicro <- function(what) {
  if (!requireNamespace("sdcMicro", quietly = TRUE)) {
    .stop("pysdcmicro: error: ", what, " needs the R package sdcMicro: install.packages(\"sdcMicro\").")
  }
}

.deparse1 <- function(x) paste(deparse(x, width.cutoff = 200L), collapse = " ")

.arg_error <- function(name, rule, value) {
  .stop("`", name, "` must be ", rule, "; got ", .deparse1(value), ".")
}

.did_you_mean <- function(x, choices) {
  hit <- choices[tolower(choices) == tolower(x)]
  if (!length(hit)) {
    d <- utils::adist(x, choices, ignore.case = TRUE)
    if (length(d) && min(d) <= 2) hit <- choices[which.min(d)]
  }
  if (length(hit)) paste0(" Did you mean '", hit[1L], "'?") else ""
}

.check_method <- function(method) {
  if (!is.character(method) || length(method) != 1L || is.na(method)) {
    .arg_error("method", "one method name", method)
  }
  if (method %in% .sdc_methods) return(method)
  py <- tryCatch(.py_methods()$method, error = function(e) character(0))
  if (method %in% py) return(method)
  .stop("method %in% c(\"simple\", \"single\", \"onedims\", \"pca\", \"mcdpca\",  .... is not TRUE: ",
        "`method` must be one of sdcMicro's methods (", paste(.sdc_methods, collapse = ", "), ")",
        if (length(py)) paste0(" or pysdcmicro's (", paste(setdiff(py, .sdc_methods), collapse = ", "), ")") else "",
        "; got '", method, "'.", .did_you_mean(method, unique(c(.sdc_methods, py))))
}

# pysdcmicro's own arguments and the method options, from `...`.
.split_dots <- function(dots) {
  if (!length(dots)) return(list(own = list(), options = list()))
  nm <- names(dots)
  if (is.null(nm) || any(!nzchar(nm))) {
    .stop("extra arguments of microaggregation() must be named (time_limit = 60, seed = 1, or a method ",
          "option such as max_restarts = 2); got an unnamed one: ", .deparse1(dots[[which(!nzchar(c(nm, "")[seq_along(dots)]))[1L]]]), ".")
  }
  own <- dots[nm %in% .own_args]
  options <- dots[!nm %in% .own_args]
  for (i in seq_along(options)) {
    v <- options[[i]]
    if (!is.atomic(v) || length(v) != 1L || is.na(v)) {
      .stop("method option `", names(options)[i], "` must be a single number, string or TRUE/FALSE; got ",
            .deparse1(v), ".")
    }
    if (is.double(v) && is.finite(v) && v == round(v) && abs(v) < .Machine$integer.max) {
      options[[i]] <- as.integer(v)  # 2 in R is a whole number: Python's int, not 2.0
    }
  }
  list(own = own, options = options)
}

.check_own <- function(own) {
  out <- list(time_limit = NULL, seed = NULL, decimals = NULL, missing = "keep",
              progress = getOption("pysdcmicro.progress", interactive()), improve = NULL)
  for (n in names(own)) out[[n]] <- own[[n]]
  tl <- out$time_limit
  if (!is.null(tl) && (!is.numeric(tl) || length(tl) != 1L || is.na(tl) || tl <= 0)) {
    .arg_error("time_limit", "a number of seconds > 0", tl)
  }
  sd <- out$seed
  if (!is.null(sd) && (!is.numeric(sd) || length(sd) != 1L || is.na(sd) || sd < 0 || sd != round(sd))) {
    .arg_error("seed", "a whole number >= 0", sd)
  }
  dc <- out$decimals
  if (!is.null(dc) && (!is.numeric(dc) || length(dc) != 1L || is.na(dc) || dc < 0 || dc != round(dc))) {
    .arg_error("decimals", "a whole number >= 0", dc)
  }
  if (!is.character(out$missing) || length(out$missing) != 1L || !out$missing %in% c("keep", "error")) {
    .arg_error("missing", "\"keep\" or \"error\"", out$missing)
  }
  if (!is.logical(out$progress) || length(out$progress) != 1L || is.na(out$progress)) {
    .arg_error("progress", "TRUE or FALSE", out$progress)
  }
  out
}

.check_aggr <- function(aggr, n) {
  if (!is.numeric(aggr) || length(aggr) != 1L || is.na(aggr) || aggr < 2 || aggr != round(aggr) || aggr > n) {
    .arg_error("aggr", paste0("a whole number >= 2 and at most the number of records (", n, ")"), aggr)
  }
  as.integer(aggr)
}

.check_measure <- function(measure, trim) {
  if (!is.character(measure) || length(measure) != 1L || !measure %in% .measures) {
    .arg_error("measure", "one of \"mean\", \"median\", \"trim\", \"onestep\"", measure)
  }
  if (!is.numeric(trim) || length(trim) != 1L || is.na(trim) || trim < 0 || trim > 0.5) {
    .arg_error("trim", "a proportion in [0, 0.5]", trim)
  }
}

.check_columns <- function(x, columns, what) {
  if (!is.character(x) || !length(x) || anyNA(x)) .arg_error(what, "a character vector of column names", x)
  bad <- setdiff(x, columns)
  if (length(bad)) .stop("Cannot find variable: ", bad[1L], " (`", what, "`).", .did_you_mean(bad[1L], columns))
  if (anyDuplicated(x)) .arg_error(what, "distinct column names", x)
  x
}

# One stratum code per record from the strata columns (every combination of their values).
.strata_codes <- function(frame) {
  if (is.null(frame) || !ncol(frame)) return(NULL)
  key <- interaction(frame, drop = TRUE, lex.order = TRUE)
  if (anyNA(key)) {
    .stop("the strata variables (", paste(names(frame), collapse = ", "), ") have missing values in ",
          sum(is.na(key)), " records; every record must belong to a stratum.")
  }
  as.integer(key)
}

.weights_vector <- function(weights, data, weight_column, n) {
  if (is.null(weights) || isFALSE(weights)) return(NULL)
  if (isTRUE(weights)) {
    if (is.null(weight_column)) .stop("`weights = TRUE` needs the object's weight variable (weightVar); it has none.")
    return(as.numeric(data[[weight_column]]))
  }
  if (is.character(weights) && length(weights) == 1L && !is.na(weights)) {
    .check_columns(weights, names(data), "weights")
    return(as.numeric(data[[weights]]))
  }
  if (!is.numeric(weights) || length(weights) != n || anyNA(weights) || any(!is.finite(weights)) || any(weights < 0)) {
    .arg_error("weights", paste0("NULL, TRUE, a column name or ", n, " finite numbers >= 0"), weights)
  }
  as.numeric(weights)
}

.note <- function(...) message("pysdcmicro: ", ...)

# Run pysdcmicro's method on the numeric matrix x; the masked matrix (NA where x is NA).
.run_python <- function(x, k, method, strata, weights, measure, trim, own, options) {
  helper <- .helper()
  progress <- if (isTRUE(own$progress)) function(text) message(text) else NULL
  seed <- if (is.null(own$seed)) NULL else as.integer(own$seed)
  opts <- if (length(options)) options else reticulate::dict()
  if (!is.null(own$improve)) opts$improve <- own$improve
  bin <- function(v) if (is.null(v)) NULL else writeBin(as.double(v), raw())
  res <- helper$run(bin(x), colnames(x), k, method, strata = bin(strata), weights = bin(weights), measure = measure,
                    trim = trim, decimals = own$decimals, missing = own$missing, time_limit = own$time_limit,
                    seed = seed, options = opts, progress = progress)
  for (w in unlist(res$warnings)) .note(w)
  if (nzchar(res$error)) .stop("pysdcmicro: error: ", res$error)
  if (identical(res$status, "limit")) {
    why <- if (nzchar(res$message)) res$message else "stopped early"
    .note("status limit: ", why, if (!grepl("best partition", why, fixed = TRUE)) "; the best partition found so far is kept." else ".")
  }
  mx <- matrix(readBin(res$mx, "double", n = length(x)), nrow = nrow(x), dimnames = dimnames(x))
  mx[is.nan(mx)] <- NA_real_
  mx
}

# Notes on what differs from sdcMicro's result for the same call, and sdcMicro-only arguments.
.differences <- function(method, measure, trim, weights_given, nvars, nc, clustermethod, varsort, transf) {
  if (method %in% c("mdav", "rmd") || !method %in% .sdc_methods) {
    if (measure != "mean") {
      .note("measure = \"", measure, "\" is honoured (each group releases its ",
            if (measure == "trim") paste0("mean trimmed by ", trim) else measure,
            "); sdcMicro's ", method, " ignores `measure` and releases group means, so the result differs from sdcMicro's.")
    }
    if (weights_given) {
      .note("`weights` are honoured (each group releases its weighted mean); sdcMicro's ", method,
            " ignores them, so the result differs from sdcMicro's.")
    }
  }
  if (nvars == 1L && method %in% .sdc_methods) {
    .note("one variable: sdcMicro's microaggregation() runs mafast() whatever `method` says; with the options ",
          "given pysdcmicro runs ", method, ", so the result differs from sdcMicro's.")
  }
  unused <- c(nc = !identical(nc, 8), clustermethod = !identical(clustermethod, "clara"),
              varsort = !identical(varsort, 1) && method != "single", transf = !identical(transf, "log"))
  if (any(unused)) {
    .note("`", paste(names(unused)[unused], collapse = "`, `"), "` ", if (sum(unused) > 1) "are" else "is",
          " not used by method ", method, " (as in sdcMicro).")
  }
}

microaggregation <- function(obj, variables = NULL, aggr = 3, strata_variables = NULL, method = "mdav",
                             weights = NULL, nc = 8, clustermethod = "clara", measure = "mean", trim = 0,
                             varsort = 1, transf = "log", ...) {
  is_obj <- .is_sdcobj(obj)
  if (!is_obj && !is.data.frame(obj)) {
    .stop("`obj` must be an sdcMicroObj (sdcMicro::createSdcObj()) or a data.frame; got an object of class ",
          paste(class(obj), collapse = "/"), ".")
  }
  method <- .check_method(method)
  dots <- .split_dots(list(...))
  own <- .check_own(dots$own)
  .check_measure(measure, trim)
  py_methods <- if (method %in% .sdc_methods && method != "mdav") {
    tryCatch(.py_methods()$method, error = function(e) character(0))
  } else NULL
  if (method %in% .sdc_methods && .one_variable(obj, is_obj, variables, strata_variables) && measure == "mean" &&
      is.null(weights) && !length(dots$own) && !length(dots$options)) {
    .note("one variable: sdcMicro's microaggregation() runs mafast() whatever `method` says (its documented ",
          "rule), so sdcMicro's mafast() runs here too; name a pysdcmicro method (e.g. method = \"mhm\") for ",
          "pysdcmicro's univariate grouping.")
    return(.delegate(obj, variables, aggr, strata_variables, method, weights, nc, clustermethod, measure, trim,
                     varsort, transf, dots, quiet = TRUE))
  }
  if (method %in% .sdc_methods && method != "mdav" && !method %in% py_methods) {
    return(.delegate(obj, variables, aggr, strata_variables, method, weights, nc, clustermethod, measure, trim,
                     varsort, transf, dots))
  }
  if (method == "single") {
    dots$options$varsort <- as.integer(varsort)  # pysdcmicro's single sorts on the same variable as sdcMicro's
  }
  if (is_obj) {
    .micro_obj(obj, variables, aggr, strata_variables, method, weights, nc, clustermethod, measure, trim, varsort,
               transf, own, dots$options)
  } else {
    .micro_frame(obj, variables, aggr, strata_variables, method, weights, nc, clustermethod, measure, trim,
                 varsort, transf, own, dots$options)
  }
}

microaggregate <- microaggregation

# Whether the call names one variable (sdcMicro then runs mafast()).
.one_variable <- function(obj, is_obj, variables, strata_variables) {
  if (!is.null(variables)) return(length(variables) == 1L)
  if (is_obj) return(length(obj@numVars) == 1L)
  length(setdiff(names(obj), strata_variables)) == 1L
}

.strata_note <- function(strata) {
  if (length(strata) > 1L) {
    .note(length(strata), " strata variables (", paste(strata, collapse = ", "), "): sdcMicro's ",
          "microaggregation() uses only the last (", strata[length(strata)], "); pysdcmicro uses every ",
          "combination of their values, so the result differs from sdcMicro's.")
  }
}

.numeric_matrix <- function(data, variables) {
  for (v in variables) {
    if (!is.numeric(data[[v]])) {
      .stop("column '", v, "' in `variables` must be numeric; got ", class(data[[v]])[1L], ".")
    }
  }
  x <- as.matrix(data[, variables, drop = FALSE])
  storage.mode(x) <- "double"
  x
}

.micro_frame <- function(obj, variables, aggr, strata_variables, method, weights, nc, clustermethod, measure, trim,
                         varsort, transf, own, options) {
  columns <- names(obj)
  data <- obj
  rownames(data) <- NULL
  strata <- if (is.null(strata_variables)) NULL else .check_columns(strata_variables, columns, "strata_variables")
  variables <- if (is.null(variables)) columns else .check_columns(variables, columns, "variables")
  masked_vars <- setdiff(variables, strata)  # a stratum variable is constant within its strata
  if (!length(masked_vars)) .arg_error("variables", "at least one column that is not a strata variable", variables)
  x <- .numeric_matrix(data, masked_vars)
  k <- .check_aggr(aggr, nrow(x))
  w <- .weights_vector(weights, data, NULL, nrow(x))
  .strata_note(strata)
  .differences(method, measure, trim, !is.null(w), length(masked_vars), nc, clustermethod, varsort, transf)
  codes <- .strata_codes(data[, strata, drop = FALSE])
  mx <- .run_python(x, k, method, codes, w, measure, trim, own, options)
  out <- data[, variables, drop = FALSE]
  for (v in variables) out[[v]] <- as.numeric(if (v %in% masked_vars) mx[, v] else data[[v]])
  # sdcMicro's simple, single and pca keep the input's row names; its mdav and onedims number the rows
  if (method %in% .sdc_methods && !method %in% c("mdav", "onedims")) {
    attr(out, "row.names") <- as.character(rownames(obj))
  }
  structure(list(x = if (is.null(strata)) data[, variables, drop = FALSE] else data, mx = out, method = method,
                 aggr = aggr, measure = measure), class = "micro")
}

.micro_obj <- function(obj, variables, aggr, strata_variables, method, weights, nc, clustermethod, measure, trim,
                       varsort, transf, own, options) {
  .need_sdcmicro("an sdcMicroObj")
  orig <- obj@origData
  num_vars <- colnames(orig)[obj@numVars]
  if (!length(num_vars)) .stop("`obj` has no numeric key variables (numVars); there is nothing to microaggregate.")
  variables <- if (is.null(variables)) num_vars else .check_columns(variables, num_vars, "variables")
  if (!is.null(strata_variables)) {
    message("Argument 'strata_variables' is ignored. Only variables specified in slot 'strataVar' (if any) ",
            "of the input object are used!\n")
  }
  strata <- if (length(obj@strataVar)) colnames(orig)[obj@strataVar] else NULL
  current <- sdcMicro::get.sdcMicroObj(obj, type = "manipNumVars")
  x <- .numeric_matrix(current, variables)
  k <- .check_aggr(aggr, nrow(x))
  weight_column <- if (length(obj@weightVar)) colnames(orig)[obj@weightVar] else NULL
  w <- .weights_vector(weights, orig, weight_column, nrow(x))
  .strata_note(strata)
  .differences(method, measure, trim, !is.null(w), length(variables), nc, clustermethod, varsort, transf)
  codes <- .strata_codes(orig[, strata, drop = FALSE])
  mx <- .run_python(x, k, method, codes, w, measure, trim, own, options)
  .store(obj, current, mx, variables)
}

# What sdcMicro's microaggregation() does to an sdcMicroObj once the masked values are
# known: keep the previous state, store the new numeric values, refresh risk and utility.
.store <- function(obj, current, mx, variables) {
  obj <- sdcMicro::nextSdcObj(obj)
  for (v in variables) current[[v]] <- as.numeric(mx[, v])
  obj <- sdcMicro::set.sdcMicroObj(obj, type = "manipNumVars", input = list(as.data.frame(current)))
  obj <- sdcMicro::dRisk(obj)
  sdcMicro::dUtility(obj)
}

# sdcMicro's own microaggregation() for the methods pysdcmicro does not implement.
.delegate <- function(obj, variables, aggr, strata_variables, method, weights, nc, clustermethod, measure, trim,
                      varsort, transf, dots, quiet = FALSE) {
  .need_sdcmicro(paste0("method '", method, "'"))
  if (!quiet) {
    .note("method '", method, "' is sdcMicro's; pysdcmicro does not implement it, so sdcMicro's own ",
          "microaggregation() runs it.")
  }
  ignored <- c(names(dots$own), names(dots$options))
  if (length(ignored)) {
    .note("`", paste(ignored, collapse = "`, `"), "` ", if (length(ignored) > 1) "are" else "is",
          " not used by sdcMicro's method '", method, "'.")
  }
  if (method == "rmd" && measure != "mean") {
    .note("sdcMicro's rmd ignores measure = \"", measure, "\" and releases group means.")
  }
  sdcMicro::microaggregation(obj = obj, variables = variables, aggr = aggr, strata_variables = strata_variables,
                             method = method, weights = weights, nc = nc, clustermethod = clustermethod,
                             measure = measure, trim = trim, varsort = varsort, transf = transf)
}
