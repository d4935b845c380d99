# microaggregation(): sdcMicro's function of the same name, with pysdcmicro's methods run in
# process through reticulate. Same formals, defaults, argument checks and return classes
# as sdcMicro 5.8.1's: a data.frame gives a "micro" object, an sdcMicroObj gives the
# updated sdcMicroObj (previous state kept for undolast(), numeric risk and utility
# recomputed by sdcMicro's own dRisk() and dUtility()). Every difference from sdcMicro's
# result is said in a message().

#: sdcMicro's method names, in the order of its own check of `method`.
.sdc_methods <- c("simple", "single", "onedims", "pca", "mcdpca", "pppca", "clustmcdpca", "clustpppca",
                  "clustpca", "rmd", "mdav", "influence")

#: sdcMicro's methods that pysdcmicro implements (the others run in sdcMicro).
.py_sdc_methods <- c("mdav", "simple", "single", "onedims", "pca")

#: sdcMicro's methods whose group statistic (its means() helper) uses the weights: the
#: sorting methods; its mdav (C++) ignores them.
.sdc_weighted <- c("simple", "single", "onedims", "pca")

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

# `trim` is checked only where it is used (measure = "trim"); sdcMicro ignores it otherwise.
.check_measure <- function(measure, trim) {
  if (!is.character(measure) || length(measure) != 1L || !measure %in% .measures) {
    .arg_error("measure", "one of \"mean\", \"median\", \"trim\", \"onestep\"", measure)
  }
  if (measure == "trim" && (!is.numeric(trim) || length(trim) != 1L || is.na(trim) || trim < 0 || trim > 0.5)) {
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

# `variables` checked before anything runs (sdcMicro's own function included): on an
# sdcMicroObj they must be numeric key variables (numVars), on a data frame columns.
.check_variables <- function(obj, is_obj, variables) {
  if (is.null(variables)) return(NULL)
  if (!is_obj) return(.check_columns(variables, names(obj), "variables"))
  num_vars <- colnames(obj@origData)[obj@numVars]
  if (!is.character(variables) || !length(variables) || anyNA(variables)) {
    .arg_error("variables", "a character vector of numeric key variables (numVars)", variables)
  }
  bad <- setdiff(variables, num_vars)
  if (length(bad)) {
    listed <- if (length(num_vars)) paste(num_vars, collapse = ", ") else "none"
    if (bad[1L] %in% colnames(obj@origData)) {
      .stop("`variables`: '", bad[1L], "' is not a numeric key variable (numVars) of `obj`, so it cannot be ",
            "microaggregated; the numVars are: ", listed, ".")
    }
    .stop("Cannot find variable: ", bad[1L], " (`variables`); the numeric key variables (numVars) of `obj` are: ",
          listed, ".", .did_you_mean(bad[1L], num_vars))
  }
  if (anyDuplicated(variables)) .arg_error("variables", "distinct column names", variables)
  variables
}

# One stratum code per record from the strata columns (every combination of their values);
# a stratum of fewer than k records is refused, named by its variables' values.
.strata_codes <- function(frame, k) {
  if (is.null(frame) || !ncol(frame)) return(NULL)
  key <- interaction(frame, drop = TRUE, lex.order = TRUE)
  if (anyNA(key)) {
    .stop("the strata variables (", paste(names(frame), collapse = ", "), ") have missing values in ",
          sum(is.na(key)), " records; every record must belong to a stratum.")
  }
  codes <- as.integer(key)
  sizes <- tabulate(codes, nbins = nlevels(key))
  small <- which(sizes < k)
  if (length(small)) {
    row <- match(small[1L], codes)
    name <- paste(paste0(names(frame), "=", vapply(frame, function(v) as.character(v[row]), "")), collapse = ", ")
    more <- if (length(small) > 1L) paste0(" (and ", length(small) - 1L, " more strata have fewer than ", k, ")") else ""
    .stop("stratum ", name, " has ", sizes[small[1L]], " record", if (sizes[small[1L]] != 1L) "s", more,
          "; every stratum needs at least aggr = ", k, " records. sdcMicro's mdav releases the records of such ",
          "a stratum unmasked (its sorting methods stop), which pysdcmicro refuses: merge the stratum with ",
          "another (recode ", paste(names(frame), collapse = " or "), ") or lower `aggr`.")
  }
  codes
}

# The sampling weights to use (NULL for none), each checked: finite and > 0 (a weight of 0
# in a group could make one record's own values its group's value). Errors name the rule
# and the first offending positions, never the whole vector.
.weights_vector <- function(weights, data, weight_column, n) {
  if (is.null(weights) || isFALSE(weights)) return(NULL)
  what <- "`weights`"
  if (isTRUE(weights)) {
    if (is.null(weight_column)) .stop("`weights = TRUE` needs the object's weight variable (weightVar); it has none.")
    what <- paste0("the weight variable '", weight_column, "' (weightVar)")
    weights <- data[[weight_column]]
  } else if (is.character(weights) && length(weights) == 1L && !is.na(weights)) {
    .check_columns(weights, names(data), "weights")
    what <- paste0("the weight column '", weights, "'")
    weights <- data[[weights]]
  } else if (!is.numeric(weights) || is.matrix(weights) || !is.null(dim(weights))) {
    .stop("`weights` must be NULL, TRUE, a column name or a numeric vector; got ",
          if (is.character(weights)) paste0("a character vector of length ", length(weights))
          else paste0("an object of class ", paste(class(weights), collapse = "/")), ".")
  }
  if (!is.numeric(weights)) .stop(what, " must be numeric; got ", class(weights)[1L], ".")
  if (length(weights) != n) .stop(what, " must hold one number per record (", n, "); got ", length(weights), ".")
  bad <- which(is.na(weights) | !is.finite(weights) | weights <= 0)
  if (length(bad)) {
    shown <- utils::head(bad, 3L)
    .stop(what, " must be finite numbers > 0 (a weight of 0 could make one record's values its group's value); ",
          "got ", paste0(vapply(weights[shown], format, "", digits = 7), " at position ", shown, collapse = ", "),
          if (length(bad) > 3L) paste0(" (and ", length(bad) - 3L, " more)"), ".")
  }
  as.numeric(weights)
}

.note <- function(...) message("pysdcmicro: ", ...)

# Run pysdcmicro's method on the numeric matrix x; the masked matrix (NA where x is NA).
.run_python <- function(x, k, method, strata, weights, measure, trim, own, options) {
  count_na <- method %in% .sdc_weighted && anyNA(x)
  helper <- .helper()
  progress <- if (isTRUE(own$progress)) function(text) message(text) else NULL
  seed <- if (is.null(own$seed)) NULL else as.integer(own$seed)
  opts <- if (length(options)) options else reticulate::dict()
  if (!is.null(own$improve)) opts$improve <- own$improve
  bin <- function(v) if (is.null(v)) NULL else writeBin(as.double(v), raw())
  res <- helper$run(bin(x), colnames(x), k, method, strata = bin(strata), weights = bin(weights), measure = measure,
                    trim = trim, decimals = own$decimals, missing = own$missing, time_limit = own$time_limit,
                    seed = seed, options = opts, progress = progress, count_na = count_na)
  for (w in unlist(res$warnings)) .note(w)
  if (nzchar(res$error)) .stop("pysdcmicro: error: ", res$error)
  if (count_na && res$na_cells > 0) {
    .note("missing cells: sdcMicro's ", method, " releases NA for every record of a group in a column where ",
          "the group has a missing cell (its group ", measure, " has no na.rm); pysdcmicro releases the ", measure,
          " of the group's observed cells there: ", res$na_cells, " cell", if (res$na_cells != 1) "s",
          " (of ", res$na_groups, " group", if (res$na_groups != 1) "s", ", counted per column) released that ",
          "sdcMicro's result leaves NA.")
  }
  if (identical(res$status, "limit")) {
    why <- if (nzchar(res$message)) res$message else "stopped early"
    .note("status limit: ", why, if (!grepl("best partition", why, fixed = TRUE)) "; the best partition found so far is kept." else ".")
  }
  mx <- matrix(readBin(res$mx, "double", n = length(x)), nrow = nrow(x), dimnames = dimnames(x))
  mx[is.nan(mx)] <- NA_real_
  mx
}

# Notes on what differs from sdcMicro's result for the same call, and sdcMicro-only arguments.
# `weighted`: the group statistic is weighted; `stratified`: more than one stratum.
.differences <- function(method, measure, trim, weighted, nvars, nc, clustermethod, varsort, transf,
                         stratified = FALSE) {
  if (method == "mdav") {
    if (measure != "mean") {
      .note("measure = \"", measure, "\" is honoured (each group releases its ",
            if (measure == "trim") paste0("mean trimmed by ", trim) else measure,
            "); sdcMicro's ", method, " ignores `measure` and releases group means, so the result differs from sdcMicro's.")
    }
    if (weighted) {
      .note("`weights` are honoured (each group releases its weighted ", measure, "); sdcMicro's ", method,
            " ignores them, so the result differs from sdcMicro's.")
    }
  }
  if (weighted && (method %in% c("single", "onedims", "pca") || (method == "simple" && stratified))) {
    .note("weighted ", method, ": sdcMicro's microaggregation() takes the weights by position in its ",
          if (method == "simple") "stratum-split" else "sorted", " data (weights[i] for the i-th record there, not ",
          "for record i), so its records mostly get another record's weight; pysdcmicro weights each record by its ",
          "own weight, so the result differs from sdcMicro's.")
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
  if (measure != "trim" && !isTRUE(trim == 0)) {
    .note("`trim` is not used with measure = \"", measure, "\" (as in sdcMicro).")
  }
}

# The weights the group statistic uses: NULL where sdcMicro ignores them (measure "trim" or
# "onestep", a note saying so when they were asked for).
.weights_for_measure <- function(w, measure, asked) {
  if (is.null(w) || measure %in% c("mean", "median")) return(w)
  if (asked) .note("`weights` are not used with measure = \"", measure, "\" (sdcMicro ignores them with it too).")
  NULL
}

microaggregation <- function(obj, variables = NULL, aggr = 3, strata_variables = NULL, method = "mdav",
                             weights = NULL, nc = 8, clustermethod = "clara", measure = "mean", trim = 0,
                             varsort = 1, transf = "log", ...) {
  is_obj <- .is_sdcobj(obj)
  if (!is_obj && !is.data.frame(obj)) {
    .stop("`obj` must be an sdcMicroObj (sdcMicro::createSdcObj()) or a data.frame; got an object of class ",
          paste(class(obj), collapse = "/"),
          if (is.matrix(obj)) " (sdcMicro's microaggregation() refuses a matrix too: pass as.data.frame(obj))", ".")
  }
  if (!is_obj && !nrow(obj)) .stop("`obj` has no records (0 rows); there is nothing to microaggregate.")
  method <- .check_method(method)
  dots <- .split_dots(list(...))
  own <- .check_own(dots$own)
  .check_measure(measure, trim)
  variables <- .check_variables(obj, is_obj, variables)
  if (method %in% .sdc_methods && .one_variable(obj, is_obj, variables, strata_variables) && measure == "mean" &&
      is.null(weights) && !length(dots$own) && !length(dots$options)) {
    .note("one variable: sdcMicro's microaggregation() runs mafast() whatever `method` says (its documented ",
          "rule), so sdcMicro's mafast() runs here too; name a pysdcmicro method (e.g. method = \"mhm\") for ",
          "pysdcmicro's univariate grouping.")
    return(.delegate(obj, variables, aggr, strata_variables, method, weights, nc, clustermethod, measure, trim,
                     varsort, transf, dots, quiet = TRUE))
  }
  if (method %in% .sdc_methods && !method %in% .py_sdc_methods) {
    return(.delegate(obj, variables, aggr, strata_variables, method, weights, nc, clustermethod, measure, trim,
                     varsort, transf, dots))
  }
  if (method %in% .py_sdc_methods && method != "mdav" && !method %in% .py_methods()$method) {
    # a pysdcmicro older than this R package (.py_methods() stops with the install hint when none is found)
    return(.delegate(obj, variables, aggr, strata_variables, method, weights, nc, clustermethod, measure, trim,
                     varsort, transf, dots, why = "the Python pysdcmicro found is too old to have it"))
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

# On an sdcMicroObj (sdcMicro's data-frame path uses every combination, as pysdcmicro does).
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
  w <- .weights_for_measure(.weights_vector(weights, data, NULL, nrow(x)), measure, TRUE)
  codes <- .strata_codes(data[, strata, drop = FALSE], k)
  .differences(method, measure, trim, !is.null(w), length(masked_vars), nc, clustermethod, varsort, transf,
               stratified = length(unique(codes)) > 1L)
  mx <- .run_python(x, k, method, codes, w, measure, if (measure == "trim") trim else 0, own, options)
  out <- data[, variables, drop = FALSE]
  for (v in variables) out[[v]] <- as.numeric(if (v %in% masked_vars) mx[, v] else data[[v]])
  # sdcMicro numbers the rows 1..n whatever the input's row names: as text for simple, single
  # and pca (from its sorted matrices), as integers for mdav and onedims
  if (method %in% .sdc_methods && !method %in% c("mdav", "onedims")) {
    attr(out, "row.names") <- as.character(seq_len(nrow(out)))
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
  if (is.null(variables)) variables <- num_vars
  if (!is.null(strata_variables)) {
    message("Argument 'strata_variables' is ignored. Only variables specified in slot 'strataVar' (if any) ",
            "of the input object are used!\n")
  }
  strata <- if (length(obj@strataVar)) colnames(orig)[obj@strataVar] else NULL
  current <- sdcMicro::get.sdcMicroObj(obj, type = "manipNumVars")
  x <- .numeric_matrix(current, variables)
  k <- .check_aggr(aggr, nrow(x))
  weight_column <- if (length(obj@weightVar)) colnames(orig)[obj@weightVar] else NULL
  w <- .obj_weights(weights, orig, weight_column, nrow(x), method, measure)
  .strata_note(strata)
  codes <- .strata_codes(orig[, strata, drop = FALSE], k)
  .differences(method, measure, trim, !is.null(w), length(variables), nc, clustermethod, varsort, transf,
               stratified = length(unique(codes)) > 1L)
  mx <- .run_python(x, k, method, codes, w, measure, if (measure == "trim") trim else 0, own, options)
  .store(obj, current, mx, variables)
}

# The weights on an sdcMicroObj. sdcMicro always weights its sorting methods' group mean or
# median by the object's weight variable (weightVar), and ignores `weights`; its mdav is
# unweighted. By default (weights = NULL) the same here; pysdcmicro's own methods are
# weighted only with weights = TRUE (or given weights). A choice sdcMicro cannot make is
# honoured, with a note.
.obj_weights <- function(weights, orig, weight_column, n, method, measure) {
  sdc_weighs <- method %in% .sdc_weighted && !is.null(weight_column)
  if (is.null(weights)) {
    return(if (sdc_weighs) .weights_for_measure(.weights_vector(TRUE, orig, weight_column, n), measure, FALSE))
  }
  if (isFALSE(weights) && sdc_weighs && measure %in% c("mean", "median")) {
    .note("weights = FALSE: unweighted group ", measure, "s; sdcMicro's ", method, " on an sdcMicroObj always ",
          "weights them by its weight variable ('", weight_column, "'), so the result differs from sdcMicro's.")
  }
  if (!is.logical(weights) && method %in% .sdc_weighted) {
    .note("`weights` given: pysdcmicro uses them; sdcMicro's microaggregation() on an sdcMicroObj ignores ",
          "`weights` and uses ", if (is.null(weight_column)) "no weights (the object has no weightVar)"
          else paste0("the weight variable '", weight_column, "'"), ", so the result differs from sdcMicro's.")
  }
  .weights_for_measure(.weights_vector(weights, orig, weight_column, n), measure, TRUE)
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
                      varsort, transf, dots, quiet = FALSE, why = "pysdcmicro does not implement it") {
  .need_sdcmicro(paste0("method '", method, "'"))
  if (!quiet) {
    .note("method '", method, "' is sdcMicro's; ", why, ", so sdcMicro's own microaggregation() runs it.")
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
